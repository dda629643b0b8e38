// Per-user network ACLs (ari.conf permit/deny/acl, Asterisk 22.9+) on a real server: checked
// after the credentials on every HTTP request and on the event WebSocket's upgrade, answered
// 403 "Access denied by ACL"; the YAML refuses bad entries and unknown named ACLs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { encrypt } from 'unixcrypt';
import WebSocket from 'ws';
import { Authenticator } from '../../src/ari/auth.ts';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { changedSettings, classifyChanges } from '../../src/config/reload.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

let server: TestServer;

before(async () => {
  server = await startTestServer({
    ari: {
      acls: {
        Loopback: { deny: ['0.0.0.0/0', '::/0'], permit: '127.0.0.0/8, ::1' },
        remote: { deny: '0.0.0.0/0', permit: '192.0.2.0/24' },
      },
      users: [
        { name: 'asterisk', password: 'asterisk' },
        { name: 'tenant', password: 'secret', deny: '0.0.0.0/0', permit: '10.0.0.0/8' },
        { name: 'local', password: 'secret', deny: ['0.0.0.0/0'], permit: ['127.0.0.1/32'] },
        // permit written first, then deny: the deny comes later and wins for 127.0.0.1.
        { name: 'carved', password: 'secret', permit: '127.0.0.0/8', deny: '127.0.0.1' },
        { name: 'named', password: 'secret', acl: 'loopback' },
        { name: 'named-remote', password: 'secret', acl: ['loopback', 'remote'] },
        { name: 'viewer', password: 'secret', read_only: true, deny: '0.0.0.0/0', permit: '127.0.0.1' },
      ],
    },
  });
});
after(() => server.stop());

const get = (user: string, password = 'secret', path = '/asterisk/info'): Promise<Response> => server.ari(path, { auth: basic(user, password) });

