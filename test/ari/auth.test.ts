// Authentication under attack: crypt hashes are checked off the event loop, unknown users take the
// same path as known ones, and an address that keeps failing is refused without any check.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { encrypt } from 'unixcrypt';
import WebSocket from 'ws';
import { Authenticator, clientKey, type AuthResult, type FailedLoginLimits } from '../../src/ari/auth.ts';
import { PasswordHasher } from '../../src/ari/passwords.ts';
import type { AriUser } from '../../src/config/config.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const CRYPT_HASH = encrypt('crypt secret', '$6$rounds=2000$testsalt');
const USERS: readonly AriUser[] = [
  { name: 'plain', password: 'plain secret', passwordFormat: 'plain', readOnly: false, permit: [], deny: [], acl: [] },
  { name: 'hashed', password: CRYPT_HASH, passwordFormat: 'crypt', readOnly: false, permit: [], deny: [], acl: [] },
];
const NO_QUERY = new URLSearchParams();

describe('Authenticator', () => {
  let clock = 1_000_000;
  const authenticators: Authenticator[] = [];
  const make = (limits: Partial<FailedLoginLimits> = {}, users: readonly AriUser[] = USERS): Authenticator => {
    const failedLogins = { maxPerAddress: 3, windowSeconds: 60, blockSeconds: 30, trackedAddresses: 100, ...limits };
    const authenticator = new Authenticator(users, { failedLogins, now: () => clock });
    authenticators.push(authenticator);
    return authenticator;
  };
  after(async () => {
    for (const authenticator of authenticators) await authenticator.close();
  });
  const login = (a: Authenticator, user: string, password: string, address = '192.0.2.1'): AuthResult | Promise<AuthResult> =>
    a.authenticate({ authorization: basic(user, password) }, NO_QUERY, 'GET', address);

  test('plain passwords answer synchronously, right or wrong', () => {
    const a = make();
    const right = login(a, 'plain', 'plain secret');
    assert.ok(!(right instanceof Promise));
    assert.equal(right.kind, 'ok');
    const wrong = login(a, 'plain', 'nope');
    assert.ok(!(wrong instanceof Promise));
    assert.equal(wrong.kind, 'unauthorized');
  });

  test('a crypt hash is checked off the event loop; once verified, the same credentials answer synchronously', async () => {
    const a = make();
    const first = login(a, 'hashed', 'crypt secret');
    assert.ok(first instanceof Promise, 'the hash is not computed in the call');
    assert.equal((await first).kind, 'ok');
    const again = login(a, 'hashed', 'crypt secret');
    assert.ok(!(again instanceof Promise));
    assert.equal(again.kind, 'ok');
    const wrong = login(a, 'hashed', 'crypt secreT');
    assert.ok(wrong instanceof Promise);
    assert.equal((await wrong).kind, 'unauthorized');
  });

  test('an unknown user takes the path of a known crypt user (a decoy hash), and fails', async () => {
    const a = make();
    const unknown = login(a, 'nobody', 'crypt secret');
    assert.ok(unknown instanceof Promise, 'checked against a decoy hash like a real user');
    assert.equal((await unknown).kind, 'unauthorized');
  });

  test('with only plain users, an unknown user is refused synchronously like a wrong plain password', () => {
    const a = make({}, [USERS[0]!]);
    const unknown = login(a, 'nobody', 'x');
    assert.ok(!(unknown instanceof Promise));
    assert.equal(unknown.kind, 'unauthorized');
  });

  test('after maxPerAddress failures the address is refused without a check, even with the right password, until blockSeconds pass', async () => {
    const a = make();
    for (let i = 0; i < 3; i++) assert.equal((await login(a, 'hashed', `guess ${i}`)).kind, 'unauthorized');
    for (const [user, password] of [['hashed', 'crypt secret'], ['plain', 'plain secret'], ['nobody', 'x']]) {
      const refused = login(a, user!, password!);
      assert.ok(!(refused instanceof Promise), `${user}: no hash is computed for a blocked address`);
      assert.equal(refused.kind, 'unauthorized');
    }
    assert.equal((await login(a, 'hashed', 'crypt secret', '192.0.2.2')).kind, 'ok', 'another address is not affected');
    clock += 29_000;
    assert.equal((await login(a, 'plain', 'plain secret')).kind, 'unauthorized');
    clock += 1_000;
    assert.equal((await login(a, 'plain', 'plain secret')).kind, 'ok', 'the block has ended');
  });

  test('plain-password failures count too, and failures older than the window are forgotten', async () => {
    const a = make({ windowSeconds: 10 });
    login(a, 'plain', 'a');
    login(a, 'plain', 'b');
    clock += 10_000;
    login(a, 'plain', 'c');
    login(a, 'plain', 'd');
    assert.equal((await login(a, 'plain', 'plain secret')).kind, 'ok', 'two failures in the current window');
    login(a, 'plain', 'e');
    const byApiKey = a.authenticate({}, new URLSearchParams('api_key=plain:plain secret'), 'GET', '192.0.2.1');
    assert.equal((await byApiKey).kind, 'unauthorized', 'three failures in the current window: a credential not proven before is refused');
    assert.equal((await login(a, 'plain', 'plain secret')).kind, 'ok', 'the header proven before the block still passes');
  });

  test('parallel guesses cannot overrun the budget: checks under way count against it', async () => {
    const a = make();
    const answers = Array.from({ length: 10 }, (_, i) => login(a, 'hashed', `guess ${i}`));
    assert.equal(answers.filter((answer) => answer instanceof Promise).length, 3, 'three hashes at most');
    for (const answer of await Promise.all(answers)) assert.equal(answer.kind, 'unauthorized');
  });

  test('a successful crypt check does not count as a failure', async () => {
    const a = make();
    const answers = await Promise.all([login(a, 'hashed', 'crypt secret'), login(a, 'hashed', 'x'), login(a, 'hashed', 'y')]);
    assert.deepEqual(answers.map((answer) => answer.kind), ['ok', 'unauthorized', 'unauthorized']);
    assert.equal((await login(a, 'plain', 'plain secret')).kind, 'ok');
  });

  test('requests without credentials do not count', async () => {
    const a = make();
    for (let i = 0; i < 5; i++) assert.equal((await a.authenticate({}, NO_QUERY, 'GET', '192.0.2.1')).kind, 'unauthorized');
    assert.equal((await login(a, 'plain', 'plain secret')).kind, 'ok');
  });

  test('the table holds at most trackedAddresses addresses, forgetting the least recently failing first', async () => {
    const a = make({ trackedAddresses: 2 });
    for (let i = 0; i < 3; i++) login(a, 'plain', 'x', '192.0.2.10');
    assert.equal((await login(a, 'plain', 'plain secret', '192.0.2.10')).kind, 'unauthorized');
    login(a, 'plain', 'x', '192.0.2.11');
    login(a, 'plain', 'x', '192.0.2.12');
    assert.equal((await login(a, 'plain', 'plain secret', '192.0.2.10')).kind, 'ok', 'forgotten when a third address failed');
  });

  test('maxPerAddress 0 turns the limit off', async () => {
    const a = make({ maxPerAddress: 0 });
    for (let i = 0; i < 20; i++) login(a, 'plain', 'x');
    assert.equal((await login(a, 'plain', 'plain secret')).kind, 'ok');
  });

  test('client keys: IPv4 as is (also IPv4-mapped), IPv6 per /64', () => {
    assert.equal(clientKey('192.0.2.1'), '192.0.2.1');
    assert.equal(clientKey('::ffff:192.0.2.1'), '192.0.2.1');
    assert.equal(clientKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(clientKey('2001:db8:1:2::9'), '2001:db8:1:2::/64');
    assert.equal(clientKey('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(clientKey('::1'), '0:0:0:0::/64');
    assert.equal(clientKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(clientKey(undefined), '');
  });
});

describe('over HTTP', () => {
  // ~30× the cost of the default 5000 rounds: on the event loop, eight of these would block it for seconds.
  const SLOW_HASH = encrypt('slow secret', '$6$rounds=150000$slowsalt');
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      ari: {
        users: [
          { name: 'asterisk', password: 'asterisk' },
          { name: 'slow', password: SLOW_HASH, password_format: 'crypt' },
          { name: 'hashed', password: CRYPT_HASH, password_format: 'crypt' },
        ],
        failed_logins: { max_per_address: 0 },
      },
    });
  });
  after(() => server.stop());

  // Ordered, not timed: the ping is answered while crypt checks the server took before it are still
  // under way, which a check on the event loop would not allow. Ping latency under guessing is a
  // measurement: bench/auth.ts.
  test('the event loop stays responsive: a ping answers while 8 wrong crypt logins are in flight', async (t) => {
    const verify = t.mock.method(PasswordHasher.prototype, 'verify');
    let answered = 0;
    const guesses = Array.from({ length: 8 }, (_, i) =>
      server.ari('/asterisk/ping', { auth: basic('slow', `wrong ${i}`) }).then(async (response) => {
        await response.arrayBuffer();
        answered += 1;
        return response.status;
      }),
    );
    // The guesses reach the server first: all 8 checks have been handed to the hasher.
    const deadline = Date.now() + 30_000;
    while (verify.mock.callCount() < 8 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(verify.mock.callCount(), 8, 'the 8 checks started');
    const start = performance.now();
    const ping = await server.ari('/asterisk/ping');
    const answeredAtPing = answered;
    t.diagnostic(`ping took ${(performance.now() - start).toFixed(0)} ms with ${answeredAtPing} of 8 wrong logins answered`);
    assert.equal(ping.status, 200);
    assert.ok(answeredAtPing < 8, `the ping waited for all ${answeredAtPing} wrong logins`);
    assert.deepEqual(await Promise.all(guesses), Array(8).fill(401));
  });

  test('crypt users log in over HTTP and over the event WebSocket; a wrong password gets 401 on both', async () => {
    assert.equal((await server.ari('/asterisk/ping', { auth: basic('hashed', 'crypt secret') })).status, 200);
    assert.equal((await server.ari('/asterisk/ping', { auth: basic('hashed', 'nope') })).status, 401);
    const url = `${server.url.replace('http', 'ws')}/ari/events?app=auth-test`;
    const open = (authorization: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const socket = new WebSocket(url, { headers: { authorization } });
        socket.on('open', () => {
          socket.close();
          resolve(101);
        });
        socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
        socket.on('error', reject);
      });
    assert.equal(await open(basic('hashed', 'crypt secret')), 101);
    assert.equal(await open(basic('hashed', 'wrong')), 401);
    assert.equal(await open(basic('nobody', 'wrong')), 401);
  });
});

describe('failed-login limit over HTTP', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ ari: { failed_logins: { max_per_address: 3, block_seconds: 1 } } });
  });
  after(() => server.stop());

  test('after 3 wrong passwords the address gets 401 even with the right one, until block_seconds pass; a credential proven before still works', async () => {
    assert.equal((await server.ari('/asterisk/ping')).status, 200, 'the application proves its credential first');
    for (let i = 0; i < 3; i++) assert.equal((await server.ari('/asterisk/ping', { auth: basic('asterisk', `wrong ${i}`) })).status, 401);
    const refused = await server.ari('/asterisk/ping?api_key=asterisk:asterisk', { auth: null });
    assert.equal(refused.status, 401);
    assert.deepEqual(await refused.json(), { message: 'Authentication required' });
    // The application on the same address, with the header it proved before the block, goes on.
    assert.equal((await server.ari('/asterisk/ping')).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal((await server.ari('/asterisk/ping?api_key=asterisk:asterisk', { auth: null })).status, 200);
  });
});
