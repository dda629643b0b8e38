// The recording fast path's worker side against the main thread's recorder: the same frames give the
// same bytes (every format a worker writes), the control words pause and mute, the silence detector
// reaches the same totals and ends the recording at the same tick, and a recording handed over and
// back mid-way (the file closed, reopened for appending in the other thread) is byte for byte the
// recording written in one place.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { openAudioFileWriter } from '../../../src/media/audio-file.ts';
import { FILE_FORMAT_NAMES, getFileFormat } from '../../../src/media/codecs.ts';
import type { Frame, SampleRate } from '../../../src/media/frame.ts';
import { RecordingWriter, type RecordingProgress, type RecordingTick } from '../../../src/media/recording-writer.ts';
import { RemoteRecorder, WorkerRecorder, type RecordEnd } from '../../../src/media/workers/worker-recorder.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'worker-recorder-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A 20 ms frame at `rate`: a 400 Hz tone for talking ticks, near-silence for quiet ones, nothing for missing ones. */
function frameAt(tick: number, rate: SampleRate): Frame | undefined {
  if (tick % 17 === 5) return undefined;
  const samples = new Int16Array((rate * 20) / 1000);
  const talking = Math.floor(tick / 40) % 2 === 0;
  for (let i = 0; i < samples.length; i++) samples[i] = talking ? Math.round(8000 * Math.sin((2 * Math.PI * 400 * (tick * samples.length + i)) / rate)) : (i % 3) - 1;
  return { rate, samples };
}

/** The frames arrive at 8 kHz (a G.711 call), at 16 kHz every third tick: converted on the way in as a call's would be. */
function received(tick: number): Frame | undefined {
  return frameAt(tick, tick % 3 === 0 ? 16000 : 8000);
}

/** Pause and mute over the ticks, as ARI controls would. */
function controlsAt(tick: number): { paused: boolean; muted: boolean } {
  return { paused: tick >= 60 && tick < 75, muted: tick >= 90 && tick < 110 };
}

/** Creates the file as the main thread does before it writes (exclusively, header of nothing). */
function created(file: string, format: string): void {
  openAudioFileWriter(file, getFileFormat(format)!, { exclusive: true }).finalize();
}

interface Run {
  readonly ends: RecordingTick | RecordEnd['end'];
  readonly at: number;
  readonly progress: RecordingProgress;
}

/** The main thread's way: a RecordingWriter writing into the file, `ticks` ticks. */
function mainThread(file: string, format: string, ticks: number, maxSilenceMs = 0, atFileRate = false): Run {
  created(file, format);
  const rate = getFileFormat(format)!.codec.rate as SampleRate;
  const writer = new RecordingWriter({ rate, maxDurationSamples: 0, maxSilenceMs });
  const fileWriter = openAudioFileWriter(file, getFileFormat(format)!, { append: true });
  writer.attach(fileWriter);
  let ends: Run['ends'] = 'ok';
  let at = ticks;
  for (let tick = 0; tick < ticks; tick++) {
    const frame = atFileRate ? frameAt(tick, rate) : received(tick);
    if (frame) writer.put(frame);
    const { paused, muted } = controlsAt(tick);
    ends = writer.tick(paused, muted);
    if (ends !== 'ok') {
      at = tick;
      break;
    }
  }
  fileWriter.finalize();
  return { ends, at, progress: writer.progress };
}

/** The worker's way: a WorkerRecorder controlled through a RemoteRecorder's words. */
function worker(file: string, format: string, ticks: number, maxSilenceMs = 0): Run {
  created(file, format);
  let endMessage: RecordEnd | undefined;
  const main = new RemoteRecorder(1, { recordedSamples: 0, silence: undefined }, false, false, () => {}, () => {});
  const recorder = new WorkerRecorder({ record: 1, file, format, maxDurationSamples: 0, maxSilenceMs, progress: { recordedSamples: 0, silence: undefined }, control: main.control });
  let at = ticks;
  for (let tick = 0; tick < ticks; tick++) {
    const frame = received(tick);
    if (frame) recorder.put(frame);
    const { paused, muted } = controlsAt(tick);
    main.pause(paused);
    main.mute(muted);
    const result = recorder.tick();
    if (result !== 'ok') {
      endMessage = recorder.close(result);
      at = tick;
      break;
    }
  }
  endMessage ??= recorder.close('taken-back');
  assert.equal(main.recordedSamples, endMessage.recordedSamples, 'the progress word follows the file');
  const silence = endMessage.talkingMs !== undefined ? { talkingMs: endMessage.talkingMs, silenceMs: endMessage.silenceMs ?? 0, quietRunMs: endMessage.quietRunMs ?? 0 } : undefined;
  return { ends: endMessage.end, at, progress: { recordedSamples: endMessage.recordedSamples, silence } };
}

