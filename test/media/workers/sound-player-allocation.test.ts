// The worker's side of the playback fast path allocates nothing per frame: no scavenge while 400,000
// frames of a shared sound are taken (seeks and pauses among them), against a control loop that
// copies each frame. In a file of its own, as frame-ring-allocation.test.ts, so that no other test's
// type feedback reaches the compiled code.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FrameCache } from '../../../src/media/workers/frame-ring.ts';
import { RemoteSoundPlay, WorkerSoundPlayer } from '../../../src/media/workers/sound-player.ts';
import { SharedSound } from '../../../src/media/shared-sound.ts';
import { assertNoScavenges } from '../../helpers/gc-window.ts';

test('taking frames of a shared sound allocates nothing (no garbage collection while 400,000 frames pass)', async (t) => {
  const sound = new SharedSound(new Int16Array(8000 * 10).fill(3), 8000);
  const main = new RemoteSoundPlay(1, sound.length, 0, false, () => {}, () => {});
  const player = new WorkerSoundPlayer({ play: 1, sound: sound.buffer, rate: sound.rate, control: main.control });
  const cache = new FrameCache();
  let kept: Int16Array = new Int16Array(0);
  const run = (allocate: boolean): void => {
    for (let i = 0; i < 400_000; i++) {
      // Rewind before the end; pause now and then: the control words are read every frame.
      if (i % 400 === 0) main.seek(0);
      if (i % 1000 === 0) main.pause(i % 2000 === 0);
      const frame = player.next(cache);
      // The control's copy escapes (kept in `kept`), so no compiler can optimise the allocation away.
      if (allocate && frame) kept = frame.samples.slice(0);
    }
  };
  run(false);
  await assertNoScavenges(t, run, '400,000 frames passed');
  assert.ok(kept.length > 0);
});
