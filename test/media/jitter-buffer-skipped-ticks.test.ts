// The jitter buffer when the media clock drops ticks after stalls (a starved main thread: the clock
// runs at most 10 overdue ticks back to back and drops the rest). Packets keep arriving every 20 ms;
// the clock stalls for 0.6 s every two seconds and its dropped ticks are told to the buffer
// (JitterBuffer.ticksSkipped, as the RTP stream does from MediaClock.skippedTicks). Playout must stay
// within its delay of the packets, not trail them by the stalls (found by bench/webrtc-calls.ts:
// the buffer trailed by more than its ring and restarted on nearly every packet).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JitterBuffer } from '../../src/media/rtp/jitter-buffer.ts';

const FRAME_MS = 20;
const STALL_EVERY_MS = 2_000;
const STALL_MS = 600;
const UNTIL_MS = 12_000;

/** Ticks every 20 ms but none during the stalls (dropped, told to the buffer when `tell`); packets every 20 ms throughout. */
function stalledClock(tell: boolean): { lagMs: number[]; resyncs: number; frames: number } {
  const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
  const samples = new Int16Array(160);
  const lagMs: number[] = [];
  let sent = 0;
  let frames = 0;
  for (let tick = FRAME_MS; tick <= UNTIL_MS; tick += FRAME_MS) {
    // The packets that arrived since the last tick run (during a stall they queue, and are read before the next tick).
    while (3 + sent * FRAME_MS < tick) {
      samples.fill(sent % 30_000);
      buffer.push(samples, 160, (1000 + sent * 160) >>> 0, 7, 3 + sent * FRAME_MS);
      sent += 1;
    }
    const inStall = tick > STALL_EVERY_MS && tick % STALL_EVERY_MS < STALL_MS;
    if (inStall) {
      // The clock's last tick before it gives up on the stall's remaining ones.
      if (tell && (tick + FRAME_MS) % STALL_EVERY_MS >= STALL_MS) buffer.ticksSkipped(STALL_MS / FRAME_MS - 1);
      continue;
    }
    const frame = buffer.next(tick);
    if (frame && frame.samples[0]! > 0) {
      frames += 1;
      // How far behind the newest packet the frame played is.
      lagMs.push((sent - 1 - frame.samples[0]!) * FRAME_MS);
    }
  }
  return { lagMs, resyncs: buffer.resyncs, frames };
}

test('dropped clock ticks, told to the jitter buffer, keep playout within its delay of the packets; no restarts', () => {
  const { lagMs, resyncs, frames } = stalledClock(true);
  assert.equal(resyncs, 0, 'the buffer never restarts');
  const worst = Math.max(...lagMs.slice(-50));
  assert.ok(worst <= 260, `playout trails the newest packet by ${worst} ms at most at the end (delay at most 200 ms and a frame or two)`);
  assert.ok(frames > 300, `${frames} frames played`);
});

test('without being told, playout falls ever further behind the packets (what the stream telling it the dropped ticks prevents)', () => {
  const { lagMs, resyncs } = stalledClock(false);
  const worst = Math.max(...lagMs.slice(-50));
  assert.ok(worst > 1_000 || resyncs > 0, `trails by ${worst} ms, ${resyncs} restarts`);
});
