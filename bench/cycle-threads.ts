// Where a target's CPU per originate cycle goes, by thread: the request-cpu target (server or floor)
// runs N cycles at 50 in flight while /proc/<pid>/task/*/stat is read before and after, and the CPU
// is summed by thread name (main, V8's platform workers — the collector's and compiler's helpers —,
// libuv's pool, worker threads). process.cpuUsage() counts them all; the floor has almost none.
// Node.js 20 names every thread `node`, so with --perf the measured window is also sampled by
// `perf record` (cpu-clock, user and kernel) and each thread's samples are sorted into kinds of work
// by the symbol they hit (parallel scavenge, concurrent marking, sweeping, TurboFan, JavaScript, the
// kernel, libuv): that is what tells the platform threads, libuv's pool and the media workers apart.
// With each run it also prints the target's collector counts over the measured cycles (scavenges,
// mark-compacts, promoted KB a cycle), which the machine's load does not move.
// Usage: [PATCHBAY_BENCH_ROOT=$PWD/dist] [PATCHBAY_BENCH_SERVER_NODE_ARGS=--single-threaded-gc] npx tsx bench/cycle-threads.ts [--kind server|floor] [--cycles 4000] [--warmup 500] [--perf] [--perf-file FILE (kept for perf report)]
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { cycleClient } from './ari-cycle-client.ts';
import { captureCycle } from './floor-events.ts';

const { values } = parseArgs({ options: { kind: { type: 'string', default: 'server' }, cycles: { type: 'string', default: '4000' }, warmup: { type: 'string', default: '500' }, perf: { type: 'boolean', default: false }, 'perf-file': { type: 'string' } } });
const warmup = Math.min(Math.max(Number(values.warmup) || 500, 0), 200_000);
const cycles = Math.min(Math.max(Number(values.cycles) || 4000, 100), 100_000);
const kind = values.kind === 'floor' ? 'floor' : 'server';
const script = new URL('./request-cpu-target.ts', import.meta.url).pathname;
// PATCHBAY_BENCH_SERVER_NODE_ARGS: Node.js flags for the target (`--single-threaded-gc`), as request-cpu.ts takes them.
const nodeArgs = (process.env.PATCHBAY_BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
// The floor answers the server's own events (request-cpu.ts's default `same-events`): one cycle a server answered, captured first.
const floorArg = kind === 'floor' ? [`same-events:${await capturedCycle()}`] : [];
const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script, kind, ...floorArg], { stdio: ['pipe', 'pipe', 'inherit'] });
const lines = createInterface({ input: child.stdout! });
const lineIterator = lines[Symbol.asyncIterator]();
const nextLine = async (): Promise<string> => String((await lineIterator.next()).value ?? '');
const url = (await nextLine()).trim();

