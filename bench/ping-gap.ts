// Bisection of issue 25's ping gap: why a server PROCESS costs more CPU per ping than the bare floor
// process even when it serves the floor's own code (bench/request-cpu.ts --hosted-floor). Each
// variant is a bench/request-cpu-target.ts child — the bare floor with one suspect added
// (PATCHBAY_BENCH_FLOOR_EXTRAS, bench/floor-extras.ts), or the floor hosted in a running server with
// settings switched off (PATCHBAY_BENCH_OVERRIDES) or Node.js flags — and all are measured in
// alternating rounds: process CPU µs per `GET /ari/asterisk/ping` (20 keep-alive connections), the
// same measure as request-cpu.ts's, without the originate cycles. Ratios are against `floor`.
// Usage: npx tsx bench/ping-gap.ts --server dist [--rounds 5 --pings 20000]
//        [--variants floor,import,hosted,...] [--variant 'name|floor-or-hosted-or-server|extras|overrides JSON|node flags|build dir']
//        [--warmup 5000]   (pings before the measured ones: request-cpu.ts warms up with 2,000)
//        [--steps giw]     what comes before the measured pings, in order: w the warm-up, g a full
//                          collection (gc()), s half a second, i three seconds; request-cpu.ts's order is
//                          (giw, the default: a collection after the warm-up changes the figure by a third,
//                          docs/performance.md); a variant named NAME@STEPS has its own (floor@wgs)
//        [--node /path/to/node]   (the targets' Node.js; the driver's own by default)
// Variants: see VARIANTS below; --variant adds one of your own (repeatable).
import { resolve } from 'node:path';
import os from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { measurePings, startTargetProcess, type TargetProcess } from './target-process.ts';

interface Variant {
  readonly name: string;
  readonly role: 'floor' | 'hosted' | 'server';
  readonly extras?: string;
  readonly overrides?: string;
  readonly nodeArgs?: string;
  /** Another compiled server than --server's (an experiment's build). */
  readonly root?: string;
  /** What precedes the measured pings (--steps; a name ending in `@STEPS` has its own). */
  readonly steps?: string;
}

const SILENT_SERVER = JSON.stringify({ media: { workers: 0 }, sip: { enabled: false }, cdr: { enabled: false }, cel: { enabled: false } });
const VARIANTS: readonly Variant[] = [
  { name: 'floor', role: 'floor' },
  { name: 'import', role: 'floor', extras: 'import' },
  { name: 'metrics', role: 'floor', extras: 'default-metrics' },
  { name: 'eld', role: 'floor', extras: 'eld' },
  { name: 'gcobs', role: 'floor', extras: 'gc-observer' },
  { name: 'regexp', role: 'floor', extras: 'regexp-flag' },
  { name: 'worker', role: 'floor', extras: 'worker' },
  { name: 'heap30', role: 'floor', extras: 'heap:30' },
  { name: 'timers', role: 'floor', extras: 'timers:20' },
  { name: 'udp', role: 'floor', extras: 'udp:6' },
  { name: 'streams', role: 'floor', extras: 'streams' },
  { name: 'mw2', role: 'floor', extras: 'media-worker,media-worker' },
  { name: 'hosted', role: 'hosted' },
  { name: 'hosted-quiet', role: 'hosted', overrides: SILENT_SERVER },
  { name: 'h-noworkers', role: 'hosted', overrides: JSON.stringify({ media: { workers: 0 } }) },
  { name: 's-noworkers', role: 'server', overrides: JSON.stringify({ media: { workers: 0 } }) },
  { name: 'server', role: 'server' },
];