/** The status of an event WebSocket upgrade (101 when it opened). */
function upgrade(user: string, password = 'secret'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${server.url.replace('http', 'ws')}/ari/events?app=acl-test`, { headers: { authorization: basic(user, password) } });
    socket.once('open', () => {
      socket.close();
      resolve({ status: 101, body: '' });
    });
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    socket.once('error', reject);
  });
}

describe('per-user ACLs', () => {
  test('proxy headers naming a permitted address are not believed: only the socket address counts', async () => {
    for (const headers of [
      { 'x-forwarded-for': '10.1.2.3' } as Record<string, string>,
      { 'x-forwarded-for': '10.1.2.3, 127.0.0.1' },
      { forwarded: 'for=10.1.2.3' },
      { 'x-real-ip': '10.1.2.3' },
      { 'x-client-ip': '10.1.2.3' },
    ]) {
      const response = await server.ari('/asterisk/info', { auth: basic('tenant', 'secret'), headers });
      assert.equal(response.status, 403, JSON.stringify(headers));
      assert.deepEqual(await response.json(), { message: 'Access denied by ACL' });
    }
    // The other way round: a forwarded address outside 127.0.0.1/32 does not lock a local user out.
    assert.equal((await server.ari('/asterisk/info', { auth: basic('local', 'secret'), headers: { 'x-forwarded-for': '203.0.113.9' } })).status, 200);
  });

  test('deny 0.0.0.0/0, permit 10.0.0.0/8 refuses 127.0.0.1 with 403 on HTTP and on the WebSocket upgrade', async () => {
    const refused = await get('tenant');
    assert.equal(refused.status, 403);
    assert.deepEqual(await refused.json(), { message: 'Access denied by ACL' });
    const viaApiKey = await server.ari('/asterisk/info?api_key=tenant:secret', { auth: null });
    assert.equal(viaApiKey.status, 403);
    const ws = await upgrade('tenant');
    assert.equal(ws.status, 403);
    assert.deepEqual(JSON.parse(ws.body), { message: 'Access denied by ACL' });
  });

  test('credentials come first: a wrong password from a refused address is still 401', async () => {
    const wrong = await get('tenant', 'nope');
    assert.equal(wrong.status, 401);
    assert.ok(wrong.headers.get('www-authenticate'));
    assert.equal((await upgrade('tenant', 'nope')).status, 401);
  });

  test('permit 127.0.0.1/32 passes, on HTTP and on the WebSocket', async () => {
    assert.equal((await get('local')).status, 200);
    assert.equal((await upgrade('local')).status, 101);
    assert.equal((await get('asterisk', 'asterisk')).status, 200, 'a user without ACL is not limited');
  });

  test('entries run in the order written: permit 127/8 then deny 127.0.0.1 refuses 127.0.0.1', async () => {
    assert.equal((await get('carved')).status, 403);
  });

  test('named ACLs: each must admit the client; names are case-insensitive', async () => {
    assert.equal((await get('named')).status, 200);
    assert.equal((await upgrade('named')).status, 101);
    assert.equal((await get('named-remote')).status, 403);
    assert.equal((await upgrade('named-remote')).status, 403);
  });

  test('the ACL comes before the read-only rule, and a read-only user it admits still cannot write', async () => {
    assert.equal((await get('viewer')).status, 200);
    const write = await server.ari('/channels/x/answer', { method: 'POST', auth: basic('viewer', 'secret') });
    assert.equal(write.status, 403);
    assert.deepEqual(await write.json(), { message: 'Write access denied' });
    const tenantWrite = await server.ari('/channels/x/answer', { method: 'POST', auth: basic('tenant', 'secret') });
    assert.deepEqual(await tenantWrite.json(), { message: 'Access denied by ACL' });
  });

  test('a REST request over an admitted WebSocket is answered', async () => {
    const events = await server.events('app=acl-rest', { headers: { authorization: basic('local', 'secret') } });
    events.send({ type: 'RESTRequest', request_id: 'r1', method: 'GET', uri: 'asterisk/ping' });
    const reply = await events.nextOfType('RESTResponse');
    assert.equal(reply.status_code, 200);
    await events.close();
  });
});

describe('ACL configuration', () => {
  const load = (users: unknown[], acls?: unknown): ConfigError => {
    try {
      loadConfig({ path: null, env: {}, overrides: { ari: { users, ...(acls === undefined ? {} : { acls }) }, dirs: { data: server.dataDir } } as never });
    } catch (err) {
      if (err instanceof ConfigError) return err;
      throw err;
    }
    throw new Error('the configuration loaded');
  };

  test('a bad entry is refused with its key', () => {
    const bad = load([{ name: 'u', password: 'p', permit: ['10.0.0.0/8', '10.0.0.300'] }]);
    assert.equal(bad.key, 'ari.users[0].permit[1]');
    assert.match(bad.message, /not an IPv4 or IPv6 address/);
    assert.equal(load([{ name: 'u', password: 'p', deny: '10.0.0.0/40' }]).key, 'ari.users[0].deny');
    assert.equal(load([{ name: 'u', password: 'p', deny: { net: 1 } }]).key, 'ari.users[0].deny');
    assert.equal(load([{ name: 'u', password: 'p', permit: [7] }]).key, 'ari.users[0].permit[0]');
  });

  test('named ACLs must exist, be well named and not repeat', () => {
    const unknown = load([{ name: 'u', password: 'p', acl: 'office' }]);
    assert.equal(unknown.key, 'ari.users[0].acl[0]');
    assert.match(unknown.message, /unknown ACL 'office'/);
    assert.equal(load([{ name: 'u', password: 'p' }], { 'bad name': { deny: '0.0.0.0/0' } }).key, 'ari.acls.bad name');
    assert.equal(load([{ name: 'u', password: 'p' }], { a: { deny: '0.0.0.0/0' }, A: {} }).key, 'ari.acls.A');
    assert.equal(load([{ name: 'u', password: 'p' }], { a: { allow: '0.0.0.0/0' } }).key, 'ari.acls.a.allow');
    assert.equal(load([{ name: 'u', password: 'p', acl: ['a', 'A'] }], { a: {} }).key, 'ari.users[0].acl[1]');
  });
});

describe('ACLs on reload (SIGHUP)', () => {
  test('a changed named ACL is seen as a live change, and the authenticator applies it', async () => {
    const config = (permit: string): ReturnType<typeof loadConfig> =>
      loadConfig({
        path: null,
        env: {},
        overrides: { ari: { acls: { office: { deny: '0.0.0.0/0', permit } }, users: [{ name: 'u', password: 'p', acl: 'office' }] }, dirs: { data: server.dataDir } } as never,
      });
    const before = config('127.0.0.1');
    const after = config('192.0.2.0/24');
    const changes = classifyChanges(changedSettings(before, after));
    assert.deepEqual(changes.atRestart, []);
    assert.ok(changes.live.some((key) => key.startsWith('ari.acls')), changes.live.join(','));
    assert.deepEqual(classifyChanges(changedSettings(before, config('127.0.0.1'))).live, [], 'the same ACLs are no change');

    const authenticator = new Authenticator(before.ari.users, { namedAcls: before.ari.acls });
    try {
      const headers = { authorization: basic('u', 'p') };
      const login = (): string => (authenticator.authenticate(headers, new URLSearchParams(), 'GET', '127.0.0.1') as { kind: string }).kind;
      assert.equal(login(), 'ok');
      authenticator.replaceUsers(after.ari.users, after.ari.acls);
      assert.equal(login(), 'acl-denied', 'the new ACL applies to the next request, a remembered header included');
    } finally {
      await authenticator.close();
    }
  });

  test('a crypt password checked on the hashing thread is held to the ACL too', async () => {
    const config = loadConfig({
      path: null,
      env: {},
      overrides: { ari: { users: [{ name: 'c', password: encrypt('pw', '$6$rounds=1000$aclsalt'), password_format: 'crypt', deny: '0.0.0.0/0', permit: '10.0.0.0/8' }] }, dirs: { data: server.dataDir } } as never,
    });
    const authenticator = new Authenticator(config.ari.users);
    try {
      const headers = { authorization: basic('c', 'pw') };
      const from = async (address: string): Promise<string> => (await authenticator.authenticate(headers, new URLSearchParams(), 'GET', address)).kind;
      assert.equal(await from('10.1.1.1'), 'ok');
      assert.equal(await from('127.0.0.1'), 'acl-denied', 'also once the password is remembered as verified');
      assert.equal(await from('::ffff:10.2.2.2'), 'ok');
    } finally {
      await authenticator.close();
    }
  });
});
