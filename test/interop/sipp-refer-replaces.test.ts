// REFERs with Replaces that Stop 38 left to the application, done as Asterisk 22's res_pjsip_refer:
// - Replaces naming a dialog Patchbay does not have (the transfer target talks to another server):
//   a blind transfer to the `external_replaces` extension of the transfer context (404 without
//   one), whose dialplan finds the Replaces in SIPREPLACESHDR; a PJSIP channel it dials sends it as
//   the INVITE's Replaces header, with the REFER's Referred-By (res_pjsip_refer's outgoing supplement).
// - ATTENDED_TRANSFER_COMPLETE_SOUND (named on the second leg, else the first): played to the
//   target when an attended REFER completes, as ast_bridge_transfer_attended does.
// - The transferer's phone hanging up (BYE) before the subscription's last NOTIFY: the NOTIFYs go on
//   in the dialog after it (the subscription keeps pjsip's dialog), as in Asterisk.
// SIPp bob answers as the transferee; alice (the transferer) and carol (the target) are raw phones,
// which hold a dialog across several requests and show every header they receive.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { sipHeader } from '../helpers/sip-inbox.ts';
import { RawPhone } from './raw-phone.ts';
import { endTransferLink } from './stasis-transfer-cleanup.ts';
import { HAVE_SIPP, HAVE_SOX, nextEvent, randomPort, sipp, sippListening, sippPhones, sippServerInSuite, startSippServer, waitFor, writeSippTone, type Json } from './sipp-peer.ts';

const SKIP = !HAVE_SIPP ? 'sipp is not installed' : !HAVE_SOX ? 'sox is not installed' : false;
const BOB_PORT = randomPort();
const CAROL_PORT = BOB_PORT === 39999 ? 20000 : BOB_PORT + 1;

const DIALPLAN = [
  '[phones]',
  'exten => 500,1,Stasis(desk)',
  ' same => n,Hangup()',
  'exten => 600,1,Dial(PJSIP/bob)',
  ' same => n,Hangup()',
  // The transferee waits (no news for the subscription), then hears a file (its 200).
  'exten => 260,1,Wait(5)',
  ' same => n,Playback(beep)',
  ' same => n,Hangup()',
  // The second call of an attended transfer names the sound its target hears when it completes.
  'exten => 610,1,Set(ATTENDED_TRANSFER_COMPLETE_SOUND=xferdone)',
  ' same => n,Dial(PJSIP/carol)',
  ' same => n,Hangup()',
  'exten => external_replaces,1,Dial(PJSIP/carol)',
  ' same => n,Hangup()',
  '[nowhere]',
  'exten => 1,1,Hangup()',
  '',
].join('\n');

const suite = sippServerInSuite(SKIP, async () => {
  const started = await startSippServer('refer-replaces', DIALPLAN, sippPhones({ alice: undefined, bob: BOB_PORT, carol: CAROL_PORT }), 'desk', (work) => {
    // xferdone: a 600 Hz tone, told apart from bob's 1000 Hz.
    mkdirSync(join(work, 'sounds', 'en'), { recursive: true });
    spawnSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', join(work, 'sounds', 'en', 'xferdone.wav'), 'synth', '1.5', 'sine', '600', 'vol', '0.5']);
    return { dirs: { sounds: [join(work, 'sounds')] } };
  });
  writeSippTone(started.work, 1000, 4, 0.5);
  return started;
});

const ari = (path: string, method = 'POST') => suite.server.ari(path, { method });

/** Every event read so far, in order: a wait looks there first (channel ids are unique). */
const consumed: Json[] = [];

async function eventMatching(match: (e: Json) => boolean, timeoutMs = 30_000, from = 0): Promise<Json> {
  const found = consumed.slice(from).find(match);
  if (found) return found;
  for (;;) {
    const event = await nextEvent(suite.events, () => true, timeoutMs);
    consumed.push(event);
    if (match(event)) return event;
  }
}

async function phone(user: string, port = 0): Promise<RawPhone> {
  const raw = new RawPhone(user);
  await raw.open(port);
  raw.serverPort = suite.server.core.pjsip.port;
  return raw;
}

/** SIPp bob answering on BOB_PORT, awaited until it holds its port, and the raw phones alice and carol. */
async function bobAliceCarol(): Promise<{ bob: ReturnType<typeof sipp>; alice: RawPhone; carol: RawPhone }> {
  const bob = sipp('answer-incoming.xml', [], { cwd: suite.work, port: BOB_PORT, timeoutMs: 90_000 });
  await sippListening(BOB_PORT);
  return { bob, alice: await phone('alice'), carol: await phone('carol', CAROL_PORT) };
}

