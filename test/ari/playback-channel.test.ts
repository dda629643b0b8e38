// Playback to a channel over real ARI: POST /channels/{id}/play answers 201 with Location, the
// events follow the spec's states at real speed, the audio reaches the channel's far end, and the
// controls, stop, queueing, failures and the error statuses behave as Asterisk's.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EventSocket, TestServer } from '../helpers/server.ts';
import {
  Capture,
  control,
  nextEvent,
  pair,
  play,
  playbackEvent,
  playbackEvents,
  post,
  sleep,
  promptsOnlyServerInSuite,
  status,
  toneAmplitude,
  type Json,
  type PlaybackServer,
} from './playback-helpers.ts';

const APP = 'pb-chan';

let server: TestServer;
let events: EventSocket;

promptsOnlyServerInSuite(APP, (started) => ({ server, events } = started));

async function hangup(id: string): Promise<void> {
  assert.equal(await status(server, `/channels/${id}`, { method: 'DELETE' }), 204);
}

describe('channel playback', () => {
  test('sound:beep: 201 + Location, PlaybackStarted, 1 kHz at the far end, PlaybackFinished about 250 ms later, then 404', async () => {
    const { one, two } = await pair(server, events, APP, 'pc-beep');
    const capture = new Capture(two);
    const body = await play(server, `/channels/${one.id}/play?media=sound:beep`);
    assert.equal(body.state, 'playing');
    assert.equal(body.media_uri, 'sound:beep');
    assert.equal(body.target_uri, `channel:${one.id}`);
    assert.equal(body.language, 'en');
    assert.equal(body.next_media_uri, undefined);

    const started = await playbackEvent(events, 'PlaybackStarted', body.id);
    assert.equal(started.playback.state, 'playing');
    assert.equal(started.application, APP);
    const during = await server.ari(`/playbacks/${body.id}`);
    assert.equal(during.status, 200);
    assert.equal(((await during.json()) as Json).state, 'playing');

    const finished = await playbackEvent(events, 'PlaybackFinished', body.id);
    assert.equal(finished.playback.state, 'complete');
    const took = finished.at - started.at;
    // 12.5 frames of audio; the clock may run a few overdue ticks back to back under load.
    assert.ok(took >= 100 && took < 700, `beep took ${took} ms`);
    capture.stop();

    // The freed record: GET, control and DELETE all answer 404.
    assert.equal(await status(server, `/playbacks/${body.id}`), 404);
    assert.equal(await control(server, body.id, 'pause'), 404);
    assert.equal(await status(server, `/playbacks/${body.id}`, { method: 'DELETE' }), 404);

    // 250 ms of 1 kHz at peak 5000 arrived at the ;2 half, as ~12 frames with the tone.
    const heard = capture.samples(started.at - 50, finished.at + 50);
    assert.ok(toneAmplitude(heard, 1000) > 500, `1 kHz amplitude ${toneAmplitude(heard, 1000)}`);
    const toneFrames = capture.toneFrames(1000, 3000);
    assert.ok(toneFrames >= 11 && toneFrames <= 14, `${toneFrames} frames of 1 kHz`);
    assert.ok(toneAmplitude(heard, 1700) < 200, 'no other tone');
    await hangup(one.id);
  });

  test('a media list raises PlaybackContinuing naming the next URI, then PlaybackFinished on the last item', async () => {
    const { one } = await pair(server, events, APP, 'pc-list');
    const body = await play(server, `/channels/${one.id}/play?media=sound:beep,sound:silence/1&lang=en`);
    assert.equal(body.next_media_uri, 'sound:silence/1');
    const seen = await playbackEvents(events, body.id);
    assert.deepEqual(
      seen.map((event) => [event.type, event.playback.media_uri, event.playback.next_media_uri, event.playback.state]),
      [
        ['PlaybackStarted', 'sound:beep', 'sound:silence/1', 'playing'],
        ['PlaybackContinuing', 'sound:beep', 'sound:silence/1', 'playing'],
        ['PlaybackStarted', 'sound:silence/1', undefined, 'playing'],
        ['PlaybackFinished', 'sound:silence/1', undefined, 'complete'],
      ],
    );
    const took = seen[3].at - seen[0].at;
    assert.ok(took >= 1000 && took < 2000, `beep + 1 s of silence took ${took} ms`);
    assert.ok(seen[1].at - seen[0].at < 700, 'the first item ended after about 250 ms');
    await hangup(one.id);
  });

  test('media that cannot be found: the playback finishes failed with PlaybackFinished', async () => {
    const { one } = await pair(server, events, APP, 'pc-missing');
    const body = await play(server, `/channels/${one.id}/play?media=sound:no-such-sound`);
    const seen = await playbackEvents(events, body.id);
    assert.deepEqual(
      seen.map((event) => [event.type, event.playback.state]),
      [
        ['PlaybackStarted', 'playing'],
        ['PlaybackFinished', 'failed'],
      ],
    );
    assert.equal(await status(server, `/playbacks/${body.id}`), 404);

    // Unknown schemes, bad numbers, unknown tones and missing recordings fail the same way.
    for (const media of ['video:clip', 'number:abc', 'tone:nonsense', 'recording:nothing-here']) {
      const other = await play(server, `/channels/${one.id}/play?media=${encodeURIComponent(media)}`);
      const finished = await playbackEvent(events, 'PlaybackFinished', other.id);
      assert.equal(finished.playback.state, 'failed', media);
    }
    await hangup(one.id);
  });

  test('in a list, an item that cannot be played is passed with PlaybackContinuing; the last one decides (as Asterisk)', async () => {
    const { one } = await pair(server, events, APP, 'pc-list-missing');
    const first = await play(server, `/channels/${one.id}/play?media=sound:no-such-sound,sound:beep`);
    const seen = await playbackEvents(events, first.id);
    assert.deepEqual(
      seen.map((event) => [event.type, event.playback.media_uri, event.playback.state]),
      [
        ['PlaybackStarted', 'sound:no-such-sound', 'playing'],
        ['PlaybackContinuing', 'sound:no-such-sound', 'playing'],
        ['PlaybackStarted', 'sound:beep', 'playing'],
        ['PlaybackFinished', 'sound:beep', 'complete'],
      ],
    );
    const second = await play(server, `/channels/${one.id}/play?media=sound:beep,sound:no-such-sound`);
    const last = await playbackEvents(events, second.id);
    assert.deepEqual(
      last.map((event) => [event.type, event.playback.media_uri, event.playback.state]),
      [
        ['PlaybackStarted', 'sound:beep', 'playing'],
        ['PlaybackContinuing', 'sound:beep', 'playing'],
        ['PlaybackStarted', 'sound:no-such-sound', 'playing'],
        ['PlaybackFinished', 'sound:no-such-sound', 'failed'],
      ],
    );
    await hangup(one.id);
  });

  test('plays on one channel queue: the second waits enqueued (409 on control) and starts when the first finishes', async () => {
    const { one } = await pair(server, events, APP, 'pc-queue');
    const first = await play(server, `/channels/${one.id}/play?media=sound:beep`);
    const second = await play(server, `/channels/${one.id}/play/pc-queue-second?media=sound:beep`);
    assert.equal(second.id, 'pc-queue-second');
    assert.equal(second.state, 'enqueued');
    assert.equal(await control(server, second.id, 'pause'), 409);
    const conflict = await post(server, `/playbacks/${second.id}/control?operation=restart`);
    assert.equal(conflict.status, 409);
    assert.deepEqual(await conflict.json(), { message: 'Can only restart while media is playing' });
    const firstDone = await playbackEvent(events, 'PlaybackFinished', first.id);
    const secondStarted = await playbackEvent(events, 'PlaybackStarted', second.id);
    assert.ok(secondStarted.at >= firstDone.at);
    await playbackEvent(events, 'PlaybackFinished', second.id);
    assert.equal(await control(server, second.id, 'pause'), 404);
    await hangup(one.id);
  });

  test('pause holds the position (state stays playing, silence meanwhile) and unpause resumes where it was', async () => {
    const { one, two } = await pair(server, events, APP, 'pc-pause');
    const capture = new Capture(two);
    // One second of 1 kHz, played once.
    const body = await play(server, `/channels/${one.id}/play?media=${encodeURIComponent('tone:!1000/1000')}`);
    const started = await playbackEvent(events, 'PlaybackStarted', body.id);
    assert.equal(await control(server, body.id, 'pause'), 204);
    const pausedAt = Date.now();
    assert.equal(await control(server, body.id, 'pause'), 204, 'pause again changes nothing');
    await sleep(600);
    const paused = (await (await server.ari(`/playbacks/${body.id}`)).json()) as Json;
    assert.equal(paused.state, 'playing');
    assert.ok(toneAmplitude(capture.samples(pausedAt + 60, Date.now()), 1000) < 100, 'silence while paused');
    assert.equal(await control(server, body.id, 'unpause'), 204);
    assert.equal(await control(server, body.id, 'unpause'), 204, 'unpause again changes nothing');
    const finished = await playbackEvent(events, 'PlaybackFinished', body.id);
    const took = finished.at - started.at;
    assert.ok(took >= 1350, `1 s of tone paused 600 ms took ${took} ms`);
    capture.stop();
    // The whole second was heard, no more and no less: the pause kept the position.
    const toneFrames = capture.toneFrames(1000, 3000);
    assert.ok(toneFrames >= 48 && toneFrames <= 51, `${toneFrames} frames of tone`);
    await hangup(one.id);
  });

  test('forward skips by skipms, reverse and restart go back, offsetms starts into the first item', async () => {
    const { one } = await pair(server, events, APP, 'pc-skip');
    // forward: 5 s of silence skipped 4 s ends after about 1 s.
    const forward = await play(server, `/channels/${one.id}/play?media=sound:silence/5&skipms=4000`);
    const forwardStarted = await playbackEvent(events, 'PlaybackStarted', forward.id);
    assert.equal(await control(server, forward.id, 'forward'), 204);
    const forwardDone = await playbackEvent(events, 'PlaybackFinished', forward.id);
    assert.ok(forwardDone.at - forwardStarted.at < 2500, `forward: ${forwardDone.at - forwardStarted.at} ms`);

    // reverse: 400 ms into 1 s, back by the default 3000 ms (to the start): about 1.4 s in all.
    const reverse = await play(server, `/channels/${one.id}/play?media=sound:silence/1`);
    const reverseStarted = await playbackEvent(events, 'PlaybackStarted', reverse.id);
    await sleep(400);
    assert.equal(await control(server, reverse.id, 'reverse'), 204);
    const reverseDone = await playbackEvent(events, 'PlaybackFinished', reverse.id);
    assert.ok(reverseDone.at - reverseStarted.at >= 1200, `reverse: ${reverseDone.at - reverseStarted.at} ms`);

    // restart: the same, back to the beginning of the item.
    const restart = await play(server, `/channels/${one.id}/play?media=sound:silence/1`);
    const restartStarted = await playbackEvent(events, 'PlaybackStarted', restart.id);
    await sleep(400);
    assert.equal(await control(server, restart.id, 'restart'), 204);
    const restartDone = await playbackEvent(events, 'PlaybackFinished', restart.id);
    assert.ok(restartDone.at - restartStarted.at >= 1200, `restart: ${restartDone.at - restartStarted.at} ms`);

    // offsetms: 800 ms into 1 s of silence leaves about 200 ms.
    const offset = await play(server, `/channels/${one.id}/play?media=sound:silence/1&offsetms=800`);
    const offsetStarted = await playbackEvent(events, 'PlaybackStarted', offset.id);
    const offsetDone = await playbackEvent(events, 'PlaybackFinished', offset.id);
    assert.ok(offsetDone.at - offsetStarted.at < 700, `offsetms: ${offsetDone.at - offsetStarted.at} ms`);
    await hangup(one.id);
  });

  test('stop (DELETE) ends a playing playback and removes an enqueued one; both raise PlaybackFinished', async () => {
    const { one } = await pair(server, events, APP, 'pc-stop');
    const playing = await play(server, `/channels/${one.id}/play?media=sound:silence/5`);
    const waiting = await play(server, `/channels/${one.id}/play?media=sound:silence/5`);
    assert.equal(waiting.state, 'enqueued');
    await playbackEvent(events, 'PlaybackStarted', playing.id);

    assert.equal(await status(server, `/playbacks/${waiting.id}`, { method: 'DELETE' }), 204);
    const waitingDone = await playbackEvent(events, 'PlaybackFinished', waiting.id);
    assert.equal(waitingDone.playback.state, 'complete');
    assert.equal(await status(server, `/playbacks/${waiting.id}`), 404);

    const before = Date.now();
    assert.equal(await status(server, `/playback/${playing.id}`, { method: 'DELETE' }), 204, 'the /playback alias');
    const playingDone = await playbackEvent(events, 'PlaybackFinished', playing.id);
    assert.equal(playingDone.playback.state, 'complete');
    assert.ok(playingDone.at - before < 500);
    // The removed one never started.
    const rest = await events.quiet(200);
    assert.ok(!rest.some((event: Json) => event.playback?.id === waiting.id));
    await hangup(one.id);
  });

  test('tone:ring;tonezone=us plays its cadence until stopped', async () => {
    const { one, two } = await pair(server, events, APP, 'pc-tone');
    const capture = new Capture(two);
    const body = await play(server, `/channels/${one.id}/play?media=${encodeURIComponent('tone:ring;tonezone=us')}`);
    const started = await playbackEvent(events, 'PlaybackStarted', body.id);
    await sleep(2700);
    assert.equal(((await (await server.ari(`/playbacks/${body.id}`)).json()) as Json).state, 'playing');
    // US ringback: 440+480 Hz for 2 s, then 4 s of silence.
    const ringing = capture.samples(started.at + 100, started.at + 1800);
    assert.ok(toneAmplitude(ringing, 440) > 2000 && toneAmplitude(ringing, 480) > 2000, 'ringback heard');
    const quiet = capture.samples(started.at + 2350, Date.now());
    assert.ok(toneAmplitude(quiet, 440) < 300, 'then the silent part of the cadence');
    assert.equal(await status(server, `/playbacks/${body.id}`, { method: 'DELETE' }), 204);
    const finished = await playbackEvent(events, 'PlaybackFinished', body.id);
    assert.equal(finished.playback.state, 'complete');
    capture.stop();
    await hangup(one.id);
  });

  test('a hangup ends the playing and the waiting playbacks with PlaybackFinished', async () => {
    const { one } = await pair(server, events, APP, 'pc-hangup');
    const playing = await play(server, `/channels/${one.id}/play?media=sound:silence/5`);
    const waiting = await play(server, `/channels/${one.id}/play?media=sound:beep`);
    await playbackEvent(events, 'PlaybackStarted', playing.id);
    await hangup(one.id);
    assert.equal((await playbackEvent(events, 'PlaybackFinished', playing.id)).playback.state, 'complete');
    assert.equal((await playbackEvent(events, 'PlaybackFinished', waiting.id)).playback.state, 'complete');
    assert.equal(server.core.playbacks.size, 0);
  });

  test('errors: 404 unknown channel, 409 not in Stasis, 412 not answered, 400 bad parameters, 409 id in use', async () => {
    assert.equal(await status(server, '/channels/nobody/play?media=sound:beep', { method: 'POST' }), 404);

    const { one, two } = await pair(server, events, APP, 'pc-err');
    // The ;2 half runs the dialplan, not an application.
    assert.equal(await status(server, `/channels/${two.id}/play?media=sound:beep`, { method: 'POST' }), 409);
    assert.equal(await status(server, `/channels/${one.id}/play`, { method: 'POST' }), 400, 'media is required');
    assert.equal(await status(server, `/channels/${one.id}/play?media=sound:beep&skipms=-1`, { method: 'POST' }), 400);
    assert.equal(await status(server, `/channels/${one.id}/play?media=sound:beep&offsetms=-5`, { method: 'POST' }), 400);

    const held = await play(server, `/channels/${one.id}/play/pc-err-id?media=sound:silence/2`);
    const again = await post(server, `/channels/${one.id}/play/pc-err-id?media=sound:beep`);
    assert.equal(again.status, 409);
    assert.equal((await post(server, `/channels/${one.id}/play?media=sound:beep&playbackId=pc-err-id`)).status, 409);

    // 400 for a bad operation comes before the lookup; 404 for an unknown playback.
    assert.equal(await control(server, 'no-such-playback', 'jump'), 400);
    assert.equal(await control(server, held.id, 'jump'), 400);
    assert.equal(await control(server, 'no-such-playback', 'pause'), 404);
    assert.equal(await status(server, '/playbacks/no-such-playback'), 404);
    assert.equal(await status(server, '/playbacks/no-such-playback', { method: 'DELETE' }), 404);
    await hangup(one.id);

    // A created (not dialed) channel is Down: 412.
    const created = await post(server, `/channels/create?endpoint=Local/answer@default&app=${APP}&channelId=pc-down`);
    assert.equal(created.status, 200);
    await nextEvent(events, (event) => event.type === 'StasisStart' && event.channel?.id === 'pc-down');
    const refused = await post(server, '/channels/pc-down/play?media=sound:beep');
    assert.equal(refused.status, 412);
    assert.deepEqual(await refused.json(), { message: 'Channel in invalid state' });
    await hangup('pc-down');
  });

  test('lang picks the prompt language; without it the channel language is used', async () => {
    const { one } = await pair(server, events, APP, 'pc-lang');
    const body = await play(server, `/channels/${one.id}/play?media=sound:beep&lang=fr`);
    assert.equal(body.language, 'fr');
    // No French beep: the English one plays (Asterisk falls back to en).
    assert.equal((await playbackEvent(events, 'PlaybackFinished', body.id)).playback.state, 'complete');
    await hangup(one.id);
  });
});

describe('leaks', () => {
  test('no playback, channel or generator is left', async () => {
    await sleep(100);
    assert.equal(server.core.playbacks.size, 0);
    assert.equal(server.allChannels().length, 0);
    const invalid = events.messages.filter((message) => message.error !== undefined);
    assert.deepEqual(invalid, []);
    assert.equal(server.logLines.filter((line) => line.includes('does not match')).length, 0);
  });
});
