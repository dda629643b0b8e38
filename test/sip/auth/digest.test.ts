import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import {
  DigestAuthenticator,
  digestHa1,
  digestResponse,
  parseDigestAuthorization,
  type DigestSecret,
} from '../../../src/sip/auth/digest.ts';

// Expected values computed by hand with md5sum/sha256sum (and matching RFC 7616 §3.9.1, RFC 2617 §3.5).
const RFC7616 = {
  realm: 'http-auth@example.org',
  nonce: '7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v',
  cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ',
  method: 'GET',
  uri: '/dir/index.html',
  nc: '00000001',
  qop: 'auth',
};

describe('digest computations', () => {
  test('RFC 7616 example, SHA-256 and MD5', () => {
    const sha = digestHa1('SHA-256', 'Mufasa', RFC7616.realm, 'Circle of Life');
    assert.equal(digestResponse('SHA-256', sha, RFC7616), '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1');
    const md5 = digestHa1('MD5', 'Mufasa', RFC7616.realm, 'Circle of Life');
    assert.equal(digestResponse('MD5', md5, RFC7616), '8ca523f5e9506fed4657c9700eebdbec');
  });

  test('RFC 2617 example and a no-qop (RFC 2069) response', () => {
    const ha1 = digestHa1('MD5', 'Mufasa', 'testrealm@host.com', 'Circle Of Life');
    const fields = { method: 'GET', uri: '/dir/index.html', nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093', qop: 'auth', nc: '00000001', cnonce: '0a4f113b' };
    assert.equal(digestResponse('MD5', ha1, fields), '6629fae49393a05397450978507c4ef1');
    const sipHa1 = digestHa1('MD5', 'alice', 'patchbay', 's3cret');
    assert.equal(sipHa1, 'eed3116f8f22d82eb65a2b9a2fad5199');
    assert.equal(digestResponse('MD5', sipHa1, { method: 'REGISTER', uri: 'sip:patchbay.example', nonce: 'abc' }), 'db62e635afe7882f84c6ce8984eabff1');
  });
});

describe('parseDigestAuthorization', () => {
  test('reads quoted and token values, escapes, any case and spacing', () => {
    const parsed = parseDigestAuthorization(
      'digest  USERNAME="a\\"l\\\\ice" ,realm="patchbay",nonce="n",uri="sip:x@y;transport=udp", response="ABC",algorithm=sha-256,qop=auth,nc=00000001,cnonce="c, d"',
    );
    assert.ok(parsed);
    assert.equal(parsed.username, 'a"l\\ice');
    assert.equal(parsed.uri, 'sip:x@y;transport=udp');
    assert.equal(parsed.algorithm, 'SHA-256');
    assert.equal(parsed.cnonce, 'c, d');
    assert.equal(parsed.qop, 'auth');
  });

  test('username* (RFC 8187)', () => {
    const parsed = parseDigestAuthorization(`Digest username*=UTF-8''J%C3%A4s%C3%B8n, realm="r", nonce="n", uri="u", response="x"`);
    assert.equal(parsed?.username, 'Jäsøn');
  });

  test('hostile values give undefined, never throw', () => {
    const bad: unknown[] = [
      undefined,
      null,
      42,
      '',
      'Basic YWxhZGRpbjpvcGVuc2VzYW1l',
      'Digest',
      'Digest username="a", realm="r", nonce="n", uri="u"', // no response
      'Digest username="a, realm="r", nonce="n", uri="u", response="x"', // unterminated
      'Digest username="a", username="b", realm="r", nonce="n", uri="u", response="x"', // duplicate
      'Digest username=="a"',
      'Digest username="a" realm="r"',
      'Digest =x',
      `Digest username="${'a'.repeat(2000)}", realm="r", nonce="n", uri="u", response="x"`,
      'Digest ' + Array.from({ length: 40 }, (_, i) => `p${i}=1`).join(','),
      'Digest ' + 'x'.repeat(10_000),
      `Digest username*=UTF-8''%E0%A4%A, realm="r", nonce="n", uri="u", response="x"`,
      'Digest username="\\',
      'Digest constructor="x", __proto__="y", realm="r"',
    ];
    for (const value of bad) assert.equal(parseDigestAuthorization(value), undefined, String(value).slice(0, 60));
    // Seeded random garbage around a valid value.
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const base = 'Digest username="alice", realm="patchbay", nonce="abc", uri="sip:a@b", response="0123", qop=auth, nc=00000001, cnonce="x"';
    for (let round = 0; round < 2000; round++) {
      const chars = [...base];
      for (let k = 0; k < 4; k++) chars[Math.floor(random() * chars.length)] = String.fromCharCode(Math.floor(random() * 128));
      parseDigestAuthorization(chars.join(''));
    }
  });
});

/** An independent client: computes the response from first principles. */
function answer(
  challenge: string,
  opts: { username: string; password: string; method: string; uri: string; nc?: string; cnonce?: string; noQop?: boolean; realm?: string },
): string {
  const field = (name: string) => new RegExp(`${name}="?([^",]*)"?`).exec(challenge)?.[1] ?? '';
  const algorithm = field('algorithm');
  const realm = opts.realm ?? field('realm');
  const nonce = field('nonce');
  const h = (text: string) => createHash(algorithm === 'SHA-256' ? 'sha256' : 'md5').update(text).digest('hex');
  const ha1 = h(`${opts.username}:${realm}:${opts.password}`);
  const ha2 = h(`${opts.method}:${opts.uri}`);
  const nc = opts.nc ?? '00000001';
  const cnonce = opts.cnonce ?? 'deadbeef';
  const response = opts.noQop ? h(`${ha1}:${nonce}:${ha2}`) : h(`${ha1}:${nonce}:${nc}:${cnonce}:auth:${ha2}`);
  const qop = opts.noQop ? '' : `, qop=auth, nc=${nc}, cnonce="${cnonce}"`;
  return `Digest username="${opts.username}", realm="${realm}", nonce="${nonce}", uri="${opts.uri}", response="${response}", algorithm=${algorithm}, opaque="${field('opaque')}"${qop}`;
}

describe('DigestAuthenticator', () => {
  let clock = 1_700_000_000_000;
  const now = () => clock;
  const users: Record<string, DigestSecret> = {
    alice: { password: 's3cret' },
    bob: { md5Cred: digestHa1('MD5', 'bob', 'patchbay', 'hunter2') },
  };
  const lookup = (name: string) => (Object.hasOwn(users, name) ? users[name] : undefined);
  const auth = () => new DigestAuthenticator({ realm: 'patchbay', secret: Buffer.from('k'), nonceLifetime: 32, now });

  test('challenges: SHA-256 then MD5, same nonce, qop and opaque; stale when asked', () => {
    const values = auth().challenge();
    assert.equal(values.length, 2);
    assert.match(values[0], /^Digest realm="patchbay", nonce="[A-Za-z0-9_-]{40}", opaque="[^"]+", algorithm=SHA-256, qop="auth"$/);
    assert.match(values[1], /algorithm=MD5, qop="auth"$/);
    assert.equal(/nonce="([^"]+)"/.exec(values[0])?.[1], /nonce="([^"]+)"/.exec(values[1])?.[1]);
    assert.match(auth().challenge({ stale: true })[0], /, stale=true$/);
    const weird = new DigestAuthenticator({ realm: 'a"b\\c\r\nX-Injected: 1' }).challenge()[0];
    assert.match(weird, /^Digest realm="a\\"b\\\\cX-Injected: 1"/);
  });

  test('accepts a right password (SHA-256, MD5, no-qop, md5_cred) and refuses a wrong one', () => {
    const a = auth();
    const [sha, md5] = a.challenge();
    const req = (authorization: string) => ({ method: 'REGISTER', authorization, lookup });
    const uri = 'sip:patchbay.example';
    assert.deepEqual(a.verify(req(answer(sha, { username: 'alice', password: 's3cret', method: 'REGISTER', uri }))), {
      ok: true,
      username: 'alice',
      algorithm: 'SHA-256',
    });
    assert.equal(a.verify(req(answer(md5, { username: 'alice', password: 's3cret', method: 'REGISTER', uri, cnonce: 'other', nc: '00000002' }))).ok, true);
    assert.equal(a.verify(req(answer(md5, { username: 'alice', password: 's3cret', method: 'REGISTER', uri, noQop: true }))).ok, true);
    assert.equal(a.verify(req(answer(md5, { username: 'bob', password: 'hunter2', method: 'REGISTER', uri, nc: '00000004' }))).ok, true);
    // md5_cred cannot answer SHA-256.
    assert.deepEqual(a.verify(req(answer(sha, { username: 'bob', password: 'hunter2', method: 'REGISTER', uri }))), {
      ok: false,
      reason: 'bad-response',
      username: 'bob',
    });
    const wrong = a.verify(req(answer(md5, { username: 'alice', password: 'guess', method: 'REGISTER', uri, nc: '00000005' })));
    assert.equal(wrong.ok === false && wrong.reason, 'bad-response');
    // Method is part of the hash.
        // (one nonce serves both algorithms, so its count keeps growing across them)
    const asInvite = answer(md5, { username: 'alice', password: 's3cret', method: 'INVITE', uri, nc: '00000006' });
    assert.equal(a.verify(req(asInvite)).ok, false);
    const unknown = a.verify(req(answer(md5, { username: 'mallory', password: 'x', method: 'REGISTER', uri, nc: '00000007' })));
    assert.equal(unknown.ok === false && unknown.reason, 'unknown-user');
  });

  test('expectedUri, other realms, several headers, missing and malformed', () => {
    const a = auth();
    const [, md5] = a.challenge();
    const good = answer(md5, { username: 'alice', password: 's3cret', method: 'INVITE', uri: 'sip:100@pb' });
    const other = answer(md5, { username: 'alice', password: 's3cret', method: 'INVITE', uri: 'sip:100@pb', realm: 'elsewhere' });
    assert.equal(a.verify({ method: 'INVITE', authorization: [other, good], lookup }).ok, true);
    const mismatch = a.verify({ method: 'INVITE', authorization: good, lookup, expectedUri: 'sip:200@pb' });
    assert.equal(mismatch.ok === false && mismatch.reason, 'bad-response');
    assert.deepEqual(a.verify({ method: 'INVITE', authorization: undefined, lookup }), { ok: false, reason: 'missing' });
    assert.deepEqual(a.verify({ method: 'INVITE', authorization: [other], lookup }), { ok: false, reason: 'missing' });
    assert.deepEqual(a.verify({ method: 'INVITE', authorization: 'Digest username="x', lookup }), { ok: false, reason: 'malformed' });
    const sess = good.replace('algorithm=MD5', 'algorithm=MD5-sess');
    assert.equal((a.verify({ method: 'INVITE', authorization: sess, lookup }) as { reason: string }).reason, 'unsupported');
    const authInt = good.replace('qop=auth', 'qop=auth-int');
    assert.equal((a.verify({ method: 'INVITE', authorization: authInt, lookup }) as { reason: string }).reason, 'unsupported');
    const noNc = good.replace(/nc=\d+, /, '');
    assert.equal((a.verify({ method: 'INVITE', authorization: noNc, lookup }) as { reason: string }).reason, 'malformed');
    const strict = new DigestAuthenticator({ realm: 'patchbay', allowNoQop: false, now });
    const legacy = answer(strict.challenge()[1], { username: 'alice', password: 's3cret', method: 'INVITE', uri: 'u', noQop: true });
    assert.equal((strict.verify({ method: 'INVITE', authorization: legacy, lookup }) as { reason: string }).reason, 'unsupported');
  });

  test('forged, foreign and future nonces are refused; an expired one is stale only with the right password', () => {
    const a = auth();
    const [, md5] = a.challenge();
    const forged = md5.replace(/nonce="[^"]+"/, `nonce="${'A'.repeat(40)}"`);
    const r1 = a.verify({ method: 'INVITE', authorization: answer(forged, { username: 'alice', password: 's3cret', method: 'INVITE', uri: 'u' }), lookup });
    assert.equal(r1.ok === false && r1.reason, 'bad-nonce');
    const foreign = new DigestAuthenticator({ realm: 'patchbay', secret: Buffer.from('other'), now }).challenge()[1];
    const r2 = a.verify({ method: 'INVITE', authorization: answer(foreign, { username: 'alice', password: 's3cret', method: 'INVITE', uri: 'u' }), lookup });
    assert.equal(r2.ok === false && r2.reason, 'bad-nonce');

    clock += 10_000;
    const future = a.challenge()[1];
    clock -= 10_000;
    const r3 = a.verify({ method: 'INVITE', authorization: answer(future, { username: 'alice', password: 's3cret', method: 'INVITE', uri: 'u' }), lookup });
    assert.equal(r3.ok === false && r3.reason, 'bad-nonce');

    clock += 32_001;
    const late = answer(md5, { username: 'alice', password: 's3cret', method: 'INVITE', uri: 'u' });
    assert.equal((a.verify({ method: 'INVITE', authorization: late, lookup }) as { reason: string }).reason, 'stale');
    const lateWrong = answer(md5, { username: 'alice', password: 'nope', method: 'INVITE', uri: 'u' });
    assert.equal((a.verify({ method: 'INVITE', authorization: lateWrong, lookup }) as { reason: string }).reason, 'bad-response');
    clock -= 32_001;
  });

  test('a user\'s own nonce lifetime (pjsip.conf auth nonce_lifetime) decides when its nonce is stale', () => {
    const a = auth();
    const [, md5] = a.challenge();
    const withLifetime = (seconds: number) => (name: string) => (name === 'alice' ? { password: 's3cret', nonceLifetime: seconds } : undefined);
    const credentials = answer(md5, { username: 'alice', password: 's3cret', method: 'INVITE', uri: 'u' });
    clock += 5_001;
    assert.equal((a.verify({ method: 'INVITE', authorization: credentials, lookup: withLifetime(5) }) as { reason: string }).reason, 'stale');
    clock += 40_000;
    assert.equal(a.verify({ method: 'INVITE', authorization: credentials, lookup: withLifetime(60) }).ok, true);
    clock -= 45_001;
  });

  test('nonce counts must grow; the table stays bounded and forgotten nonces are stale', () => {
    const a = new DigestAuthenticator({ realm: 'patchbay', secret: Buffer.from('k'), now, maxTrackedNonces: 3 });
    const md5 = a.challenge()[1];
    const with_ = (nc: string) => ({
      method: 'INVITE',
      authorization: answer(md5, { username: 'alice', password: 's3cret', method: 'INVITE', uri: 'u', nc }),
      lookup,
    });
    assert.equal(a.verify(with_('00000001')).ok, true);
    assert.equal((a.verify(with_('00000001')) as { reason: string }).reason, 'replay');
    assert.equal(a.verify(with_('00000003')).ok, true);
    assert.equal((a.verify(with_('00000002')) as { reason: string }).reason, 'replay');
    // Four more nonces push the first out of the table.
    for (let i = 0; i < 4; i++) {
      clock += 1;
      const next = a.challenge()[1];
      const ok = a.verify({ method: 'INVITE', authorization: answer(next, { username: 'alice', password: 's3cret', method: 'INVITE', uri: 'u' }), lookup });
      assert.equal(ok.ok, true);
      assert.ok(a.trackedNonces <= 3);
    }
    assert.equal((a.verify(with_('00000009')) as { reason: string }).reason, 'stale');
    // No-qop credentials may reuse a nonce (REGISTER refreshes do) and are never tracked.
    const legacy = answer(md5, { username: 'alice', password: 's3cret', method: 'REGISTER', uri: 'u', noQop: true });
    const b = new DigestAuthenticator({ realm: 'patchbay', secret: Buffer.from('k'), now });
    assert.equal(b.verify({ method: 'REGISTER', authorization: legacy, lookup }).ok, true);
    assert.equal(b.verify({ method: 'REGISTER', authorization: legacy, lookup }).ok, true);
    assert.equal(b.trackedNonces, 0);
  });
});

describe('the client side: answering challenges (outbound registration)', () => {
  test('the first usable challenge is answered and verifies; auth-int, MD5-sess and other realms are skipped', async () => {
    const { answerChallenge, chooseChallenge, parseDigestChallenge } = await import('../../../src/sip/auth/digest-client.ts');
    assert.equal(parseDigestChallenge('Digest realm="r", nonce="n", qop="auth-int"'), undefined);
    assert.equal(parseDigestChallenge('Digest realm="r", nonce="n", algorithm=MD5-sess'), undefined);
    assert.equal(parseDigestChallenge('Basic realm="r"'), undefined);
    assert.deepEqual(parseDigestChallenge('Digest realm="r", nonce="n", qop="auth,auth-int", stale=TRUE'), { realm: 'r', nonce: 'n', algorithm: 'MD5', qop: 'auth', stale: true });

    const server = new DigestAuthenticator({ realm: 'pbx', algorithms: ['SHA-256', 'MD5'] });
    const offered = ['Digest realm="elsewhere", nonce="x", algorithm=SHA-256, qop="auth"', ...server.challenge()];
    // The credentials are for realm pbx: the foreign challenge is skipped, SHA-256 (the server's first) is used.
    const chosen = chooseChallenge(offered, [{ username: 'alice', password: 's3cret', realm: 'pbx' }]);
    assert.ok(chosen);
    assert.equal(chosen.challenge.realm, 'pbx');
    assert.equal(chosen.challenge.algorithm, 'SHA-256');
    const header = answerChallenge(chosen.challenge, chosen.credentials, 'REGISTER', 'sip:pbx', 1);
    const lookup = (name: string): DigestSecret | undefined => (name === 'alice' ? { password: 's3cret' } : undefined);
    assert.equal(server.verify({ method: 'REGISTER', authorization: header, lookup }).ok, true);
    // The next nonce count on the same challenge verifies too (a refresh without a new challenge).
    assert.equal(server.verify({ method: 'REGISTER', authorization: answerChallenge(chosen.challenge, chosen.credentials, 'REGISTER', 'sip:pbx', 2), lookup }).ok, true);

    // md5_cred answers MD5 challenges only.
    const md5Only = new DigestAuthenticator({ realm: 'pbx', algorithms: ['SHA-256', 'MD5'] });
    const cred = createHash('md5').update('alice:pbx:s3cret').digest('hex');
    const withCred = chooseChallenge(md5Only.challenge(), [{ username: 'alice', md5Cred: cred }]);
    assert.equal(withCred?.challenge.algorithm, 'MD5');
    assert.equal(md5Only.verify({ method: 'REGISTER', authorization: answerChallenge(withCred!.challenge, withCred!.credentials, 'REGISTER', 'sip:pbx'), lookup }).ok, true);
    assert.equal(chooseChallenge(['Digest realm="pbx", nonce="n", algorithm=SHA-256'], [{ username: 'alice', md5Cred: cred }]), undefined);
  });
});
