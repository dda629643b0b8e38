// Our requests inside a call's dialog challenged by a real peer, SIPp playing a provider (the callee
// the server calls from ARI), as chan_pjsip answers them with the endpoint's outbound_auth:
// - INFO (ARI DTMF, dtmf_mode=info) challenged 401, the hold re-INVITE (moh_passthrough=yes)
//   challenged 407 and the BYE challenged 401 each go again once, with the dialog's next CSeq, the
//   same Call-ID and tags, and credentials the test checks itself (MD5 of the auth's password over
//   the retry's method and URI, nc=00000001 for each new nonce); the hold goes through;
// - credentials refused (a second challenge from the same realm, not stale): no third try, the hold
//   re-INVITE counts as refused and the call goes on; the BYE challenged twice is not sent a third time;
// - an endpoint without outbound_auth: a challenge is the request's answer, nothing is retried;
// - the session refresh of a call that came in (an UPDATE, the caller allowing it) challenged 407:
//   retried once with credentials from the calling endpoint's outbound_auth.
// Skipped with a message when sipp is not installed.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { callSippCallee, explained, HAVE_SIPP, nextEvent as nextEventOn, ofChannel, randomPort, sipp, startSippServer, type Json, type SippCallee, type SippRun, type SippServer } from './sipp-peer.ts';

const APP = 'dialog-auth-app';
const PROVIDER_PORT = randomPort();
const STRICT_PORT = randomPort();
const PLAIN_PORT = randomPort();
let setup: SippServer;

before(async () => {
  if (!HAVE_SIPP) return;
  const callee = { context: 'dialog-auth', allow: 'ulaw', dtmf_mode: 'info', moh_passthrough: 'yes' };
  setup = await startSippServer(
    'sipp-dialog-auth',
    `[dialog-auth]\nexten => 100,1,Stasis(${APP})\n`,
    {
      endpoint: {
        provider: { ...callee, aors: 'provider', outbound_auth: 'provider-auth' },
        strict: { ...callee, aors: 'strict', outbound_auth: 'provider-auth' },
        plain: { ...callee, aors: 'plain' },
        // A caller whose own requests the server's are challenged too (timers=yes: the server refreshes).
        erin: { context: 'dialog-auth', allow: 'ulaw', outbound_auth: 'provider-auth' },
      },
      auth: { 'provider-auth': { auth_type: 'userpass', username: 'trunkuser', password: 'trunkpass' } },
      aor: {
        provider: { contact: `sip:provider@127.0.0.1:${PROVIDER_PORT}` },
        strict: { contact: `sip:strict@127.0.0.1:${STRICT_PORT}` },
        plain: { contact: `sip:plain@127.0.0.1:${PLAIN_PORT}` },
      },
    },
    APP,
  );
});

after(async () => {
  if (!HAVE_SIPP) return;
  await setup.close();
});

// Generous: on a loaded 2-core machine SIPp's messages may reach the app seconds late.
const nextEvent = (match: (event: Json) => boolean, timeoutMs = 30_000): Promise<Json> => nextEventOn(setup.events, match, timeoutMs);
const ari = (path: string, method = 'POST'): Promise<Response> => setup.server.ari(path, { method });
const callee = (endpoint: string, port: number): SippCallee => ({ port, endpoint: `PJSIP/${endpoint}`, app: APP, eventTimeoutMs: 30_000 });

/** The requests SIPp received whose first line matches `firstLine`, one per CSeq (the first copy), in order. */
function requests(run: SippRun, firstLine: RegExp): string[] {
  const seen = new Map<number, string>();
  for (const block of run.messages.split(/^-{20,}.*\r?\n/m)) {
    if (!/message received/i.test(block)) continue;
    const message = block.replace(/^(?:\s*\r?\n)+/, '').replace(/^.*(?:message (?:received|sent)|UDP message).*\r?\n/gim, '').trimStart();
    if (!firstLine.test(message.split(/\r?\n/)[0] ?? '')) continue;
    const seq = cseqOf(message);
    if (!seen.has(seq)) seen.set(seq, message);
  }
  return [...seen.values()];
}

