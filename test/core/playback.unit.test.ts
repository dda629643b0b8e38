// Playback and PlaybackQueue on their own, without a server, files or a clock: a list of media
// items played frame by frame, events in Asterisk's order (Started, Continuing between items,
// Finished once), items that cannot be opened passed over (a missing last item fails the
// playback), pause/skip/restart on the item playing, and a target's queue playing one at a time.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PcmSource } from '../../src/core/playback/media-source.ts';
import type { MediaResult } from '../../src/core/playback/media.ts';
import { DEFAULT_SKIP_MS, Playback, type PlaybackHooks, type PlaybackInit } from '../../src/core/playback/playback.ts';
import { PlaybackQueue } from '../../src/core/playback/queue.ts';

const FRAME = 160;
/** 8 kHz samples per millisecond. */
const PER_MS = 8;

/** Media by URI: `pcm:<value>:<ms>` is `ms` of constant `value`; anything else is not found. */
function openMedia(uri: string, _language: string, offsetMs: number): MediaResult {
  const match = /^pcm:(-?\d+):(\d+)$/.exec(uri);
  if (!match) return { failure: 'not found' };
  return { source: new PcmSource(new Int16Array(Number(match[2]) * PER_MS).fill(Number(match[1])), offsetMs) };
}

interface Played {
  readonly playback: Playback;
  /** `Type(state, media_uri)` for each event, in order. */
  readonly events: string[];
  readonly failures: string[];
}

function playbackOf(media: string[], init: Partial<PlaybackInit> = {}, stop: (playback: Playback) => void = () => {}): Played {
  const events: string[] = [];
  const failures: string[] = [];
  const hooks: PlaybackHooks = {
    open: openMedia,
    raise: (playback, type) => events.push(`${type}(${playback.state}, ${playback.snapshot().media_uri})`),
    failedItem: (_playback, uri, reason) => failures.push(`${uri}: ${reason}`),
    stop,
  };
  const playback = new Playback(hooks, { id: 'pb', media, target: { kind: 'channel', id: 'chan' }, language: 'en', ...init });
  return { playback, events, failures };
}

/** Fills frames until the playback reports its end; returns the first sample of each frame. */
function drain(playback: Playback, limit = 1000): number[] {
  const firsts: number[] = [];
  const dst = new Int16Array(FRAME);
  for (let i = 0; i < limit && playback.fill(dst); i++) firsts.push(dst[0]);
  return firsts;
}

