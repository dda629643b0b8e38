// Our re-INVITEs refused by a real peer, SIPp, and the far end's re-INVITEs in multipart bodies:
// - a hold re-INVITE (ARI hold, moh_passthrough=yes) refused 488 or 500 leaves the session as it was
//   (RFC 3261 §14.1): the call goes on, the far end was never held, so an unhold sends nothing and
//   the next hold re-INVITEs again (a=sendonly, a higher o= version);
// - one answered 408 or 481 ends the dialog (RFC 3261 §12.2.1.2, RFC 5057 §5.1): the server sends
//   BYE and the channel ends with chan_pjsip's cause (18 for 408, 127 for 481);
// - after a refused hold, the session refresh re-INVITE offers the session as it was (a=sendrecv,
//   the o= version in force before the hold), and a refresh refused 422 goes again at once with the
//   far end's Min-SE (RFC 4028 §6);
// - a gateway's re-INVITEs whose SDP is a part of multipart/mixed (beside ISUP) hold and resume.
// Skipped with a message when sipp is not installed.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  callSippCallee, explained, HAVE_SIPP, nextEvent as nextEventOn, ofChannel, randomPort, SCENARIOS, sipp as runSipp, sippPhones, sippServerInSuite, startSippServer,
  tracedMessages, type Json, type SippCallee, type SippRun,
} from './sipp-peer.ts';

const APP = 'reinvite-errors-app';
/** Where SIPp plays bob, the callee (his static contact). */
const BOB_PORT = randomPort();
const SKIP = HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)';

/** The u-law phones: bob called at his contact, alice and the gateway calling in; hold from ARI re-INVITEs bob and alice (sendonly) instead of playing music to them. */
function phones(): Json {
  const objects = sippPhones({ bob: BOB_PORT, alice: undefined, gateway: undefined }, 'reinvite-in');
  for (const name of ['bob', 'alice']) objects.endpoint[name].moh_passthrough = 'yes';
  return objects;
}

const setup = sippServerInSuite(SKIP, () => startSippServer('sipp-reinvite-errors', `[reinvite-in]\nexten => 100,1,Stasis(${APP})\n`, phones(), APP));

// Generous: on a loaded 2-core machine SIPp's messages may reach the app seconds late.
const nextEvent = (match: (event: Json) => boolean, timeoutMs = 30_000): Promise<Json> => nextEventOn(setup.events, match, timeoutMs);
const ari = (path: string, method = 'POST'): Promise<Response> => setup.server.ari(path, { method });

/**
 * A copy of `scenario` in the work directory with its [$status] and [$reason] written in (SIPp takes
 * a response's status when it loads the scenario, not from -set).
 */
function withStatus(scenario: string, status: string, reason: string): string {
  const copy = join(setup.work, scenario.replace(/\.xml$/, `-${status}.xml`));
  writeFileSync(copy, readFileSync(join(SCENARIOS, scenario), 'utf8').replaceAll('[$status]', status).replaceAll('[$reason]', reason));
  return copy;
}

/** Bob as the server calls him: SIPp at his static contact. */
const BOB: SippCallee = { port: BOB_PORT, endpoint: 'PJSIP/bob', app: APP, eventTimeoutMs: 30_000 };

/** The o= version of a traced message's SDP. */
const sdpVersion = (message: string | undefined): number => Number(/^o=\S+ \S+ (\d+)/m.exec(message ?? '')?.[1]);
const cseqOf = (message: string | undefined): number => Number(/^CSeq:\s*(\d+)/im.exec(message ?? '')?.[1]);

/** The messages SIPp received (not sent) whose first line matches `firstLine`, in order, from its -trace_msg log. */
function received(run: SippRun, firstLine: RegExp): string[] {
  // Each message follows a dashed line with the time, then "UDP message received [n] bytes :" (or sent).
  return run.messages
    .split(/^-{20,}.*\r?\n/m)
    .filter((block) => /^.*message received/im.test(block))
    .map((block) => block.replace(/^(?:\s*\r?\n)+/, '').replace(/^.*(?:message (?:received|sent)|UDP message).*\r?\n/gim, '').trimStart())
    .filter((block) => firstLine.test(block.split(/\r?\n/)[0] ?? ''));
}

/** The first copy of each request (retransmissions share its CSeq), in order. */
function firstOfEach(messages: string[]): string[] {
  const seen = new Map<number, string>();
  for (const message of messages) if (!seen.has(cseqOf(message))) seen.set(cseqOf(message), message);
  return [...seen.values()];
}

