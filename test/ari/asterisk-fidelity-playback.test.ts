// Playback events as Asterisk 22 raises them (issue 20, items 1 and 2): every item of a media list
// starts with a PlaybackStarted of its own and an unpause raises PlaybackStarted (the states stay the
// spec's: playing), and hanging up a channel a playback targets finishes the playback before the
// channel leaves its bridge and its application.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { control, nextEvent, pair, play, playbackEvents, post, sleep, type Json } from './playback-helpers.ts';

const APP = 'fid-playback';

let server: TestServer;
let events: EventSocket;

before(async () => {
  server = await startTestServer();
  events = await server.events(`app=${APP}`);
});

after(async () => {
  await events?.close();
  await server?.stop();
});

/** Every event about channel `id` (or a playback targeting it) until its ChannelDestroyed. */
async function untilDestroyed(id: string): Promise<Json[]> {
  const seen: Json[] = [];
  for (;;) {
    const event = await nextEvent(events, (candidate) => candidate.channel?.id === id || candidate.playback?.target_uri === `channel:${id}`);
    seen.push(event);
    if (event.type === 'ChannelDestroyed') return seen;
  }
}

describe('PlaybackStarted on every item and on unpause (item 1)', () => {
  test('a media list: Started 1, Continuing 1, Started 2, Continuing 2, Started 3, Finished', async () => {
    const { one } = await pair(server, events, APP, 'fp-list');
    const body = await play(server, `/channels/${one.id}/play?media=sound:beep,sound:beep,sound:silence/1&lang=en`);
    const seen = await playbackEvents(events, body.id);
    assert.deepEqual(
      seen.map((event) => [event.type, event.playback.media_uri, event.playback.state]),
      [
        ['PlaybackStarted', 'sound:beep', 'playing'],
        ['PlaybackContinuing', 'sound:beep', 'playing'],
        ['PlaybackStarted', 'sound:beep', 'playing'],
        ['PlaybackContinuing', 'sound:beep', 'playing'],
        ['PlaybackStarted', 'sound:silence/1', 'playing'],
        ['PlaybackFinished', 'sound:silence/1', 'complete'],
      ],
    );
    await server.ari(`/channels/${one.id}`, { method: 'DELETE' });
  });

  test('unpause raises PlaybackStarted (playing); pause and a second unpause raise nothing', async () => {
    const { one } = await pair(server, events, APP, 'fp-pause');
    const body = await play(server, `/channels/${one.id}/play?media=sound:silence/3`);
    await nextEvent(events, (event) => event.type === 'PlaybackStarted' && event.playback?.id === body.id);
    assert.equal(await control(server, body.id, 'pause'), 204);
    assert.equal(await control(server, body.id, 'unpause'), 204);
    const resumed = await nextEvent(events, (event) => event.playback?.id === body.id);
    assert.equal(resumed.type, 'PlaybackStarted');
    assert.equal(resumed.playback.state, 'playing');
    assert.equal(await control(server, body.id, 'unpause'), 204);
    await sleep(200);
    const more = events.messages.filter((event) => (event.playback as Json | undefined)?.id === body.id);
    assert.deepEqual(more, [], 'an unpause while playing raises nothing');
    assert.equal((await server.ari(`/playbacks/${body.id}`, { method: 'DELETE' })).status, 204);
    await nextEvent(events, (event) => event.type === 'PlaybackFinished' && event.playback?.id === body.id);
    await server.ari(`/channels/${one.id}`, { method: 'DELETE' });
  });
});

describe('order at hang-up (item 2)', () => {
  test('a channel with a playback: PlaybackFinished before StasisEnd', async () => {
    const { one } = await pair(server, events, APP, 'fp-hangup');
    const body = await play(server, `/channels/${one.id}/play?media=sound:silence/5`);
    await nextEvent(events, (event) => event.type === 'PlaybackStarted' && event.playback?.id === body.id);
    assert.equal((await server.ari(`/channels/${one.id}`, { method: 'DELETE' })).status, 204);
    const order = (await untilDestroyed(one.id)).map((event) => event.type);
    assert.deepEqual(
      order.filter((type) => ['ChannelHangupRequest', 'PlaybackFinished', 'StasisEnd', 'ChannelDestroyed'].includes(type)),
      ['ChannelHangupRequest', 'PlaybackFinished', 'StasisEnd', 'ChannelDestroyed'],
    );
  });

  test('a bridged channel with a playback: PlaybackFinished before ChannelLeftBridge and StasisEnd', async () => {
    const { one } = await pair(server, events, APP, 'fp-bridged');
    assert.equal((await post(server, '/bridges/fp-bridge?type=mixing')).status, 200);
    assert.equal((await post(server, `/bridges/fp-bridge/addChannel?channel=${one.id}`)).status, 204);
    await nextEvent(events, (event) => event.type === 'ChannelEnteredBridge' && event.channel?.id === one.id);
    const body = await play(server, `/channels/${one.id}/play?media=sound:silence/5`);
    await nextEvent(events, (event) => event.type === 'PlaybackStarted' && event.playback?.id === body.id);
    assert.equal((await server.ari(`/channels/${one.id}`, { method: 'DELETE' })).status, 204);
    const order = (await untilDestroyed(one.id)).map((event) => event.type);
    assert.deepEqual(
      order.filter((type) => ['ChannelHangupRequest', 'PlaybackFinished', 'ChannelLeftBridge', 'StasisEnd', 'ChannelDestroyed'].includes(type)),
      ['ChannelHangupRequest', 'PlaybackFinished', 'ChannelLeftBridge', 'StasisEnd', 'ChannelDestroyed'],
    );
    await server.ari('/bridges/fp-bridge', { method: 'DELETE' });
  });
});