const { values } = parseArgs({
  options: {
    server: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    pings: { type: 'string', default: '20000' },
    connections: { type: 'string', default: '20' },
    variants: { type: 'string', default: 'floor,import,hosted' },
    variant: { type: 'string', multiple: true, default: [] },
    node: { type: 'string' },
    warmup: { type: 'string', default: '5000' },
    steps: { type: 'string', default: 'giw' },
    // Node's --trace-gc in every target: the collections during the measured pings, counted and timed.
    'trace-gc': { type: 'boolean', default: false },
  },
});
const clamp = (value: string, min: number, max: number): number => Math.min(Math.max(Math.floor(Number(value)) || min, min), max);
const rounds = clamp(values.rounds, 1, 30);
const pings = clamp(values.pings, 1000, 500_000);
const connections = clamp(values.connections, 1, 200);
const root = values.server === undefined ? undefined : resolve(values.server);
const warmup = clamp(values.warmup, 0, 500_000);
const nodeBinary = values.node ?? process.execPath;
const custom: Variant[] = values.variant.map((text) => {
  const [name = '', role = 'floor', extras = '', overrides = '', nodeArgs = '', build = ''] = text.split('|');
  if (!name || !['floor', 'hosted', 'server'].includes(role)) throw new Error(`--variant '${text}': name|floor-or-hosted-or-server|extras|overrides|node flags`);
  return { name, role: role as Variant['role'], extras, overrides, nodeArgs, ...(build ? { root: resolve(build) } : {}) };
});
const chosen: Variant[] = [
  ...values.variants.split(',').filter(Boolean).map((name) => {
    const [base = '', steps] = name.split('@');
    const variant = VARIANTS.find((candidate) => candidate.name === base);
    if (!variant) throw new Error(`unknown variant '${name}' (known: ${VARIANTS.map(({ name }) => name).join(', ')}, each also as NAME@STEPS)`);
    return steps === undefined ? variant : { ...variant, name, steps };
  }),
  ...custom,
].map((variant) => ({ ...variant, steps: variant.steps ?? values.steps }));
for (const { steps } of chosen) if (!/^[wgsi]{0,8}$/.test(steps ?? '')) throw new Error(`steps '${steps}': letters w, g, s and i only`);
const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;

/** A variant's target process: request-cpu-target.ts with its extras, overrides, flags and build. */
async function start(variant: Variant): Promise<TargetProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env, PATCHBAY_BENCH_FLOOR_EXTRAS: variant.extras ?? '', PATCHBAY_BENCH_OVERRIDES: variant.overrides || '{}' };
  if (variant.root ?? root) env.PATCHBAY_BENCH_ROOT = variant.root ?? root;
  else delete env.PATCHBAY_BENCH_ROOT;
  const nodeArgs = [...(variant.nodeArgs ?? '').split(' ').filter(Boolean), ...(values['trace-gc'] ? ['--trace-gc'] : [])];
  return startTargetProcess({ name: variant.name, role: variant.role, nodeArgs, node: nodeBinary, env, answerTimeoutMs: 120_000 });
}

/** The target's process CPU so far, in µs (after a full collection with `gc`). */
const cpuOf = async (target: TargetProcess, command: 'stats' | 'gc' = 'stats'): Promise<number> => (await target.ask<{ cpuUs: number }>(command)).cpuUs;

