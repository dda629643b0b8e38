// The playback fast path's player on its own, both sides through their shared words without a
// worker: frames taken in order from the shared sound, the last one padded with silence and then
// the end; pause gives silence without moving; a seek (forward, reverse, restart) is taken at the
// next frame; a stop is seen by the worker and reports where the player got to; memory that does
// not fit is refused. And the shared sounds' cache: one copy per decoded array, bounded in bytes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FrameCache } from '../../../src/media/workers/frame-ring.ts';
import { RemoteSoundPlay, WorkerSoundPlayer } from '../../../src/media/workers/sound-player.ts';
import { SharedSound, SharedSoundCache } from '../../../src/media/shared-sound.ts';

const FRAME = 160;

/** A sound whose sample i is i (mod 32768): where a frame came from is its first sample. */
function ramp(length: number): SharedSound {
  const samples = new Int16Array(length);
  for (let i = 0; i < length; i++) samples[i] = i % 32768;
  return new SharedSound(samples, 8000);
}

function pair(sound: SharedSound, from = 0, paused = false): { main: RemoteSoundPlay; worker: WorkerSoundPlayer; events: string[] } {
  const events: string[] = [];
  const main = new RemoteSoundPlay(7, sound.length, from, paused, () => events.push('ended'), () => events.push('over'));
  const worker = new WorkerSoundPlayer({ play: 7, sound: sound.buffer, rate: sound.rate, control: main.control });
  return { main, worker, events };
}

describe('WorkerSoundPlayer and RemoteSoundPlay', () => {
  test('frames in order from the start position, the last padded with silence, then the end', () => {
    const sound = ramp(FRAME * 3 + 40);
    const { main, worker } = pair(sound, 80);
    const frames = new FrameCache();
    const firsts: number[] = [];
    let frame;
    while ((frame = worker.next(frames)) !== undefined) {
      assert.equal(frame.rate, 8000);
      assert.equal(frame.samples.length, FRAME);
      firsts.push(frame.samples[0]);
      if (firsts.length === 3) {
        // The last: 120 samples of the sound, then silence.
        assert.equal(frame.samples[119], 80 + 2 * FRAME + 119);
        assert.equal(frame.samples[120], 0);
      }
    }
    assert.deepEqual(firsts, [80, 80 + FRAME, 80 + 2 * FRAME]);
    assert.equal(main.position, sound.length);
    assert.equal(worker.next(frames), undefined);
  });

  test('the same reusable frame each time: nothing allocated per frame', () => {
    const { worker } = pair(ramp(FRAME * 4));
    const frames = new FrameCache();
    const first = worker.next(frames);
    assert.equal(worker.next(frames), first);
  });

  test('paused: silence without moving; unpaused: on from where it was', () => {
    const { main, worker } = pair(ramp(FRAME * 10));
    const frames = new FrameCache();
    assert.equal(worker.next(frames)?.samples[0], 0);
    main.pause(true);
    const silent = worker.next(frames);
    assert.ok(silent && silent.samples.every((sample) => sample === 0));
    assert.equal(main.position, FRAME);
    main.pause(false);
    assert.equal(worker.next(frames)?.samples[0], FRAME);
  });

  test('a seek is taken at the next frame, clamped to the sound; the position reads it at once', () => {
    const sound = ramp(FRAME * 10);
    const { main, worker } = pair(sound);
    const frames = new FrameCache();
    worker.next(frames);
    main.seek(FRAME * 6);
    assert.equal(main.position, FRAME * 6);
    assert.equal(worker.next(frames)?.samples[1], FRAME * 6 + 1);
    main.seek(0);
    assert.equal(worker.next(frames)?.samples[5], 5);
    main.seek(10 * sound.length);
    assert.equal(main.position, sound.length);
    assert.equal(worker.next(frames), undefined);
  });

  test('starting paused sends silence; a start beyond the end ends at once', () => {
    const sound = ramp(FRAME * 2);
    const frames = new FrameCache();
    const paused = pair(sound, 0, true);
    assert.ok(paused.worker.next(frames)?.samples.every((sample) => sample === 0));
    assert.equal(pair(sound, sound.length + 500).worker.next(frames), undefined);
  });

  test('stop: the worker sees it, the position is where it got to, the owner is told once and not of an end', () => {
    const { main, worker, events } = pair(ramp(FRAME * 10));
    const frames = new FrameCache();
    worker.next(frames);
    worker.next(frames);
    assert.equal(worker.stopped, false);
    assert.equal(main.stop(), 2 * FRAME);
    assert.equal(main.stop(), 2 * FRAME);
    assert.equal(worker.stopped, true);
    main.ended();
    assert.deepEqual(events, ['over']);
    assert.equal(main.over, true);
  });

  test('an end reported by the worker is told once, after the play is over', () => {
    const { main, events } = pair(ramp(FRAME));
    main.ended();
    main.ended();
    main.abandon();
    assert.deepEqual(events, ['over', 'ended']);
  });

  test('memory that does not fit what it claims is refused', () => {
    const sound = ramp(FRAME);
    assert.throws(() => new WorkerSoundPlayer({ play: 1, sound: sound.buffer, rate: 8001, control: new SharedArrayBuffer(16) }), RangeError);
    assert.throws(() => new WorkerSoundPlayer({ play: 1, sound: sound.buffer, rate: 8000, control: new SharedArrayBuffer(8) }), RangeError);
    assert.throws(() => new WorkerSoundPlayer({ play: 1, sound: new SharedArrayBuffer(3), rate: 8000, control: new SharedArrayBuffer(16) }), RangeError);
  });
});

describe('SharedSoundCache', () => {
  test('one shared copy per decoded array and rate, the same samples', () => {
    const cache = new SharedSoundCache();
    const samples = new Int16Array([1, 2, 3, 4]);
    const shared = cache.of(samples, 8000);
    assert.ok(shared);
    assert.ok(shared.buffer instanceof SharedArrayBuffer);
    assert.deepEqual([...shared.samples], [1, 2, 3, 4]);
    assert.equal(cache.of(samples, 8000), shared);
    assert.equal(cache.bytes, 8);
    assert.notEqual(cache.of(samples, 16000), shared);
    assert.equal(cache.size, 1);
    assert.equal(cache.bytes, 8);
  });

  test('bounded in bytes, least recently used forgotten first; too large or empty: not shared', () => {
    const cache = new SharedSoundCache(100, 60);
    const a = new Int16Array(20);
    const b = new Int16Array(20);
    const c = new Int16Array(20);
    const sharedA = cache.of(a, 8000);
    cache.of(b, 8000);
    assert.equal(cache.of(a, 8000), sharedA);
    cache.of(c, 8000);
    assert.equal(cache.bytes, 80);
    assert.equal(cache.size, 2);
    // b was the least recently used.
    assert.equal(cache.of(a, 8000), sharedA);
    assert.equal(cache.of(new Int16Array(31), 8000), undefined);
    assert.equal(cache.of(new Int16Array(0), 8000), undefined);
    assert.ok(cache.bytes <= 100);
  });
});
