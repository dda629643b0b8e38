// Playback to a bridge over real ARI: every member hears it, play requests made while one plays
// wait `enqueued` and never play at the same time, and the queue's controls answer 409 / 404 as
// the spec's table says. The bridges are made through the core (the bridge resource is tested on
// its own); everything about the playbacks goes through HTTP and the event WebSocket.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Bridge } from '../../src/core/bridges/bridge.ts';
import type { EventSocket, TestServer } from '../helpers/server.ts';
import { Capture, control, pair, play, playbackEvent, playbackEvents, post, promptsOnlyServerInSuite, status, toneAmplitude, type Json, type Pair } from './playback-helpers.ts';

const APP = 'pb-bridge';

let server: TestServer;
let events: EventSocket;

promptsOnlyServerInSuite(APP, (started) => ({ server, events } = started));

/** A mixing bridge holding the ;1 halves of two Local pairs (so the app is subscribed to it). */
async function bridgeOfTwo(id: string): Promise<{ bridge: Bridge; a: Pair; b: Pair }> {
  const a = await pair(server, events, APP, `${id}-a`);
  const b = await pair(server, events, APP, `${id}-b`);
  const bridge = server.core.bridges.create({ id });
  server.core.bridges.addChannel(bridge, a.one, {});
  server.core.bridges.addChannel(bridge, b.one, {});
  return { bridge, a, b };
}

async function tearDown(bridge: Bridge, ...pairs: Pair[]): Promise<void> {
  bridge.destroy();
  for (const { one } of pairs) assert.equal(await status(server, `/channels/${one.id}`, { method: 'DELETE' }), 204);
}