describe('our re-INVITEs refused, and multipart re-INVITEs, with SIPp', { skip: SKIP }, () => {
  for (const [status, reason] of [
    ['488', 'Not Acceptable Here'],
    ['500', 'Server Internal Error'],
  ] as const) {
    test(`a hold re-INVITE refused ${status} leaves the session as it was: an unhold sends nothing, the next hold re-INVITEs again`, { timeout: 90_000 }, async () => {
      const result = await callSippCallee(setup, BOB, withStatus('reinvite-refused.xml', status, reason), async (id) => {
        assert.equal((await ari(`/channels/${id}/hold`)).status, 204);
        // SIPp's INFO digit 1 comes once our refusal was ACKed: the call is still up.
        const cue = await nextEvent(ofChannel('ChannelDtmfReceived', id));
        assert.equal(cue.digit, '1');
        assert.equal((await ari(`/channels/${id}`, 'GET')).status, 200, 'the channel outlived the refusal');
        // The far end was never held: the unhold has nothing to undo, and the next hold is a new re-INVITE.
        assert.equal((await ari(`/channels/${id}/hold`, 'DELETE')).status, 204);
        assert.equal((await ari(`/channels/${id}/hold`)).status, 204);
        const destroyed = await nextEvent(ofChannel('ChannelDestroyed', id), 60_000);
        assert.equal(destroyed.cause, 16, 'the callee hung up normally');
      });
      const invites = firstOfEach(received(result, /^INVITE /));
      assert.equal(invites.length, 3, "the call's INVITE, the refused hold and the second hold (no unhold re-INVITE between)");
      const [call, hold, again] = invites;
      assert.match(hold ?? '', /^a=sendonly/m);
      assert.match(again ?? '', /^a=sendonly/m);
      assert.ok(sdpVersion(hold) > sdpVersion(call), 'the hold offer has a new o= version');
      assert.ok(sdpVersion(again) > sdpVersion(hold), `the second hold's o= version (${sdpVersion(again)}) is above the refused one's (${sdpVersion(hold)})`);
    });
  }

  for (const [status, reason, cause] of [
    ['408', 'Request Timeout', 18],
    ['481', 'Call/Transaction Does Not Exist', 127],
  ] as const) {
    test(`a hold re-INVITE answered ${status} ends the dialog: BYE, and the channel ends with cause ${cause}`, { timeout: 90_000 }, async () => {
      const result = await callSippCallee(setup, BOB, withStatus('reinvite-dialog-gone.xml', status, reason), async (id) => {
        assert.equal((await ari(`/channels/${id}/hold`)).status, 204);
        const destroyed = await nextEvent(ofChannel('ChannelDestroyed', id), 60_000);
        assert.equal(destroyed.cause, cause, `chan_pjsip's cause for ${status}`);
      });
      const [bye] = tracedMessages(result, /^BYE /);
      assert.match(bye ?? '', new RegExp(`^Reason:\\s*Q\\.850;cause=${cause}\\s*$`, 'im'));
    });
  }

  test('after a refused hold the session refresh offers the session as it was, and a refresh refused 422 goes again with the Min-SE asked', { timeout: 150_000 }, async () => {
    const run = runSipp('refresh-restored-422.xml', [setup.target(), '-s', '100', '-set', 'caller', 'alice'], { cwd: setup.work, timeoutMs: 120_000, trace: true });
    await explained(run, async () => {
      const start = await nextEvent((e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith('PJSIP/alice-'));
      const id = start.channel.id as string;
      assert.equal((await ari(`/channels/${id}/answer`)).status, 204);
      await nextEvent((e) => e.type === 'ChannelStateChange' && e.channel?.id === id && e.channel.state === 'Up');
      assert.equal((await ari(`/channels/${id}/hold`)).status, 204);
      // The refresh is due at 45 s; SIPp hangs up once the second one is answered.
      const destroyed = await nextEvent(ofChannel('ChannelDestroyed', id), 110_000);
      assert.equal(destroyed.cause, 16, 'the caller hung up normally');
    });
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    const [answer] = received(result, /^SIP\/2\.0 200/).filter((m) => /^CSeq:\s*1 INVITE/im.test(m));
    const [hold, refresh, raised] = firstOfEach(received(result, /^INVITE /));
    assert.match(hold ?? '', /^a=sendonly/m);
    assert.equal(sdpVersion(refresh), sdpVersion(answer), 'the refresh repeats the SDP in force before the refused hold');
    assert.match(raised ?? '', /^Session-Expires:\s*120;refresher=uac/im);
  });

  test("a gateway's re-INVITEs with SDP in multipart/mixed (beside ISUP) hold and resume, answered in plain SDP", { timeout: 90_000 }, async () => {
    const run = runSipp('reinvite-multipart.xml', [setup.target(), '-s', '100', '-set', 'caller', 'gateway'], { cwd: setup.work, timeoutMs: 60_000, trace: true });
    await explained(run, async () => {
      const start = await nextEvent((e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith('PJSIP/gateway-'));
      const id = start.channel.id as string;
      assert.equal((await ari(`/channels/${id}/answer`)).status, 204);
      await nextEvent(ofChannel('ChannelHold', id));
      await nextEvent(ofChannel('ChannelUnhold', id));
      const destroyed = await nextEvent(ofChannel('ChannelDestroyed', id));
      assert.equal(destroyed.cause, 16, 'the gateway hung up normally');
    });
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    const reinvites = tracedMessages(result, /^INVITE /).filter((m) => cseqOf(m) > 1);
    assert.ok(reinvites.every((m) => /^Content-Type:\s*multipart\/mixed;boundary=/im.test(m)), 'SIPp sent multipart re-INVITEs');
    const answers = firstOfEach(received(result, /^SIP\/2\.0 200/).filter((m) => /^CSeq:\s*[23] INVITE/im.test(m)));
    assert.equal(answers.length, 2);
    assert.ok(answers.every((m) => /^Content-Type:\s*application\/sdp\s*$/im.test(m)), 'answered in plain SDP');
    assert.match(answers[0] ?? '', /^a=recvonly/m, 'the hold answered recvonly');
    assert.match(answers[1] ?? '', /^a=sendrecv/m, 'the resume answered sendrecv');
  });
});
