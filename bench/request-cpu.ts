// CPU time per request, server against floor, in the same run (issue 25). The machine is shared, so
// wall-clock throughput is noise: this measures the CPU each target process spends (process.cpuUsage
// inside the target, µs) per GET /ari/asterisk/ping and per originate cycle (POST /channels →
// StasisStart → DELETE → ChannelDestroyed, 50 in flight), alternating server and floor each round,
// and reports the ratio floor/server (1.0 = the server costs what the floor costs).
// --floor same-events (the default: the floor sends the server's own 13 frames per cycle, learnt from one
// cycle the server answered before the rounds — bench/floor-events.ts), six-events (the floor before issue
// 25's fairness fix: the `;1` half's six events with a smaller snapshot) or both (two floors in the same rounds).
// With --subscribe-all N it then holds N subscribe-all applications on the server while cycles run
// at --rate per second for --hold seconds, and prints what the event log holds and the process memory.
// --server DIR runs a compiled server (npm run build's dist/) instead of the sources through tsx;
// --baseline DIR adds a third target, an older compiled server (say main's dist/), in the same rounds.
// --hosted-floor adds the floor served from inside a running server process (--server's build): the
// gap splits into what the process itself costs (bare floor against hosted) and the request path's
// (hosted against server).
// PATCHBAY_BENCH_OVERRIDES='{"cdr":{"enabled":false}}' prices a feature: settings laid over the server's only
// (with --baseline dist, the same build as configured runs beside it); PATCHBAY_BENCH_SERVER_NODE_ARGS does the
// same with Node.js flags (`--max-semi-space-size=32`). PATCHBAY_BENCH_FLOOR_EXTRAS adds one suspect of the
// process's cost to the floor and the hosted floor (bench/floor-extras.ts; bench/ping-gap.ts bisects with it).
// Under each round's figures a second line says what the round made the target's collector and kernel do
// (collections by kind, bytes promoted, copied, allocated old and compacted, page faults, context switches,
// file writes) and, with PATCHBAY_BENCH_SERVER_NODE_ARGS='--trace-opt --trace-deopt', V8's deopts and
// optimising compiles: counts the load does not move, so a round dearer than its neighbour says why
// (docs/performance.md, "Seventh pass on the originate cycle").
// PATCHBAY_BENCH_LOOP_DELAY=1 adds to that line the target's event-loop delays over the measured cycles
// (p50, p99, max of a 1 ms timer's lateness), set beside the cycle p99: whether the tail is stalls of the
// loop or calls queued behind ordinary work (docs/performance.md, "Sixth pass on ping (stop 40)").
// --external URL --external-pid PID adds an ARI server the bench did not start (an Asterisk on this
// machine, say) to the same rounds: its CPU comes from /proc/<pid>/stat (bench/external-target.ts),
// its user from --external-auth (asterisk:asterisk by default); its dialplan must have the bench's
// `answer@default` (Answer, then a long Wait). --floor none leaves the floor out.
// Usage: npx tsx bench/request-cpu.ts [--rounds 3 --pings 20000 --cycles 2000 --inflight 50 --cycle-warmup 500]
//        [--server dist --baseline ../main/dist] [--floor same-events|six-events|both|none] [--hosted-floor]
//        [--external http://127.0.0.1:18088 --external-pid PID --external-auth user:pass --external-name asterisk]
//        [--subscribe-all 10 --rate 200 --hold 20]
import { once } from 'node:events';
import { join, resolve } from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import WebSocket from 'ws';
import { cycleClient } from './ari-cycle-client.ts';
import { captureCycle } from './floor-events.ts';
import { externalOptions, externalStats } from './external-target.ts';
import { measurePings, startTargetProcess } from './target-process.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    pings: { type: 'string', default: '20000' },
    cycles: { type: 'string', default: '2000' },
    inflight: { type: 'string', default: '50' },
    'cycle-warmup': { type: 'string', default: '500' },
    connections: { type: 'string', default: '20' },
    'subscribe-all': { type: 'string', default: '0' },
    rate: { type: 'string', default: '200' },
    hold: { type: 'string', default: '20' },
    server: { type: 'string' },
    baseline: { type: 'string' },
    floor: { type: 'string', default: 'same-events' },
    external: { type: 'string' },
    'external-pid': { type: 'string' },
    'external-auth': { type: 'string' },
    'external-name': { type: 'string' },
    'hosted-floor': { type: 'boolean', default: false },
  },
});
const clamp = (value: string, min: number, max: number): number => Math.min(Math.max(Math.floor(Number(value)) || min, min), max);
const rounds = Math.min(Math.max(Math.floor(Number(values.rounds)) || 0, 0), 20);
const pings = clamp(values.pings, 100, 500_000);
const cycles = clamp(values.cycles, 10, 50_000);
const inflight = clamp(values.inflight, 1, 200);
// Cycles run before the measured ones. The server's code is far larger than the floor's: after 500
// cycles V8 is still optimising it, in its background threads (counted by process.cpuUsage) and in
// the unoptimised code it runs meanwhile; 15,000 measure the steady state (docs/performance.md,
// fourth pass on the originate cycle).
const cycleWarmup = clamp(values['cycle-warmup'], 0, 200_000);
const connections = clamp(values.connections, 1, 200);
const subscribeAll = clamp(values['subscribe-all'], 0, 100);
const rate = clamp(values.rate, 1, 5000);
const holdSeconds = clamp(values.hold, 1, 300);
if (!['same-events', 'six-events', 'both', 'none'].includes(values.floor!)) throw new Error('--floor is same-events, six-events, both or none');
const external = externalOptions(values);
const BENCH_USER = 'asterisk:asterisk';
const basic = (user: string): string => `Basic ${Buffer.from(user).toString('base64')}`;

