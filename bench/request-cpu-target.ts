// A child process for bench/request-cpu.ts: `server` (the real Patchbay, developer mode off, log at
// warn), `floor` (bare node:http + ws answering the same steps with no routing, validation or
// event log) or `hosted` (the floor, served from inside a running server process). The floor's events per cycle come from its third argument: `same-events:FILE` (a
// cycle the server answered, bench/floor-events.ts: the same 13 frames, built and serialised per
// cycle) or `six-events:TYPES` (the `;1` half's event types only, with a small channel snapshot:
// the floor before issue 25's fairness fix). It sends its URL, then answers each command with one
// message (over the IPC channel when it has one, else one JSON line on stdout per line on stdin):
//   `stats`  → { cpuUs, systemUs, rss, heapUsed, external, arrayBuffers, eventLog?, queues?, limits? }  (CPU of this process, µs)
//   `gc`     → the same after a full collection (needs --expose-gc)
// Both also carry `collector` (V8's collections since start by kind, their cost and the bytes they
// moved), `heap` (V8's spaces) and `usage` (the kernel's counts), so a round can say what its
// collector did. It exits when the channel (or stdin) closes. Measuring CPU inside the process gives µs, not /proc's 10 ms ticks.
import http from 'node:http';
import os from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';
import v8 from 'node:v8';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { readFileSync } from 'node:fs';
import { WebSocketServer, type WebSocket } from 'ws';
import { formatAriDate } from '../src/util/ari-date.ts';
import { instantiate, templateNames, type CycleNames, type CycleTemplate } from './floor-events.ts';
import { startFloorExtras } from './floor-extras.ts';

const kind = process.argv[2];
const floorMode = process.argv[3] ?? 'six-events:StasisStart,ChannelDestroyed';
/** same-events: the server's cycle, replayed with fresh ids and times. */
const template: CycleTemplate | undefined = floorMode.startsWith('same-events:') ? (JSON.parse(readFileSync(floorMode.slice('same-events:'.length), 'utf8')) as CycleTemplate) : undefined;
/** six-events: event types the floor sends per originate cycle, in order (learnt from the server by the driver). */
const floorEvents = (floorMode.startsWith('six-events:') ? floorMode.slice('six-events:'.length) : floorMode).split(',').filter(Boolean);

interface Probe {
  readonly url: string;
  eventLog(): Record<string, number> | undefined;
  /** What the event WebSockets' send queues hold (builds that can say). */
  queues(): Record<string, number> | undefined;
  /** The bounds that apply to the event log and the send queues (settings). */
  limits(): Record<string, number> | undefined;
  stop(): Promise<void>;
}

// `hosted`: the floor's own answers served from inside a running server (its URL is the floor's; the
// server listens beside it, idle). What it costs beyond the bare floor is the server process itself
// (its loaded code, threads, timers and heap), not any request path: request-cpu.ts --hosted-floor.
// PATCHBAY_BENCH_FLOOR_EXTRAS (floor and hosted only): one suspect of the ping gap at a time, added to
// the process (bench/floor-extras.ts, bench/ping-gap.ts).
const extras = kind === 'server' ? undefined : await startFloorExtras(process.env.PATCHBAY_BENCH_FLOOR_EXTRAS ?? '', process.env.PATCHBAY_BENCH_ROOT);
const started: Probe = kind === 'server' ? await startServerTarget() : kind === 'hosted' ? await startHostedFloor() : await startFloor();
const probe: Probe = extras ? { ...started, stop: async () => void (await Promise.all([started.stop(), extras.stop()])) } : started;
// Over the IPC channel when the driver opened one (bench/target-process.ts), stdin/stdout otherwise
// (the benches that spawn this script themselves). The channel writes and reads its pipe without
// Node's stream functions: a `stats` answered through process.stdout and a line read from stdin
// ran Writable.write, writeOrBuffer, onwrite, Readable.push and read on a pipe's socket, and V8
// deoptimised those same functions, which the server's every HTTP answer and event frame runs
// (optimised for its TCP sockets), at each read of the figures: the measured cycles then began in
// unoptimised stream code (docs/performance.md, "Seventh pass on the originate cycle").
const overIpc = typeof process.send === 'function';
if (overIpc) process.send!({ url: probe.url });
else process.stdout.write(`${probe.url}\n`);

