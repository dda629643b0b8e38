// What one media-worker stream holds (issue 25, "Memory per call"): opens N streams in a
// MediaWorkerHost in this process, as a media worker does for N echo calls (PCMU, jitter buffer,
// RTCP pair, looping, shared memory sized for G.711), lets packets flow through each for a few seconds, then prints heap used,
// external (ArrayBuffers) and RSS per stream after a full GC, and the heap's retained self size by
// constructor per stream (from a heap snapshot), biggest first.
// Usage: node --expose-gc --import tsx bench/worker-stream-memory.ts [--streams 300] [--seconds 3] [--top 25]
import dgram from 'node:dgram';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { MediaWorkerHost } from '../src/media/workers/worker-host.ts';
import { StreamMemory } from '../src/media/workers/stream-memory.ts';
import type { FromWorker } from '../src/media/workers/protocol.ts';
import { sizesByName, type Snapshot } from './heap-snapshot-sizes.ts';

const { values } = parseArgs({ options: { streams: { type: 'string', default: '300' }, seconds: { type: 'string', default: '3' }, top: { type: 'string', default: '25' } } });
const streams = Math.min(Math.max(Number(values.streams) || 300, 1), 2000);
const seconds = Math.min(Math.max(Number(values.seconds) || 3, 0), 60);
const top = Math.min(Math.max(Number(values.top) || 25, 1), 200);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Figures { heap: number; external: number; arrayBuffers: number; rss: number }
function figures(): Figures {
  gc!();
  gc!();
  const memory = process.memoryUsage();
  return { heap: memory.heapUsed, external: memory.external, arrayBuffers: memory.arrayBuffers, rss: memory.rss };
}

/** Self size by constructor name of the heap's objects (a heap snapshot's nodes, summed). */
function sizesByConstructor(): Map<string, { count: number; bytes: number }> {
  const file = join(tmpdir(), `worker-stream-memory-${process.pid}.heapsnapshot`);
  v8.writeHeapSnapshot(file);
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  rmSync(file, { force: true });
  return sizesByName(snapshot);
}

const posted: FromWorker[] = [];
const host = new MediaWorkerHost((message) => posted.push(message), true);
const peers: dgram.Socket[] = [];
const packet = Buffer.alloc(12 + 160, 0xff);
packet[0] = 0x80;
packet[1] = 0;

const before = figures();
const sizesBefore = sizesByConstructor();
for (let id = 1; id <= streams; id++) {
  host.handle({ type: 'open', id, host: '127.0.0.1', portStart: 30000, portEnd: 39999, options: { rtcpIntervalMs: 5000, strictRtp: true, probation: 4, symmetric: false, jitterBuffer: { minDelayMs: 20, maxDelayMs: 200 } }, memory: StreamMemory.create(160).buffer, receivedSamples: 160 });
}
while (posted.filter((message) => message.type === 'opened' || message.type === 'open-failed').length < streams) await sleep(10);
const ports = new Map<number, number>();
for (const message of posted) if (message.type === 'opened') ports.set(message.id, message.port);
for (const [id, port] of ports) {
  const peer = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => peer.bind(0, '127.0.0.1', resolve));
  peers.push(peer);
  host.handle({ type: 'configure', id, parameters: { codec: 'ulaw', payloadType: 0, remoteAddress: '127.0.0.1', remotePort: peer.address().port, direction: 'sendrecv' } });
  host.handle({ type: 'loop', id, on: true });
  peer.on('message', () => {});
}
// 50 packets a second into each stream, so the jitter buffers, statistics and RTCP are as in a call.
let sequence = 0;
const feed = setInterval(() => {
  sequence = (sequence + 1) & 0xffff;
  packet.writeUInt16BE(sequence, 2);
  packet.writeUInt32BE(sequence * 160, 4);
  let i = 0;
  for (const [, port] of ports) {
    packet.writeUInt32BE(0x1000 + i, 8);
    peers[i++].send(packet, port, '127.0.0.1');
  }
}, 20);
await sleep(seconds * 1000);
clearInterval(feed);
await sleep(100);
const after = figures();
const sizesAfter = sizesByConstructor();
const opened = ports.size;
const kinds = new Map<string, number>();
for (const message of posted) kinds.set(message.type, (kinds.get(message.type) ?? 0) + 1);
console.log(`messages from the host: ${[...kinds].map(([kind, count]) => `${kind} ${count}`).join(", ")}; load ${JSON.stringify(host.load(1, 0, 0))}`);
const per = (a: number, b: number): string => `${((b - a) / opened / 1024).toFixed(1)} KiB`;
console.log(`${opened} streams hosted (${streams - opened} failed to open), fed ${seconds} s at 50 packets/s each; per stream after a full GC:`);
console.log(`  heap used ${per(before.heap, after.heap)}, external ${per(before.external, after.external)} (ArrayBuffers ${per(before.arrayBuffers, after.arrayBuffers)}), RSS ${per(before.rss, after.rss)}`);
console.log('  heap self size per stream by constructor (the peers\' sockets of this bench included: one dgram socket each):');
const rows = [...sizesAfter].map(([name, entry]) => {
  const was = sizesBefore.get(name) ?? { count: 0, bytes: 0 };
  return { name, count: (entry.count - was.count) / opened, bytes: (entry.bytes - was.bytes) / opened };
}).filter((row) => row.bytes > 0).sort((a, b) => b.bytes - a.bytes).slice(0, top);
for (const row of rows) console.log(`    ${row.bytes.toFixed(0).padStart(7)} B  ${row.count.toFixed(1).padStart(6)} ×  ${row.name}`);
for (const id of ports.keys()) host.handle({ type: 'close', id });
for (const peer of peers) peer.close();
host.closeAll();
