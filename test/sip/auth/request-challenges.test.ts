// Answering 401/407 challenges to a request we sent (src/sip/auth/request-challenges.ts): the retry
// keeps Call-ID, tags, Route and body, takes CSeq + 1, carries credentials our own digest verifier
// accepts (MD5 and SHA-256, qop=auth), and the far end refusing them once per realm ends the retries.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DigestAuthenticator } from '../../../src/sip/auth/digest.ts';
import { MAX_CHALLENGES, RequestChallenges } from '../../../src/sip/auth/request-challenges.ts';
import { SipRequest, SipResponse } from '../../../src/sip/message.ts';

const CREDENTIALS = [{ username: 'trunkuser', password: 'trunkpass' }];

function invite(): SipRequest {
  return new SipRequest(
    'INVITE',
    'sip:5551234@provider.example',
    [
      ['Via', 'SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bKone'],
      ['Route', '<sip:127.0.0.1:5070;lr>'],
      ['From', '"Front Desk" <sip:1001@pbx.example>;tag=abc'],
      ['To', '<sip:5551234@provider.example>'],
      ['Call-ID', 'call-1'],
      ['CSeq', '7 INVITE'],
      ['Contact', '<sip:1001@127.0.0.1:5060>'],
    ],
    'v=0\r\n',
  );
}

function challenge(status: 401 | 407, values: string[]): SipResponse {
  const response = new SipResponse(status, status === 401 ? 'Unauthorized' : 'Proxy Authentication Required');
  for (const value of values) response.add(status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate', value);
  return response;
}

describe('RequestChallenges', () => {
  for (const algorithm of ['MD5', 'SHA-256'] as const) {
    test(`a 407 (${algorithm}, qop=auth) is answered: CSeq + 1, same Call-ID and tag, Route and body kept, credentials verified`, () => {
      const verifier = new DigestAuthenticator({ realm: 'provider.example', algorithms: [algorithm] });
      const challenges = new RequestChallenges(CREDENTIALS);
      const sent = invite();
      const outcome = challenges.retry(sent, challenge(407, verifier.challenge()));
      assert.ok(outcome.ok);
      const retry = outcome.request;
      assert.equal(retry.cseq()?.seq, 8);
      assert.equal(retry.cseq()?.method, 'INVITE');
      assert.equal(retry.callId(), 'call-1');
      assert.equal(retry.fromTag(), 'abc');
      assert.equal(retry.get('route'), '<sip:127.0.0.1:5070;lr>');
      assert.equal(retry.get('via'), undefined, 'the transaction layer adds a new Via');
      assert.equal(retry.body.toString(), 'v=0\r\n');
      assert.equal(retry.get('authorization'), undefined);
      const credentials = retry.proxyAuthorization();
      assert.equal(credentials.length, 1);
      assert.match(credentials[0], new RegExp(`algorithm=${algorithm}`));
      assert.match(credentials[0], /qop=auth, nc=00000001/);
      const verified = verifier.verify({ method: 'INVITE', authorization: credentials, lookup: () => ({ password: 'trunkpass' }), expectedUri: 'sip:5551234@provider.example' });
      assert.deepEqual(verified, { ok: true, username: 'trunkuser', algorithm });
    });
  }

  test('a 401 is answered with Authorization; SHA-256 is taken when the far end lists it first', () => {
    const verifier = new DigestAuthenticator({ realm: 'provider.example', algorithms: ['SHA-256', 'MD5'] });
    const outcome = new RequestChallenges(CREDENTIALS).retry(invite(), challenge(401, verifier.challenge()));
    assert.ok(outcome.ok);
    assert.equal(outcome.request.proxyAuthorization().length, 0);
    assert.match(outcome.request.authorization()[0], /algorithm=SHA-256/);
  });

  test('the same realm challenging again (not stale) means our credentials were refused: no second retry', () => {
    const verifier = new DigestAuthenticator({ realm: 'provider.example', algorithms: ['MD5'] });
    const challenges = new RequestChallenges(CREDENTIALS);
    const first = challenges.retry(invite(), challenge(407, verifier.challenge()));
    assert.ok(first.ok);
    assert.deepEqual(challenges.retry(first.request, challenge(407, verifier.challenge())), { ok: false, reason: 'rejected' });
  });

  test('a stale challenge is answered again, with a bound on retries in all', () => {
    const verifier = new DigestAuthenticator({ realm: 'provider.example', algorithms: ['MD5'] });
    const challenges = new RequestChallenges(CREDENTIALS);
    let sent = invite();
    for (let i = 0; i < MAX_CHALLENGES; i++) {
      const outcome = challenges.retry(sent, challenge(401, verifier.challenge({ stale: i > 0 })));
      assert.ok(outcome.ok, `retry ${i + 1}`);
      sent = outcome.request;
    }
    assert.deepEqual(challenges.retry(sent, challenge(401, verifier.challenge({ stale: true }))), { ok: false, reason: 'too-many' });
  });

  test('credentials for another realm, garbage challenges and other statuses give up without a retry', () => {
    const realmBound = new RequestChallenges([{ username: 'u', password: 'p', realm: 'other.example' }]);
    assert.deepEqual(realmBound.retry(invite(), challenge(401, ['Digest realm="provider.example", nonce="n1", qop="auth"'])), { ok: false, reason: 'no-credentials' });
    const challenges = new RequestChallenges(CREDENTIALS);
    assert.deepEqual(challenges.retry(invite(), challenge(401, ['Basic realm="x"', 'Digest realm="r"', 'Digest nonce="n"'])), { ok: false, reason: 'no-credentials' });
    assert.deepEqual(challenges.retry(invite(), challenge(407, ['Digest realm="r", nonce="n", algorithm=MD5-sess'])), { ok: false, reason: 'no-credentials' });
    assert.deepEqual(challenges.retry(invite(), new SipResponse(403, 'Forbidden')), { ok: false, reason: 'not-a-challenge' });
    assert.equal(challenges.retries, 0);
  });

  test('two realms challenged in one 407 (two proxies): one Proxy-Authorization each', () => {
    const challenges = new RequestChallenges(CREDENTIALS);
    const outcome = challenges.retry(invite(), challenge(407, ['Digest realm="a.example", nonce="n1", qop="auth"', 'Digest realm="b.example", nonce="n2"']));
    assert.ok(outcome.ok);
    const values = outcome.request.proxyAuthorization();
    assert.equal(values.length, 2);
    assert.match(values[0], /realm="a.example"/);
    assert.match(values[1], /realm="b.example"/);
  });

  test('a proxy (407) then the callee (401): the second retry carries both credentials, the proxy\'s with the next nonce count', () => {
    const proxyRealm = new DigestAuthenticator({ realm: 'proxy.example', algorithms: ['MD5'] });
    const calleeRealm = new DigestAuthenticator({ realm: 'callee.example', algorithms: ['SHA-256'] });
    const challenges = new RequestChallenges(CREDENTIALS);
    const first = challenges.retry(invite(), challenge(407, proxyRealm.challenge()));
    assert.ok(first.ok);
    const second = challenges.retry(first.request, challenge(401, calleeRealm.challenge()));
    assert.ok(second.ok);
    assert.equal(second.request.cseq()?.seq, 9);
    const lookup = (): { password: string } => ({ password: 'trunkpass' });
    assert.match(second.request.proxyAuthorization()[0], /nc=00000002/);
    assert.equal(proxyRealm.verify({ method: 'INVITE', authorization: second.request.proxyAuthorization(), lookup }).ok, true);
    assert.equal(calleeRealm.verify({ method: 'INVITE', authorization: second.request.authorization(), lookup }).ok, true);
  });
});
