// One verb for ending things: `end()` on a channel, a bridge, a playback and a live recording ends
// each as its ARI "end" operation does and announces it once; `endAll()` on each collection ends
// what it holds. Seen from outside: the events on the app's WebSocket and the recording's WAV file.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { nextEvent, pair, play, type Json } from '../ari/playback-helpers.ts';
import { parseWav } from '../ari/recordings-helpers.ts';

const APP = 'lifecycle';
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

test('end() ends a playback, a recording, a bridge and a channel, each announced once', async () => {
  const { one, two } = await pair(server, events, APP, 'life-a');
  assert.equal((await server.ari('/bridges/life-bridge', { method: 'POST' })).status, 200);
  assert.equal((await server.ari(`/bridges/life-bridge/addChannel?channel=${one.id}`, { method: 'POST' })).status, 204);
  assert.equal((await server.ari(`/applications/${APP}/subscription?eventSource=bridge:life-bridge`, { method: 'POST' })).status, 200);
  const bridge = server.core.bridges.get('life-bridge')!;
  const playback = await play(server, `/channels/${one.id}/play?media=tone:440&playbackId=life-pb`);
  await nextEvent(events, (e) => e.type === 'PlaybackStarted' && e.playback.id === playback.id);
  const recording = await server.ari(`/bridges/${bridge.id}/record?name=life-rec&format=wav`, { method: 'POST' });
  assert.equal(recording.status, 201, await recording.clone().text());
  await nextEvent(events, (e) => e.type === 'RecordingStarted' && e.recording.name === 'life-rec');

  server.core.playbacks.get('life-pb')!.end();
  const finished = await nextEvent(events, (e) => e.type === 'PlaybackFinished' && e.playback.id === 'life-pb');
  assert.equal(finished.playback.state, 'complete');

  await new Promise((resolve) => setTimeout(resolve, 200));
  server.core.recordings.getLive('life-rec').end();
  const recorded = await nextEvent(events, (e) => e.type === 'RecordingFinished' && e.recording.name === 'life-rec');
  assert.equal(recorded.recording.state, 'done');
  const wav = parseWav(readFileSync(join(server.config.dirs.recordings, 'life-rec.wav')));
  assert.ok(wav.samples.length > 0, 'the recording file holds audio');

  bridge.end();
  bridge.end();
  await nextEvent(events, (e) => e.type === 'BridgeDestroyed' && e.bridge.id === 'life-bridge');

  one.end();
  const destroyed = await nextEvent(events, (e: Json) => e.type === 'ChannelDestroyed' && e.channel.id === one.id);
  assert.equal(destroyed.cause, 16);
  assert.equal(server.core.channels.get(two.id), undefined, 'the Local peer went with it');
});

test('endAll() on each collection ends everything it holds', async () => {
  const a = await pair(server, events, APP, 'life-b');
  const bridge = server.core.bridges.create({ id: 'life-bridge-2' });
  server.core.bridges.addChannel(bridge, a.one, {});
  const recording = await server.ari(`/bridges/${bridge.id}/record?name=life-rec-2&format=wav`, { method: 'POST' });
  assert.equal(recording.status, 201);
  await nextEvent(events, (e) => e.type === 'RecordingStarted' && e.recording.name === 'life-rec-2');
  server.core.recordings.endAll();
  server.core.playbacks.endAll();
  server.core.bridges.endAll();
  server.core.channels.endAll();
  assert.deepEqual(server.core.channels.list(), []);
  assert.deepEqual(server.core.bridges.list(), []);
  assert.throws(() => server.core.recordings.getLive('life-rec-2'));
  const wav = parseWav(readFileSync(join(server.config.dirs.recordings, 'life-rec-2.wav')));
  assert.equal(wav.formatTag, 1);
});
