// The adaptive jitter buffer against synthetic arrival schedules: every packet carries its own
// index as its sample value, ticks come every 20 ms, and the test reads which packet each output
// frame came from: order, loss, concealment, late drops, delay adaptation, resync and bounds.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { JitterBuffer } from '../../src/media/rtp/jitter-buffer.ts';

interface Arrival {
  /** Packet index: its timestamp is base + index * 160, its samples all equal 10000 + index. */
  readonly index: number;
  readonly at: number;
  readonly ssrc?: number;
  /** Overrides the timestamp. */
  readonly timestamp?: number;
  readonly value?: number;
}

interface Out {
  /** The tick's time. */
  readonly at: number;
  /** First sample of the frame, or undefined for no frame. */
  readonly value: number | undefined;
  /** Every sample of the frame equals the first. */
  readonly uniform: boolean;
  readonly target: number;
}

const BASE_TS = 0xffff_f000; // wraps the 32-bit timestamp within the first second

/** Runs the schedule: packets pushed at their arrival times, a tick every 20 ms until `untilMs`. */
function run(buffer: JitterBuffer, arrivals: Arrival[], untilMs: number): Out[] {
  const sorted = [...arrivals].sort((a, b) => a.at - b.at);
  const samples = new Int16Array(160);
  const out: Out[] = [];
  let next = 0;
  for (let tick = 20; tick <= untilMs; tick += 20) {
    while (next < sorted.length && sorted[next].at < tick) {
      const packet = sorted[next++];
      samples.fill(packet.value ?? 10000 + packet.index);
      const timestamp = packet.timestamp ?? (BASE_TS + packet.index * 160) >>> 0;
      buffer.push(samples, 160, timestamp, packet.ssrc ?? 1, packet.at);
    }
    const frame = buffer.next(tick);
    const value = frame?.samples[0];
    out.push({ at: tick, value, uniform: frame ? frame.samples.every((s) => s === value) : true, target: buffer.targetDelayMs });
  }
  return out;
}

/** The packet indices of the frames that carried real audio (value = 10000 + index), in output order. */
function played(out: Out[], count: number): number[] {
  return out.filter((o) => o.value !== undefined && o.value >= 10000 && o.value < 10000 + count && o.uniform).map((o) => (o.value as number) - 10000);
}

function steady(count: number, jitter: (i: number) => number = () => 0, startMs = 3): Arrival[] {
  return Array.from({ length: count }, (_, index) => ({ index, at: startMs + index * 20 + jitter(index) }));
}

