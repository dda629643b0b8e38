// Issue 21 item 3: a user removed or demoted by a reload loses its rights on event WebSockets that
// are already open: REST over the socket is judged by the user as configured now, and sockets of
// removed users (or whose password changed) are closed at the reload.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config/config.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const OPS = { name: 'ops', password: 'ops-secret' };
const ADMIN = { name: 'asterisk', password: 'asterisk' };
let server: TestServer;

function configWith(users: { name: string; password: string; read_only?: boolean }[]) {
  return loadConfig({
    path: null,
    env: {},
    overrides: { http: { port: 0, bind: '127.0.0.1' }, dirs: { data: server.dataDir }, ari: { developer_mode: true, users }, logging: { console: false, level: 'debug' }, sip: { port: 0 } },
  });
}

before(async () => {
  server = await startTestServer({ ari: { users: [ADMIN, OPS] } });
});
after(() => server.stop());

/** An events socket of `user` with a helper to send one REST request and await its answer. */
async function socketOf(user: { name: string; password: string }, app: string) {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ari/events?app=${app}`, { headers: { authorization: `Basic ${Buffer.from(`${user.name}:${user.password}`).toString('base64')}` } });
  const answers = new Map<string, Record<string, unknown>>();
  let closed = false;
  ws.on('message', (data) => {
    const message = JSON.parse(String(data)) as Record<string, unknown>;
    if (message.type === 'RESTResponse') answers.set(String(message.request_id), message);
  });
  ws.on('close', () => (closed = true));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let next = 0;
  return {
    ws,
    get closed() {
      return closed;
    },
    async rest(method: string, uri: string): Promise<number> {
      const id = `r${next++}`;
      ws.send(JSON.stringify({ type: 'RESTRequest', request_id: id, method, uri }));
      const deadline = Date.now() + 15_000;
      while (!answers.has(id) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      return Number(answers.get(id)?.status_code ?? 0);
    },
  };
}

async function until(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('a user demoted to read-only by a reload can no longer write over its open events socket', async () => {
  server.applyConfig(configWith([ADMIN, OPS]));
  const socket = await socketOf(OPS, 'rights-demoted');
  assert.equal(await socket.rest('POST', 'channels?endpoint=Local/s@default&app=rights-demoted&channelId=demote-1'), 200);
  server.applyConfig(configWith([ADMIN, { ...OPS, read_only: true }]));
  assert.equal(await socket.rest('POST', 'channels?endpoint=Local/s@default&app=rights-demoted&channelId=demote-2'), 403);
  assert.equal(await socket.rest('GET', 'channels'), 200, 'reading is still allowed');
  assert.equal(socket.closed, false, 'a demoted user keeps its socket');
  assert.equal(server.channel('demote-2'), undefined);
  await server.ari('/channels/demote-1', { method: 'DELETE' });
  socket.ws.close();
});

test('a user removed by a reload has its events socket closed, and a password change closes it too', async () => {
  server.applyConfig(configWith([ADMIN, OPS]));
  const removed = await socketOf(OPS, 'rights-removed');
  const admin = await socketOf(ADMIN, 'rights-admin');
  server.applyConfig(configWith([ADMIN]));
  await until('the removed user\'s socket to close', () => removed.closed);
  assert.equal(admin.closed, false, 'other users keep theirs');
  assert.equal(await admin.rest('GET', 'channels'), 200);

  server.applyConfig(configWith([ADMIN, OPS]));
  const changed = await socketOf(OPS, 'rights-password');
  server.applyConfig(configWith([ADMIN, { ...OPS, password: 'another-secret' }]));
  await until('the socket opened with the old password to close', () => changed.closed);
  admin.ws.close();
});