async function capturedCycle(): Promise<string> {
  const server = spawn(process.execPath, ['--import', 'tsx', script, 'server'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const [first] = (await once(createInterface({ input: server.stdout! }), 'line')) as [string];
  const file = join(mkdtempSync(join(os.tmpdir(), 'patchbay-floor-')), 'cycle.json');
  writeFileSync(file, JSON.stringify(await captureCycle(first.trim())));
  server.stdin!.end();
  await once(server, 'exit');
  return file;
}

interface Collector {
  scavenges: number;
  scavengeMs: number;
  markCompacts: number;
  markCompactMs: number;
  incremental: number;
  promotedBytes: number;
  survivedBytes: number;
  oldAllocatedBytes: number;
}
/** The target's `stats` line: its collector counts since start. */
async function stats(): Promise<{ collector: Collector; heap: Record<string, number> }> {
  child.stdin!.write('stats\n');
  return JSON.parse(await nextLine()) as { collector: Collector; heap: Record<string, number> };
}

/** CPU µs by thread id, with the thread's name (USER_HZ 100: 10 ms steps). */
function threads(pid: number): Map<number, { name: string; us: number }> {
  const found = new Map<number, { name: string; us: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      found.set(Number(tid), { name: Number(tid) === pid ? 'main' : name, us: (Number(fields[11]) + Number(fields[12])) * 10_000 });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return found;
}

/** Kinds of work, by the symbol a sample hit (V8's and libuv's C++ names; JIT code has none). */
const KINDS: [string, RegExp][] = [
  ['scavenge', /Scaveng|SemiSpace|NewSpace|PageParallelJob|IterateAndScavenge/],
  ['marking', /Marking|MarkCompact|Mark[A-Z]|Ephemeron|Evacuat/],
  ['sweeping', /Sweep|FreeList|FreeSpace/],
  ['compiler', /compiler::|maglev::|OptimizingCompile|TurboFan|Pipeline|RegisterAllocat|InstructionSelector|Zone::|turboshaft/],
  ['libuv', /^uv_|^uv__/],
  ['wait/sync', /pthread_|futex|sem_|ConditionVariable|Mutex|__lll_|syscall/],
  ['libc', /malloc|free|memmove|memcpy|memset|cfree|_int_/],
];
function kindOf(mode: string, symbol: string): string {
  if (mode === 'k') return 'kernel';
  if (/^0x[0-9a-f]+$/.test(symbol)) return 'JIT code';
  for (const [name, pattern] of KINDS) if (pattern.test(symbol)) return name;
  return 'other V8/Node';
}

/** perf report of the window: per thread id, samples by kind and the busiest symbols. */
function perfSplit(file: string): Map<number, { samples: number; kinds: Map<string, number>; top: [string, number][] }> {
  const report = spawnSync('perf', ['report', '-i', file, '-n', '--sort', 'pid,sym', '--stdio', '-g', 'none'], { encoding: 'utf8', maxBuffer: 256 << 20 });
  const byThread = new Map<number, { samples: number; kinds: Map<string, number>; top: [string, number][] }>();
  for (const line of report.stdout.split('\n')) {
    const match = /^\s+[\d.]+%\s+(\d+)\s+(\d+):\S*\s+\[(.)\]\s+(.*)$/.exec(line);
    if (!match) continue;
    const samples = Number(match[1]);
    const tid = Number(match[2]);
    const symbol = match[4]!.trim();
    let entry = byThread.get(tid);
    if (!entry) byThread.set(tid, (entry = { samples: 0, kinds: new Map(), top: [] }));
    entry.samples += samples;
    const kindName = kindOf(match[3]!, symbol);
    entry.kinds.set(kindName, (entry.kinds.get(kindName) ?? 0) + samples);
    if (entry.top.length < 4) entry.top.push([symbol.slice(0, 90), samples]);
  }
  return byThread;
}

const client = await cycleClient(url, 50);
await client.run(warmup, 50);
const statsBefore = await stats();
const before = threads(child.pid!);
const perfFile = values['perf-file'] ?? join(os.tmpdir(), `cycle-threads-${process.pid}.data`);
const recorder = values.perf || values['perf-file'] !== undefined ? spawn('perf', ['record', '-e', 'cpu-clock', '-F', '2000', '-p', String(child.pid), '-o', perfFile], { stdio: ['ignore', 'ignore', 'pipe'] }) : undefined;
// perf says nothing until it records; a short settle would be a fixed sleep, so the first cycles run while it attaches (the split is a proportion).
const { durations, seconds } = await client.run(cycles, 50);
const after = threads(child.pid!);
const statsAfter = await stats();
if (recorder) {
  recorder.kill('SIGINT');
  await once(recorder, 'exit');
}
client.close();
const byName = new Map<string, number>();
for (const [tid, { name, us }] of after) byName.set(name, (byName.get(name) ?? 0) + us - (before.get(tid)?.us ?? 0));
let total = 0;
for (const us of byName.values()) total += us;
const count = durations.length;
console.log(`${kind}: ${count} cycles after ${warmup} at ${(count / seconds).toFixed(0)}/s, load ${os.loadavg()[0]!.toFixed(2)}; CPU per cycle ${(total / count).toFixed(0)} µs, by thread:`);
for (const [name, us] of [...byName].sort((a, b) => b[1] - a[1])) if (us > 0) console.log(`  ${name.padEnd(16)} ${(us / count).toFixed(1).padStart(7)} µs`);
// Node.js 20 names V8's platform workers and worker threads alike ('node'): each thread apart, busiest first.
const each = [...after].map(([tid, { name, us }]) => ({ tid, name, us: us - (before.get(tid)?.us ?? 0) })).filter((t) => t.us > 0).sort((a, b) => b.us - a.us);
console.log(`  threads with CPU: ${each.map((t) => `${t.name}/${t.tid}:${(t.us / count).toFixed(1)}`).join(', ')} (of ${after.size})`);
const a = statsBefore.collector;
const b = statsAfter.collector;
const perCycleKb = (bytes: number): string => (bytes / count / 1024).toFixed(1);
console.log(
  `  collector: ${(((b.scavenges - a.scavenges) * 1000) / count).toFixed(1)} scavenges and ${(((b.markCompacts - a.markCompacts) * 1000) / count).toFixed(2)} mark-compacts per 1,000 cycles (${b.markCompacts - a.markCompacts} in the window), ` +
    `${(((b.scavengeMs - a.scavengeMs) * 1000) / count).toFixed(1)} µs of scavenge and ${(((b.markCompactMs - a.markCompactMs) * 1000) / count).toFixed(1)} µs of mark-compact pause a cycle; ` +
    `${perCycleKb(b.promotedBytes - a.promotedBytes)} KB promoted, ${perCycleKb(b.survivedBytes - a.survivedBytes)} KB copied, ${perCycleKb(b.oldAllocatedBytes - a.oldAllocatedBytes)} KB allocated old a cycle; old space ${((statsAfter.heap.old_space ?? 0) / 1048576).toFixed(1)} MB`,
);
if (recorder) {
  const split = perfSplit(perfFile);
  if (values['perf-file'] === undefined) rmSync(perfFile, { force: true });
  console.log('  by perf (cpu-clock samples in the window; µs a cycle from /proc, split by the samples\' kinds):');
  // The whole process's samples by kind, and the main thread's own JavaScript and runtime (the
  // work the cycles ask for) as the unit: a proportion of samples moves less with the load than µs.
  const kinds = new Map<string, number>();
  for (const { kinds: own } of split.values()) for (const [name, n] of own) kinds.set(name, (kinds.get(name) ?? 0) + n);
  const main = split.get(child.pid!);
  const mutator = main ? (main.kinds.get('JIT code') ?? 0) + (main.kinds.get('other V8/Node') ?? 0) : 0;
  let all = 0;
  for (const n of kinds.values()) all += n;
  if (mutator > 0) console.log(`    process: ${all} samples, ${(all / mutator).toFixed(3)} per sample of the main thread's JavaScript and runtime; by kind (same unit): ${[...kinds].sort((x, y) => y[1] - x[1]).map(([name, n]) => `${name} ${(n / mutator).toFixed(3)}`).join(', ')}`);
  for (const thread of each) {
    const sampled = split.get(thread.tid);
    if (!sampled || sampled.samples === 0) continue;
    const usPerCycle = thread.us / count;
    const kinds = [...sampled.kinds].sort((x, y) => y[1] - x[1]).map(([name, n]) => `${name} ${((usPerCycle * n) / sampled.samples).toFixed(1)}`);
    console.log(`    ${thread.tid === child.pid ? 'main' : thread.tid} (${usPerCycle.toFixed(1)} µs, ${sampled.samples} samples): ${kinds.join(', ')}`);
    console.log(`      top: ${sampled.top.map(([symbol, n]) => `${symbol} ${((100 * n) / sampled.samples).toFixed(0)}%`).join('; ')}`);
  }
}
child.stdin!.end();
await once(child, 'exit');
