// The worker's side of the recording fast path allocates nothing per frame: no scavenge while
// 200,000 frames are put and written into a file (pauses and mutes among them, a flush every 50
// ticks), against a control loop that copies each frame. In a file of its own, as
// frame-ring-allocation.test.ts, so that no other test's type feedback reaches the compiled code.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openAudioFileWriter } from '../../../src/media/audio-file.ts';
import { getFileFormat } from '../../../src/media/codecs.ts';
import { RemoteRecorder, WorkerRecorder } from '../../../src/media/workers/worker-recorder.ts';
import { assertNoScavenges } from '../../helpers/gc-window.ts';

test('writing a recording in the worker allocates nothing (no garbage collection while 200,000 frames pass)', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'worker-recorder-allocation-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'r.wav');
  openAudioFileWriter(file, getFileFormat('wav')!, { exclusive: true }).finalize();
  const progress = { recordedSamples: 0, silence: undefined };
  const main = new RemoteRecorder(1, progress, false, false, () => {}, () => {});
  // With silence detection: the detector runs on every frame written.
  const recorder = new WorkerRecorder({ record: 1, file, format: 'wav', maxDurationSamples: 0, maxSilenceMs: 3_600_000, progress, control: main.control });
  const frame = { rate: 8000 as const, samples: new Int16Array(160).fill(1200) };
  let kept: Int16Array = frame.samples;
  const run = (allocate: boolean): void => {
    for (let i = 0; i < 200_000; i++) {
      if (i % 1000 === 0) main.pause(i % 2000 === 0);
      if (i % 700 === 0) main.mute(i % 1400 === 0);
      recorder.put(frame);
      recorder.tick();
      // The control's copy escapes (kept in `kept`), so no compiler can optimise the allocation away.
      if (allocate) kept = frame.samples.slice(0);
    }
  };
  run(false);
  await assertNoScavenges(t, run, '200,000 frames passed');
  assert.ok(kept.length === 160);
  recorder.close('taken-back');
});
