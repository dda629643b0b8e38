// What one play request may make the server build: a long `digits:` plays without rendering its
// audio up front; media past the size bounds (docs/playback-bounds.md) are answered 400 before a
// Playback exists, with no event; huge numbers and tone values end a playback `failed`, never 500.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { getFileFormat } from '../../src/media/codecs.ts';
import { openAudioFileWriter } from '../../src/media/audio-file.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { unlessCluster } from '../helpers/cluster-server.ts';
import { nextEvent, pair, play, playbackEvent, type Json } from './playback-helpers.ts';

const APP = 'pb-bounds';

describe('play request bounds', () => {
  let server: TestServer;
  let events: EventSocket;

  before(async () => {
    server = await startTestServer();
    events = await server.events(`app=${APP}`);
    // Half-second digit prompts, as in the usual sound packages.
    const dir = join(server.config.dirs.sounds[0], 'en', 'digits');
    mkdirSync(dir, { recursive: true });
    for (let n = 0; n <= 9; n++) {
      const writer = openAudioFileWriter(join(dir, `${n}.wav`), getFileFormat('wav')!);
      writer.write(new Int16Array(4000).fill(100 * (n + 1)));
      writer.finalize();
    }
    server.core.sounds.rescan();
  });

  after(async () => {
    await events.close();
    await server.stop();
  });

  async function playJson(channelId: string, media: string | string[]): Promise<{ status: number; body: Json; ms: number }> {
    const started = Date.now();
    const response = await server.ari(`/channels/${channelId}/play`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ media }),
    });
    const body = (await response.json()) as Json;
    return { status: response.status, body, ms: Date.now() - started };
  }

  test('digits: of 10,000 digits plays, and memory does not grow with its length', async () => {
    const { one } = await pair(server, events, APP, 'pbb-long');
    const digits = '0123456789'.repeat(1000);
    const before = process.memoryUsage().arrayBuffers;
    const { status, body } = await playJson(one.id, `digits:${digits}`);
    assert.equal(status, 201, JSON.stringify(body));
    await playbackEvent(events, 'PlaybackStarted', body.id);
    const grown = process.memoryUsage().arrayBuffers - before;
    // Rendered whole, 10,000 half-second prompts are 80 MB of samples.
    assert.ok(grown < 8 * 1024 * 1024, `array buffers grew by ${(grown / 1048576).toFixed(1)} MB`);
    assert.equal((await server.ari(`/playbacks/${body.id}`, { method: 'DELETE' })).status, 204);
    await playbackEvent(events, 'PlaybackFinished', body.id);
    await server.ari(`/channels/${one.id}`, { method: 'DELETE' });
  });

  test('media past the size bounds: 400 with a message, fast, before any Playback or event', unlessCluster('reads server.core.playbacks of B; and its 1 MB request cannot cross NATS (max_payload): 400 with the cluster\'s message'), async () => {
    const { one } = await pair(server, events, APP, 'pbb-refused');
    const tones = (n: number): string => Array(n).fill('440/10').join(',');
    const refused: [string, string | string[], RegExp][] = [
      ['digits: of 16,001 characters', `digits:${'1'.repeat(16_001)}`, /^digits: too long: 16001 characters; at most 16000$/],
      ['digits: of 1 MB', `digits:${'0123456789'.repeat(100_000)}`, /^(digits: too long: 1000000 characters|media: longer than 65536 characters)/],
      ['characters: of 16,001 characters', `characters:${'a'.repeat(16_001)}`, /^characters: too long/],
      ['number: of 65 characters', `number:${'9'.repeat(65)}`, /^number: too long: 65 characters; at most 64$/],
      // A tone list's commas would split a comma-separated `media`: quoted, or an item of a JSON list.
      ['tone: of 65 parts', [`tone:${tones(65)}`], /^tone: too many parts: 65; at most 64$/],
      ['tone: of 65 parts, quoted', `"tone:${tones(65)}"`, /^tone: too many parts: 65; at most 64$/],
      ['a sound: URI of 16,385 characters', `sound:${'a'.repeat(16_379)}`, /^Media URI too long: 16385 characters/],
      ['one oversized item in a list', ['tone:440', `digits:${'1'.repeat(20_000)}`], /^digits: too long/],
      ['a list of 128 media', Array(128).fill('tone:440'), /^Too many values for media$/],
    ];
    for (const [label, media, message] of refused) {
      const { status, body, ms } = await playJson(one.id, media);
      assert.equal(status, 400, `${label}: ${status} ${JSON.stringify(body).slice(0, 200)}`);
      assert.match(String(body.message), message, label);
      assert.ok(ms < 2000, `${label} took ${ms} ms`);
    }
    assert.equal(server.core.playbacks.list().filter((playback) => playback.target.id === one.id).length, 0, 'no Playback was made');
    // Bridges take the same path.
    assert.equal((await server.ari('/bridges/pbb-bridge', { method: 'POST' })).status, 200);
    const bridged = await server.ari('/bridges/pbb-bridge/play', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ media: `characters:${'x'.repeat(100_000)}` }),
    });
    assert.equal(bridged.status, 400);
    assert.match(String(((await bridged.json()) as Json).message), /^(characters: too long|media: longer than 65536 characters)/);
    await server.ari('/bridges/pbb-bridge', { method: 'DELETE' });
    // At the bounds themselves the request is accepted; its PlaybackStarted is the first playback
    // event of the channel, so none was raised for the refused ones.
    const { status, body } = await playJson(one.id, [`tone:${tones(64)}`, `digits:${'1'.repeat(16_000)}`]);
    assert.equal(status, 201, JSON.stringify(body));
    const first = await nextEvent(events, (event) => event.playback !== undefined);
    assert.equal(first.type, 'PlaybackStarted');
    assert.equal(first.playback.id, body.id);
    await server.ari(`/playbacks/${body.id}`, { method: 'DELETE' });
    await playbackEvent(events, 'PlaybackFinished', body.id);
    await server.ari(`/channels/${one.id}`, { method: 'DELETE' });
  });

  test('huge numbers and tone values: the playback fails (or aliases), never a 500', async () => {
    const { one } = await pair(server, events, APP, 'pbb-huge');
    for (const media of ['number:99999999999', 'number:-99999999999', `tone:440/${'9'.repeat(40)}`, `tone:${'9'.repeat(400)}/100`]) {
      const body = await play(server, `/channels/${one.id}/play?media=${encodeURIComponent(media)}`);
      const finished = await playbackEvent(events, 'PlaybackFinished', body.id);
      assert.equal(finished.playback.state, 'failed', media);
    }
    const alias = await play(server, `/channels/${one.id}/play?media=${encodeURIComponent('tone:!4294967295/60')}`);
    assert.equal((await playbackEvent(events, 'PlaybackFinished', alias.id)).playback.state, 'complete');
    await server.ari(`/channels/${one.id}`, { method: 'DELETE' });
  });

  test('a failed playback of a 16,000-character media URI is logged with its first 256 characters and its length', async () => {
    const { one } = await pair(server, events, APP, 'pbb-log');
    const media = `sound:${'n'.repeat(16_000)}`;
    const { status, body } = await playJson(one.id, media);
    assert.equal(status, 201, JSON.stringify(body));
    assert.equal((await playbackEvent(events, 'PlaybackFinished', body.id)).playback.state, 'failed');
    const line = server.logLines.find((text) => text.includes('Playback failed') && text.includes(String(body.id)));
    assert.ok(line, 'the failure is logged');
    const record = JSON.parse(line) as { media: string; mediaLength: number; msg: string };
    assert.equal(record.mediaLength, media.length);
    assert.equal(record.media, `${media.slice(0, 256)}…`);
    assert.ok(line.length < 2000, `log line of ${line.length} characters`);
    await server.ari(`/channels/${one.id}`, { method: 'DELETE' });
  });
});