/** Collections in --trace-gc lines: count and ms of scavenges and of mark-compacts. */
interface GcFigures {
  scavenges: number;
  scavengeMs: number;
  markCompacts: number;
  markCompactMs: number;
}
function gcFigures(lines: readonly string[]): GcFigures {
  const figures: GcFigures = { scavenges: 0, scavengeMs: 0, markCompacts: 0, markCompactMs: 0 };
  for (const line of lines) {
    const ms = Number(/MB, ([\d.]+) \//.exec(line)?.[1] ?? 0);
    if (line.includes('Scavenge')) {
      figures.scavenges++;
      figures.scavengeMs += ms;
    } else if (line.includes('Mark-Compact') || line.includes('Mark-sweep')) {
      figures.markCompacts++;
      figures.markCompactMs += ms;
    }
  }
  return figures;
}
const gcSums = new Map<string, GcFigures & { pings: number; last: string }>();

/** Process CPU µs per ping, after the variant's steps (--steps). */
async function pingCost(target: TargetProcess, steps: string, name: string): Promise<number> {
  const url = `${target.url}/ari/asterisk/ping`;
  const headers = { authorization: AUTH };
  const stepsFrom = target.traceLines.length;
  for (const step of steps) {
    if (step === 'w' && warmup > 0) await autocannon({ url, connections, amount: warmup, headers });
    else if (step === 'g') await cpuOf(target, 'gc');
    else if (step === 's' || step === 'i') await new Promise((resolve) => setTimeout(resolve, step === 's' ? 500 : 3000));
  }
  let gcFrom = target.traceLines.length;
  const run = await measurePings({ url: target.url, authorization: AUTH, connections, amount: pings, cpuUs: () => cpuOf(target), started: () => (gcFrom = target.traceLines.length) });
  if (values['trace-gc']) {
    const window = target.traceLines.slice(gcFrom);
    // Mark-compacts before the measured pings (start-up's not counted), by reason: what state the code met.
    const before = target.traceLines.slice(stepsFrom, gcFrom).filter((line) => !line.includes('Scavenge'));
    if (process.env.PING_GAP_TRACE_LINES) console.log(`  ${name}: ${window.length} trace lines in the measured pings; ${window.filter((line) => !line.includes('Scavenge')).slice(0, 12).join('\n    ')}`);
    if (before.length > 0) console.log(`  ${name}: before the measured pings: ${before.map((line) => line.replace(/^\[[^\]]*\]\s*/, '').replace(/\(average mu.*?\)/, '').slice(0, 140)).join(' | ')}`);
    const figures = gcFigures(window);
    const sum = gcSums.get(name) ?? { scavenges: 0, scavengeMs: 0, markCompacts: 0, markCompactMs: 0, pings: 0, last: '' };
    gcSums.set(name, { scavenges: sum.scavenges + figures.scavenges, scavengeMs: sum.scavengeMs + figures.scavengeMs, markCompacts: sum.markCompacts + figures.markCompacts, markCompactMs: sum.markCompactMs + figures.markCompactMs, pings: sum.pings + run.requests, last: window.at(-1) ?? sum.last });
  }
  return run.cpuUs / run.requests;
}

const figures = new Map<string, number[]>(chosen.map(({ name }) => [name, []]));
const loads: number[] = [];
for (let round = 0; round < rounds; round++) {
  const order = chosen.map((_, i) => chosen[(i + round) % chosen.length]!);
  const line: string[] = [];
  for (const variant of order) {
    const target = await start(variant);
    try {
      const us = await pingCost(target, variant.steps ?? 'giw', variant.name);
      figures.get(variant.name)!.push(us);
      line.push(`${variant.name} ${us.toFixed(2)}`);
    } finally {
      await target.stop();
    }
  }
  loads.push(os.loadavg()[0]!);
  console.log(`round ${round + 1} (load ${os.loadavg()[0]!.toFixed(2)}): ${line.join(', ')} µs/ping`);
}
const mean = (list: number[]): number => list.reduce((sum, value) => sum + value, 0) / list.length;
const median = (list: number[]): number => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
};
const base = figures.get('floor');
console.log(`\nNode.js ${nodeBinary === process.execPath ? process.version : nodeBinary}; ${rounds} rounds of ${pings} pings after ${warmup} warm-up pings (steps ${values.steps} unless named), ${connections} connections; load ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}`);
for (const variant of chosen) {
  const list = figures.get(variant.name)!;
  const ratio = base ? ` floor/this: mean ${(mean(base) / mean(list)).toFixed(3)}, median ${(median(base) / median(list)).toFixed(3)}, least ${(Math.min(...base) / Math.min(...list)).toFixed(3)}` : '';
  console.log(`${variant.name.padEnd(14)} mean ${mean(list).toFixed(2)}  median ${median(list).toFixed(2)}  least ${Math.min(...list).toFixed(2)} µs/ping${ratio}`);
}
for (const [name, sum] of gcSums) {
  const per = (value: number): string => ((value * 1000) / sum.pings).toFixed(3);
  console.log(`${name.padEnd(14)} GC per 1,000 pings: ${per(sum.scavenges)} scavenges (${per(sum.scavengeMs)} ms), ${per(sum.markCompacts)} mark-compacts (${per(sum.markCompactMs)} ms); last: ${sum.last.replace(/^\[[^\]]*\]\s*/, '').slice(0, 110)}`);
}