describe('Playback', () => {
  test('needs at least one media item', () => {
    assert.throws(() => playbackOf([]), RangeError);
  });

  test('plays its items in order, raising Started, Continuing between items and Finished once', () => {
    const { playback, events } = playbackOf(['pcm:1:40', 'pcm:2:20']);
    assert.equal(playback.state, 'enqueued');
    assert.deepEqual(playback.snapshot(), { id: 'pb', media_uri: 'pcm:1:40', next_media_uri: 'pcm:2:20', target_uri: 'channel:chan', language: 'en', state: 'enqueued' });
    playback.start();
    playback.start();
    assert.deepEqual(drain(playback), [1, 1, 2]);
    assert.equal(playback.endState, 'complete');
    playback.finish(playback.endState);
    playback.finish('failed');
    assert.equal(playback.state, 'complete');
    assert.deepEqual(events, [
      'PlaybackStarted(playing, pcm:1:40)',
      'PlaybackContinuing(playing, pcm:1:40)',
      'PlaybackStarted(playing, pcm:2:20)',
      'PlaybackFinished(complete, pcm:2:20)',
    ]);
  });

  test('a frame spanning two items is filled from both, the rest of the last frame with silence', () => {
    const { playback } = playbackOf(['pcm:3:10', 'pcm:4:15']);
    playback.start();
    const dst = new Int16Array(FRAME);
    assert.equal(playback.fill(dst), true);
    assert.deepEqual([dst[0], dst[79], dst[80], dst[159]], [3, 3, 4, 4]);
    assert.equal(playback.fill(dst), true);
    assert.deepEqual([dst[0], dst[39], dst[40], dst[159]], [4, 4, 0, 0]);
    assert.equal(playback.fill(dst), false);
  });

  test('an item that cannot be opened is passed over with PlaybackContinuing; a missing last item fails the playback', () => {
    const skipped = playbackOf(['sound:missing', 'pcm:5:20']);
    skipped.playback.start();
    assert.deepEqual(drain(skipped.playback), [5]);
    assert.equal(skipped.playback.endState, 'complete');
    assert.deepEqual(skipped.failures, ['sound:missing: not found']);
    assert.deepEqual(skipped.events, ['PlaybackStarted(playing, sound:missing)', 'PlaybackContinuing(playing, sound:missing)', 'PlaybackStarted(playing, pcm:5:20)']);

    const failing = playbackOf(['pcm:6:20', 'sound:gone']);
    failing.playback.start();
    assert.deepEqual(drain(failing.playback), [6]);
    assert.equal(failing.playback.endState, 'failed');
    failing.playback.finish(failing.playback.endState);
    assert.equal(failing.playback.state, 'failed');
    assert.equal(failing.events.at(-1), 'PlaybackFinished(failed, sound:gone)');
  });

  test('the offset applies to the first item only', () => {
    const { playback } = playbackOf(['pcm:7:60', 'pcm:8:40'], { offsetMs: 40 });
    playback.start();
    assert.deepEqual(drain(playback), [7, 8, 8]);
  });

  test('pause gives silence without moving; unpause, forward, reverse and restart move within the item playing', () => {
    const { playback } = playbackOf(['pcm:9:10000'], { skipMs: 1000 });
    playback.start();
    const dst = new Int16Array(FRAME);
    /** Frames left until the item ends (plays them out). */
    const framesLeft = (of: Playback): number => {
      let frames = 0;
      while (of.fill(dst)) frames++;
      return frames;
    };
    playback.control('pause');
    assert.equal(playback.fill(dst), true);
    assert.equal(dst[0], 0);
    playback.control('unpause');
    playback.control('forward');
    assert.equal(framesLeft(playback), (10000 - 1000) / 20);

    const again = playbackOf(['pcm:9:10000'], { skipMs: 0 });
    assert.equal(again.playback.skipMs, DEFAULT_SKIP_MS);
    again.playback.start();
    again.playback.fill(dst);
    again.playback.control('forward');
    again.playback.control('reverse');
    again.playback.control('reverse');
    assert.equal(framesLeft(again.playback), 10000 / 20, 'reverse past the start stops at the start');
  });

  test('end() asks its owner to stop it, as ARI stop does', () => {
    const stopped: string[] = [];
    const { playback } = playbackOf(['pcm:1:20'], {}, (which) => stopped.push(which.id));
    playback.end();
    assert.deepEqual(stopped, ['pb']);
  });
});

describe('PlaybackQueue', () => {
  function queueOf(): { queue: PlaybackQueue; log: string[] } {
    const log: string[] = [];
    const queue = new PlaybackQueue(
      { attach: () => log.push('attach'), detach: () => log.push('detach') },
      () => log.push('emptied'),
    );
    return { queue, log };
  }

  test('plays one playback at a time in order, attached to its target only while it holds one', () => {
    const { queue, log } = queueOf();
    const first = playbackOf(['pcm:1:20']);
    const second = playbackOf(['pcm:2:40']);
    queue.enqueue(first.playback);
    queue.enqueue(second.playback);
    assert.deepEqual([first.playback.state, second.playback.state, queue.size], ['playing', 'enqueued', 2]);
    const dst = new Int16Array(FRAME);
    const firsts: number[] = [];
    while (queue.fill(dst)) firsts.push(dst[0]);
    assert.deepEqual(firsts, [1, 2, 2]);
    assert.deepEqual([first.playback.state, second.playback.state], ['complete', 'complete']);
    assert.deepEqual(log, ['attach', 'detach', 'emptied']);
  });

  test('stopping the playing one starts the next; stopping a waiting one removes it; stopAll ends everything', () => {
    const { queue, log } = queueOf();
    const a = playbackOf(['pcm:1:1000']);
    const b = playbackOf(['pcm:2:1000']);
    const c = playbackOf(['pcm:3:1000']);
    queue.enqueue(a.playback);
    queue.enqueue(b.playback);
    queue.enqueue(c.playback);
    queue.stop(b.playback);
    assert.equal(b.playback.state, 'complete');
    assert.deepEqual(b.events, ['PlaybackFinished(complete, pcm:2:1000)'], 'a playback stopped while waiting never started');
    queue.stop(a.playback);
    assert.equal(queue.playing, c.playback);
    queue.stopAll();
    assert.equal(c.playback.state, 'complete');
    assert.equal(queue.size, 0);
    assert.deepEqual(log, ['attach', 'detach', 'emptied']);
  });
});