/** A deterministic pseudo-random sequence in [0, 1). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 0x1_0000_0000;
  };
}

const isIncreasing = (list: number[]): boolean => list.every((v, i) => i === 0 || v > list[i - 1]);

describe('adaptive jitter buffer', () => {
  test('steady packets: every frame out once, in order, at the least delay, nothing concealed', () => {
    const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
    const out = run(buffer, steady(100), 2200);
    const got = played(out, 100);
    assert.deepEqual(got, Array.from({ length: 100 }, (_, i) => i));
    // Only after the last packet: three fading repeats.
    assert.equal(buffer.concealed, 3);
    assert.equal(buffer.late, 0);
    assert.equal(buffer.targetDelayMs, 20);
    // Packet 0 arrives at 3 ms and is played within the target plus a frame.
    const firstAt = out.find((o) => o.value === 10000)!.at;
    assert.ok(firstAt - 3 <= 20 + 20, `first frame out at ${firstAt} ms`);
  });

  test('reordered pairs (each odd packet overtakes its predecessor): all out, in order', () => {
    const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
    const arrivals = steady(100, (i) => (i % 2 === 0 ? 12 : 0));
    const got = played(run(buffer, arrivals, 2400), 100);
    assert.deepEqual(got, Array.from({ length: 100 }, (_, i) => i));
    assert.equal(buffer.late, 0);
  });

  test('jitter up to 80 ms: the target grows to cover it, then nothing is late; calm again, the delay shrinks back to the minimum', () => {
    const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
    const rand = random(7);
    const jittery = 150; // 3 s of jitter, then 8 s calm
    const arrivals = steady(550, (i) => (i < jittery ? Math.floor(rand() * 80) : 0));
    const out = run(buffer, arrivals, 11_400);
    const got = played(out, 550);
    assert.ok(isIncreasing(got), 'frames come out in order');
    const peakTarget = Math.max(...out.map((o) => o.target));
    assert.ok(peakTarget >= 80 && peakTarget <= 110, `target grew to ${peakTarget} ms`);
    // Once adapted (the first 20 packets) no packet of the jittery part is missing.
    const jitteryPlayed = got.filter((i) => i >= 20 && i < jittery);
    assert.equal(jitteryPlayed.length, jittery - 20, `${jittery - 20 - jitteryPlayed.length} packets missing after adaptation (late ${buffer.late})`);
    assert.ok(buffer.late <= 3, `${buffer.late} late packets`);
    assert.ok(buffer.stretches > 0, 'the delay was grown by holding playout');
    // Calm for 8 s: the target is back at the minimum and the playout delay followed it.
    assert.equal(out.at(-1)!.target, 20);
    assert.ok(buffer.shrinks > 0, 'the delay was shrunk by dropping frames');
    const last = out.filter((o) => o.value !== undefined && o.value >= 10000).at(-1)!;
    const delay = last.at - arrivals[last.value! - 10000].at;
    assert.ok(delay <= 20 + 40, `final delay ${delay} ms`);
  });

  test('a lost packet is concealed by a faded repeat of the one before; the stream goes on', () => {
    const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
    const arrivals = steady(60).filter((a) => a.index !== 30).map((a) => ({ ...a, value: 1000 + a.index * 10 }));
    const values = run(buffer, arrivals, 1400)
      .map((o) => o.value)
      .filter((v) => v !== undefined);
    const at = values.indexOf(1000 + 29 * 10);
    assert.deepEqual(values.slice(at, at + 3), [1290, 1290 >> 1, 1310]);
    // One for the loss, three after the stream ends.
    assert.equal(buffer.concealed, 4);
  });

  test('a gap longer than three frames: three fading repeats, then no frames until audio returns', () => {
    const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
    const arrivals = steady(60).filter((a) => a.index < 20 || a.index >= 30).map((a) => ({ ...a, value: 800 }));
    const values = run(buffer, arrivals, 1400).map((o) => o.value);
    const first = values.indexOf(800);
    const afterAudio = values.slice(first);
    const gapStart = afterAudio.findIndex((v) => v !== 800);
    assert.deepEqual(afterAudio.slice(gapStart, gapStart + 10), [400, 200, 100, undefined, undefined, undefined, undefined, undefined, undefined, undefined]);
    assert.equal(afterAudio[gapStart + 10], 800);
  });

  test('a packet later than the maximum delay is dropped and counted; the others play', () => {
    const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
    const arrivals = steady(80).map((a) => (a.index === 20 ? { ...a, at: a.at + 500 } : a));
    const got = played(run(buffer, arrivals, 2400), 80);
    assert.equal(buffer.late, 1);
    assert.ok(!got.includes(20), 'the late packet was not played');
    assert.ok(isIncreasing(got), 'the others in order');
    assert.ok(got.filter((i) => i > 20).length >= 55, `${got.filter((i) => i > 20).length} packets after it played`);
    // The target is bounded by the maximum even though the packet was 500 ms late.
    assert.equal(buffer.targetDelayMs, 200);
  });

  test('bursts (nothing for 100 ms, then five at once): after the first burst the target covers them and nothing is lost', () => {
    const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
    // Packets are held back and released every fifth slot.
    const arrivals = steady(150, (i) => (4 - (i % 5)) * 20);
    const got = played(run(buffer, arrivals, 3600), 150);
    assert.ok(isIncreasing(got));
    assert.ok(buffer.targetDelayMs >= 80 && buffer.targetDelayMs <= 120, `target ${buffer.targetDelayMs}`);
    assert.deepEqual(
      got.filter((i) => i >= 20),
      Array.from({ length: 130 }, (_, i) => i + 20),
    );
  });

  test('a new SSRC or a timestamp jump of 10 s restarts the buffer; audio goes on within the target delay', () => {
    const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
    const first = steady(40).map((a) => ({ ...a, value: 100 }));
    const second = steady(40, () => 0, 803).map((a) => ({ ...a, ssrc: 2, value: 200, timestamp: 12345 + a.index * 160 }));
    const third = steady(40, () => 0, 1603).map((a) => ({ ...a, ssrc: 2, value: 300, timestamp: (12345 + 80_000 + a.index * 160) >>> 0 }));
    const out = run(buffer, [...first, ...second, ...third], 2500);
    assert.equal(buffer.resyncs, 2);
    const count = (value: number): number => out.filter((o) => o.value === value).length;
    assert.ok(count(100) >= 39 && count(200) >= 38 && count(300) >= 38, `${count(100)}, ${count(200)}, ${count(300)} frames of the three streams`);
    const firstOfSecond = out.find((o) => o.value === 200)!.at;
    assert.ok(firstOfSecond - 803 <= 60, `second stream heard after ${firstOfSecond - 803} ms`);
  });

  test('a timestamp step back of 800 ms (within the ring): after three packets the buffer restarts, audio goes on', () => {
    const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
    const before = steady(50).map((a) => ({ ...a, value: 100 }));
    const after = steady(50, () => 0, 1003).map((a) => ({ ...a, value: 200, timestamp: (BASE_TS + (50 - 40 + a.index) * 160) >>> 0 }));
    const out = run(buffer, [...before, ...after], 2200);
    assert.equal(buffer.resyncs, 1);
    assert.ok(buffer.late <= 3, `${buffer.late} late`);
    assert.ok(out.filter((o) => o.value === 200).length >= 45, `${out.filter((o) => o.value === 200).length} frames after the step`);
  });

  test('a sender clock 1% fast: the delay stays bounded by dropping frames, nothing is late', () => {
    const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
    const arrivals = Array.from({ length: 1000 }, (_, index) => ({ index, at: 3 + index * 19.8 }));
    const out = run(buffer, arrivals, 20_000);
    const got = played(out, 1000);
    assert.ok(isIncreasing(got));
    assert.equal(buffer.late, 0);
    assert.ok(buffer.shrinks >= 5, `${buffer.shrinks} frames dropped for drift`);
    const last = out.filter((o) => o.value !== undefined && o.value >= 10000).at(-1)!;
    const delay = last.at - arrivals[last.value! - 10000].at;
    assert.ok(delay <= 80, `delay at the end ${delay} ms`);
  });

  test('a slow sender clock (1% slow): playout holds now and then, nothing is lost after the start', () => {
    const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
    const arrivals = Array.from({ length: 500 }, (_, index) => ({ index, at: 3 + index * 20.2 }));
    const got = played(run(buffer, arrivals, 10_400), 500);
    assert.deepEqual(got, Array.from({ length: 500 }, (_, i) => i));
  });

  test('bounded: hostile timestamps and huge packets neither grow it nor throw; ticks without packets deliver nothing', () => {
    const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
    assert.equal(buffer.next(20), undefined);
    const big = new Int16Array(100_000).fill(5);
    const rand = random(3);
    for (let i = 0; i < 2000; i++) {
      const timestamp = Math.floor(rand() * 0x1_0000_0000);
      buffer.push(big, 1 + Math.floor(rand() * big.length), timestamp, i % 3, i);
      buffer.next(i + 1);
    }
    for (let i = 0; i < 100; i++) {
      const frame = buffer.next(3000 + i * 20);
      if (frame) assert.equal(frame.samples.length, 160);
    }
  });

  test('30 ms packets (ptime 30): re-framed into 20 ms frames, every sample played once, nothing concealed', () => {
    const buffer = new JitterBuffer({ rate: 8000, minDelayMs: 20, maxDelayMs: 200 });
    const packet = new Int16Array(240);
    const out: number[] = [];
    let sent = 0;
    for (let tick = 20; tick <= 3000; tick += 20) {
      while (sent < 90 && 3 + sent * 30 < tick) {
        for (let i = 0; i < 240; i++) packet[i] = ((sent * 240 + i) % 30000) + 1;
        buffer.push(packet, 240, 5000 + sent * 240, 9, 3 + sent * 30);
        sent++;
      }
      const frame = buffer.next(tick);
      if (frame && frame.samples[0] !== 0 && buffer.concealed === 0) out.push(...frame.samples);
    }
    const expected = Array.from({ length: 90 * 240 }, (_, i) => (i % 30000) + 1);
    assert.deepEqual(out, expected);
    assert.equal(buffer.late, 0);
  });

  test('wideband: 16 kHz frames of 320 samples', () => {
    const buffer = new JitterBuffer({ rate: 16000, minDelayMs: 40, maxDelayMs: 100 });
    const samples = new Int16Array(320).fill(9);
    let frames = 0;
    for (let i = 0; i < 50; i++) {
      buffer.push(samples, 320, i * 320, 7, 2 + i * 20);
      const frame = buffer.next(20 + i * 20);
      if (frame) {
        assert.equal(frame.samples.length, 320);
        frames++;
      }
    }
    assert.ok(frames >= 46, `${frames} frames`);
    assert.equal(buffer.targetDelayMs, 40);
  });
});
