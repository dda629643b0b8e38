// The shared frame ring between the main thread and a media worker: frames come out as they went
// in, the counters wrap past 2³¹ without losing a frame, a full ring drops (and counts) the frame
// pushed, and hostile slot contents yield nothing. That pushing and popping allocate nothing is
// frame-ring-allocation.test.ts, in a process of its own: the wrap test's counters past 2³¹ teach
// the compiler to box them, which made that measurement fail now and then on Node 22.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FrameCache, FrameRing } from '../../../src/media/workers/frame-ring.ts';
import { StreamMemory } from '../../../src/media/workers/stream-memory.ts';

function ring(slots = 4): { ring: FrameRing; buffer: SharedArrayBuffer } {
  const buffer = new SharedArrayBuffer(FrameRing.bytes(slots));
  return { ring: new FrameRing(buffer, 0, slots), buffer };
}

function frameOf(rate: number, value: number): Int16Array {
  return new Int16Array((rate * 20) / 1000).fill(value);
}

describe('frame ring', () => {
  test('frames come out in order, at their rate, copied', () => {
    const { ring: r } = ring();
    const source = frameOf(8000, 7);
    assert.equal(r.push(8000, source), true);
    source.fill(0);
    assert.equal(r.push(16000, frameOf(16000, -3)), true);
    const cache = new FrameCache();
    const first = r.pop(cache)!;
    assert.equal(first.rate, 8000);
    assert.equal(first.samples.length, 160);
    assert.ok(first.samples.every((s) => s === 7));
    const second = r.pop(cache)!;
    assert.equal(second.rate, 16000);
    assert.equal(second.samples.length, 320);
    assert.ok(second.samples.every((s) => s === -3));
    assert.equal(r.pop(cache), undefined);
    assert.equal(r.size, 0);
  });

  test('a full ring drops the frame pushed and counts it; the consumer sees the older ones', () => {
    const { ring: r } = ring(4);
    for (let i = 1; i <= 6; i++) r.push(8000, frameOf(8000, i));
    assert.equal(r.size, 4);
    assert.equal(r.dropped, 2);
    const cache = new FrameCache();
    const seen: number[] = [];
    for (let f = r.pop(cache); f; f = r.pop(cache)) seen.push(f.samples[0]);
    assert.deepEqual(seen, [1, 2, 3, 4]);
    assert.equal(r.push(8000, frameOf(8000, 9)), true);
  });

  test('the counters wrap past 2^31 (and 2^32) without losing or repeating a frame', () => {
    const { ring: r, buffer } = ring(4);
    // Both counters start just below the wrap, as after ~1.4 years of frames.
    const control = new Int32Array(buffer, 0, 4);
    control[0] = 0x7ffffffe;
    control[1] = 0x7ffffffe;
    const cache = new FrameCache();
    const seen: number[] = [];
    for (let i = 0; i < 40; i++) {
      r.push(8000, frameOf(8000, i));
      if (i % 3 !== 0) r.push(8000, frameOf(8000, 1000 + i));
      for (let f = r.pop(cache); f; f = r.pop(cache)) seen.push(f.samples[0]);
    }
    const expected: number[] = [];
    for (let i = 0; i < 40; i++) expected.push(i, ...(i % 3 !== 0 ? [1000 + i] : []));
    assert.deepEqual(seen, expected);
    assert.equal(r.dropped, 0);
    control[0] = -2;
    control[1] = -2;
    for (let i = 0; i < 5; i++) r.push(8000, frameOf(8000, i));
    assert.equal(r.size, 4);
    assert.equal(r.dropped, 1);
  });

  test('a slot whose rate or length is not a frame yields nothing, and a too-long frame is refused', () => {
    const { ring: r } = ring(2);
    r.push(11025, new Int16Array(220));
    assert.equal(r.pop(new FrameCache()), undefined);
    assert.equal(r.size, 0);
    assert.equal(r.push(48000, new Int16Array(2000)), false);
    assert.equal(r.dropped, 1);
    assert.throws(() => new FrameRing(new SharedArrayBuffer(FrameRing.bytes(3)), 0, 3), RangeError);
  });

  test('a slot header claiming a frame longer than the slot (not written by push) yields nothing', () => {
    const buffer = new SharedArrayBuffer(FrameRing.bytes(2, 160));
    const r = new FrameRing(buffer, 0, 2, 160);
    assert.equal(r.push(8000, frameOf(8000, 9)), true);
    // The first slot's header (after the four control words): 48 kHz, 960 samples.
    new Int32Array(buffer, 16, 2).set([48000, 960]);
    assert.equal(r.pop(new FrameCache()), undefined);
    assert.equal(r.size, 0, 'the slot is passed over');
    assert.equal(r.push(8000, frameOf(8000, 4)), true);
    assert.equal(r.pop(new FrameCache())?.samples[159], 4);
  });
});

describe('stream memory', () => {
  test('sized for the call\'s received frames: a G.711 call\'s is smaller, its frames to send stay 48 kHz, and a longer received frame is refused and counted', () => {
    assert.ok(StreamMemory.bytes(160) < StreamMemory.bytes() - 12_000, `${StreamMemory.bytes(160)} against ${StreamMemory.bytes()}`);
    const narrow = StreamMemory.create(160);
    const shared = new StreamMemory(narrow.buffer, 160);
    const cache = new FrameCache();
    assert.equal(narrow.received.push(8000, new Int16Array(160).fill(7)), true);
    assert.equal(narrow.received.push(16000, new Int16Array(320)), false);
    assert.equal(shared.received.dropped, 1);
    assert.equal(shared.received.pop(cache)?.samples[159], 7);
    assert.equal(narrow.toSend.push(48000, new Int16Array(960).fill(3)), true);
    assert.equal(shared.toSend.pop(cache)?.samples[959], 3);
    // A size that is no frame's, or a buffer of another size, is refused.
    assert.throws(() => StreamMemory.create(100), RangeError);
    assert.throws(() => new StreamMemory(narrow.buffer), RangeError);
  });
});
