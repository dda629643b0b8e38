// Media over WebSocket (chan_websocket; POST /channels/externalMedia with transport websocket).
// Server mode: the test connects with the `ws` library to /media/<MEDIA_WEBSOCKET_CONNECTION_ID>
// as an application would. Client mode: Patchbay connects to a test WebSocket server named in
// `websocket_clients`. A WebSocket channel bridged with a Local call carries a tone each way (the
// frequency checked by Goertzel), the application's audio is re-timed to one frame per tick
// however fast it is sent, and the control protocol (plain text and JSON), flow control, marks,
// hangups and the rules of the connection id are checked on the wire.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { rawRequest } from '../../helpers/raw-http.ts';
import { AUTH, startTestServer, type TestServer } from '../../helpers/server.ts';
import { decodeSlin, decodeUlaw, loudSamples, MediaApp, MediaServer, sleep, slinTone, ulawTone, waitUntil } from './media-websocket-helpers.ts';
import { capture, EventLog, expectStatus, finish, isEvent, localCall, measure, ticks, toneWriter, type LocalCall } from '../../ari/bridges-helpers.ts';

const APP = 'ext-websocket';
// ---- the server under test ---------------------------------------------------------------------------

let server: TestServer;
let log: EventLog;
let socket: Awaited<ReturnType<TestServer['events']>>;
let mediaServer: MediaServer;
/** A port nothing listens on (a server opened and closed). */
let deadPort: number;
/** A media server that never answers PINGs (a hung application), with the PINGs it got. */
let silentServer: WebSocketServer;
const silentPings: string[] = [];

before(async () => {
  silentServer = new WebSocketServer({ host: '127.0.0.1', port: 0, autoPong: false });
  await new Promise((resolve) => silentServer.once('listening', resolve));
  silentServer.on('connection', (ws) => ws.on('ping', (data) => silentPings.push(String(data))));
  mediaServer = await MediaServer.open();
  const dead = await MediaServer.open();
  deadPort = dead.port;
  await dead.close();
  server = await startTestServer({
    websocket_clients: [
      { name: 'media_conn', uri: `ws://127.0.0.1:${mediaServer.port}/media/in?static=1`, protocols: 'media', username: 'mediauser', password: 's3cret' },
      { name: 'nowhere', uri: `ws://127.0.0.1:${deadPort}/`, connection_timeout: 200, reconnect_attempts: 2, reconnect_interval: 50 },
      { name: 'silent', uri: `ws://127.0.0.1:${(silentServer.address() as AddressInfo).port}/`, enable_pingpongs: true, pingpong_interval: 1, pingpong_probes: 1 },
    ],
  });
  socket = await server.events(`app=${APP}`);
  log = new EventLog(socket);
});

after(async () => {
  await socket?.close();
  await server?.stop();
  await mediaServer?.close();
  for (const client of silentServer?.clients ?? []) client.terminate();
  await new Promise((resolve) => silentServer?.close(resolve));
});

interface Created {
  readonly json: any;
  readonly id: string;
}

async function createExternal(query: Record<string, string>, body?: unknown): Promise<Created> {
  const params = new URLSearchParams({ app: APP, format: 'ulaw', encapsulation: 'none', transport: 'websocket', ...query });
  const json = await expectStatus(server, `/channels/externalMedia?${params}`, 200, 'POST', body);
  return { json, id: json.id };
}

/** A server-mode channel with its application connected and the channel in Stasis. */
async function connectedServerMode(channelId: string, query: Record<string, string> = {}): Promise<{ created: Created; app: MediaApp }> {
  const mark = log.mark();
  const created = await createExternal({ connection_type: 'server', channelId, ...query });
  const app = await MediaApp.connect(server, created.json.channelvars.MEDIA_WEBSOCKET_CONNECTION_ID);
  await log.waitFor(`StasisStart ${channelId}`, isEvent('StasisStart', channelId), mark);
  return { created, app };
}

async function bridgedWith(channelId: string, name: string): Promise<{ local: LocalCall; bridgeId: string }> {
  const local = await localCall(server, log, APP, `${name}-local`);
  const bridgeId = `${name}-bridge`;
  await expectStatus(server, `/bridges/${bridgeId}?type=mixing`, 200);
  await expectStatus(server, `/bridges/${bridgeId}/addChannel?channel=${channelId},${local.one.id}`, 204);
  return { local, bridgeId };
}

