// Issue 21 items 10 and 14: a server-wide budget for crypt checks (the per-address budget alone
// gave 2,000 loopback addresses 2,000 checks in 1.7 s), and a wrong password of a plain-password
// user takes as long as an unknown name (the quick 401 told a guesser which names exist): both cost
// one crypt check of the same decoy.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { encrypt } from 'unixcrypt';
import { Authenticator, type AuthResult } from '../../src/ari/auth.ts';
import { PasswordHasher } from '../../src/ari/passwords.ts';
import type { AriUser } from '../../src/config/config.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const CRYPT_HASH = encrypt('crypt secret', '$6$rounds=2000$testsalt');
const USERS: readonly AriUser[] = [
  { name: 'plain', password: 'plain secret', passwordFormat: 'plain', readOnly: false, permit: [], deny: [], acl: [] },
  { name: 'hashed', password: CRYPT_HASH, passwordFormat: 'crypt', readOnly: false, permit: [], deny: [], acl: [] },
];
const LIMITS = { maxPerAddress: 10, windowSeconds: 60, blockSeconds: 60, trackedAddresses: 100_000 };
const NO_QUERY = new URLSearchParams();

describe('the server-wide crypt check budget', () => {
  const authenticators: Authenticator[] = [];
  after(async () => {
    for (const a of authenticators) await a.close();
  });

  test('guesses from 2,000 addresses start at most crypt_checks_per_second checks a second', async () => {
    let clock = 5_000_000;
    const a = new Authenticator(USERS, { failedLogins: LIMITS, now: () => clock, cryptChecksPerSecond: 20 });
    authenticators.push(a);
    const guess = (i: number): AuthResult | Promise<AuthResult> => a.authenticate({ authorization: basic('hashed', `guess ${i}`) }, NO_QUERY, 'GET', `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    const first = Array.from({ length: 2000 }, (_, i) => guess(i));
    assert.equal(first.filter((answer) => answer instanceof Promise).length, 20, 'a burst of 20 checks, the rest refused without one');
    for (const answer of await Promise.all(first)) assert.equal(answer.kind, 'unauthorized');
    clock += 500;
    const half = Array.from({ length: 100 }, (_, i) => guess(3000 + i));
    assert.equal(half.filter((answer) => answer instanceof Promise).length, 10, 'half a second later: 10 more');
    await Promise.all(half);
  });

  test('a credential verified before passes while the budget is spent', async () => {
    let clock = 5_000_000;
    const a = new Authenticator(USERS, { failedLogins: LIMITS, now: () => clock, cryptChecksPerSecond: 2 });
    authenticators.push(a);
    const right = () => a.authenticate({ authorization: basic('hashed', 'crypt secret') }, NO_QUERY, 'GET', '192.0.2.1');
    assert.equal((await right()).kind, 'ok');
    for (let i = 0; i < 5; i++) await a.authenticate({ authorization: basic('nobody', `x${i}`) }, NO_QUERY, 'GET', `192.0.2.${10 + i}`);
    const again = right();
    assert.ok(!(again instanceof Promise), 'no check needed');
    assert.equal(again.kind, 'ok');
    clock += 0;
  });

  test('0 turns the budget off; the setting defaults to 20', async () => {
    const a = new Authenticator(USERS, { failedLogins: { ...LIMITS, maxPerAddress: 0 }, cryptChecksPerSecond: 0 });
    authenticators.push(a);
    const answers = Array.from({ length: 50 }, (_, i) => a.authenticate({ authorization: basic('hashed', `g${i}`) }, NO_QUERY, 'GET', '192.0.2.1'));
    assert.equal(answers.filter((answer) => answer instanceof Promise).length, 50);
    await Promise.all(answers);
    const server = await startTestServer();
    try {
      assert.equal(server.config.ari.cryptChecksPerSecond, 20);
    } finally {
      await server.stop();
    }
  });
});

describe('login timing', () => {
  let server: TestServer | undefined;
  after(() => server?.stop());

  // Counted, not timed: each 401 is one crypt check against the same decoy (so it costs the same
  // whatever the load). The time itself is a measurement: bench/auth-failure-timing.ts.
  test('a wrong password of a plain-password user costs what an unknown name costs: one check of the same decoy', async (t) => {
    const verify = t.mock.method(PasswordHasher.prototype, 'verify');
    const slow = encrypt('slow secret', '$6$rounds=60000$slowsalt');
    server = await startTestServer({
      ari: {
        users: [{ name: 'asterisk', password: 'asterisk' }, { name: 'slow', password: slow, password_format: 'crypt' }],
        failed_logins: { max_per_address: 0 },
        crypt_checks_per_second: 0,
      },
    });
    /** The hashes checked while answering one request (401 expected). */
    const checked = async (authorization: string): Promise<string[]> => {
      const before = verify.mock.callCount();
      const response = await server!.ari('/asterisk/ping', { auth: authorization });
      await response.arrayBuffer();
      assert.equal(response.status, 401);
      return verify.mock.calls.slice(before).map((call) => String(call.arguments[1]));
    };
    const plainWrong: string[] = [];
    const unknown: string[] = [];
    for (let i = 0; i < 3; i++) {
      plainWrong.push(...(await checked(basic('asterisk', `wrong ${i}`))));
      unknown.push(...(await checked(basic(`nobody${i}`, `wrong ${i}`))));
    }
    assert.equal(plainWrong.length, 3, 'one crypt check per wrong password of the plain user');
    assert.equal(unknown.length, 3, 'one crypt check per unknown name');
    const decoy = unknown[0];
    for (const hash of [...plainWrong, ...unknown]) assert.equal(hash, decoy, 'both against the same decoy');
    assert.notEqual(decoy, slow);
    assert.ok(decoy.startsWith('$6$rounds=60000$'), `the decoy costs what the costliest user hash does: ${decoy.slice(0, 20)}`);
    const before = verify.mock.callCount();
    assert.equal((await server.ari('/asterisk/ping')).status, 200, 'the right plain password passes');
    assert.equal(verify.mock.callCount(), before, 'without a crypt check');
  });
});