/**
 * V8's collections since start, by kind, with their cost (ms, as V8 times them) and what moved:
 * bytes the scavenges promoted into the old spaces (what outlived two young collections: held
 * long enough to need a mark-compact to die), bytes left in the young generation after each
 * scavenge (survivors copied), bytes allocated straight into the old spaces between collections
 * (pretenured objects, large objects, code), and bytes the mark-compacts freed. Read from v8.GCProfiler (heap
 * statistics before and after every collection; tens a second under load), folded at every
 * `stats` and `gc` line. The forced collection the `gc` command makes is counted too; the driver
 * reads before and after the measured cycles, where none is forced.
 */
const collector = { scavenges: 0, scavengeMs: 0, markCompacts: 0, markCompactMs: 0, incremental: 0, incrementalMs: 0, weak: 0, weakMs: 0, promotedBytes: 0, survivedBytes: 0, compactedBytes: 0, oldAllocatedBytes: 0 };
/** The old spaces' used bytes after the last collection seen: what they hold more before the next was allocated there directly (pretenured, large objects, code). */
let oldAfterLast: number | undefined;
type GcSpaces = { spaceName: string; spaceUsedSize: number }[];
const oldBytes = (spaces: GcSpaces): number => {
  let bytes = 0;
  for (const space of spaces) if (space.spaceName === 'old_space' || space.spaceName === 'large_object_space' || space.spaceName === 'code_space') bytes += space.spaceUsedSize;
  return bytes;
};
const youngBytes = (spaces: GcSpaces): number => {
  let bytes = 0;
  for (const space of spaces) if (space.spaceName === 'new_space' || space.spaceName === 'new_large_object_space') bytes += space.spaceUsedSize;
  return bytes;
};
/**
 * PATCHBAY_BENCH_LOOP_DELAY=1: the event loop's delays between two reads of the figures (a 1 ms
 * timer; perf_hooks.monitorEventLoopDelay), so a round's cycle p99 can be set beside the longest
 * stalls of the target's loop (a collection, a timer's burst of work, a database flush) — issue 25's
 * p99 at 50 in flight. Off by default: its timer is work the floor's figures never had.
 */
const loopDelay = process.env.PATCHBAY_BENCH_LOOP_DELAY === '1' ? monitorEventLoopDelay({ resolution: 1 }) : undefined;
loopDelay?.enable();
function loopDelays(): { p50: number; p99: number; max: number; over10: number } | undefined {
  if (!loopDelay) return undefined;
  const figures = { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6, over10: 0 };
  // Samples whose delay passed 10 ms (beyond the timer's own 1 ms): stalls every call in flight waits out.
  for (const [percentile, value] of loopDelay.percentiles) if (value > 11e6) figures.over10 = Math.max(figures.over10, 100 - percentile);
  figures.over10 = (figures.over10 / 100) * loopDelay.count;
  loopDelay.reset();
  return figures;
}
let profiler = new v8.GCProfiler();
profiler.start();
function foldCollections(): void {
  const profile = profiler.stop() as unknown as { statistics: { gcType: string; cost: number; beforeGC: { heapSpaceStatistics: GcSpaces }; afterGC: { heapSpaceStatistics: GcSpaces } }[] } | undefined;
  profiler = new v8.GCProfiler();
  profiler.start();
  for (const entry of profile?.statistics ?? []) {
    const ms = entry.cost / 1000;
    const before = entry.beforeGC.heapSpaceStatistics;
    const after = entry.afterGC.heapSpaceStatistics;
    if (oldAfterLast !== undefined) collector.oldAllocatedBytes += Math.max(0, oldBytes(before) - oldAfterLast);
    oldAfterLast = oldBytes(after);
    if (entry.gcType === 'Scavenge' || entry.gcType === 'MinorMarkSweep') {
      collector.scavenges++;
      collector.scavengeMs += ms;
      collector.promotedBytes += Math.max(0, oldBytes(after) - oldBytes(before));
      collector.survivedBytes += youngBytes(after);
    } else if (entry.gcType === 'MarkSweepCompact') {
      collector.markCompacts++;
      collector.markCompactMs += ms;
      collector.compactedBytes += Math.max(0, oldBytes(before) - oldBytes(after));
    } else if (entry.gcType === 'IncrementalMarking') (collector.incremental++, (collector.incrementalMs += ms));
    else (collector.weak++, (collector.weakMs += ms));
  }
}

