// Issue 21 item 15: subscribe-all fan-out. Applications that receive every event are bounded per
// server (ari.max_subscribe_all_apps: upgrade and subscription answer 503 beyond it), and an
// event is serialised once for all the applications it goes to.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import type { CoreEvent } from '../../src/spec/events.ts';
import { AUTH, startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
const sockets: WebSocket[] = [];

before(async () => {
  // Developer mode checks each message against its model, serialising it again: off, as in production.
  server = await startTestServer({ ari: { max_subscribe_all_apps: 3, developer_mode: false } });
});
after(async () => {
  for (const socket of sockets) socket.close();
  await server.stop();
});

function connect(query: string): Promise<number> {
  const socket = new WebSocket(`${server.url.replace('http', 'ws')}/ari/events?${query}`, { headers: { authorization: AUTH } });
  sockets.push(socket);
  return new Promise((resolve) => {
    socket.once('open', () => resolve(101));
    socket.once('unexpected-response', (_request, response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    socket.once('error', () => resolve(0));
  });
}

test('beyond max_subscribe_all_apps, subscribeAll upgrades and subscriptions to every channel answer 503', async () => {
  assert.equal(await connect('app=wide1,wide2&subscribeAll=true'), 101);
  assert.equal(await connect('app=wide3&subscribeAll=true'), 101);
  assert.equal(await connect('app=wide4&subscribeAll=true'), 503);
  assert.equal(await connect('app=wide5,wide6&subscribeAll=true'), 503);
  // Applications that do not receive everything are not limited.
  assert.equal(await connect('app=narrow1,narrow2'), 101);
  const subscribeAll = await server.ari('/applications/narrow1/subscription?eventSource=channel:', { method: 'POST' });
  assert.equal(subscribeAll.status, 503, await subscribeAll.text());
  const one = await server.ari('/applications/narrow1/subscription?eventSource=deviceState:Custom:x', { method: 'POST' });
  assert.equal(one.status, 200);
  // An application that is already wide may reconnect wide.
  sockets[1]!.close();
  // Once the server has seen it go (200 ms were not always enough on a loaded machine).
  const away = async (): Promise<boolean> => {
    const response = await server.ari('/applications/wide3');
    return response.status === 404 || ((await response.json()) as { connected?: boolean }).connected === false;
  };
  for (const deadline = Date.now() + 15_000; Date.now() < deadline && !(await away()); ) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(await connect('app=wide3&subscribeAll=true'), 101);
});

test('an event going to several applications is serialised once', async () => {
  let reads = 0;
  const event = { type: 'ChannelUserevent', timestamp: '2026-01-01T00:00:00.000+0000', eventname: 'probe', userevent: {} } as Record<string, unknown>;
  Object.defineProperty(event, 'eventname', {
    enumerable: true,
    get: () => {
      reads++;
      return 'probe';
    },
  });
  server.core.applications.publish(event as unknown as CoreEvent, { applications: ['wide1', 'wide2', 'wide3', 'narrow1'] });
  assert.equal(reads, 1, `stringified ${reads} times for 4 applications`);
});

test('the default is 100', async () => {
  const other = await startTestServer();
  try {
    assert.equal(other.config.ari.maxSubscribeAllApps, 100);
  } finally {
    await other.stop();
  }
});
