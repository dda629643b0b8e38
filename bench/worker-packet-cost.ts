// What one call's packets cost a media worker (issue 25): a real media worker thread
// (src/media/workers/media-worker.ts, its MediaWorkerHost and RtpStreams on real loopback UDP
// sockets) carries --calls G.711 calls. This process plays both the far ends (one u-law packet per
// call per 20 ms into the worker's sockets) and the main thread's side of each call (its received
// frames taken from the shared ring and written back into the ring to send, as a channel echoing
// decoded audio would). So the worker runs the whole per-packet path both ways: receive → strict
// RTP → statistics → jitter buffer → decode → ring, and ring → encode → RTP header → socket.send.
// Over a --window after a warm-up: the worker thread's CPU (its own load reports, /proc/thread-self)
// divided by the packets it received and sent (a call's 20 ms is one of each), and the echoes this
// process got back. --cpu-prof DIR: the worker writes a V8 CPU profile there (open it in Chrome's
// DevTools or speedscope). CPU µs are of a shared machine: give the load average beside them.
// Usage: npx tsx bench/worker-packet-cost.ts [--calls 200 --window 10 --warmup 3 --cpu-prof /tmp/prof --dist]
import dgram from 'node:dgram';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { MediaClock } from '../src/media/clock.ts';
import { linearToUlaw } from '../src/media/g711.ts';
import { FrameCache } from '../src/media/workers/frame-ring.ts';
import type { FromWorker, ToWorker, WorkerLoadReport } from '../src/media/workers/protocol.ts';
import { StreamMemory } from '../src/media/workers/stream-memory.ts';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '200' },
    window: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    'cpu-prof': { type: 'string' },
    'port-start': { type: 'string', default: '' },
    // The worker from dist/ (npm run build): what the server runs, and a profile with the compiled lines.
    dist: { type: 'boolean', default: false },
  },
});
const calls = Math.max(1, Math.min(2000, Math.floor(Number(values.calls)) || 200));
const windowSeconds = Math.max(2, Math.min(60, Math.floor(Number(values.window)) || 10));
const warmupSeconds = Math.max(1, Math.min(30, Math.floor(Number(values.warmup)) || 3));
// A random even range above 20000 so that runs beside others on the machine rarely meet.
const portStart = Number(values['port-start']) || 20_000 + 2 * Math.floor(Math.random() * 10_000);
const portEnd = Math.min(65_535, portStart + 2 * calls + 200);
const HOST = '127.0.0.1';

function spawnWorker(): Worker {
  const profile = values['cpu-prof'];
  const execArgv = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`, '--cpu-prof-interval=200'] : [];
  const env = { ...process.env, OPUS_FORCE_WASM: '1' };
  if (values.dist) return new Worker(new URL('../dist/media/workers/media-worker.js', import.meta.url), { execArgv, env });
  const entry = new URL('../src/media/workers/media-worker.ts', import.meta.url);
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(bootstrap, { eval: true, execArgv, env });
}

interface Call {
  readonly id: number;
  readonly memory: StreamMemory;
  port: number;
  readonly packet: Buffer;
  sequence: number;
  timestamp: number;
}

const worker = spawnWorker();
const loads: WorkerLoadReport[] = [];
const opened = new Map<number, (port: number) => void>();
let ready: () => void;
const isReady = new Promise<void>((resolve) => (ready = resolve));
worker.on('message', (message: FromWorker) => {
  if (message.type === 'ready') ready();
  else if (message.type === 'opened') opened.get(message.id)?.(message.port);
  else if (message.type === 'open-failed') throw new Error(`stream ${message.id}: ${message.reason}`);
  else if (message.type === 'load') loads.push(message.load);
});
const post = (message: ToWorker): void => worker.postMessage(message);
await isReady;

const farEnd = dgram.createSocket('udp4');
await new Promise<void>((resolve) => farEnd.bind(0, HOST, resolve));
const farPort = farEnd.address().port;
let echoed = 0;
farEnd.on('message', () => void (echoed += 1));

const payload = linearToUlaw(900);
const list: Call[] = [];
for (let i = 0; i < calls; i++) {
  const id = i + 1;
  const memory = StreamMemory.create();
  const port = new Promise<number>((resolve) => opened.set(id, resolve));
  post({ type: 'open', id, host: HOST, portStart, portEnd, options: { jitterBuffer: { minDelayMs: 20, maxDelayMs: 200 }, rtcpIntervalMs: 5000 }, memory: memory.buffer });
  const packet = Buffer.alloc(172, payload);
  packet[0] = 0x80;
  packet[1] = 0;
  packet.writeUInt32BE(0x1000 + i, 8);
  list.push({ id, memory: new StreamMemory(memory.buffer), port: await port, packet, sequence: 0, timestamp: 0 });
  post({ type: 'configure', id, parameters: { codec: 'ulaw', payloadType: 0, telephoneEventPt: 101, remoteAddress: HOST, remotePort: farPort, direction: 'sendrecv' } });
}

// Each 20 ms: every far end sends its packet; every call's received frames go back to be sent.
const clock = new MediaClock();
const frames = new FrameCache();
clock.add(() => {
  for (const call of list) {
    call.packet.writeUInt16BE(call.sequence, 2);
    call.packet.writeUInt32BE(call.timestamp, 4);
    call.sequence = (call.sequence + 1) & 0xffff;
    call.timestamp = (call.timestamp + 160) >>> 0;
    farEnd.send(call.packet, call.port, HOST);
    let frame;
    while ((frame = call.memory.received.pop(frames)) !== undefined) call.memory.toSend.push(frame.rate, frame.samples);
  }
});
clock.start();

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
await sleep(warmupSeconds * 1000);
const firstReport = loads.length;
const echoedBefore = echoed;
const started = performance.now();
await sleep(windowSeconds * 1000);
const seconds = (performance.now() - started) / 1000;
const window = loads.slice(firstReport);
const echoes = echoed - echoedBefore;
clock.stop();
for (const call of list) post({ type: 'close', id: call.id });
await sleep(300);
// --cpu-prof is written when the worker's isolate exits; terminate() gives it the chance.
await worker.terminate();
farEnd.close();

const cpu = window.reduce((sum, load) => sum + Math.max(0, load.cpu), 0); // CPU-seconds (one report a second)
const packetsIn = window.reduce((sum, load) => sum + load.packetsInPerSecond, 0);
const packetsOut = window.reduce((sum, load) => sum + load.packetsOutPerSecond, 0);
const utilization = window.reduce((sum, load) => sum + load.utilization, 0) / Math.max(1, window.length);
console.log(`worker-packet-cost: ${calls} G.711 calls in one media worker, ${window.length} load reports over ${seconds.toFixed(1)} s; Node ${process.versions.node}; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log(`  packets in ${packetsIn.toFixed(0)}, out ${packetsOut.toFixed(0)}, echoes back ${echoes} (${((100 * echoes) / Math.max(1, calls * 50 * seconds)).toFixed(1)} % of those sent)`);
console.log(`  worker CPU ${(100 * cpu / Math.max(1, window.length)).toFixed(1)} % of a core, event loop utilisation ${(100 * utilization).toFixed(1)} %`);
// Per packet either way: under load this process may echo fewer frames than it receives, so in and out differ.
const perPacket = (cpu * 1e6) / Math.max(1, packetsIn + packetsOut);
console.log(`  ${perPacket.toFixed(2)} µs of worker CPU per packet (received and decoded, or encoded and sent); ${(2 * perPacket).toFixed(2)} µs per call per 20 ms`);
if (values['cpu-prof']) console.log(`  CPU profile of the worker in ${values['cpu-prof']}`);
