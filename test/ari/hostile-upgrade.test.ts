// Upgrade requests with targets that `new URL()` rejects, sent before and after authentication:
// the server answers each on the socket and keeps serving (it used to exit on the first one).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { rawRequest } from '../helpers/raw-http.ts';
import { AUTH, startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

const ODD_TARGETS = ['//:', '//', '//x:99999', '//[', '//%', 'http://[', '/ari/events?app=%', '*', '/ari/events?app=a&api_key=%E0%A4%A'];

for (const authorization of [undefined, AUTH]) {
  test(`odd upgrade targets ${authorization ? 'with' : 'without'} credentials are answered and the server lives on`, async () => {
    for (const target of ODD_TARGETS) {
      const headers = [`GET ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: Upgrade', 'Upgrade: x'];
      if (authorization) headers.push(`Authorization: ${authorization}`);
      const status = await rawRequest(server.url, headers);
      assert.match(status, /^HTTP\/1\.1 4\d\d /, `target ${target} got "${status}"`);
    }
    const ping = await server.ari('/asterisk/ping');
    assert.equal(ping.status, 200);
  });
}

test('an upgrade outside /ari with valid credentials is refused with 404', async () => {
  const status = await rawRequest(server.url, ['GET /elsewhere HTTP/1.1', 'Host: x', 'Connection: Upgrade', 'Upgrade: websocket', `Authorization: ${AUTH}`]);
  assert.match(status, /^HTTP\/1\.1 404 /);
});

test('a REST request over the WebSocket with an odd uri is answered, not fatal', async () => {
  const events = await server.events('app=odd-uri');
  for (const uri of ['//[', 'http://[', '//x:99999/asterisk/ping', '%', '?%']) {
    events.send({ type: 'RESTRequest', request_id: uri, method: 'GET', uri });
    const reply = await events.nextOfType('RESTResponse');
    assert.equal(reply.request_id, uri);
    assert.ok((reply.status_code as number) < 500, `${uri} → ${String(reply.status_code)}`);
  }
  await events.close();
});

test('a read-only user cannot take an application from a read-write user, but may watch a free one', async () => {
  const shared = await startTestServer({
    ari: {
      users: [
        { name: 'asterisk', password: 'asterisk' },
        { name: 'viewer', password: 'look', read_only: true },
      ],
    },
  });
  const viewer = `Basic ${Buffer.from('viewer:look').toString('base64')}`;
  try {
    const owner = await shared.events('app=owned');
    await assert.rejects(shared.events('app=owned', { headers: { authorization: viewer } }), /upgrade refused: 403/);
    await assert.rejects(shared.events('app=free,owned', { headers: { authorization: viewer } }), /upgrade refused: 403/);
    assert.deepEqual(await owner.quiet(200), [], 'the owner was not told ApplicationReplaced');
    // The owner still receives its application's events.
    const posted = await shared.ari('/events/user/ding?application=owned', { method: 'POST' });
    assert.equal(posted.status, 204);
    assert.equal((await owner.nextOfType('ChannelUserevent')).eventname, 'ding');
    // An application nobody holds may be watched read-only; a read-write user then takes it over.
    const watcher = await shared.events('app=free', { headers: { authorization: viewer } });
    const taker = await shared.events('app=free');
    assert.equal((await watcher.nextOfType('ApplicationReplaced')).type, 'ApplicationReplaced');
    await Promise.all([owner.close(), watcher.close(), taker.close()]);
  } finally {
    await shared.stop();
  }
});

test('a request whose headers pass 16 KiB is 431 (too large, not malformed), one without a method 400, and the server lives on', async () => {
  const big = await rawRequest(server.url, ['GET /ari/asterisk/ping HTTP/1.1', 'Host: 127.0.0.1', `Authorization: ${AUTH}`, `X-Filler: ${'x'.repeat(20_000)}`], 10_000);
  assert.match(big, /^HTTP\/1\.1 431 /);
  const many = await rawRequest(server.url, ['GET /ari/asterisk/ping HTTP/1.1', 'Host: 127.0.0.1', ...Array.from({ length: 2000 }, (_, i) => `X-H${i}: ${'y'.repeat(10)}`)], 10_000);
  assert.match(many, /^HTTP\/1\.1 431 /);
  const garbage = await rawRequest(server.url, ['\x01\x02 nonsense', 'Host: 127.0.0.1'], 10_000);
  assert.match(garbage, /^HTTP\/1\.1 400 /);
  assert.equal((await server.ari('/asterisk/ping')).status, 200);
});
