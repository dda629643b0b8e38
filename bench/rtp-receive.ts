// Per-packet cost of the receiving side of a SIP call's media and proof that it allocates
// nothing: a jittered, reordered PCMU stream through the jitter buffer (push + one frame out per
// tick), and RTCP compound reports read and built. Prints ns per packet and the heap growth over
// a million packets (with --expose-gc for a clean figure). Run: npm run bench:rtp-receive
import { JitterBuffer } from '../src/media/rtp/jitter-buffer.ts';
import { RtpPayloadCoder } from '../src/media/rtp/payload.ts';
import { RtpReceiverStats } from '../src/media/rtp/receiver-stats.ts';
import { RtcpSession } from '../src/media/rtp/rtcp-session.ts';
import { RtpSender } from '../src/media/rtp/sender.ts';

const PACKETS = 1_000_000;
const gc = (globalThis as { gc?: () => void }).gc;

const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
const samples = new Int16Array(160).map((_, i) => Math.round(4000 * Math.sin(i / 5)));
// Arrival jitter of 0–60 ms from a fixed table, and every tenth pair swapped.
const jitter = Float64Array.from({ length: 997 }, (_, i) => ((i * 7919) % 61));

function run(count: number): number {
  let frames = 0;
  for (let i = 0; i < count; i++) {
    const index = i % 10 === 4 ? i + 1 : i % 10 === 5 ? i - 1 : i;
    buffer.push(samples, 160, (index * 160) >>> 0, 42, index * 20 + jitter[index % jitter.length]);
    if (buffer.next(i * 20 + 20)) frames++;
  }
  return frames;
}

run(100_000);
gc?.();
const heapBefore = process.memoryUsage().heapUsed;
const started = process.hrtime.bigint();
const frames = run(PACKETS);
const ns = Number(process.hrtime.bigint() - started) / PACKETS;
gc?.();
const heapAfter = process.memoryUsage().heapUsed;
console.log(`jitter buffer push + next, 8 kHz, jittered     ${ns.toFixed(0).padStart(6)} ns/packet  (${frames} frames out of ${PACKETS})`);
console.log(`  heap growth over ${PACKETS} packets: ${((heapAfter - heapBefore) / 1024).toFixed(0)} KiB${gc ? '' : ' (run with node --expose-gc --import tsx for a clean figure)'}`);

const sender = new RtpSender(new RtpPayloadCoder('ulaw'), { ssrc: 1 });
sender.audio(samples, 1);
const receiver = new RtpReceiverStats(8000);
receiver.update(2, 1, 160, 160, 0);
const ours = new RtcpSession(5000);
const theirs = new RtcpSession(5000);
const reports = 200_000;
const rtcpStarted = process.hrtime.bigint();
for (let i = 0; i < reports; i++) {
  const length = theirs.build(sender, receiver, i, 1_700_000_000_000 + i);
  ours.receive(theirs.packet, length, 2, i, 1_700_000_000_000 + i);
}
console.log(`RTCP compound report built + read              ${(Number(process.hrtime.bigint() - rtcpStarted) / reports).toFixed(0).padStart(6)} ns/report`);