/** Media clock ticks one GET_STATUS → STATUS round trip takes now: how late the test may see an event. */
async function roundTripTicks(app: MediaApp): Promise<number> {
  const from = app.texts.length;
  const start = server.core.media.clock.ticks;
  await app.send('GET_STATUS');
  await app.event('STATUS', from);
  return server.core.media.clock.ticks - start;
}

async function hangup(id: string): Promise<void> {
  if (server.core.channels.get(id)) await expectStatus(server, `/channels/${id}`, 204, 'DELETE');
}

// ---- tests -------------------------------------------------------------------------------------------

describe('server mode', () => {
  test('the answer carries a secret connection id; the application connects, gets MEDIA_START, and the channel enters Stasis once answered', async () => {
    const mark = log.mark();
    const created = await createExternal({ connection_type: 'server', channelId: 'ws-create' }, { variables: { GREETING: 'hello' } });
    const { json } = created;
    assert.equal(json.state, 'Down', 'not answered before the application connects');
    assert.match(json.name, /^WebSocket\/INCOMING\/0x[0-9a-f]+$/);
    const id: string = json.channelvars.MEDIA_WEBSOCKET_CONNECTION_ID;
    assert.match(id, /^[A-Za-z0-9_-]{32}$/, '192 random bits, URL-safe');
    assert.equal(json.channelvars.MEDIA_WEBSOCKET_OPTIMAL_FRAME_SIZE, '160');
    assert.equal(json.channelvars.GREETING, 'hello');
    // Another channel gets another id.
    const other = await createExternal({ connection_type: 'server', channelId: 'ws-create-2' });
    assert.notEqual(other.json.channelvars.MEDIA_WEBSOCKET_CONNECTION_ID, id);
    await hangup('ws-create-2');

    assert.equal(log.since(mark).some(isEvent('StasisStart', 'ws-create')), false, 'no StasisStart before the connection');
    const app = await MediaApp.connect(server, id);
    assert.equal(app.ws.protocol, 'media');
    const start = await log.waitFor('StasisStart', isEvent('StasisStart', 'ws-create'), mark);
    assert.equal(start.channel.state, 'Up');
    assert.equal(app.texts[0], `MEDIA_START connection_id:${id} channel:${json.name} channel_id:ws-create format:ulaw optimal_frame_size:160 ptime:20`);

    await hangup('ws-create');
    await app.waitClosed();
    assert.equal(app.closeCode, 1000);
    assert.equal(server.core.webSocket.size, 0);
  });

  test('ARI originate of WebSocket/INCOMING/c(slin)n: no answer until the application sends ANSWER', async () => {
    const mark = log.mark();
    const json = await expectStatus(server, `/channels?${new URLSearchParams({ endpoint: 'WebSocket/INCOMING/c(slin)n', app: APP, channelId: 'ws-originate' })}`, 200);
    assert.match(json.name, /^WebSocket\/INCOMING\//);
    const id = (await expectStatus(server, '/channels/ws-originate/variable?variable=MEDIA_WEBSOCKET_CONNECTION_ID', 200, 'GET')).value;
    assert.equal((await expectStatus(server, '/channels/ws-originate/variable?variable=MEDIA_WEBSOCKET_OPTIMAL_FRAME_SIZE', 200, 'GET')).value, '320');
    const app = await MediaApp.connect(server, id);
    assert.match(await app.event('MEDIA_START'), / format:slin optimal_frame_size:320 /);
    await sleep(200);
    assert.equal(server.core.channels.require('ws-originate').state, 'Down', 'n: not answered on connection');
    assert.equal(log.since(mark).some(isEvent('StasisStart', 'ws-originate')), false);
    await app.send('ANSWER');
    const start = await log.waitFor('StasisStart', isEvent('StasisStart', 'ws-originate'), mark);
    assert.equal(start.channel.state, 'Up');
    await hangup('ws-originate');
    await app.waitClosed();
  });

  test('a wrong id is 404, an id used once is 409 while the channel lives and 404 after; no upgrade is 426', async () => {
    const { created, app } = await connectedServerMode('ws-ids');
    const id: string = created.json.channelvars.MEDIA_WEBSOCKET_CONNECTION_ID;
    await assert.rejects(MediaApp.connect(server, 'x'.repeat(32)), (error: any) => error.status === 404 && /WebSocket instance not found/.test(error.body));
    await assert.rejects(MediaApp.connect(server, `${id.slice(0, -1)}${id.endsWith('A') ? 'B' : 'A'}`), (error: any) => error.status === 404);
    await assert.rejects(MediaApp.connect(server, id), (error: any) => error.status === 409);
    // Single use: even after the first application leaves (which hangs the channel up).
    const plain = await fetch(`${server.url}/media/${id}`);
    assert.equal(plain.status, 426);
    app.close();
    await waitUntil('the channel is gone', () => !server.core.channels.get('ws-ids'));
    await assert.rejects(MediaApp.connect(server, id), (error: any) => error.status === 404);
  });

  test('a subprotocol list without media is 400 and does not spend the id', async () => {
    const created = await createExternal({ connection_type: 'server', channelId: 'ws-proto' });
    const id: string = created.json.channelvars.MEDIA_WEBSOCKET_CONNECTION_ID;
    await assert.rejects(MediaApp.connect(server, id, ['chat']), (error: any) => error.status === 400);
    const app = await MediaApp.connect(server, id, []);
    await app.event('MEDIA_START');
    await hangup('ws-proto');
    await app.waitClosed();
  });

  test('a malformed handshake (another Upgrade, a bad key, an unknown version) is 400 and does not spend the id', async () => {
    const created = await createExternal({ connection_type: 'server', channelId: 'ws-handshake' });
    const id: string = created.json.channelvars.MEDIA_WEBSOCKET_CONNECTION_ID;
    const handshake = (upgrade: string, key: string, version: string): string[] => [
      `GET /media/${id} HTTP/1.1`,
      'Host: 127.0.0.1',
      `Authorization: ${AUTH}`,
      'Connection: Upgrade',
      `Upgrade: ${upgrade}`,
      `Sec-WebSocket-Version: ${version}`,
      `Sec-WebSocket-Key: ${key}`,
    ];
    for (const lines of [
      handshake('h2c', 'dGhlIHNhbXBsZSBub25jZQ==', '13'),
      handshake('websocket', 'short', '13'),
      handshake('websocket', 'dGhlIHNhbXBsZSBub25jZQ==', '99'),
      [...handshake('websocket', 'dGhlIHNhbXBsZSBub25jZQ==', '13'), 'Sec-WebSocket-Protocol: media,,'],
      [...handshake('websocket', 'dGhlIHNhbXBsZSBub25jZQ==', '13'), 'Sec-WebSocket-Protocol: media, media'],
    ]) {
      assert.match(await rawRequest(server.url, lines), /^HTTP\/1\.1 400 /, lines.slice(3).join(' '));
    }
    const app = await MediaApp.connect(server, id);
    await app.event('MEDIA_START');
    await hangup('ws-handshake');
    await app.waitClosed();
  });

  test('a 1 kHz tone sent 10x faster than real time is played out one frame per tick; a 600 Hz tone comes back as 160-byte µ-law messages', async () => {
    const { created, app } = await connectedServerMode('ws-tone');
    const { local, bridgeId } = await bridgedWith(created.id, 'ws-tone');
    const heard = capture(server, local.two);
    // 1.2 s of audio in six messages sent at once.
    const tone = ulawTone(1200, 1000, 8000);
    const sentAt = server.core.media.clock.ticks;
    for (let i = 0; i < 6; i++) await app.send(tone.subarray(i * 1600, (i + 1) * 1600));
    const back = toneWriter(server, (frame) => local.two.write(frame), 600, 6000);
    await ticks(server, 75);
    back.stop();
    heard.stop();

    const toneFrames = heard.frames.filter((frame) => frame.tick >= sentAt);
    const loud = loudSamples(toneFrames.map((frame) => frame.samples), 2000);
    assert.ok(loud.count >= 58 && loud.count <= 61, `${loud.count} tone frames for 1.2 s`);
    const ticksSeen = new Set(toneFrames.map((frame) => frame.tick));
    assert.equal(ticksSeen.size, toneFrames.length, 'one frame per tick');
    const m = measure(loud.samples, 1000);
    assert.ok(Math.abs(m.frequency - 1000) < 20, `frequency ${m.frequency.toFixed(0)} Hz`);
    assert.ok(m.purity > 0.95, `1 kHz carries ${(m.purity * 100).toFixed(1)}% of the power`);
    assert.ok(Math.abs(m.amplitude - 8000) < 8000 * 0.06, `amplitude ${m.amplitude.toFixed(0)}`);

    assert.ok(app.audio.length >= 60, `${app.audio.length} audio messages`);
    for (const message of app.audio) assert.equal(message.length, 160);
    const backTone = loudSamples(app.audio.map(decodeUlaw), 1500);
    assert.ok(backTone.count >= 60, `${backTone.count} messages carry the tone`);
    const m2 = measure(backTone.samples, 600);
    assert.ok(Math.abs(m2.frequency - 600) < 15, `frequency ${m2.frequency.toFixed(0)} Hz`);
    assert.ok(m2.purity > 0.95, `600 Hz carries ${(m2.purity * 100).toFixed(1)}%`);

    await hangup(created.id);
    await finish(server, [local], [bridgeId]);
  });

  test('MEDIA_XOFF when 900 frames wait, a message arriving at 1000 is dropped, MEDIA_XON below 800; PAUSE_MEDIA holds playout', async () => {
    const { created, app } = await connectedServerMode('ws-flow');
    // Hold playout so the queue's length is exact.
    await app.send('PAUSE_MEDIA');
    const frame50 = ulawTone(1000, 400, 4000); // 50 frames
    for (let i = 0; i < 17; i++) await app.send(frame50); // 850
    await app.send('GET_STATUS');
    const status1 = await app.event('STATUS');
    assert.equal(status1, `STATUS channel_id:ws-flow queue_length:850 xon_level:800 xoff_level:900 queue_full:false bulk_media:false media_paused:true`);
    assert.equal(app.texts.includes('MEDIA_XOFF'), false);
    await app.send(frame50); // 900
    await app.event('MEDIA_XOFF');
    await app.send(frame50); // 950
    await app.send(frame50); // 1000
    await app.send(frame50); // dropped whole
    const from = app.texts.length;
    await app.send('GET_STATUS');
    assert.match(await app.event('STATUS', from), /queue_length:1000 .*queue_full:true bulk_media:false media_paused:true/);
    await ticks(server, 10);
    assert.match((await (async () => { const at = app.texts.length; await app.send('GET_STATUS'); return app.event('STATUS', at); })()), /queue_length:1000 /, 'paused: nothing played');
    // The application stops sending until XON; playout resumes.
    const before = app.texts.length;
    await app.send('CONTINUE_MEDIA');
    const started = server.core.media.clock.ticks;
    await app.event('MEDIA_XON', before, 6000);
    const elapsed = server.core.media.clock.ticks - started;
    // Never early; late by at most what a round trip to the application costs right now (a loaded
    // machine delays the test's view of the event, not the server's decision).
    const slack = 2 * (await roundTripTicks(app));
    assert.ok(elapsed >= 198 && elapsed <= 205 + slack, `XON after ${elapsed} ticks (1000 → 799 frames; slack ${slack})`);
    await hangup(created.id);
    await app.waitClosed();
  });

  test('MARK_MEDIA comes back as MEDIA_MARK_PROCESSED once the audio before it has played (plain and JSON); FLUSH_MEDIA drops marks', async () => {
    const { created, app } = await connectedServerMode('ws-mark');
    await app.send(ulawTone(500, 400, 4000)); // 25 frames
    const sent = server.core.media.clock.ticks;
    await app.send('MARK_MEDIA first');
    const processed = await app.event('MEDIA_MARK_PROCESSED');
    assert.equal(processed, 'MEDIA_MARK_PROCESSED first');
    const waited = server.core.media.clock.ticks - sent;
    // Never before the 25 frames played. Late by what a round trip costs now, and by up to a second
    // more: the tone reaches the server in several socket reads, and under load its playout can
    // start a few ticks after `sent` (seen: 30 ticks with a round trip of 0).
    const slack = 2 * (await roundTripTicks(app)) + 50;
    assert.ok(waited >= 24 && waited <= 28 + slack, `mark reported after ${waited} ticks (slack ${slack})`);
    // A flushed mark is never reported.
    await app.send(ulawTone(500, 400, 4000));
    await app.send('MARK_MEDIA flushed');
    await app.send('FLUSH_MEDIA');
    await app.send('REPORT_QUEUE_DRAINED');
    await app.event('QUEUE_DRAINED');
    await ticks(server, 30);
    assert.equal(app.texts.some((text) => text.includes('flushed')), false);
    await hangup(created.id);
    await app.waitClosed();

    const json = await connectedServerMode('ws-mark-json', { transport_data: 'f(json)' });
    const startEvent = JSON.parse(await json.app.event('MEDIA_START'));
    assert.equal(startEvent.event, 'MEDIA_START');
    assert.equal(startEvent.channel_id, 'ws-mark-json');
    assert.equal(startEvent.optimal_frame_size, 160);
    assert.equal(startEvent.channel_variables.MEDIA_WEBSOCKET_CONNECTION_ID, startEvent.connection_id);
    await json.app.send(ulawTone(200, 400, 4000));
    await json.app.send(JSON.stringify({ command: 'MARK_MEDIA', correlation_id: 'm-1' }));
    assert.deepEqual(JSON.parse(await json.app.event('MEDIA_MARK_PROCESSED')), { event: 'MEDIA_MARK_PROCESSED', channel_id: 'ws-mark-json', correlation_id: 'm-1' });
    await json.app.send('{not json');
    assert.deepEqual(JSON.parse(await json.app.event('ERROR')), { event: 'ERROR', channel_id: 'ws-mark-json', error_text: 'Unable to parse JSON command' });
    await json.app.send(JSON.stringify({ command: 'GET_STATUS' }));
    assert.deepEqual(JSON.parse(await json.app.event('STATUS')), {
      event: 'STATUS', channel_id: 'ws-mark-json', queue_length: 0, xon_level: 800, xoff_level: 900, queue_full: false, bulk_media: false, media_paused: false,
    });
    await hangup(json.created.id);
    await json.app.waitClosed();
  });

  test('buffering keeps a partial frame for the next message; STOP_MEDIA_BUFFERING reports MEDIA_BUFFERING_COMPLETED', async () => {
    const { created, app } = await connectedServerMode('ws-buffer');
    await app.send('START_MEDIA_BUFFERING');
    await app.send('PAUSE_MEDIA');
    await app.send(Buffer.alloc(100, 0x7f));
    await app.send(Buffer.alloc(100, 0x7f));
    let at = app.texts.length;
    await app.send('GET_STATUS');
    assert.match(await app.event('STATUS', at), /queue_length:1 .*bulk_media:true/);
    await app.send('STOP_MEDIA_BUFFERING b1');
    at = app.texts.length;
    await app.send('GET_STATUS');
    assert.match(await app.event('STATUS', at), /queue_length:2 .*bulk_media:false/, 'the 40-byte tail is queued as a short frame');
    await app.send('CONTINUE_MEDIA');
    assert.equal(await app.event('MEDIA_BUFFERING_COMPLETED'), 'MEDIA_BUFFERING_COMPLETED b1');

    // A partial frame left alone while buffering is played, padded, after two ticks.
    await ticks(server, 3);
    const heard = capture(server, server.core.channels.require(created.id));
    await app.send('START_MEDIA_BUFFERING');
    await app.send(ulawTone(10, 1000, 8000)); // 80 bytes
    await ticks(server, 5);
    heard.stop();
    const loud = heard.frames.filter((frame) => frame.samples.slice(0, 80).some((sample) => Math.abs(sample) > 3000));
    assert.equal(loud.length, 1, 'the 80 bytes are played once');
    assert.ok(loud[0].samples.slice(80).every((sample) => Math.abs(sample) < 10), 'padded with silence');
    await hangup(created.id);
    await app.waitClosed();
  });

  test('DTMF sent on the channel reaches the application as DTMF_END', async () => {
    const { created, app } = await connectedServerMode('ws-dtmf');
    await expectStatus(server, `/channels/${created.id}/dtmf?dtmf=5%23&between=50`, 204);
    await waitUntil('two digits', () => app.texts.filter((text) => text.startsWith('DTMF_END')).length === 2);
    assert.deepEqual(app.texts.filter((text) => text.startsWith('DTMF_END')), ['DTMF_END digit:5 channel_id:ws-dtmf', 'DTMF_END digit:# channel_id:ws-dtmf']);
    await hangup(created.id);
    await app.waitClosed();
  });

  test('HANGUP: cause 16, tech_cause 1000, the WebSocket closes 1000; the application closing: tech_cause 1001', async () => {
    const first = await connectedServerMode('ws-hangup');
    let mark = log.mark();
    await first.app.send('HANGUP');
    const request = await log.waitFor('ChannelHangupRequest', isEvent('ChannelHangupRequest', 'ws-hangup'), mark);
    assert.equal(request.cause, 16);
    assert.equal(request.tech_cause, 1000);
    const destroyed = await log.waitFor('ChannelDestroyed', isEvent('ChannelDestroyed', 'ws-hangup'), mark);
    assert.equal(destroyed.tech_cause, 1000);
    await first.app.waitClosed();
    assert.equal(first.app.closeCode, 1000);

    const second = await connectedServerMode('ws-close');
    mark = log.mark();
    second.app.close();
    const gone = await log.waitFor('ChannelDestroyed', isEvent('ChannelDestroyed', 'ws-close'), mark);
    assert.equal(gone.cause, 16);
    assert.equal(gone.tech_cause, 1001);
  });

  test('direction in: audio from the application is refused; commands that need playout answer ERROR', async () => {
    const { created, app } = await connectedServerMode('ws-dir', { direction: 'in' });
    assert.match(created.json.name, /^WebSocket\/INCOMING\//);
    await app.send(ulawTone(200, 400, 4000));
    await app.send('MARK_MEDIA x');
    assert.equal(await app.event('ERROR'), "ERROR channel_id:ws-dir error_text:MARK_MEDIA not supported while media direction is 'in'");
    const at = app.texts.length;
    await app.send('GET_STATUS');
    assert.match(await app.event('STATUS', at), /queue_length:0 /);
    await app.send('SET_MEDIA_DIRECTION');
    assert.match(await app.event('ERROR', at + 1), /only supports JSON format/);
    await hangup(created.id);
    await app.waitClosed();
  });

  test('oversized and over-long messages: a frame over 65527 bytes hangs up (38); a command over 128 bytes is ignored', async () => {
    const { created, app } = await connectedServerMode('ws-big');
    await app.send(`GET_STATUS${' '.repeat(130)}x`);
    await sleep(100);
    assert.equal(app.texts.some((text) => text.startsWith('STATUS')), false);
    const mark = log.mark();
    await app.send(Buffer.alloc(65528));
    const destroyed = await log.waitFor('ChannelDestroyed', isEvent('ChannelDestroyed', created.id), mark);
    assert.equal(destroyed.cause, 38);
    await app.waitClosed();
    assert.equal(app.closeCode, 1009);
  });
});

describe('bounds', () => {
  test('more than 1000 messages in a second are dropped; more than 1000 marks waiting are refused', async () => {
    const { created, app } = await connectedServerMode('ws-rate');
    try {
      const statusReplies = (): number => app.texts.filter((text) => text.startsWith('STATUS')).length;
      // PAUSE_MEDIA opens the window and 1500 GET_STATUS follow in the same TCP write: Patchbay
      // handles them in one turn, so the window holds all of them however slow the sender is.
      await app.burst(['PAUSE_MEDIA', ...Array.from({ length: 1500 }, () => 'GET_STATUS')]);
      await waitUntil('999 STATUS', () => statusReplies() >= 999, 30_000);
      // A GET_STATUS sent over a second after the burst's answers opens a new window; its STATUS,
      // answered in order, shows no more answers to the burst were on their way.
      await sleep(1100);
      const sentinelAt = app.texts.length;
      await app.send('GET_STATUS');
      await app.event('STATUS', sentinelAt, 30_000);
      const replies = app.texts.slice(0, sentinelAt).filter((text) => text.startsWith('STATUS')).length;
      assert.equal(replies, 999, `${replies} STATUS for 1500 GET_STATUS`);
      assert.equal(server.core.webSocket.session(server.core.channels.require('ws-rate'))?.droppedMessages, 501, 'drops are counted');

      // In two bursts, each within the rate limit: each a second after the last answer Patchbay
      // gave, so after the window it opened on its first message.
      await sleep(1100);
      const before = app.texts.length;
      await app.burst([...Array.from({ length: 600 }, (_, i) => `MARK_MEDIA m${i}`), 'GET_STATUS']);
      await app.event('STATUS', before, 30_000);
      await sleep(1100);
      await app.burst(Array.from({ length: 401 }, (_, i) => `MARK_MEDIA m${i + 600}`));
      await app.event('ERROR', before, 30_000);
      // The sentinel's STATUS shows every answer to the marks has come.
      const sentinelAt2 = app.texts.length;
      await app.send('GET_STATUS');
      await app.event('STATUS', sentinelAt2, 30_000);
      const errors = app.texts.slice(before, sentinelAt2).filter((text) => text.startsWith('ERROR'));
      assert.equal(errors.length, 1, 'only the 1001st is refused');
      assert.match(errors[0], /Too many marks waiting/);
    } finally {
      await hangup(created.id);
    }
    await app.waitClosed();
  });
});

describe('client mode', () => {
  test("Patchbay connects with Asterisk's handshake; MEDIA_START; slin tones both ways", async () => {
    const mark = log.mark();
    const created = await createExternal({ external_host: 'media_conn', format: 'slin', channelId: 'ws-client', transport_data: 'v(call=42,who=a%20b)' });
    assert.equal(created.json.channelvars.MEDIA_WEBSOCKET_CONNECTION_ID, 'media_conn');
    assert.equal(created.json.channelvars.MEDIA_WEBSOCKET_OPTIMAL_FRAME_SIZE, '320');
    assert.match(created.json.name, /^WebSocket\/media_conn\/0x/);
    await log.waitFor('StasisStart', isEvent('StasisStart', 'ws-client'), mark);
    await waitUntil('the server has the connection', () => mediaServer.apps.length === 1);
    const upgrade = mediaServer.upgrades[0];
    assert.equal(upgrade.url, '/media/in?static=1&call=42&who=a%20b');
    assert.equal(upgrade.headers.authorization, `Basic ${Buffer.from('mediauser:s3cret').toString('base64')}`);
    assert.equal(upgrade.headers['sec-websocket-protocol'], 'media');
    assert.equal(upgrade.headers['sec-websocket-extensions'], undefined);
    assert.equal(upgrade.headers.host, `127.0.0.1:${mediaServer.port}`);
    assert.equal(upgrade.headers.origin, undefined);
    const app = mediaServer.apps[0];
    assert.equal(await app.event('MEDIA_START'), `MEDIA_START connection_id:media_conn channel:${created.json.name} channel_id:ws-client format:slin optimal_frame_size:320 ptime:20`);

    const { local, bridgeId } = await bridgedWith(created.id, 'ws-client');
    const heard = capture(server, local.two);
    const sentAt = server.core.media.clock.ticks;
    await app.send(slinTone(1000, 800, 7000));
    const back = toneWriter(server, (frame) => local.two.write(frame), 500, 5000);
    await ticks(server, 60);
    back.stop();
    heard.stop();
    const loud = loudSamples(heard.frames.filter((frame) => frame.tick >= sentAt).map((frame) => frame.samples), 2000);
    assert.ok(loud.count >= 48 && loud.count <= 51, `${loud.count} tone frames for 1 s`);
    const m = measure(loud.samples, 800);
    assert.ok(Math.abs(m.frequency - 800) < 15 && m.purity > 0.97, `800 Hz: ${m.frequency.toFixed(0)} Hz, purity ${m.purity.toFixed(3)}`);
    for (const message of app.audio) assert.equal(message.length, 320);
    const backTone = loudSamples(app.audio.map(decodeSlin), 1500);
    assert.ok(backTone.count >= 45, `${backTone.count} messages carry the tone`);
    const m2 = measure(backTone.samples, 500);
    assert.ok(Math.abs(m2.frequency - 500) < 15 && m2.purity > 0.97, `500 Hz: ${m2.frequency.toFixed(0)} Hz, purity ${m2.purity.toFixed(3)}`);

    await hangup(created.id);
    await app.waitClosed();
    assert.equal(app.closeCode, 1000);
    await finish(server, [local], [bridgeId]);
  });

  test('a server that cannot be reached: the channel hangs up with cause 3', async () => {
    const mark = log.mark();
    const created = await createExternal({ external_host: 'nowhere', channelId: 'ws-nowhere' });
    const destroyed = await log.waitFor('ChannelDestroyed', isEvent('ChannelDestroyed', created.id), mark, 5000);
    assert.equal(destroyed.cause, 3);
  });

  test('enable_pingpongs: a server that stops answering PINGs is cut off and the channel hangs up with cause 38', async () => {
    const mark = log.mark();
    const created = await createExternal({ external_host: 'silent', channelId: 'ws-silent' });
    await log.waitFor('StasisStart', isEvent('StasisStart', created.id), mark);
    const destroyed = await log.waitFor('ChannelDestroyed', isEvent('ChannelDestroyed', created.id), mark, 6000);
    assert.equal(destroyed.cause, 38);
    assert.deepEqual(silentPings, ['WS_CLIENT_PING']);
  });
});

describe('chan_websocket settings', () => {
  test('connect_timeout_seconds: an INCOMING channel nobody connects to hangs up (cause 19) and its id dies; control_message_format json is the default', async () => {
    const other = await startTestServer({ chan_websocket: { connect_timeout_seconds: 1, control_message_format: 'json' } });
    try {
      const events = await other.events('app=timeouts');
      const otherLog = new EventLog(events);
      const params = new URLSearchParams({ app: 'timeouts', format: 'alaw', encapsulation: 'none', transport: 'websocket', connection_type: 'server' });
      const started = Date.now();
      const waiting = await expectStatus(other, `/channels/externalMedia?${params}`, 200);
      const destroyed = await otherLog.waitFor('ChannelDestroyed', isEvent('ChannelDestroyed', waiting.id), 0, 4000);
      assert.equal(destroyed.cause, 19);
      const waited = Date.now() - started;
      assert.ok(waited >= 900 && waited < 3000, `hung up after ${waited} ms`);
      await assert.rejects(MediaApp.connect(other, waiting.channelvars.MEDIA_WEBSOCKET_CONNECTION_ID), (error: any) => error.status === 404);

      const connected = await expectStatus(other, `/channels/externalMedia?${params}`, 200);
      const app = await MediaApp.connect(other, connected.channelvars.MEDIA_WEBSOCKET_CONNECTION_ID);
      const start = JSON.parse(await app.event('MEDIA_START'));
      assert.equal(start.format, 'alaw');
      await sleep(1500);
      assert.ok(other.core.channels.get(connected.id), 'a connected channel does not time out');
      await expectStatus(other, `/channels/${connected.id}`, 204, 'DELETE');
      await app.waitClosed();
      await events.close();
    } finally {
      await other.stop();
    }
  });
});

describe('parameters', () => {
  test('the rules of Asterisk: 400 with its messages', async () => {
    const status = async (query: Record<string, string>, expected: number, message?: RegExp): Promise<void> => {
      const params = new URLSearchParams({ app: APP, format: 'ulaw', transport: 'websocket', encapsulation: 'none', ...query });
      const response = await fetch(`${server.url}/ari/channels/externalMedia?${params}`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from('asterisk:asterisk').toString('base64')}` } });
      const body = (await response.json()) as { message: string };
      assert.equal(response.status, expected, `${params}: ${response.status} ${body.message}`);
      if (message) assert.match(body.message, message);
    };
    await status({ encapsulation: 'rtp' }, 400, /encapsulation must be 'none' for websocket transport/);
    await status({ external_host: 'unknown_conn' }, 400, /external_host must be a valid websocket_client connection id/);
    await status({}, 400, /external_host/);
    await status({ connection_type: 'server', format: 'g722' }, 400, /format/);
    await status({ connection_type: 'server', transport_data: 'd(sideways)' }, 400, /direction/);
    await status({ connection_type: 'server', transport_data: 'v(a=1)' }, 400, /INCOMING/);
    await status({ external_host: 'media_conn', transport_data: 'v(a=b c)' }, 400, /URL-encoded/);
    assert.equal(server.core.webSocket.size, 0);
  });

  test('nothing is left', async () => {
    await waitUntil('every channel is gone', () => server.core.channels.size === 0);
    assert.equal(server.core.webSocket.size, 0);
  });
});