interface Stats {
  cpuUs: number;
  /** Of which in the kernel (older target scripts: absent). */
  systemUs?: number;
  /** The main thread's alone, in 10 ms steps (Linux; absent elsewhere). */
  mainThreadUs?: number;
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  eventLog?: { applications: number; events: number; bytes: number; slots: number; appended: number; evicted: number };
  queues?: { connections: number; messages: number; bytes: number };
  limits?: { maxEvents: number; maxBytes: number; maxTotalBytes: number; maxApplications: number; maxAgeSeconds: number; maxQueuedMessages: number; maxQueuedBytes: number };
  /** V8's collections since start by kind, and their pauses in ms (older target scripts: absent). */
  collector?: { scavenges: number; scavengeMs: number; markCompacts: number; markCompactMs: number; incremental: number; incrementalMs: number; weak: number; weakMs: number; promotedBytes?: number; survivedBytes?: number; compactedBytes?: number; oldAllocatedBytes?: number };
  /** The event loop's delays since the previous read, ms (PATCHBAY_BENCH_LOOP_DELAY=1 only). */
  loopDelay?: { p50: number; p99: number; max: number; over10: number };
  /** Used bytes per V8 space (`old_space`, `new_space`, `code_space`, `large_object_space` …). */
  heap?: Record<string, number>;
  /** The kernel's counts for the process: page faults, context switches, file writes. */
  usage?: { minorPageFaults: number; majorPageFaults: number; voluntarySwitches: number; involuntarySwitches: number; fsWrites: number };
}

interface Target {
  readonly url: string;
  /** The ARI user (`user:password`) its requests carry. */
  readonly user: string;
  stats(command?: 'stats' | 'gc'): Promise<Stats>;
  /** Lines of V8 tracing it printed so far (PATCHBAY_BENCH_SERVER_NODE_ARGS='--trace-deopt …'); none otherwise. */
  traceLines(): readonly string[];
  stop(): Promise<void>;
}

/**
 * `floor`: the server's own frames per cycle; `floor6`: the `;1` half's six (the floor before the
 * fairness fix); `external`: a server the bench did not start (--external); `hosted`: the
 * same-events floor served from inside a running server process (--hosted-floor).
 */
type Kind = 'server' | 'baseline' | 'floor' | 'floor6' | 'external' | 'hosted';
const isFloor = (kind: Kind): boolean => kind === 'floor' || kind === 'floor6';
/** The compiled server each kind runs (undefined: the sources through tsx). */
const roots: Record<Kind, string | undefined> = {
  server: values.server === undefined ? undefined : resolve(values.server),
  baseline: values.baseline === undefined ? undefined : resolve(values.baseline),
  floor: undefined,
  floor6: undefined,
  external: undefined,
  hosted: values.server === undefined ? undefined : resolve(values.server),
};
/** How the rows name each kind. */
const label = (kind: Kind): string => (kind === 'external' ? external!.name : kind);

