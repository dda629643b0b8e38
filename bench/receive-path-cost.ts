// What one received G.711 packet costs an RtpStream on its own, without the sockets (issue 25):
// a fake socket hands the stream N calls' packets, one per call per 20 ms tick, and the stream
// sends a frame per tick as a playing worker does. Run with the received audio decoded (through
// the jitter buffer, as a media worker did while it played a sound) and skipped (skipAudio): the
// difference is what skipping saves per packet; the rest (parse, strict RTP, statistics, the send
// path) stays. CPU time of this thread, best of --rounds.
// Usage: node --import tsx bench/receive-path-cost.ts [--calls 300 --seconds 5 --rounds 3 --codec ulaw|g722]
import type { RemoteInfo } from 'node:dgram';
import { parseArgs } from 'node:util';
import { linearToUlaw } from '../src/media/g711.ts';
import type { MediaMessageListener, MediaSocket } from '../src/media/rtp/media-socket.ts';
import { RtpStream, type StreamClock } from '../src/media/rtp/stream.ts';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '300' }, seconds: { type: 'string', default: '5' }, rounds: { type: 'string', default: '3' }, codec: { type: 'string', default: 'ulaw' } } });
const calls = Math.max(1, Math.min(5000, Number(values.calls) || 300));
const ticks = Math.max(1, Math.min(3000, Math.round((Number(values.seconds) || 5) * 50)));
const codec = values.codec === 'g722' ? { name: 'g722', payloadType: 9 } : { name: 'ulaw', payloadType: 0 };
const rounds = Math.max(1, Math.min(10, Number(values.rounds) || 3));

/** A socket that sends nowhere and receives what the bench hands it. */
class FakeSocket implements MediaSocket {
  listener: MediaMessageListener | undefined;
  constructor(readonly port: number) {}
  address(): { port: number } {
    return { port: this.port };
  }
  on(event: 'message' | 'error', listener: MediaMessageListener | ((error: Error) => void)): this {
    if (event === 'message') this.listener = listener as MediaMessageListener;
    return this;
  }
  off(): this {
    this.listener = undefined;
    return this;
  }
  send(): void {}
  close(): void {}
}

class Clock implements StreamClock {
  ticks = 0;
  readonly listeners: Array<() => void> = [];
  onTick(listener: () => void): void {
    this.listeners.push(listener);
  }
  offTick(): void {}
  tick(): void {
    this.ticks += 1;
    for (const listener of this.listeners) listener();
  }
}

function run(skip: boolean): number {
  const clock = new Clock();
  const frame = { rate: 8000 as const, samples: new Int16Array(160).fill(1200) };
  const sockets: FakeSocket[] = [];
  const streams: RtpStream[] = [];
  for (let i = 0; i < calls; i++) {
    const socket = new FakeSocket(20_000 + 2 * i);
    const stream = new RtpStream(socket, clock, { onFrame: () => undefined, onDigit: () => undefined }, { jitterBuffer: { minDelayMs: 60, maxDelayMs: 200 }, rtcpIntervalMs: 5000 });
    stream.configure({ codec: codec.name, payloadType: codec.payloadType, telephoneEventPt: 101, remoteAddress: '127.0.0.2', remotePort: 40_000 + 2 * i, direction: 'sendrecv' });
    stream.skipAudio(skip);
    sockets.push(socket);
    streams.push(stream);
  }
  const packet = Buffer.alloc(172, linearToUlaw(900));
  packet[0] = 0x80;
  packet[1] = codec.payloadType;
  const rinfo: RemoteInfo = { address: '127.0.0.2', port: 0, family: 'IPv4', size: 172 };
  const before = process.cpuUsage();
  for (let t = 0; t < ticks; t++) {
    packet.writeUInt16BE(t & 0xffff, 2);
    packet.writeUInt32BE((t * 160) >>> 0, 4);
    for (let i = 0; i < calls; i++) {
      packet.writeUInt32BE(0x1000 + i, 8);
      rinfo.port = 40_000 + 2 * i;
      sockets[i].listener?.(packet, rinfo);
    }
    for (let i = 0; i < calls; i++) streams[i].writeFrame(frame);
    clock.tick();
  }
  const used = process.cpuUsage(before);
  const statistics = streams[0].statistics();
  if (!statistics || statistics.rxcount !== ticks || statistics.txcount < ticks - 5) throw new Error(`the packets did not go through: ${JSON.stringify(statistics)}`);
  for (const stream of streams) stream.close();
  return (used.user + used.system) / (ticks * calls);
}

const results: Record<string, number> = {};
for (let r = 0; r < rounds; r++) {
  for (const skip of [false, true]) {
    const key = skip ? 'skipped' : 'decoded';
    const perPacket = run(skip);
    results[key] = Math.min(results[key] ?? Infinity, perPacket);
  }
}
console.log(`receive-path-cost: ${codec.name}, ${calls} calls, ${ticks} ticks, best of ${rounds} (CPU µs per call per 20 ms: one packet in, one frame out, no socket I/O)`);
console.log(`  decoded (jitter buffer + decoder): ${results.decoded.toFixed(2)} µs`);
console.log(`  skipped (skipAudio):             ${results.skipped.toFixed(2)} µs  (${(100 * (1 - results.skipped / results.decoded)).toFixed(0)} % less)`);
