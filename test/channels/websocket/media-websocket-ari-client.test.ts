// Media over WebSocket from an application written with the real npm `ari-client`: it asks for a
// server-mode externalMedia channel, reads MEDIA_WEBSOCKET_CONNECTION_ID from the answer, connects
// its media WebSocket, gets StasisStart once the channel is answered, and hangs up with HANGUP.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import ari, { type Client } from 'ari-client';
import WebSocket from 'ws';
import { internals } from '../../helpers/ari-client.ts';
import { AUTH, startTestServer, type TestServer } from '../../helpers/server.ts';

const APP = 'voicebot';
type AriEvent = Record<string, any>;

let server: TestServer;
let client: Client;
const events: AriEvent[] = [];

before(async () => {
  server = await startTestServer();
  client = await ari.connect(server.url, 'asterisk', 'asterisk');
  (client as unknown as NodeJS.EventEmitter).on('*', (event: AriEvent) => events.push(event));
  await client.start(APP);
});

after(async () => {
  client?.stop();
  if (client) internals(client)._ws?.terminate();
  await server?.stop();
});

async function waitFor(what: string, match: (event: AriEvent) => boolean): Promise<AriEvent> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const found = events.find(match);
    if (found) return found;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('ari-client: externalMedia over websocket in server mode, the media connection, StasisStart, HANGUP', async () => {
  const channel: any = await (client.channels as any).externalMedia({
    app: APP,
    format: 'slin16',
    transport: 'websocket',
    encapsulation: 'none',
    connection_type: 'server',
    transport_data: 'f(json)',
  });
  assert.equal(channel.state, 'Down');
  const id = channel.channelvars.MEDIA_WEBSOCKET_CONNECTION_ID;
  assert.equal(channel.channelvars.MEDIA_WEBSOCKET_OPTIMAL_FRAME_SIZE, '640');
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/media/${id}`, 'media', { headers: { authorization: AUTH } });
  const texts: any[] = [];
  ws.on('message', (data, isBinary) => {
    if (!isBinary) texts.push(JSON.parse(String(data)));
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const start = await waitFor('StasisStart', (event) => event.type === 'StasisStart' && event.channel.id === channel.id);
  assert.equal(start.channel.state, 'Up');
  await waitFor('MEDIA_START', () => texts.length > 0);
  assert.equal(texts[0].event, 'MEDIA_START');
  assert.equal(texts[0].format, 'slin16');
  assert.equal(texts[0].optimal_frame_size, 640);
  ws.send(JSON.stringify({ command: 'HANGUP' }));
  const destroyed = await waitFor('ChannelDestroyed', (event) => event.type === 'ChannelDestroyed' && event.channel.id === channel.id);
  assert.equal(destroyed.cause, 16);
  assert.equal(destroyed.tech_cause, 1000);
  await new Promise((resolve) => (ws.readyState === WebSocket.CLOSED ? resolve(undefined) : ws.once('close', resolve)));
});