/** The external server: already running, measured from /proc, left running. */
function externalTarget(): Target {
  const { url, pid, auth } = external!;
  return {
    url,
    user: auth,
    stats: async () => externalStats(pid),
    traceLines: () => [],
    stop: async () => undefined,
  };
}

async function startTarget(kind: Kind, floorMode = ''): Promise<Target> {
  if (kind === 'external') return externalTarget();
  const env: NodeJS.ProcessEnv = { ...process.env, PATCHBAY_BENCH_ROOT: roots[kind] };
  if (!roots[kind]) delete env.PATCHBAY_BENCH_ROOT;
  // Overrides price a feature on the server: the baseline runs as configured (--baseline dist
  // --server dist compares the same build with and without it), the floor has no settings.
  if (kind !== 'server') delete env.PATCHBAY_BENCH_OVERRIDES;
  const role = isFloor(kind) ? 'floor' : kind === 'hosted' ? 'hosted' : 'server';
  // PATCHBAY_BENCH_SERVER_NODE_ARGS: Node.js flags for the server alone (say a V8 heap setting), priced like overrides.
  const nodeArgs = kind === 'server' ? (process.env.PATCHBAY_BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean) : [];
  const target = await startTargetProcess({ name: kind, role, floorMode, nodeArgs, env, answerTimeoutMs: 120_000 });
  return { url: target.url, user: BENCH_USER, stats: (command = 'stats') => target.ask<Stats>(command), traceLines: () => target.traceLines, stop: () => target.stop() };
}

/** CPU the target spends doing nothing (timers, media clock), in µs per second of wall time. */
async function idleCost(target: Target): Promise<number> {
  // Settled first, every target alike: what its start left to do (the collection of what loading
  // made, lazy compilation) is no idle cost, and counted it was most of the server's first seconds.
  await target.stats('gc');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const before = await target.stats();
  const began = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const after = await target.stats();
  return ((after.cpuUs - before.cpuUs) * 1000) / (performance.now() - began);
}

/**
 * CPU µs the target spends per ping, with `connections` keep-alive connections; `net` without what
 * it would have spent idle over the same wall time.
 */
async function pingCost(target: Target, idleUsPerSecond: number): Promise<{ us: number; net: number; p99: number; perSecond: number }> {
  const authorization = basic(target.user);
  await autocannon({ url: `${target.url}/ari/asterisk/ping`, connections, amount: Math.min(2000, pings), headers: { authorization } }); // warm-up
  const run = await measurePings({ url: target.url, authorization, connections, amount: pings, cpuUs: async () => (await target.stats()).cpuUs });
  return { us: run.cpuUs / run.requests, net: (run.cpuUs - idleUsPerSecond * run.seconds) / run.requests, p99: run.p99, perSecond: run.requests / run.seconds };
}

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

/** CPU µs the target spends per originate cycle with `inflight` in flight, and the cycle p99. */
async function cycleCost(target: Target): Promise<{ us: number; systemUs: number; mainUs: number; p99: number; perSecond: number; work: string }> {
  const client = await cycleClient(target.url, inflight, target.user);
  try {
    if (cycleWarmup > 0) await client.run(cycleWarmup === 500 ? Math.min(500, cycles) : cycleWarmup, inflight);
    const before = await target.stats();
    const tracedBefore = target.traceLines().length;
    const { durations, seconds } = await client.run(cycles, inflight);
    const after = await target.stats();
    const mainUs = ((after.mainThreadUs ?? Number.NaN) - (before.mainThreadUs ?? Number.NaN)) / durations.length;
    const work = roundWork(before, after, target.traceLines().slice(tracedBefore), durations.length);
    return { us: (after.cpuUs - before.cpuUs) / durations.length, systemUs: ((after.systemUs ?? 0) - (before.systemUs ?? 0)) / durations.length, mainUs, p99: percentile(durations, 99), perSecond: durations.length / seconds, work };
  } finally {
    client.close();
  }
}