/** Used bytes of V8's old, code, large-object and new spaces. */
function heapSpaces(): Record<string, number> {
  const spaces: Record<string, number> = {};
  for (const space of v8.getHeapSpaceStatistics()) spaces[space.space_name] = space.space_used_size;
  const heap = v8.getHeapStatistics();
  return { ...spaces, totalHeapSize: heap.total_heap_size, mallocedMemory: heap.malloced_memory, externalMemory: heap.external_memory };
}

function kernelCounts(): Record<string, number> {
  const usage = process.resourceUsage();
  return { minorPageFaults: usage.minorPageFault, majorPageFaults: usage.majorPageFault, voluntarySwitches: usage.voluntaryContextSwitches, involuntarySwitches: usage.involuntaryContextSwitches, fsWrites: usage.fsWrite };
}

const stop = (): void => void probe.stop().finally(() => process.exit(0));
if (overIpc) {
  // Returns nothing: EventEmitter.emit hands a listener's non-undefined result to its promise
  // check (`addCatch`), a call the server's listeners never reach, and reaching it deoptimised emit,
  // the hottest function the server has, at every read of the figures.
  process.on('message', (command) => void process.send!(answer(String(command))));
  process.on('disconnect', stop);
} else {
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => process.stdout.write(`${JSON.stringify(answer(line))}\n`));
  lines.on('close', stop);
}

/** The figures `stats` and `gc` answer. */
function answer(line: string): Record<string, unknown> {
  if (line === 'gc') globalThis.gc?.();
  foldCollections();
  const cpu = process.cpuUsage();
  const memory = process.memoryUsage();
  return {
    cpuUs: cpu.user + cpu.system,
    // The kernel's part (socket writes and reads over loopback, the database's file writes).
    systemUs: cpu.system,
    // The main thread's alone (the event loop that runs the calls), without worker threads' (the
    // call-record writer's, media workers').
    mainThreadUs: mainThreadCpuUs(),
    rss: memory.rss,
    heapUsed: memory.heapUsed,
    external: memory.external,
    arrayBuffers: memory.arrayBuffers,
    eventLog: probe.eventLog(),
    queues: probe.queues(),
    limits: probe.limits(),
    collector: { ...collector },
    loopDelay: loopDelays(),
    heap: heapSpaces(),
    // Counts the kernel keeps: page faults (the heap's pages mapped anew), context switches (a
    // thread that waited: the collector's helpers, a write that blocked) and file writes.
    usage: kernelCounts(),
  };
}

/**
 * The main thread's CPU (user + kernel) from /proc/self/task/<pid>/stat, in µs: 10 ms steps (the
 * kernel's clock ticks), so measure over a few seconds of work. Undefined off Linux.
 */
function mainThreadCpuUs(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'latin1');
    // Fields after the command name (which may hold spaces) start at its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * (1_000_000 / CLOCK_TICKS_PER_SECOND) : undefined;
  } catch {
    return undefined;
  }
}

/** USER_HZ: 100 on every Linux build this runs on (getconf CLK_TCK). */
const CLOCK_TICKS_PER_SECOND = 100;

