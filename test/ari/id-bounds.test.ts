// Ids and names are bounded and well-formed before anything acts on them: a lone surrogate or a
// 200 KB playback id used to start a playback and then fail (500) building its Location header.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let events: EventSocket;
before(async () => {
  server = await startTestServer();
  events = await server.events('app=ids');
  const created = await server.ari('/channels/id-chan?endpoint=Local/answer@default&app=ids&otherChannelId=id-chan-2', { method: 'POST' });
  assert.equal(created.status, 200);
  await events.nextOfType('StasisStart');
  await events.quiet(200);
});
after(async () => {
  await events.close();
  await server.stop();
});

const play = (body: Record<string, unknown>): Promise<Response> =>
  server.ari('/channels/id-chan/play', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

test('a 200 KB playback id is refused with 400 before any playback starts', async () => {
  const response = await play({ media: 'tone:440', playbackId: 'p'.repeat(200_000) });
  assert.equal(response.status, 400);
  assert.match(((await response.json()) as { message: string }).message, /playbackId/);
  assert.deepEqual((await events.quiet(150)).filter((event) => String(event.type).startsWith('Playback')), [], 'no PlaybackStarted');
});

test('a lone surrogate in an id or a name is a 400, with no side effect', async () => {
  for (const body of [{ media: 'tone:440', playbackId: 'a\ud800' }, { media: 'tone:440', playbackId: '\udfffb' }]) {
    const response = await play(body);
    assert.equal(response.status, 400);
  }
  const bridge = await server.ari('/bridges', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ bridgeId: 'b\ud800' }) });
  assert.equal(bridge.status, 400);
  assert.deepEqual((await events.quiet(150)).filter((event) => /^(Playback|Bridge)/.test(String(event.type))), []);
  assert.equal(server.core.playbacks.list().length, 0);
  assert.equal(server.core.bridges.list().length, 0);
});

test('an id with characters outside Latin-1 gets a percent-encoded Location header', async () => {
  const response = await play({ media: 'tone:440', playbackId: '日本' });
  assert.equal(response.status, 201);
  assert.equal(response.headers.get('location'), `/ari/playbacks/${encodeURIComponent('日本')}`);
  assert.equal((await server.ari(`/playbacks/${encodeURIComponent('日本')}`, { method: 'DELETE' })).status, 204);
});

test('control characters in ids are refused', async () => {
  const response = await play({ media: 'tone:440', playbackId: 'a\nb' });
  assert.equal(response.status, 400);
});