/**
 * What a round of cycles made the target's collector and compiler do: measures the load does not move
 * (counts, bytes), beside its CPU, so a round dearer than its neighbours says why (issue 25, docs/performance.md
 * "Seventh pass on the originate cycle"). Collections per 1,000 cycles by kind and their pauses in µs per
 * cycle; the old space's growth over the round (what survived scavenges: promoted, not yet collected);
 * with V8 tracing on (PATCHBAY_BENCH_SERVER_NODE_ARGS='--trace-deopt --trace-opt'), deoptimisations and
 * optimising compiles per 1,000 cycles, and the compiles' time.
 */
function roundWork(before: Stats, after: Stats, traced: readonly string[], count: number): string {
  const a = before.collector;
  const b = after.collector;
  if (!a || !b) return '';
  const per1000 = (value: number): string => ((value * 1000) / count).toFixed(1);
  const pauseUs = (ms: number): string => ((ms * 1000) / count).toFixed(1);
  const kb = (bytes: number): string => (bytes / count / 1024).toFixed(1);
  let text =
    `  collector per 1,000 cycles: ${per1000(b.scavenges - a.scavenges)} scavenges (${pauseUs(b.scavengeMs - a.scavengeMs)} µs/cycle), ` +
    `${per1000(b.markCompacts - a.markCompacts)} mark-compacts (${pauseUs(b.markCompactMs - a.markCompactMs)} µs/cycle), ${per1000(b.incremental - a.incremental)} incremental steps (${pauseUs(b.incrementalMs - a.incrementalMs)} µs/cycle); ` +
    `per cycle ${kb((b.promotedBytes ?? 0) - (a.promotedBytes ?? 0))} KB promoted, ${kb((b.survivedBytes ?? 0) - (a.survivedBytes ?? 0))} KB copied in the young generation, ${kb((b.oldAllocatedBytes ?? 0) - (a.oldAllocatedBytes ?? 0))} KB allocated in the old space, ${kb((b.compactedBytes ?? 0) - (a.compactedBytes ?? 0))} KB freed by mark-compacts; ` +
    `old space ${MB(before.heap?.old_space ?? 0)} → ${MB(after.heap?.old_space ?? 0)}, heap used ${MB(after.heapUsed)}`;
  const delay = after.loopDelay;
  if (delay) text += `; event loop delay (1 ms timer) p50 ${delay.p50.toFixed(1)} ms, p99 ${delay.p99.toFixed(1)} ms, max ${delay.max.toFixed(1)} ms, ≈ ${delay.over10.toFixed(0)} samples over 10 ms`;
  const u = before.usage;
  const v = after.usage;
  if (u && v) text += `; per cycle ${(((v.minorPageFaults - u.minorPageFaults) / count)).toFixed(2)} page faults, ${(((v.voluntarySwitches - u.voluntarySwitches) / count)).toFixed(2)} voluntary and ${(((v.involuntarySwitches - u.involuntarySwitches) / count)).toFixed(2)} involuntary switches, ${(((v.fsWrites - u.fsWrites) / count)).toFixed(3)} file writes`;
  if (traced.length > 0) {
    let deopts = 0;
    let optimised = 0;
    let compileMs = 0;
    for (const line of traced) {
      if (line.startsWith('[bailout (kind:') || line.startsWith('[marking dependent code')) deopts++;
      else if (line.startsWith('[completed compiling')) {
        optimised++;
        // "took 0.163, 1.285, 0.056 ms": the compile job's three phases, wall time (mostly a background thread's).
        const took = /took ([\d.]+), ([\d.]+), ([\d.]+) ms/.exec(line);
        if (took) compileMs += Number(took[1]) + Number(took[2]) + Number(took[3]);
      }
    }
    text += `; V8 trace per 1,000 cycles: ${per1000(deopts)} deopts, ${per1000(optimised)} optimising compiles (${pauseUs(compileMs)} µs/cycle compiling)`;
  }
  return text;
}