describe('recording writes in a media worker', () => {
  it('writes the same bytes as the main thread for the same frames, in every format', () => {
    assert.deepEqual([...FILE_FORMAT_NAMES].sort(), ['alaw', 'sln', 'sln16', 'sln24', 'sln48', 'ulaw', 'wav', 'wav16']);
    for (const format of FILE_FORMAT_NAMES) {
      const a = path.join(dir, `main.${format}`);
      const b = path.join(dir, `worker.${format}`);
      const main = mainThread(a, format, 300);
      const fromWorker = worker(b, format, 300);
      assert.equal(fromWorker.progress.recordedSamples, main.progress.recordedSamples, format);
      const bytes = readFileSync(a);
      assert.ok(bytes.length > 1000, `${format}: something was written`);
      assert.ok(readFileSync(b).equals(bytes), `${format}: the worker's file is the main thread's byte for byte`);
    }
  });

  it('pauses (nothing written) and mutes (silence written) through the control words', () => {
    const file = path.join(dir, 'controls.sln');
    const run = worker(file, 'sln', 150);
    // 150 ticks, 15 of them paused: 135 frames of 160 samples.
    assert.equal(run.progress.recordedSamples, 135 * 160);
    const samples = new Int16Array(new Uint8Array(readFileSync(file)).buffer);
    // Ticks 90–109 were muted: written from frame 75 (after the 15 paused ones) on, all zero.
    const muted = samples.subarray((90 - 15) * 160, (110 - 15) * 160);
    assert.ok(muted.every((sample) => sample === 0), 'muted ticks are silence');
    assert.ok(samples.subarray(0, 40 * 160).some((sample) => Math.abs(sample) > 1000), 'talking ticks hold the tone');
  });

  it('detects silence as the main thread does: the same totals, the same ending tick', () => {
    const main = mainThread(path.join(dir, 'silence-main.wav'), 'wav', 400, 600);
    const fromWorker = worker(path.join(dir, 'silence-worker.wav'), 'wav', 400, 600);
    assert.equal(main.ends, 'silence');
    assert.equal(fromWorker.ends, 'silence');
    assert.equal(fromWorker.at, main.at);
    assert.deepEqual(fromWorker.progress, main.progress);
    assert.ok(readFileSync(path.join(dir, 'silence-worker.wav')).equals(readFileSync(path.join(dir, 'silence-main.wav'))));
  });

  it('a recording handed to the worker and back mid-way is the recording written in one place', () => {
    for (const format of ['wav', 'wav16', 'ulaw', 'sln']) {
      const whole = path.join(dir, `whole.${format}`);
      mainThread(whole, format, 200, 0, true);
      const moved = path.join(dir, `moved.${format}`);
      created(moved, format);
      const rate = getFileFormat(format)!.codec.rate as SampleRate;
      // Main thread: ticks 0–69.
      let writer = new RecordingWriter({ rate, maxDurationSamples: 0, maxSilenceMs: 0 });
      let fileWriter = openAudioFileWriter(moved, getFileFormat(format)!, { append: true });
      writer.attach(fileWriter);
      // Frames at the file's rate: a converted frame's resampler starts afresh in the other thread (a
      // filter's worth of samples differ at each hand-over), which is what docs/media.md says.
      const step = (tick: number, put: (frame: Frame) => void, run: () => void): void => {
        const frame = frameAt(tick, rate);
        if (frame) put(frame);
        run();
      };
      for (let tick = 0; tick < 70; tick++) step(tick, (f) => writer.put(f), () => writer.tick(controlsAt(tick).paused, controlsAt(tick).muted));
      fileWriter.finalize();
      // Worker: ticks 70–139, from where the main thread got to.
      const main = new RemoteRecorder(1, writer.progress, false, false, () => {}, () => {});
      const recorder = new WorkerRecorder({ record: 1, file: moved, format, maxDurationSamples: 0, maxSilenceMs: 0, progress: writer.progress, control: main.control });
      for (let tick = 70; tick < 140; tick++) {
        main.pause(controlsAt(tick).paused);
        main.mute(controlsAt(tick).muted);
        step(tick, (f) => recorder.put(f), () => recorder.tick());
      }
      main.takeBack();
      assert.equal(recorder.stopped, true, 'the stop word reaches the worker');
      const end = recorder.close('taken-back');
      // Main thread again: ticks 140–199, reopened for appending.
      writer = new RecordingWriter({ rate, maxDurationSamples: 0, maxSilenceMs: 0 });
      writer.continueFrom({ recordedSamples: end.recordedSamples, silence: undefined });
      fileWriter = openAudioFileWriter(moved, getFileFormat(format)!, { append: true });
      writer.attach(fileWriter);
      for (let tick = 140; tick < 200; tick++) step(tick, (f) => writer.put(f), () => writer.tick(controlsAt(tick).paused, controlsAt(tick).muted));
      fileWriter.finalize();
      assert.ok(readFileSync(moved).equals(readFileSync(whole)), `${format}: moved twice, the same bytes`);
    }
  });

  it('refuses memory of the wrong size and an unknown format; a file it cannot open throws (the recording fails)', () => {
    const progress = { recordedSamples: 0, silence: undefined };
    const control = new SharedArrayBuffer(40);
    assert.throws(() => new WorkerRecorder({ record: 1, file: path.join(dir, 'x.wav'), format: 'wav', maxDurationSamples: 0, maxSilenceMs: 0, progress, control: new SharedArrayBuffer(8) }));
    assert.throws(() => new WorkerRecorder({ record: 1, file: path.join(dir, 'x.gsm'), format: 'gsm', maxDurationSamples: 0, maxSilenceMs: 0, progress, control }));
    assert.throws(() => new WorkerRecorder({ record: 1, file: path.join(dir, 'missing', 'x.wav'), format: 'wav', maxDurationSamples: 0, maxSilenceMs: 0, progress, control }));
  });
});