describe('bridge playback', () => {
  test('sound:beep into a bridge is heard by every member; 201 with Location and target bridge:<id>', async () => {
    const { bridge, a, b } = await bridgeOfTwo('pb-beep');
    const heardA = new Capture(a.two);
    const heardB = new Capture(b.two);
    const body = await play(server, `/bridges/${bridge.id}/play?media=sound:beep`);
    assert.equal(body.target_uri, `bridge:${bridge.id}`);
    assert.equal(body.state, 'playing');
    assert.equal(body.language, 'en');
    const seen = await playbackEvents(events, body.id);
    assert.deepEqual(
      seen.map((event) => [event.type, event.playback.state]),
      [
        ['PlaybackStarted', 'playing'],
        ['PlaybackFinished', 'complete'],
      ],
    );
    const took = seen[1].at - seen[0].at;
    assert.ok(took >= 100 && took < 700, `beep took ${took} ms`);
    heardA.stop();
    heardB.stop();
    for (const capture of [heardA, heardB]) {
      const samples = capture.samples(seen[0].at - 50, seen[1].at + 50);
      assert.ok(toneAmplitude(samples, 1000) > 500, `1 kHz in the bridge: ${toneAmplitude(samples, 1000)}`);
      const frames = capture.toneFrames(1000, 3000);
      assert.ok(frames >= 11 && frames <= 14, `${frames} frames of the beep`);
    }
    await tearDown(bridge, a, b);
  });

  test('a second play while the first plays is enqueued: 409 on control, never simultaneous, 404 once gone', async () => {
    const { bridge, a, b } = await bridgeOfTwo('pb-queue');
    const heard = new Capture(a.two);
    // 1 s of silence, then a beep queued behind it.
    const first = await play(server, `/bridges/${bridge.id}/play?media=sound:silence/1`);
    const second = await play(server, `/bridges/${bridge.id}/play/pb-queue-2?media=sound:beep`);
    assert.equal(first.state, 'playing');
    assert.equal(second.id, 'pb-queue-2');
    assert.equal(second.state, 'enqueued');
    assert.equal(((await (await server.ari(`/playbacks/${second.id}`)).json()) as Json).state, 'enqueued');
    for (const operation of ['pause', 'unpause', 'reverse', 'forward', 'restart']) {
      assert.equal(await control(server, second.id, operation), 409, operation);
    }
    const firstStarted = await playbackEvent(events, 'PlaybackStarted', first.id);
    // Still waiting half-way through the first one.
    const midway = (await (await server.ari(`/playbacks/${second.id}`)).json()) as Json;
    assert.equal(midway.state, 'enqueued');
    const firstDone = await playbackEvent(events, 'PlaybackFinished', first.id);
    const secondStarted = await playbackEvent(events, 'PlaybackStarted', second.id);
    assert.ok(secondStarted.at >= firstDone.at, 'the second starts only after the first finished');
    assert.ok(firstDone.at - firstStarted.at >= 800, 'the first played its whole second');
    assert.equal(await control(server, second.id, 'pause'), 204, 'playing now: controls apply');
    assert.equal(await control(server, second.id, 'unpause'), 204);
    const secondDone = await playbackEvent(events, 'PlaybackFinished', second.id);
    heard.stop();
    // The beep was heard only after the silence: nothing of it while the first played.
    assert.ok(toneAmplitude(heard.samples(firstStarted.at + 40, firstDone.at - 40), 1000) < 100, 'no beep during the first playback');
    assert.ok(toneAmplitude(heard.samples(secondStarted.at - 30, secondDone.at + 30), 1000) > 500, 'the beep after it');
    assert.equal(await control(server, second.id, 'pause'), 404);
    assert.equal(await status(server, `/playbacks/${second.id}`), 404);
    await tearDown(bridge, a, b);
  });

  test('stop of the playing one starts the next; stop of an enqueued one removes it', async () => {
    const { bridge, a, b } = await bridgeOfTwo('pb-stop');
    const one = await play(server, `/bridges/${bridge.id}/play?media=sound:silence/5`);
    const two = await play(server, `/bridges/${bridge.id}/play?media=sound:silence/5`);
    const three = await play(server, `/bridges/${bridge.id}/play?media=sound:beep`);
    assert.deepEqual([one.state, two.state, three.state], ['playing', 'enqueued', 'enqueued']);
    await playbackEvent(events, 'PlaybackStarted', one.id);
    assert.equal(await status(server, `/playbacks/${two.id}`, { method: 'DELETE' }), 204);
    assert.equal((await playbackEvent(events, 'PlaybackFinished', two.id)).playback.state, 'complete');
    assert.equal(await status(server, `/playbacks/${one.id}`, { method: 'DELETE' }), 204);
    await playbackEvent(events, 'PlaybackFinished', one.id);
    // The beep, third in line, is next; the removed one never starts.
    const started = await playbackEvent(events, 'PlaybackStarted', three.id);
    assert.equal(started.playback.id, three.id);
    await playbackEvent(events, 'PlaybackFinished', three.id);
    await tearDown(bridge, a, b);
  });

  test('a media list on a bridge raises PlaybackContinuing with next_media_uri', async () => {
    const { bridge, a, b } = await bridgeOfTwo('pb-list');
    const body = await play(server, `/bridges/${bridge.id}/play?media=sound:beep,sound:beep,sound:silence/1`);
    const seen = await playbackEvents(events, body.id);
    assert.deepEqual(
      seen.map((event) => [event.type, event.playback.media_uri, event.playback.next_media_uri ?? null]),
      [
        ['PlaybackStarted', 'sound:beep', 'sound:beep'],
        ['PlaybackContinuing', 'sound:beep', 'sound:beep'],
        ['PlaybackStarted', 'sound:beep', 'sound:silence/1'],
        ['PlaybackContinuing', 'sound:beep', 'sound:silence/1'],
        ['PlaybackStarted', 'sound:silence/1', null],
        ['PlaybackFinished', 'sound:silence/1', null],
      ],
    );
    await tearDown(bridge, a, b);
  });

  test('destroying the bridge ends its playbacks with PlaybackFinished', async () => {
    const { bridge, a, b } = await bridgeOfTwo('pb-gone');
    const tone = await play(server, `/bridges/${bridge.id}/play?media=${encodeURIComponent('tone:ring;tonezone=us')}`);
    const queued = await play(server, `/bridges/${bridge.id}/play?media=sound:beep`);
    await playbackEvent(events, 'PlaybackStarted', tone.id);
    bridge.destroy();
    assert.equal((await playbackEvent(events, 'PlaybackFinished', tone.id)).playback.state, 'complete');
    assert.equal((await playbackEvent(events, 'PlaybackFinished', queued.id)).playback.state, 'complete');
    assert.equal(await status(server, `/playbacks/${tone.id}`), 404);
    for (const { one } of [a, b]) assert.equal(await status(server, `/channels/${one.id}`, { method: 'DELETE' }), 204);
  });

  test('errors: 404 unknown bridge, 422 unknown announcer_format, 400 without media, 409 id in use', async () => {
    assert.equal(await status(server, '/bridges/no-such-bridge/play?media=sound:beep', { method: 'POST' }), 404);
    assert.equal(await status(server, '/bridges/no-such-bridge/play/x?media=sound:beep', { method: 'POST' }), 404);
    const { bridge, a, b } = await bridgeOfTwo('pb-err');
    const unknown = await post(server, `/bridges/${bridge.id}/play?media=sound:beep&announcer_format=vorbis`);
    assert.equal(unknown.status, 422);
    assert.equal(await status(server, `/bridges/${bridge.id}/play?media=sound:beep&announcer_format=slin16`, { method: 'POST' }), 201);
    assert.equal(await status(server, `/bridges/${bridge.id}/play`, { method: 'POST' }), 400);
    await play(server, `/bridges/${bridge.id}/play/pb-err-id?media=sound:silence/1`);
    assert.equal(await status(server, `/bridges/${bridge.id}/play/pb-err-id?media=sound:beep`, { method: 'POST' }), 409);
    await tearDown(bridge, a, b);
  });
});

describe('leaks', () => {
  test('no playback, bridge or channel is left', async () => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(server.core.playbacks.size, 0);
    assert.equal(server.core.bridges.size, 0);
    assert.equal(server.allChannels().length, 0);
    assert.deepEqual(
      events.messages.filter((message) => message.error !== undefined),
      [],
    );
  });
});