const MB = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MB`;

async function eventLogMemory(kind: Kind): Promise<void> {
  const target = await startTarget(kind);
  const sockets: WebSocket[] = [];
  const delivered = { frames: 0, bytes: 0 };
  try {
    const idle = await target.stats('gc');
    for (let i = 0; i < subscribeAll; i++) {
      const socket = new WebSocket(`${target.url.replace('http', 'ws')}/ari/events?app=all${i}&subscribeAll=true`, { headers: { authorization: basic(target.user) } });
      // What the subscribe-all clients receive: two servers' fan-outs compare only with their sizes beside them.
      socket.on('message', (data: Buffer) => {
        delivered.frames++;
        delivered.bytes += data.length;
      });
      sockets.push(socket);
      await once(socket, 'open');
    }
    const client = await cycleClient(target.url, inflight, target.user);
    const total = rate * holdSeconds;
    const before = await target.stats();
    // The peaks during the hold, read every second: what the log and the send queues reach.
    const peak = { rss: 0, heapUsed: 0, events: 0, logBytes: 0, queuedMessages: 0, queuedBytes: 0 };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        if (!sampling) break;
        const now = await target.stats();
        peak.rss = Math.max(peak.rss, now.rss);
        peak.heapUsed = Math.max(peak.heapUsed, now.heapUsed);
        peak.events = Math.max(peak.events, now.eventLog?.events ?? 0);
        peak.logBytes = Math.max(peak.logBytes, now.eventLog?.bytes ?? 0);
        peak.queuedMessages = Math.max(peak.queuedMessages, now.queues?.messages ?? 0);
        peak.queuedBytes = Math.max(peak.queuedBytes, now.queues?.bytes ?? 0);
      }
    })();
    const deliveredBefore = { ...delivered };
    const { durations, seconds } = await client.run(total, inflight, rate);
    sampling = false;
    await sampler;
    const held = await target.stats();
    const collected = await target.stats('gc');
    client.close();
    const log = collected.eventLog;
    console.log(`\n${label(kind)}: event log under load: ${subscribeAll} subscribe-all apps + bench, ${durations.length} cycles at ${(durations.length / seconds).toFixed(0)}/s (target ${rate}/s), p99 ${percentile(durations, 99).toFixed(1)} ms, server CPU/cycle ${((held.cpuUs - before.cpuUs) / durations.length).toFixed(0)} µs`);
    const frames = (delivered.frames - deliveredBefore.frames) / (durations.length * subscribeAll);
    const bytes = (delivered.bytes - deliveredBefore.bytes) / (durations.length * subscribeAll);
    console.log(`  each subscribe-all client received ${frames.toFixed(1)} frames, ${(bytes / 1024).toFixed(1)} KiB per cycle; load average ${os.loadavg().map((value) => value.toFixed(2)).join(' ')}`);
    if (kind === 'external') {
      // No V8 heap nor event log to read there: what /proc says.
      console.log(`  RSS: idle ${MB(idle.rss)}, peak in the hold (1 s samples) ${MB(peak.rss)}, after the load ${MB(held.rss)}`);
      return;
    }
    console.log(`  idle server:     RSS ${MB(idle.rss)}, heap used ${MB(idle.heapUsed)}`);
    console.log(`  peak in the hold (1 s samples): RSS ${MB(peak.rss)}, heap used ${MB(peak.heapUsed)}`);
    console.log(`  after the load:  RSS ${MB(held.rss)}, heap used ${MB(held.heapUsed)}, external ${MB(held.external)} (array buffers ${MB(held.arrayBuffers)})`);
    console.log(`  after a full GC: RSS ${MB(collected.rss)}, heap used ${MB(collected.heapUsed)}`);
    if (!log) return console.log(`  heap used beyond the idle server: ${MB(collected.heapUsed - idle.heapUsed)} (this build cannot say what its event log holds)`);
    console.log(`  event log holds ${log.events} events of ${log.applications} applications: ${MB(log.bytes)} of JSON text in ${log.slots} ring slots; ${log.appended} appended, ${log.evicted} evicted; peak ${peak.events} events, ${MB(peak.logBytes)}`);
    console.log(`  heap used beyond the idle server: ${MB(collected.heapUsed - idle.heapUsed)}; the log's limits count ${MB(log.bytes)} (each application's messages as sent), but each event's text is held once for all the applications it went to (+ ≈ ${MB(log.slots * 24)} of ring slots)`);
    const queues = collected.queues;
    if (queues) console.log(`  event WebSocket send queues: ${queues.messages} messages, ${MB(queues.bytes)} now in ${queues.connections} connections; peak ${peak.queuedMessages} messages, ${MB(peak.queuedBytes)}`);
    const limits = collected.limits;
    if (limits) {
      console.log(
        `  bounds (settings): log ≤ ${limits.maxEvents} events and ${MB(limits.maxBytes)} per application, ≤ ${MB(limits.maxTotalBytes)} in all, ${limits.maxAgeSeconds} s, ${limits.maxApplications} applications` +
          ` (here ≤ ${log.applications} × ${limits.maxEvents} = ${log.applications * limits.maxEvents} events);` +
          ` send queue ≤ ${limits.maxQueuedMessages} messages and ${MB(limits.maxQueuedBytes)} per connection`,
      );
      const withinLog = log.events <= log.applications * limits.maxEvents && log.bytes <= limits.maxTotalBytes;
      const withinQueues = !queues || (peak.queuedMessages <= queues.connections * limits.maxQueuedMessages + queues.connections && peak.queuedBytes <= (queues.connections + 1) * limits.maxQueuedBytes);
      console.log(`  within the bounds: event log ${withinLog ? 'yes' : 'NO'}, send queues ${withinQueues ? 'yes' : 'NO'}`);
    }
  } finally {
    for (const socket of sockets) socket.terminate();
    await target.stop();
  }
}

