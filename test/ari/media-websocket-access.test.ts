// Issue 21 item 2: a media WebSocket (`/media/<id>`) is opened only with the credentials of an ARI
// user who may write, and a read-only user never sees the connection id (REST, events, REST over
// the events WebSocket).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { AUTH, startTestServer, type TestServer } from '../helpers/server.ts';

const VIEWER = `Basic ${Buffer.from('viewer:look').toString('base64')}`;
let server: TestServer;

before(async () => {
  server = await startTestServer({
    ari: { users: [{ name: 'asterisk', password: 'asterisk' }, { name: 'viewer', password: 'look', read_only: true }], channelvars: ['MEDIA_WEBSOCKET_CONNECTION_ID'] },
  });
});
after(() => server.stop());

/** Opens /media/<id>; resolves 101 or the refusal's status. */
function upgrade(id: string, authorization?: string, query = ''): Promise<number> {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/media/${id}${query}`, 'media', { headers: authorization ? { authorization } : {} });
  return new Promise((resolve) => {
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_request, response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    ws.once('error', () => resolve(0));
  });
}

async function createMedia(channelId: string): Promise<string> {
  const params = new URLSearchParams({ app: 'media-access', format: 'ulaw', encapsulation: 'none', transport: 'websocket', connection_type: 'server', channelId });
  const response = await server.ari(`/channels/externalMedia?${params}`, { method: 'POST' });
  assert.equal(response.status, 200);
  const json = (await response.json()) as { channelvars: Record<string, string> };
  return json.channelvars.MEDIA_WEBSOCKET_CONNECTION_ID;
}

test('/media/<id> needs a read-write user: none → 401, read-only → 403, and neither spends the id', async () => {
  const events = await server.events('app=media-access');
  try {
    const id = await createMedia('media-access-1');
    assert.equal(await upgrade(id), 401);
    assert.equal(await upgrade(id, `Basic ${Buffer.from('asterisk:wrong').toString('base64')}`), 401);
    assert.equal(await upgrade(id, VIEWER), 403);
    assert.equal(await upgrade(id, undefined, '?api_key=viewer:look'), 403);
    assert.equal(await upgrade(id, AUTH), 101, 'the id was not spent by the refusals');
  } finally {
    await server.ari('/channels/media-access-1', { method: 'DELETE' });
    events.close();
  }
});

test('api_key works for the read-write user (a browser sends no headers)', async () => {
  const events = await server.events('app=media-access');
  try {
    const id = await createMedia('media-access-2');
    assert.equal(await upgrade(id, undefined, '?api_key=asterisk:asterisk'), 101);
  } finally {
    await server.ari('/channels/media-access-2', { method: 'DELETE' });
    events.close();
  }
});

test('a read-only user sees the id blank: channel snapshots, variables, functions and subscribeAll events', async () => {
  const viewerEvents = new WebSocket(`${server.url.replace('http', 'ws')}/ari/events?app=watcher&subscribeAll=true`, { headers: { authorization: VIEWER } });
  const seen: string[] = [];
  viewerEvents.on('message', (data) => seen.push(String(data)));
  await new Promise((resolve, reject) => {
    viewerEvents.once('open', resolve);
    viewerEvents.once('error', reject);
  });
  const events = await server.events('app=media-access');
  try {
    const id = await createMedia('media-access-3');
    const asViewer = (path: string) => server.ari(path, { auth: VIEWER }).then((r) => r.text());
    const texts = [
      await asViewer('/channels/media-access-3'),
      await asViewer('/channels'),
      await asViewer('/channels/media-access-3/variable?variable=MEDIA_WEBSOCKET_CONNECTION_ID'),
      await asViewer(`/channels/media-access-3/variable?variable=${encodeURIComponent('CUT(MEDIA_WEBSOCKET_CONNECTION_ID,-,1)')}`),
      await asViewer('/channels/media-access-3/variables?variables=MEDIA_WEBSOCKET_CONNECTION_ID'),
    ];
    // REST over the viewer's events WebSocket.
    viewerEvents.send(JSON.stringify({ type: 'RESTRequest', request_id: 'r1', method: 'GET', uri: 'channels/media-access-3' }));
    const deadline = Date.now() + 15_000;
    while (!seen.some((text) => text.includes('RESTResponse')) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(seen.some((text) => text.includes('RESTResponse')), 'the REST answer came');
    assert.ok(seen.some((text) => text.includes('ChannelVarset')), 'subscribeAll events came');
    for (const text of [...texts, ...seen]) assert.equal(text.includes(id), false, `the id leaked to the read-only user: ${text.slice(0, 300)}`);
    // The read-write user still sees it.
    const own = (await (await server.ari('/channels/media-access-3/variable?variable=MEDIA_WEBSOCKET_CONNECTION_ID')).json()) as { value: string };
    assert.equal(own.value, id);
  } finally {
    await server.ari('/channels/media-access-3', { method: 'DELETE' });
    events.close();
    viewerEvents.close();
  }
});
