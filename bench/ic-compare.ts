// Inline-cache states of two processes over the same load (issue 25's ping gap): reads two V8 logs
// written with `--log-ic` (bench/ping-gap.ts runs a target with it: --variant
// 'name|server|||--log-ic --logfile=NAME.log'; each isolate writes its own file, the main thread's is
// the largest) and prints the IC sites of Node.js's own http, net, stream and events modules whose
// state differs between them: uninitialised (0), monomorphic (1), polymorphic (P) or megamorphic (N),
// with the number of maps (hidden classes) each saw.
// Only transitions up to the last bench 'stats' command count (the measured pings' end, before the
// target shuts down: a worker's exit sends its stdio streams through Readable's functions then).
// Usage: npx tsx bench/ic-compare.ts FLOOR.log SERVER.log [--all] [--filter REGEXP]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { all: { type: 'boolean', default: false }, filter: { type: 'string' } } });
if (positionals.length !== 2) throw new Error('usage: ic-compare.ts FIRST.log SECOND.log [--all] [--filter REGEXP]');
const NODE_SITES = /^node:(_http_(server|outgoing|incoming|common)|net|internal\/streams\/(readable|writable|duplex|destroy)|internal\/stream_base_commons|events|internal\/timers):/;
const filter = values.filter ? new RegExp(values.filter) : NODE_SITES;
const IC_LINE = /^(LoadIC|StoreIC|KeyedLoadIC|KeyedStoreIC|LoadGlobalIC|StoreGlobalIC|StoreInArrayLiteralIC|DefineNamedOwnIC|DefineKeyedOwnIC),/;

interface Site {
  state: string;
  readonly maps: Set<string>;
  readonly fn: string;
}

/** Code ranges by start address, the latest code object at an address winning (addresses are reused). */
class CodeMap {
  private readonly starts: number[] = [];
  private readonly entries = new Map<number, { end: number; script: string; name: string }>();

  add(start: number, size: number, name: string): void {
    if (!this.entries.has(start)) {
      let low = 0;
      let high = this.starts.length;
      while (low < high) {
        const middle = (low + high) >> 1;
        if (this.starts[middle]! < start) low = middle + 1;
        else high = middle;
      }
      this.starts.splice(low, 0, start);
    }
    const script = / ?((?:node:|file:|\/)[^ ]*?):\d+:\d+$/.exec(name)?.[1] ?? name;
    this.entries.set(start, { end: start + size, script, name });
  }

  find(pc: number): { script: string; name: string } | undefined {
    let low = 0;
    let high = this.starts.length - 1;
    let best = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (this.starts[middle]! <= pc) {
        best = middle;
        low = middle + 1;
      } else high = middle - 1;
    }
    for (let i = best; i >= 0 && i > best - 200; i--) {
      const entry = this.entries.get(this.starts[i]!)!;
      if (pc < entry.end) return entry;
    }
    return undefined;
  }
}

/** Microseconds of the last bench 'stats' command (process.memoryUsage's ICs in request-cpu-target.ts). */
function measuredEnd(lines: readonly string[]): number {
  // The target's answer object is built with an IC on `cpuUs` that logs each time (no feedback kept).
  const marks = lines.filter((line) => IC_LINE.test(line) && line.includes(',cpuUs,')).map((line) => Number(line.split(',')[2]));
  return marks.length >= 2 ? marks[marks.length - 1]! : Number.POSITIVE_INFINITY;
}

function sites(file: string): Map<string, Site> {
  const lines = readFileSync(file, 'utf8').split('\n');
  const until = measuredEnd(lines);
  const code = new CodeMap();
  const found = new Map<string, Site>();
  for (const line of lines) {
    if (line.startsWith('code-creation,')) {
      const fields = line.split(',');
      code.add(Number.parseInt(fields[4]!, 16), Number(fields[5]), fields.slice(6, -2).join(',').trim());
      continue;
    }
    if (!IC_LINE.test(line)) continue;
    const [type, pc, time, row, column, , to, map, key = ''] = line.split(',');
    if (Number(time) > until) continue;
    const entry = code.find(Number.parseInt(pc!, 16));
    // Symbols' hashes differ between processes: the key is the symbol's description alone.
    const id = `${entry?.script ?? '?'}:${row}:${column} ${type} ${key.replace(/ hash [0-9a-f]+/, '')}`;
    let site = found.get(id);
    if (!site) found.set(id, (site = { state: to!, maps: new Set(), fn: entry?.name.split(' ')[0] ?? '?' }));
    site.state = to!;
    if (map !== '0x000000000000') site.maps.add(map!);
  }
  return found;
}

const [first, second] = positionals.map(sites) as [Map<string, Site>, Map<string, Site>];
const describe = (site: Site | undefined): string => (site ? `${site.state}(${site.maps.size})` : '-');
let differing = 0;
for (const id of [...new Set([...first.keys(), ...second.keys()])].filter((id) => filter.test(id)).sort()) {
  const a = first.get(id);
  const b = second.get(id);
  // Sites one process never reached are code paths the other does not take: shown with --all.
  if (describe(a) === describe(b) || (!values.all && (!a || !b))) continue;
  differing++;
  console.log(`${describe(a).padEnd(7)} ${describe(b).padEnd(7)} ${id}  (${(b ?? a)!.fn})`);
}
const count = (map: Map<string, Site>, state: string): number => [...map].filter(([id, site]) => filter.test(id) && site.state === state).length;
for (const [name, map] of [['first', first], ['second', second]] as const) {
  console.log(`${name}: ${count(map, '1')} monomorphic, ${count(map, 'P')} polymorphic, ${count(map, 'N')} megamorphic sites`);
}
console.log(`${differing} sites differ`);
