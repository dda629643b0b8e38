// The worker's side of the playback fast path allocates nothing per frame: no scavenge while 400,000
// frames of a shared sound are taken (seeks and pauses among them), against a control loop that
// copies each frame. In a file of its own, as frame-ring-allocation.test.ts, so that no other test's
// type feedback reaches the compiled code.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { constants, PerformanceObserver, type NodeGCPerformanceDetail } from 'node:perf_hooks';
import { FrameCache } from '../../../src/media/workers/frame-ring.ts';
import { RemoteSoundPlay, WorkerSoundPlayer } from '../../../src/media/workers/sound-player.ts';
import { SharedSound } from '../../../src/media/shared-sound.ts';

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
  const collections = async (allocate: boolean): Promise<number> => {
    let count = 0;
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if ((entry as { detail?: NodeGCPerformanceDetail }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) count++;
    });
    observer.observe({ entryTypes: ['gc'] });
    run(allocate);
    await new Promise((resolve) => setTimeout(resolve, 50));
    observer.disconnect();
    return count;
  };
  let quiet = Infinity;
  for (let i = 0; i < 3 && quiet > 0; i++) quiet = Math.min(quiet, await collections(false));
  assert.ok((await collections(true)) >= 1, 'the control loop should have made garbage');
  assert.ok(kept.length > 0);
  // As the frame ring's check: asserted on Node 20 (the server suite's version), reported elsewhere.
  if (Number(process.versions.node.split('.')[0]) === 20) assert.ok(quiet <= 1, `${quiet} scavenges while nothing should allocate`);
  else t.diagnostic(`${quiet} scavenges while 400,000 frames passed (Node ${process.versions.node}; asserted on Node 20 only)`);
});