const rows: string[] = [];
let floorEvents: string[] = ['StasisStart', 'ChannelDestroyed'];
const zero = (): { ping: number; net: number; cycle: number; pingRate: number; cycleMain: number; cycleRate: number } => ({ ping: 0, net: 0, cycle: 0, pingRate: 0, cycleMain: 0, cycleRate: 0 });
const sums: Record<Kind, ReturnType<typeof zero>> = { server: zero(), baseline: zero(), floor: zero(), floor6: zero(), external: zero(), hosted: zero() };
const none = (): { ping: number; net: number; cycle: number } => ({ ping: Infinity, net: Infinity, cycle: Infinity });
const least: Record<Kind, { ping: number; net: number; cycle: number }> = { server: none(), baseline: none(), floor: none(), floor6: none(), external: none(), hosted: none() };
const floors: Kind[] = values.floor === 'none' ? [] : values.floor === 'both' ? ['floor', 'floor6'] : values.floor === 'six-events' ? ['floor6'] : ['floor'];
const kinds: Kind[] = [
  ...(roots.baseline ? (['server', 'baseline'] as const) : (['server'] as const)),
  ...(external ? (['external'] as const) : []),
  ...floors,
  ...(values['hosted-floor'] ? (['hosted'] as const) : []),
];
// The same-events floor replays one cycle the server (--server's build) answered, captured before the rounds.
const templateDir = mkdtempSync(join(os.tmpdir(), 'patchbay-floor-'));
const templateFile = join(templateDir, 'cycle.json');
let frameCount = 0;
if (rounds > 0 && floors.length > 0) {
  const target = await startTarget('server');
  try {
    const template = await captureCycle(target.url);
    frameCount = template.frames.length;
    writeFileSync(templateFile, JSON.stringify(template));
    // The six-events floor: the types of the originated (`;1`) channel's events, StasisStart first.
    const firstId = (template.created as { id: string }).id;
    const types = template.frames.filter(({ event }) => (event.channel as { id?: string } | undefined)?.id === firstId).map(({ event }) => String(event.type));
    floorEvents = ['StasisStart', ...types.filter((type) => type !== 'StasisStart')];
  } finally {
    await target.stop();
  }
}
const floorMode = (kind: Kind): string => (kind === 'floor' || kind === 'hosted' ? `same-events:${templateFile}` : kind === 'floor6' ? `six-events:${floorEvents.join(',')}` : '');
for (let round = 0; round < rounds; round++) {
  // Rotate which goes first, so none always meets the same neighbours' load.
  const order = kinds.map((_, i) => kinds[(i + round) % kinds.length]!);
  for (const kind of order) {
    const target = await startTarget(kind, floorMode(kind));
    try {
      const idle = await idleCost(target);
      const ping = await pingCost(target, idle);
      const cycle = await cycleCost(target);
      sums[kind].ping += ping.us;
      sums[kind].net += ping.net;
      sums[kind].cycle += cycle.us;
      sums[kind].pingRate += ping.perSecond;
      sums[kind].cycleMain += cycle.mainUs;
      sums[kind].cycleRate += cycle.perSecond;
      const load = os.loadavg()[0]!.toFixed(2);
      least[kind].ping = Math.min(least[kind].ping, ping.us);
      least[kind].net = Math.min(least[kind].net, ping.net);
      least[kind].cycle = Math.min(least[kind].cycle, cycle.us);
      rows.push(
        `round ${round + 1} ${label(kind).padEnd(8)} load ${load}  idle ${(idle / 1000).toFixed(1)} ms/s  ping ${ping.us.toFixed(1).padStart(5)} µs/req (${ping.net.toFixed(1)} net of idle, p99 ${ping.p99} ms, ${ping.perSecond.toFixed(0)} req/s)   cycle ${cycle.us.toFixed(0).padStart(5)} µs/cycle (${cycle.systemUs.toFixed(0)} in the kernel, ${cycle.mainUs.toFixed(0)} on the main thread), p99 ${cycle.p99.toFixed(1)} ms, ${cycle.perSecond.toFixed(0)}/s at ${inflight} in flight`,
      );
      console.log(rows.at(-1));
      if (cycle.work) console.log(cycle.work);
    } finally {
      await target.stop();
    }
  }
}
rmSync(templateDir, { recursive: true, force: true });
if (rounds > 0 && floors.includes('floor')) console.log(`floor (same-events): the server's ${frameCount} frames per cycle, built and serialised per cycle`);
if (rounds > 0 && floors.includes('floor6')) console.log(`floor6 (six-events) events per cycle: ${floorEvents.join(',')}`);
// Least per-round figures too: on a loaded machine a round is only ever made dearer by its neighbours.
for (const kind of rounds > 0 ? kinds : []) console.log(`least of ${rounds} rounds, ${label(kind).padEnd(8)}: ping ${least[kind].ping.toFixed(1)} µs/req (${least[kind].net.toFixed(1)} net of idle), cycle ${least[kind].cycle.toFixed(0)} µs; means: cycle ${(sums[kind].cycle / rounds).toFixed(0)} µs, ${(sums[kind].cycleMain / rounds).toFixed(0)} on the main thread, ${(sums[kind].cycleRate / rounds).toFixed(0)} cycles/s`);
if (rounds > 0 && kinds.includes('hosted') && kinds.includes('floor')) {
  console.log(`the floor inside a server process (hosted) against the bare floor: ping ${(sums.floor.ping / sums.hosted.ping).toFixed(3)} (least ${(least.floor.ping / least.hosted.ping).toFixed(3)}); what the server's own request path adds beyond it: hosted/server ping ${(sums.hosted.ping / sums.server.ping).toFixed(3)} (least ${(least.hosted.ping / least.server.ping).toFixed(3)})`);
}
for (const kind of rounds > 0 ? kinds.filter((kind) => !isFloor(kind) && kind !== 'external' && kind !== 'hosted') : []) {
  if (external) {
    const them = sums.external;
    const us = sums[kind];
    // CPU: theirs over ours (> 1: this server costs less per request); req/s: ours over theirs, both on this shared machine.
    console.log(
      `mean ${external.name}/${kind}: CPU per ping ${(them.ping / us.ping).toFixed(3)} (net of idle ${(them.net / us.net).toFixed(3)}), CPU per originate cycle ${(them.cycle / us.cycle).toFixed(3)}; ping req/s ${kind} ${(us.pingRate / rounds).toFixed(0)} vs ${external.name} ${(them.pingRate / rounds).toFixed(0)} (load average now ${os.loadavg().map((value) => value.toFixed(2)).join(' ')})`,
    );
  }
  for (const floor of floors) {
    console.log(`mean CPU ratio ${floor}/${kind} (1.0 = at the floor): ping ${(sums[floor].ping / sums[kind].ping).toFixed(3)} (net of idle ${(sums[floor].net / sums[kind].net).toFixed(3)}), originate cycle ${(sums[floor].cycle / sums[kind].cycle).toFixed(3)} (main thread ${(sums[floor].cycleMain / sums[kind].cycleMain).toFixed(3)}; cycles/s ${kind}/${floor} ${(sums[kind].cycleRate / sums[floor].cycleRate).toFixed(3)})`);
  }
}
if (subscribeAll > 0) for (const kind of kinds.filter((kind) => !isFloor(kind) && kind !== 'hosted')) await eventLogMemory(kind);