const cseqOf = (message: string | undefined): number => Number(/^CSeq:\s*(\d+)/im.exec(message ?? '')?.[1]);
const header = (message: string | undefined, name: string): string | undefined => new RegExp(`^${name}:\\s*(.*?)\\s*$`, 'im').exec(message ?? '')?.[1];
const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

/**
 * Checks a traced request's credentials against the test's own digest computation (RFC 7616 with
 * qop=auth, MD5): trunkuser/trunkpass in realm provider.example answering `nonce`, for the request's
 * own method and Request-URI.
 */
function assertCredentials(message: string | undefined, name: 'Authorization' | 'Proxy-Authorization', nonce: string): void {
  const value = header(message, name);
  assert.ok(value, `the retry carries ${name}`);
  const params = new Map([...value.matchAll(/(\w+)=(?:"([^"]*)"|([^,\s]+))/g)].map((m) => [m[1]!, m[2] ?? m[3] ?? '']));
  const [method, uri] = (message ?? '').split(/\r?\n/)[0]!.split(' ');
  assert.equal(params.get('username'), 'trunkuser');
  assert.equal(params.get('realm'), 'provider.example');
  assert.equal(params.get('nonce'), nonce);
  assert.equal(params.get('uri'), uri, 'the digest URI is the Request-URI');
  assert.equal(params.get('qop'), 'auth');
  assert.equal(params.get('nc'), '00000001', 'a new nonce is used once');
  const ha1 = md5('trunkuser:provider.example:trunkpass');
  const ha2 = md5(`${method}:${uri}`);
  assert.equal(params.get('response'), md5(`${ha1}:${nonce}:${params.get('nc')}:${params.get('cnonce')}:auth:${ha2}`), 'the digest answers the challenge');
}

/** A retry is the same request in the same dialog: Call-ID, From and To (tags included) unchanged. */
function assertSameDialog(first: string | undefined, retry: string | undefined): void {
  for (const name of ['Call-ID', 'From', 'To']) assert.equal(header(retry, name), header(first, name), `${name} of the retry`);
}

describe('our requests in the dialog challenged, with SIPp as the provider', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  test('INFO challenged 401, the hold re-INVITE 407 and the BYE 401 go again once with credentials and a new CSeq', { timeout: 120_000 }, async () => {
    let destroyed: Json | undefined;
    const result = await callSippCallee(setup, callee('provider', PROVIDER_PORT), 'dialog-challenges.xml', async (id) => {
      assert.equal((await ari(`/channels/${id}/dtmf?dtmf=5`)).status, 204);
      assert.equal((await nextEvent(ofChannel('ChannelDtmfReceived', id))).digit, '1', "SIPp's cue: the INFO went through");
      assert.equal((await ari(`/channels/${id}/hold`)).status, 204);
      assert.equal((await nextEvent(ofChannel('ChannelDtmfReceived', id))).digit, '2', "SIPp's cue: the hold went through");
      assert.equal((await ari(`/channels/${id}`, 'DELETE')).status, 204);
      destroyed = await nextEvent(ofChannel('ChannelDestroyed', id));
    });
    assert.equal(destroyed?.cause, 16);
    const infos = requests(result, /^INFO /);
    const [call, hold, authedHold] = requests(result, /^INVITE /);
    const byes = requests(result, /^BYE /);
    assert.equal(infos.length, 2, 'the INFO and its one retry');
    assert.ok(cseqOf(infos[1]) > cseqOf(infos[0]), 'the INFO retry has a new CSeq');
    assertSameDialog(infos[0], infos[1]);
    assertCredentials(infos[1], 'Authorization', '1nf0c4a11');
    assert.match(infos[1] ?? '', /^Signal=5/m, 'the retry carries the same digit');
    assert.ok(call && hold && authedHold, 'the INVITE, the hold re-INVITE and its retry');
    assert.ok(cseqOf(hold) > cseqOf(infos[1]) && cseqOf(authedHold) > cseqOf(hold), 'the re-INVITE retry takes the dialog next CSeq');
    assertSameDialog(hold, authedHold);
    assertCredentials(authedHold, 'Proxy-Authorization', 'r31nv17e');
    assert.equal(header(authedHold, 'Authorization'), undefined, 'a 407 is answered in Proxy-Authorization only');
    assert.equal(byes.length, 2, 'the BYE and its one retry');
    assert.ok(cseqOf(byes[1]) > cseqOf(byes[0]) && cseqOf(byes[0]) > cseqOf(authedHold));
    assertSameDialog(byes[0], byes[1]);
    assertCredentials(byes[1], 'Authorization', 'by3n0nce');
    assert.match(header(byes[1], 'Reason') ?? '', /^Q\.850;cause=16$/, 'the retry keeps the Reason');
  });

  test('credentials refused (challenged again, not stale): no third try; the hold counts as refused and the call goes on', { timeout: 120_000 }, async () => {
    let destroyed: Json | undefined;
    const result = await callSippCallee(setup, callee('strict', STRICT_PORT), 'dialog-challenge-refused.xml', async (id) => {
      assert.equal((await ari(`/channels/${id}/hold`)).status, 204);
      assert.equal((await nextEvent(ofChannel('ChannelDtmfReceived', id))).digit, '1', "SIPp's cue: both challenges taken");
      assert.equal((await ari(`/channels/${id}`, 'GET')).status, 200, 'the channel outlived the refused re-INVITE');
      assert.equal((await ari(`/channels/${id}`, 'DELETE')).status, 204);
      destroyed = await nextEvent(ofChannel('ChannelDestroyed', id));
    });
    assert.equal(destroyed?.cause, 16);
    assert.equal(requests(result, /^INVITE /).length, 3, 'the INVITE, the hold re-INVITE and one retry');
    assert.equal(requests(result, /^BYE /).length, 2, 'the BYE and one retry');
  });

  test("the session refresh (UPDATE) of an incoming call challenged 407 goes again with the caller endpoint's credentials", { timeout: 150_000 }, async () => {
    const run = sipp('session-refresh-challenged.xml', [setup.target(), '-s', '100', '-set', 'caller', 'erin'], { cwd: setup.work, timeoutMs: 120_000, trace: true });
    await explained(run, async () => {
      const start = await nextEvent((e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith('PJSIP/erin-'));
      const id = start.channel.id as string;
      assert.equal((await ari(`/channels/${id}/answer`)).status, 204);
      // The refresh is due at half the 90 s interval; SIPp's INFO cue follows its 200 to the retry.
      assert.equal((await nextEvent(ofChannel('ChannelDtmfReceived', id), 90_000)).digit, '1');
      assert.equal((await ari(`/channels/${id}`, 'DELETE')).status, 204);
    });
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    const updates = requests(result, /^UPDATE /);
    assert.equal(updates.length, 2, 'the refresh and its one retry');
    assert.ok(cseqOf(updates[1]) > cseqOf(updates[0]));
    assertSameDialog(updates[0], updates[1]);
    assertCredentials(updates[1], 'Proxy-Authorization', 'r3fr35h');
    assert.match(header(updates[1], 'Session-Expires') ?? '', /^90/, 'the retry still refreshes the session');
  });

  test('an endpoint without outbound_auth: the challenged re-INVITE and BYE are not retried', { timeout: 120_000 }, async () => {
    const result = await callSippCallee(setup, callee('plain', PLAIN_PORT), 'dialog-challenge-no-auth.xml', async (id) => {
      assert.equal((await ari(`/channels/${id}/hold`)).status, 204);
      assert.equal((await nextEvent(ofChannel('ChannelDtmfReceived', id))).digit, '1');
      assert.equal((await ari(`/channels/${id}`, 'GET')).status, 200, 'the channel outlived the refused re-INVITE');
      assert.equal((await ari(`/channels/${id}`, 'DELETE')).status, 204);
      await nextEvent(ofChannel('ChannelDestroyed', id));
    });
    assert.equal(requests(result, /^INVITE /).length, 2, 'the INVITE and the hold re-INVITE, not retried');
    assert.equal(requests(result, /^BYE /).length, 1);
  });
});
