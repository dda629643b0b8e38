// A playback's bookkeeping in the engine, without a server: who hears of it and who waits for it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Applications } from '../../src/core/applications.ts';
import { Playback, type PlaybackHooks } from '../../src/core/playback/playback.ts';
import { PlaybackEntry } from '../../src/core/playback/playback-entry.ts';

const hooks: PlaybackHooks = {
  open: () => ({ failure: 'not used' }),
  raise: () => undefined,
  failedItem: () => undefined,
  stop: () => undefined,
};

const playbackOf = (id: string): Playback => new Playback(hooks, { id, media: ['tone:ring'], target: { kind: 'channel', id: 'c1' }, language: 'en' });

test('a channel playback is reported to the subscribers of its channel', () => {
  const entry = new PlaybackEntry(playbackOf('p1'), false, { channelIds: ['c1'] });
  assert.deepEqual(entry.eventScope(new Applications(() => true)), { channelIds: ['c1'] });
});

test('everyone waiting for a playback hears its final state once it is settled', async () => {
  const playback = playbackOf('p2');
  const entry = new PlaybackEntry(playback, true, {});
  const first = entry.whenFinished();
  const second = entry.whenFinished();
  playback.finish('failed');
  entry.settle();
  assert.deepEqual(await Promise.all([first, second]), ['failed', 'failed']);
  // Asked after the end, the answer is at once.
  assert.equal(await entry.whenFinished(), 'failed');
});
