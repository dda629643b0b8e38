// Pushing and popping frames through the shared ring allocate nothing: no scavenge while 400,000
// frames pass, against a control loop that makes one small array per frame. In a file of its own so
// that no other test's type feedback (counters past 2³¹ in the wrap test) reaches the compiled code.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FrameCache, FrameRing } from '../../../src/media/workers/frame-ring.ts';
import { assertNoScavenges } from '../../helpers/gc-window.ts';

function ring(slots: number): { ring: FrameRing } {
  return { ring: new FrameRing(new SharedArrayBuffer(FrameRing.bytes(slots)), 0, slots) };
}

function frameOf(rate: number, value: number): Int16Array {
  return new Int16Array((rate * 20) / 1000).fill(value);
}

test('pushing and popping allocate nothing (no garbage collection while 400,000 frames pass)', async (t) => {
  const { ring: r } = ring(8);
  const cache = new FrameCache();
  const frame = frameOf(8000, 5);
  let kept: Int16Array = frame;
  const run = (allocate: boolean): void => {
    for (let i = 0; i < 200_000; i++) {
      // The control's copy escapes (kept in `kept`), so no compiler can optimise the allocation away.
      r.push(8000, allocate ? (kept = frame.slice(0)) : frame);
      r.push(8000, frame);
      r.pop(cache);
      r.pop(cache);
    }
  };
  run(false);
  await assertNoScavenges(t, run, '400,000 frames passed');
});