describe('REFER with Replaces naming a dialog on another server: a blind transfer to external_replaces', { skip: SKIP }, () => {
  test('in a Stasis bridge: 404 without external_replaces in the transfer context; with it, BridgeBlindTransfer to external_replaces, NOTIFY 100 and 200, and the target\'s INVITE carries the Replaces and Referred-By', { timeout: 150_000 }, async () => {
    const from = consumed.length;
    const { bob, alice, carol } = await bobAliceCarol();
    try {
      const calling = alice.call('500');
      const start = await eventMatching((e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith('PJSIP/alice-'), 20_000, from);
      const aliceId = String(start.channel.id);
      const bridge = (await (await ari('/bridges?type=mixing')).json()) as Json;
      const originated = (await (await ari('/channels?endpoint=PJSIP/bob&app=desk')).json()) as Json;
      const bobId = String(originated.id);
      await eventMatching((e) => e.type === 'StasisStart' && e.channel?.id === bobId, 20_000, from);
      assert.equal((await ari(`/bridges/${bridge.id}/addChannel?channel=${bobId}`)).status, 204);
      assert.equal((await ari(`/bridges/${bridge.id}/addChannel?channel=${aliceId}`)).status, 204);
      assert.equal((await ari(`/channels/${aliceId}/answer`)).status, 204);
      const a = await calling;
      assert.match(a.final, /^SIP\/2\.0 200/);

      const replaces = 'call-7@elsewhere.example;to-tag=far;from-tag=near';
      const referTo = `Refer-To: <sip:carol@192.0.2.10?Replaces=${encodeURIComponent(replaces)}>`;
      // A transfer context without external_replaces: 404, and nothing moves.
      assert.equal((await ari(`/channels/${aliceId}/variable?variable=TRANSFER_CONTEXT&value=nowhere`)).status, 204);
      assert.match(await alice.request(a.dialog, 'REFER', [referTo]), /^SIP\/2\.0 404/);
      assert.equal((await ari(`/channels/${aliceId}/variable?variable=TRANSFER_CONTEXT&value=phones`)).status, 204);

      const referred = Date.now();
      const answer = await alice.request(a.dialog, 'REFER', [referTo, 'Referred-By: <sip:alice@127.0.0.1>']);
      assert.match(answer, /^SIP\/2\.0 202/);
      const transfer = await eventMatching((e) => e.type === 'BridgeBlindTransfer' && e.channel?.id === aliceId, 30_000, from);
      assert.deepEqual([transfer.exten, transfer.context, transfer.result, transfer.is_external], ['external_replaces', 'phones', 'Success', true]);
      assert.equal(transfer.transferee.id, bobId);
      assert.match(String(transfer.replace_channel.name), /^Local\/external_replaces@phones-[0-9a-f]+;1$/);
      const seen = consumed.slice(from);
      assert.equal(seen.filter((e) => e.type === 'ChannelTransfer').length, 0, 'no ChannelTransfer: the core carries the transfer out');

      // The phone's subscription: 100 (active), 200 (terminated).
      const first = await alice.nextMessage(/^NOTIFY /, 20_000);
      const last = await alice.nextMessage(/^NOTIFY /, 20_000);
      assert.match(first, /^SIP\/2\.0 100 Trying/m);
      assert.match(sipHeader(first, 'subscription-state') ?? '', /^active;expires=\d+$/);
      assert.match(last, /^SIP\/2\.0 200 OK/m);
      assert.equal(sipHeader(last, 'subscription-state'), 'terminated;reason=noresource');

      // external_replaces dials carol: her INVITE names the dialog to replace and who referred.
      const invite = await carol.nextMessage(/^INVITE /, 30_000, (m) => !/^To:[^\r\n]*;tag=/im.test(m));
      assert.equal(sipHeader(invite, 'replaces'), replaces, invite);
      assert.equal(sipHeader(invite, '(?:referred-by|b)'), '<sip:alice@127.0.0.1>');
      // The Local ;2 that ran external_replaces carries what res_pjsip_refer set for its dialplan.
      const vars = consumed.slice(from).filter((e) => e.type === 'ChannelVarset' && e.channel?.id === transfer.replace_channel.id);
      const value = (name: string) => vars.find((e) => e.variable === name)?.value;
      assert.equal(value('__SIPREPLACESHDR'), replaces);
      assert.equal(value('SIPREFERTOHDR'), 'sip:carol@192.0.2.10', 'the Refer-To URI without its headers');
      assert.ok(Date.now() - referred < 60_000);

      // alice hangs up as a desk phone does; the rest is cleaned up.
      assert.match(await alice.request(a.dialog, 'BYE'), /^SIP\/2\.0 200/);
      await eventMatching((e) => e.type === 'StasisEnd' && e.channel?.id === aliceId, 30_000, from);
      assert.equal((await ari(`/channels/${transfer.replace_channel.id}`, 'DELETE')).status, 204);
      await ari(`/channels/${bobId}`, 'DELETE');
      await ari(`/bridges/${bridge.id}`, 'DELETE');
      const bobRun = await bob.done;
      assert.equal(bobRun.status, 0, bobRun.output);
    } finally {
      alice.close();
      carol.close();
    }
  });
});

describe('the transferer\'s BYE before the last NOTIFY', { skip: SKIP }, () => {
  test('a blind REFER in a Dial() call, the phone hangs up at once: its BYE gets 200, and NOTIFY 100 and 200 still come in the dialog once the transferee has news', { timeout: 150_000 }, async () => {
    const from = consumed.length;
    const bob = sipp('answer-incoming.xml', [], { cwd: suite.work, port: BOB_PORT, timeoutMs: 90_000 });
    await sippListening(BOB_PORT);
    const alice = await phone('alice');
    try {
      const a = await alice.call('600');
      assert.match(a.final, /^SIP\/2\.0 200/);
      assert.match(await alice.request(a.dialog, 'REFER', ['Refer-To: <sip:260@127.0.0.1>']), /^SIP\/2\.0 202/);
      // The transferee waits 5 s in the dialplan: the phone's BYE comes before any news.
      assert.match(await alice.request(a.dialog, 'BYE'), /^SIP\/2\.0 200/);
      const first = await alice.nextMessage(/^NOTIFY /, 30_000);
      const last = await alice.nextMessage(/^NOTIFY /, 30_000);
      assert.match(first, /^SIP\/2\.0 100 Trying/m);
      assert.match(last, /^SIP\/2\.0 200 OK/m);
      assert.equal(sipHeader(last, 'subscription-state'), 'terminated;reason=noresource');
      assert.equal(sipHeader(last, '(?:call-id|i)'), a.dialog.callId);
      const played = await eventMatching((e) => e.type === 'ChannelDialplan' && e.dialplan_app === 'Playback' && String(e.channel?.name).startsWith('PJSIP/bob-'), 30_000, from);
      await ari(`/channels/${played.channel.id}`, 'DELETE');
      const bobRun = await bob.done;
      assert.equal(bobRun.status, 0, bobRun.output);
    } finally {
      alice.close();
    }
  });
});

/** How many 20 ms frames of `samples` carry `hz` loudly (amplitude over 1000). */
function framesOf(samples: Int16Array, hz: number): number {
  let frames = 0;
  for (let start = 0; start + 160 <= samples.length; start += 160) if (Math.sqrt(2 * goertzelPower(samples, hz, 8000, start, start + 160)) > 1000) frames++;
  return frames;
}

describe('ATTENDED_TRANSFER_COMPLETE_SOUND', { skip: SKIP }, () => {
  test('an attended REFER between two Dial() calls: the target hears the sound the second leg names, then the transferee', { timeout: 150_000 }, async () => {
    const from = consumed.length;
    const { bob, alice, carol } = await bobAliceCarol();
    try {
      const a = await alice.call('600');
      assert.match(a.final, /^SIP\/2\.0 200/);
      const b = await alice.call('610');
      assert.match(b.final, /^SIP\/2\.0 200/);
      const replaces = encodeURIComponent(`${b.dialog.callId};to-tag=${b.dialog.remoteTag};from-tag=${b.dialog.localTag}`);
      const referred = Date.now();
      assert.match(await alice.request(a.dialog, 'REFER', [`Refer-To: <sip:610@127.0.0.1?Replaces=${replaces}>`]), /^SIP\/2\.0 202/);
      const transfer = await eventMatching((e) => e.type === 'BridgeAttendedTransfer', 30_000, from);
      assert.deepEqual([transfer.result, transfer.destination_type], ['Success', 'bridge']);
      assert.match(String(transfer.transfer_target.name), /^PJSIP\/carol-/);

      // carol hears the 600 Hz sound (1.5 s; counted from half a second of it), then bob's 1000 Hz.
      await waitFor('the completion sound at carol', () => (framesOf(carol.audioBetween(referred, Date.now()), 600) >= 25 ? true : undefined), 30_000);
      await waitFor('bob\'s tone at carol after it', () => (framesOf(carol.audioBetween(referred, Date.now()), 1000) >= 25 ? true : undefined), 30_000);
      const heard = carol.audioBetween(referred, Date.now());
      const firstOf = (hz: number) => {
        for (let start = 0; start + 160 <= heard.length; start += 160) if (Math.sqrt(2 * goertzelPower(heard, hz, 8000, start, start + 160)) > 1000) return start;
        return Infinity;
      };
      assert.ok(firstOf(600) < firstOf(1000), 'the sound comes first');

      // The second call gets our BYE; the first is the phone's to end. bob and carol talk on.
      await alice.nextMessage(/^BYE /, 20_000, (m) => m.includes(b.dialog.callId));
      assert.match(await alice.request(a.dialog, 'BYE'), /^SIP\/2\.0 200/);
      assert.equal((await ari(`/channels/${transfer.transfer_target.id}`, 'DELETE')).status, 204);
      const bobRun = await bob.done;
      assert.equal(bobRun.status, 0, bobRun.output);
    } finally {
      alice.close();
      carol.close();
    }
  });
  test('an attended REFER between application bridges (a Local link): the target hears the sound the first leg names', { timeout: 150_000 }, async () => {
    const from = consumed.length;
    const { bob, alice, carol } = await bobAliceCarol();
    try {
      // Each of alice's calls into the application, bridged with bob then carol.
      const bridged = async (callee: string, known: ReadonlySet<string>) => {
        const calling = alice.call('500');
        const start = await eventMatching((e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith('PJSIP/alice-') && !known.has(e.channel.id), 20_000, from);
        const aliceId = String(start.channel.id);
        const bridge = (await (await ari('/bridges?type=mixing')).json()) as Json;
        const originated = (await (await ari(`/channels?endpoint=PJSIP/${callee}&app=desk`)).json()) as Json;
        await eventMatching((e) => e.type === 'StasisStart' && e.channel?.id === originated.id, 20_000, from);
        assert.equal((await ari(`/bridges/${bridge.id}/addChannel?channel=${originated.id}`)).status, 204);
        assert.equal((await ari(`/bridges/${bridge.id}/addChannel?channel=${aliceId}`)).status, 204);
        assert.equal((await ari(`/channels/${aliceId}/answer`)).status, 204);
        const call = await calling;
        assert.match(call.final, /^SIP\/2\.0 200/);
        return { aliceId, calleeId: String(originated.id), bridge, dialog: call.dialog };
      };
      const first = await bridged('bob', new Set());
      const second = await bridged('carol', new Set([first.aliceId]));
      // Named on the first leg only: Asterisk looks there when the second leg names none.
      assert.equal((await ari(`/channels/${first.aliceId}/variable?variable=ATTENDED_TRANSFER_COMPLETE_SOUND&value=xferdone`)).status, 204);

      const replaces = encodeURIComponent(`${second.dialog.callId};to-tag=${second.dialog.remoteTag};from-tag=${second.dialog.localTag}`);
      const referred = Date.now();
      assert.match(await alice.request(first.dialog, 'REFER', [`Refer-To: <sip:500@127.0.0.1?Replaces=${replaces}>`]), /^SIP\/2\.0 202/);
      const transfer = await eventMatching((e) => e.type === 'BridgeAttendedTransfer', 30_000, from);
      assert.deepEqual([transfer.result, transfer.destination_type], ['Success', 'link']);
      await waitFor('the completion sound at carol', () => (framesOf(carol.audioBetween(referred, Date.now()), 600) >= 25 ? true : undefined), 30_000);

      await alice.nextMessage(/^BYE /, 20_000, (m) => m.includes(second.dialog.callId));
      assert.match(await alice.request(first.dialog, 'BYE'), /^SIP\/2\.0 200/);
      await eventMatching((e) => e.type === 'StasisEnd' && e.channel?.id === first.aliceId, 30_000, from);
      await endTransferLink(suite, transfer, [first, second], bob);
    } finally {
      alice.close();
      carol.close();
    }
  });
});
