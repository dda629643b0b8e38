// Inbound SIP digest authentication against a guesser (issue 21, items 6 and 7): a REGISTER with a
// made-up nonce gets the same answer for a name no endpoint has as for a real endpoint (no user
// enumeration); failed guesses are budgeted per source address and per endpoint, past which they
// are refused unchecked (even the right password), with the block in the log and the metrics — and
// a phone that authenticated before still gets in while its endpoint is blocked for everyone else.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { SipResponse } from '../../../src/sip/message.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { challengeOf, registerAuthorization, UdpRegistrant } from '../../helpers/udp-registrant.ts';

/** REGISTERs from one local address, each with a fresh Call-ID (a guesser's). */
class Registrant extends UdpRegistrant {
  constructor(address: string, serverPort: number) {
    super(serverPort, address);
  }

  /** A fresh challenge: realm and nonce. */
  async challenge(user: string): Promise<{ realm: string; nonce: string }> {
    const response = await this.send(user);
    assert.equal(response.status, 401);
    return challengeOf(response);
  }

  /** REGISTER answering `nonce` with `password`; the status. */
  async guess(user: string, password: string, nonce?: string, realm = 'asterisk'): Promise<number> {
    const theNonce = nonce ?? (await this.challenge(user)).nonce;
    return (await this.send(user, registerAuthorization(user, password, realm, theNonce, this.registrarUri))).status;
  }

  send(user: string, authorization?: string): Promise<SipResponse> {
    return this.sendRegister({ user, callId: randomBytes(8).toString('hex'), expires: 60, authorization });
  }
}

const ENDPOINTS = {
  res_pjsip: {
    endpoint: { alice: { context: 'default', allow: 'ulaw', auth: 'alice-auth', aors: 'alice' } },
    auth: { 'alice-auth': { auth_type: 'userpass', username: 'alice', password: 's3cret' } },
    aor: { alice: { max_contacts: '5' } },
  },
};

describe('SIP authentication against guessing', () => {
  let server: TestServer;
  const peers: Registrant[] = [];
  const peer = async (address: string): Promise<Registrant> => {
    const created = await new Registrant(address, server.core.pjsip.port).start();
    peers.push(created);
    return created;
  };
  before(async () => {
    server = await startTestServer({
      config_objects: ENDPOINTS,
      sip: { failed_auth: { max_per_source: 4, max_per_endpoint: 8, window_seconds: 60, block_seconds: 60 } },
    });
  });
  after(async () => {
    for (const p of peers) p.close();
    await server.stop();
  });

  test('a made-up nonce gets the same answer for a known and an unknown user; so does a wrong password', async () => {
    const a = await peer('127.0.0.11');
    const known = await a.guess('alice', 'whatever', 'bWFkZS11cA');
    const unknown = await a.guess('nobody', 'whatever', 'bWFkZS11cA');
    assert.equal(unknown, known);
    assert.equal(known, 401);
    const b = await peer('127.0.0.12');
    assert.equal(await b.guess('alice', 'wrong'), 403);
    assert.equal(await b.guess('nobody', 'wrong'), 403);
  });

  test('the right password works; a source past its budget is refused unchecked, even with it', async () => {
    const phone = await peer('127.0.0.20');
    assert.equal(await phone.guess('alice', 's3cret'), 200);
    const guesser = await peer('127.0.0.21');
    const { nonce } = await guesser.challenge('alice');
    for (let i = 0; i < 4; i++) assert.equal(await guesser.guess('alice', `guess${i}`, nonce), 403);
    assert.equal(await guesser.guess('alice', 's3cret', nonce), 403, 'blocked: the right password is not even checked');
    assert.equal((await guesser.send('alice')).status, 403, 'no more challenges either');
    assert.ok(server.logLines.some((line) => line.includes('too many failures for source 127.0.0.21')));
  });

  test('an endpoint past its budget refuses guesses from everywhere but its own phones', async () => {
    // Failures so far at alice: 1 (127.0.0.12) + 4 (127.0.0.21); three more sources reach 8.
    for (const address of ['127.0.0.31', '127.0.0.32', '127.0.0.33']) assert.equal(await (await peer(address)).guess('alice', 'nope'), 403);
    assert.ok(server.logLines.some((line) => line.includes('too many failures for endpoint alice')));
    assert.equal(await (await peer('127.0.0.40')).guess('alice', 's3cret'), 403, 'a new address is refused');
    assert.equal(await (await peer('127.0.0.20')).guess('alice', 's3cret'), 200, 'the address it registered from still gets in');
  });

  test('the blocks and the failures show in the metrics; the failure lines are rate-limited', async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    assert.equal(value('patchbay_sip_auth_blocked_sources'), 1);
    assert.equal(value('patchbay_sip_auth_blocked_endpoints'), 1);
    assert.ok(value('patchbay_sip_auth_failures_total') >= 9, text);
    assert.ok(value('patchbay_sip_auth_refused_total') >= 2);
    assert.ok(server.logLines.filter((line) => line.includes('SIP authentication failed')).length <= 2);
  });
});