async function startServerTarget(): Promise<Probe> {
  // PATCHBAY_BENCH_ROOT: a compiled server (npm run build's dist/, or an older build to compare
  // with), whose profile has real line numbers; the sources through tsx otherwise.
  const compiled = process.env.PATCHBAY_BENCH_ROOT;
  const module = (path: string): string => (compiled ? pathToFileURL(join(compiled, `${path}.js`)).href : `../src/${path}.ts`);
  const { loadConfig } = (await import(module('config/config'))) as typeof import('../src/config/config.ts');
  const { startServer } = (await import(module('server'))) as typeof import('../src/server.ts');
  const dataDir = mkdtempSync(join(os.tmpdir(), 'patchbay-bench-'));
  // PATCHBAY_BENCH_OVERRIDES: settings (JSON, as in patchbay.yaml) laid over the bench's, to price a
  // feature by turning it off (`{"cdr":{"enabled":false}}`); the floor is never changed.
  const extra = JSON.parse(process.env.PATCHBAY_BENCH_OVERRIDES ?? '{}') as Record<string, Record<string, unknown>>;
  const config = loadConfig({
    path: null,
    env: {},
    overrides: {
      ...extra,
      http: { ...extra.http, port: 0, bind: '127.0.0.1' },
      sip: { ...extra.sip, port: 0 },
      dirs: { ...extra.dirs, data: dataDir },
      ari: { ...extra.ari, developer_mode: false },
      logging: { ...extra.logging, console: false, level: 'warn' },
    },
  });
  const server = await startServer(config, { logDestination: new Writable({ write: (_chunk, _encoding, done) => done() }) });
  await mediaWorkersSettled(server.core.pjsip);
  return {
    url: server.url,
    // An older build (--baseline) may have no usage().
    eventLog: () => ('usage' in server.core.eventLog ? { ...server.core.eventLog.usage() } : undefined),
    // Older builds (--baseline) may have no eventQueues().
    queues: () => ('eventQueues' in server ? { ...server.eventQueues() } : undefined),
    limits: () => {
      const log = config.ari.eventLog;
      const queue = config.ari.websocket;
      return { maxEvents: log.maxEvents, maxBytes: log.maxBytes, maxTotalBytes: log.maxTotalBytes, maxApplications: log.maxApplications, maxAgeSeconds: log.maxAgeSeconds, maxQueuedMessages: queue.maxQueuedMessages, maxQueuedBytes: queue.maxQueuedBytes };
    },
    stop: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Until the media workers have loaded, and a second more. The server answers as soon as HTTP
 * listens, while its workers (media.workers, started last) still load their code: about 250 ms of
 * CPU in their threads over the next 1–5 s on this machine, counted by process.cpuUsage(). Measured
 * then, a start-up cost passed for a per-request one: 2–3 µs of the ping's 15 (docs/performance.md,
 * issue 25, "The process's own cost"). `PATCHBAY_BENCH_NO_WORKER_WAIT=1` measures as before.
 */
async function mediaWorkersSettled(pjsip: { stats(): { mediaWorkers?: readonly { running: boolean }[] } }): Promise<void> {
  if (process.env.PATCHBAY_BENCH_NO_WORKER_WAIT === '1') return;
  const deadline = Date.now() + 60_000;
  // An older build (--baseline) may not report its workers: it is given the same settle.
  while (Date.now() < deadline && !(pjsip.stats().mediaWorkers ?? []).every((worker) => worker.running)) await new Promise((resolve) => setTimeout(resolve, 50));
  await new Promise((resolve) => setTimeout(resolve, 1000));
}

async function startHostedFloor(): Promise<Probe> {
  const server = await startServerTarget();
  const floor = await startFloor();
  return { ...floor, stop: async () => void (await Promise.all([floor.stop(), server.stop()])) };
}

/** The floor: the same answers a client needs for ping and an originate cycle, and nothing more. */
async function startFloor(): Promise<Probe> {
  const AUTH = `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}`;
  const serverId = '02:00:00:00:00:01';
  const sockets = new Map<string, Set<WebSocket>>();
  let nextId = 0;
  const channelJson = (id: string, state: string): Record<string, unknown> => ({
    id,
    name: `Local/answer@default-${id}`,
    state,
    protocol_id: '',
    caller: { name: '', number: '' },
    connected: { name: '', number: '' },
    accountcode: '',
    dialplan: { context: 'default', exten: 'answer', priority: 1, app_name: 'Stasis', app_data: 'bench' },
    creationtime: formatAriDate(),
    language: 'en',
  });
  let sequence = 0;
  const emit = (app: string, type: string, channel: Record<string, unknown>): void => {
    const listeners = sockets.get(app);
    if (!listeners) return;
    const text = JSON.stringify({ type, timestamp: formatAriDate(), channel, application: app, asterisk_id: serverId, sequence: ++sequence });
    for (const socket of listeners) socket.send(text);
  };
  // same-events: ids, names and creation times shaped as the server's (same lengths), new per cycle.
  const learnt = template ? templateNames(template) : undefined;
  const epoch = Math.floor(Date.now() / 1000);
  const nextCycle = (): CycleNames => {
    const n = ++nextId;
    const name = `Local/answer@default-${n.toString(16).padStart(8, '0')}`;
    return { ids: [`${epoch}.${2 * n - 1}`, `${epoch}.${2 * n}`], names: [`${name};1`, `${name};2`], creationtime: formatAriDate() };
  };
  const replay = (app: string, after: 'originate' | 'hangup', cycle: CycleNames): void => {
    const listeners = sockets.get(app);
    if (!listeners || !template || !learnt) return;
    for (const frame of template.frames) {
      if (frame.after !== after) continue;
      const event = instantiate(frame.event, learnt, cycle, formatAriDate()) as Record<string, unknown>;
      event.application = app;
      event.asterisk_id = serverId;
      event.sequence = ++sequence;
      const text = JSON.stringify(event);
      for (const socket of listeners) socket.send(text);
    }
  };
  const answer = (response: http.ServerResponse, status: number, body?: unknown): void => {
    if (body === undefined) {
      response.writeHead(status, { 'Content-Length': 0 });
      response.end();
      return;
    }
    const text = JSON.stringify(body);
    response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    response.end(text);
  };
  const server = http.createServer((request, response) => {
    if (request.headers.authorization !== AUTH) return answer(response, 401, { message: 'Authentication required' });
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const params = new URLSearchParams(query < 0 ? '' : url.slice(query + 1));
    if (request.method === 'GET' && path === '/ari/asterisk/ping') return answer(response, 200, { ping: 'pong', timestamp: formatAriDate(), asterisk_id: serverId });
    if (request.method === 'POST' && path === '/ari/channels' && learnt) {
      const app = params.get('app') ?? '';
      const cycle = nextCycle();
      answer(response, 200, instantiate(template!.created, learnt, cycle, formatAriDate()));
      setImmediate(() => replay(app, 'originate', cycle));
      live.set(cycle.ids[0], { app, cycle });
      return;
    }
    if (request.method === 'DELETE' && path.startsWith('/ari/channels/') && learnt) {
      const id = decodeURIComponent(path.slice('/ari/channels/'.length));
      const call = live.get(id);
      if (call === undefined) return answer(response, 404, { message: 'Channel not found' });
      live.delete(id);
      answer(response, 204);
      const cycle = call.cycle;
      if (cycle) setImmediate(() => replay(call.app, 'hangup', cycle));
      return;
    }
    if (request.method === 'POST' && path === '/ari/channels') {
      const app = params.get('app') ?? '';
      const id = `floor-${++nextId}`;
      answer(response, 200, channelJson(id, 'Down'));
      // After the answer, as the server raises its events on a later turn.
      setImmediate(() => {
        for (const type of floorEvents) if (type !== 'ChannelDestroyed') emit(app, type, channelJson(id, 'Up'));
      });
      live.set(id, { app });
      return;
    }
    if (request.method === 'DELETE' && path.startsWith('/ari/channels/')) {
      const id = decodeURIComponent(path.slice('/ari/channels/'.length));
      const call = live.get(id);
      if (call === undefined) return answer(response, 404, { message: 'Channel not found' });
      live.delete(id);
      answer(response, 204);
      setImmediate(() => emit(call.app, 'ChannelDestroyed', channelJson(id, 'Up')));
      return;
    }
    answer(response, 404, { message: 'Resource not found' });
  });
  const live = new Map<string, { app: string; cycle?: CycleNames }>();
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (request, socket, head) => {
    if (request.headers.authorization !== AUTH) return socket.destroy();
    const app = new URLSearchParams((request.url ?? '').split('?')[1] ?? '').get('app') ?? '';
    wss.handleUpgrade(request, socket, head, (ws) => {
      let set = sockets.get(app);
      if (!set) sockets.set(app, (set = new Set()));
      set.add(ws);
      ws.on('close', () => set.delete(ws));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    eventLog: () => undefined,
    queues: () => undefined,
    limits: () => undefined,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const set of sockets.values()) for (const socket of set) socket.terminate();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
