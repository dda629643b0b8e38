// The worker's mix loop allocates nothing per tick: two members of the mixing worker and one of
// another worker (its frames crossing both shared rings) mixed 200,000 times with no scavenge,
// against a control that makes one small array per tick. In a file of its own, as the ring's
// allocation test, so that no other test's type feedback reaches the compiled loop.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Frame } from '../../../src/media/frame.ts';
import { MixLegMemory } from '../../../src/media/workers/mix-leg-memory.ts';
import { LocalParty, MixLeg, RemoteParty, WorkerMix } from '../../../src/media/workers/worker-mix.ts';
import { assertNoScavenges } from '../../helpers/gc-window.ts';

test('mixing a tick allocates nothing (no garbage collection while 200,000 ticks are mixed)', async (t) => {
  let heardSum = 0;
  const send = (frame: Frame): void => {
    // Kept small (a sum past 2³⁰ would be a heap number, one allocation per tick of the test's own).
    heardSum = (heardSum + frame.samples[0]) & 0xffff;
  };
  const local = [new LocalParty(8000, send), new LocalParty(8000, send)];
  const memory = MixLegMemory.create();
  const leg = new MixLeg(new MixLegMemory(memory.buffer));
  const mix = new WorkerMix(1, 8000, [...local, new RemoteParty(8000, memory)]);
  const frames: Frame[] = [1000, 2000, 3000].map((value) => ({ rate: 8000, samples: new Int16Array(160).fill(value) }));
  let kept: Int16Array = frames[0].samples;
  const run = (allocate: boolean): void => {
    for (let i = 0; i < 200_000; i++) {
      local[0].put(frames[0]);
      local[1].put(frames[1]);
      leg.said(frames[2]);
      mix.tick();
      const heard = leg.heard();
      // The control's copy escapes (kept in `kept`), so no compiler can optimise the allocation away.
      if (allocate && heard) kept = heard.samples.slice(0);
    }
  };
  run(false);
  assert.equal(leg.heard(), undefined, 'the leg took each tick\'s frame');
  await assertNoScavenges(t, run, '200,000 ticks were mixed');
  assert.ok(heardSum >= 0 && kept.length === 160);
});

test('each member of the loop hears the other two: 2000 + 3000, 1000 + 3000, and across the rings 1000 + 2000', () => {
  const heard: number[] = [];
  const local = [new LocalParty(8000, (f) => void (heard[0] = f.samples[0])), new LocalParty(8000, (f) => void (heard[1] = f.samples[0]))];
  const memory = MixLegMemory.create();
  const leg = new MixLeg(new MixLegMemory(memory.buffer));
  const mix = new WorkerMix(1, 8000, [...local, new RemoteParty(8000, memory)]);
  local[0].put({ rate: 8000, samples: new Int16Array(160).fill(1000) });
  local[1].put({ rate: 8000, samples: new Int16Array(160).fill(2000) });
  leg.said({ rate: 8000, samples: new Int16Array(160).fill(3000) });
  mix.tick();
  assert.deepEqual(heard, [5000, 4000]);
  assert.equal(leg.heard()?.samples[0], 3000);
});
