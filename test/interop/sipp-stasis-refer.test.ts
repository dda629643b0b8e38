// A blind REFER from a SIP phone whose channel is in an application's mixing bridge, with Asterisk's
// default transfer handling (no PJSIP_TRANSFER_HANDLING(ari-only)), against the capture of Asterisk
// 22.10.1 (docs/sip.md "Transfers (REFER)"): a Local `;1` enters the application (StasisStart with
// replace_channel = the transferer) and takes the transferer's seat (ChannelLeftBridge, then
// ChannelEnteredBridge), BridgeBlindTransfer (not ChannelTransfer) names the transferer, the
// transferee, the `;1` and the bridge; the phone gets 202, NOTIFY 100 (active) and 200 (terminated)
// at once; the `;2` runs the dialplan at Refer-To's user; the transferer stays in the application
// until its phone's BYE. SIPp alice is the transferer (refer-notify-sequence.xml, NOTIFYs read from
// its trace), SIPp bob the other party (answer-incoming.xml), originated by the test into the bridge.
// A raw phone checks the rest: a target that does not exist gets 404 (no 202, nothing moves), and a
// transferer whose phone never hangs up is hung up 60 s after the REFER (our BYE, StasisEnd).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { RawPhone } from './raw-phone.ts';
import { receivedNotifies } from './sipp-trace.ts';
import { HAVE_SIPP, HAVE_SOX, nextEvent, randomPort, sipp, sippPhones, sippServerInSuite, startSippServer, writeSippTone, type Json } from './sipp-peer.ts';

const SKIP = !HAVE_SIPP ? 'sipp is not installed' : !HAVE_SOX ? 'sox is not installed' : false;
const BOB_PORT = randomPort();

const DIALPLAN = [
  '[phones]',
  'exten => 500,1,Stasis(desk)',
  ' same => n,Hangup()',
  // The transfer's target: the `;2` answers and waits (what it does is not the transfer's business).
  'exten => 260,1,Answer()',
  ' same => n,Wait(30)',
  ' same => n,Hangup()',
  '',
].join('\n');

const suite = sippServerInSuite(SKIP, async () => {
  const started = await startSippServer(
    'stasis-refer',
    DIALPLAN,
    sippPhones({ alice: undefined, bob: BOB_PORT }),
    'desk',
  );
  writeSippTone(started.work, 1000, 4, 0.5);
  return started;
});

const ari = (path: string, method = 'POST') => suite.server.ari(path, { method });

/**
 * After alice's call reached the application (not yet answered): a mixing bridge, bob originated
 * into the application, both in the bridge, then alice answered (her REFER follows her ACK at once).
 */
async function aliceAndBobBridged(): Promise<{ aliceId: string; bobId: string; bridge: Json }> {
  const aliceStart = await nextEvent(suite.events, (e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith('PJSIP/alice-'), 20_000);
  const aliceId = String(aliceStart.channel.id);
  const bridge = (await (await ari('/bridges?type=mixing')).json()) as Json;
  const originated = (await (await ari('/channels?endpoint=PJSIP/bob&app=desk')).json()) as Json;
  const bobId = String(originated.id);
  await nextEvent(suite.events, (e) => e.type === 'StasisStart' && e.channel?.id === bobId, 20_000);
  assert.equal((await ari(`/bridges/${bridge.id}/addChannel?channel=${bobId}`)).status, 204);
  assert.equal((await ari(`/bridges/${bridge.id}/addChannel?channel=${aliceId}`)).status, 204);
  assert.equal((await ari(`/channels/${aliceId}/answer`)).status, 204);
  return { aliceId, bobId, bridge };
}

describe('a blind REFER from a channel in a Stasis bridge: Asterisk\'s default handling (captured)', { skip: SKIP }, () => {
  test('a Local ;1 takes the transferer\'s seat (StasisStart replace_channel), BridgeBlindTransfer, NOTIFY 100 and 200 at once; the transferer stays until its BYE', { timeout: 120_000 }, async () => {
    const trace = join(suite.work, 'alice.log');
    const bob = sipp('answer-incoming.xml', [], { cwd: suite.work, port: BOB_PORT, timeoutMs: 60_000 });
    await bob.listening;
    const alice = sipp('refer-notify-sequence.xml', [suite.target(), '-s', '500', '-set', 'caller', 'alice', '-set', 'target', '260', '-set', 'ender', 'phone', '-trace_msg', '-message_file', trace], { cwd: suite.work, timeoutMs: 60_000 });
    const { aliceId, bobId, bridge } = await aliceAndBobBridged();

    // Everything the application receives until the transfer event, in order.
    const seen: Json[] = [];
    for (;;) {
      const event = await nextEvent(suite.events, () => true, 30_000);
      seen.push(event);
      if (event.type === 'BridgeBlindTransfer') break;
    }
    assert.equal(seen.filter((e) => e.type === 'ChannelTransfer').length, 0, 'no ChannelTransfer: the core carries the transfer out');
    const transfer = seen.at(-1)!;
    const one = transfer.replace_channel as Json;
    assert.match(String(one.name), /^Local\/260@phones-[0-9a-f]+;1$/);
    const index = (match: (e: Json) => boolean, what: string): number => {
      const found = seen.findIndex(match);
      assert.ok(found >= 0, `${what} (got ${seen.map((e) => e.type).join(', ')})`);
      return found;
    };
    const created = index((e) => e.type === 'ChannelCreated' && e.channel.id === one.id, 'ChannelCreated ;1');
    const start = index((e) => e.type === 'StasisStart' && e.channel.id === one.id, 'StasisStart ;1');
    const left = index((e) => e.type === 'ChannelLeftBridge' && e.channel.id === aliceId, 'ChannelLeftBridge alice');
    const entered = index((e) => e.type === 'ChannelEnteredBridge' && e.channel.id === one.id, 'ChannelEnteredBridge ;1');
    assert.ok(created < start && start < left && left < entered && entered < seen.length - 1, 'created, StasisStart, left, entered, then BridgeBlindTransfer');
    // BLINDTRANSFER names the other party on both sides before the Local pair exists.
    const blind = (id: string) => seen.findIndex((e) => e.type === 'ChannelVarset' && e.channel?.id === id && e.variable === 'BLINDTRANSFER');
    assert.ok(blind(aliceId) >= 0 && blind(aliceId) < created, 'BLINDTRANSFER on alice first');
    assert.ok(blind(bobId) >= 0 && blind(bobId) < created, 'BLINDTRANSFER on bob first');
    assert.equal(seen[start]!.replace_channel?.id, aliceId, 'StasisStart names the transferer as replace_channel');
    assert.equal(seen[start]!.application, 'desk');
    const variables = seen.filter((e) => e.type === 'ChannelVarset' && e.channel?.id === one.id).map((e) => `${e.variable}=${e.value}`);
    assert.ok(variables.includes('SIPTRANSFER=yes'), variables.join(' '));
    assert.ok(variables.includes('SIPREFERRINGCONTEXT=phones'), variables.join(' '));
    assert.ok(variables.some((v) => v.startsWith('BLINDTRANSFER=PJSIP/alice-')), variables.join(' '));

    // BridgeBlindTransfer in Asterisk's order of fields, with the bridge as it is after the swap.
    assert.deepEqual(
      Object.keys(transfer).filter((key) => !['asterisk_id', 'application', 'sequence'].includes(key)),
      ['type', 'timestamp', 'channel', 'exten', 'context', 'result', 'is_external', 'transferee', 'replace_channel', 'bridge'],
    );
    assert.equal(transfer.channel.id, aliceId);
    assert.equal(transfer.transferee.id, bobId);
    assert.equal(transfer.exten, '260');
    assert.equal(transfer.context, 'phones');
    assert.equal(transfer.result, 'Success');
    assert.equal(transfer.is_external, true);
    assert.equal(transfer.bridge.id, bridge.id);
    assert.deepEqual([...transfer.bridge.channels].sort(), [bobId, String(one.id)].sort());

    // alice hangs up after the terminated NOTIFY; her channel was still in the application until then.
    const aliceRun = await alice.done;
    assert.equal(aliceRun.status, 0, aliceRun.output);
    assert.deepEqual(receivedNotifies(trace), [
      { frag: 'SIP/2.0 100 Trying', state: receivedNotifies(trace)[0]!.state },
      { frag: 'SIP/2.0 200 OK', state: 'terminated;reason=noresource' },
    ]);
    assert.match(receivedNotifies(trace)[0]!.state, /^active;expires=\d+$/);
    // The transferer left the bridge but not the application: its StasisEnd comes with its BYE.
    assert.equal(seen.filter((e) => e.type === 'StasisEnd' && e.channel?.id === aliceId).length, 0, 'alice is still in the application at the transfer');
    const later: Json[] = [];
    for (;;) {
      const event = await nextEvent(suite.events, () => true, 30_000);
      later.push(event);
      if (event.type === 'StasisEnd' && event.channel?.id === aliceId) break;
    }
    // The `;2` runs the dialplan at the target: its Answer() brings the seated `;1` up.
    if (!later.some((e) => e.type === 'ChannelStateChange' && e.channel?.id === one.id && e.channel.state === 'Up')) {
      await nextEvent(suite.events, (e) => e.type === 'ChannelStateChange' && e.channel?.id === one.id && e.channel.state === 'Up', 20_000);
    }
    assert.equal((await ari(`/channels/${bobId}`, 'DELETE')).status, 204);
    assert.equal((await ari(`/channels/${one.id}`, 'DELETE')).status, 204);
    await ari(`/bridges/${bridge.id}`, 'DELETE');
    const bobRun = await bob.done;
    assert.equal(bobRun.status, 0, bobRun.output);
  });

  test('a target that does not exist: 404 and nothing moves; then a transfer and a phone that never hangs up: Patchbay\'s BYE 60 s after the REFER, StasisEnd', { timeout: 180_000 }, async () => {
    const bob = sipp('answer-incoming.xml', [], { cwd: suite.work, port: BOB_PORT, timeoutMs: 150_000 });
    await bob.listening;
    const alice = new RawPhone('alice');
    await alice.open();
    alice.serverPort = suite.server.core.pjsip.port;
    try {
      const calling = alice.call('500');
      const { aliceId, bobId, bridge } = await aliceAndBobBridged();
      const { dialog, final } = await calling;
      assert.match(final, /^SIP\/2\.0 200/);

      assert.match(await alice.request(dialog, 'REFER', ['Refer-To: <sip:999@127.0.0.1>']), /^SIP\/2\.0 404/);
      const afterRefused = (await (await ari(`/bridges/${bridge.id}`, 'GET')).json()) as Json;
      assert.deepEqual([...afterRefused.channels].sort(), [aliceId, bobId].sort(), 'nobody moved');

      const referredAt = Date.now();
      assert.match(await alice.request(dialog, 'REFER', ['Refer-To: <sip:260@127.0.0.1>']), /^SIP\/2\.0 202/);
      const transfer = await nextEvent(suite.events, (e) => e.type === 'BridgeBlindTransfer', 20_000);
      assert.equal(transfer.channel.id, aliceId);
      assert.equal(transfer.result, 'Success');
      assert.match(await alice.nextMessage(/^NOTIFY /, 10_000), /\r\n\r\nSIP\/2\.0 100 Trying/);
      assert.match(await alice.nextMessage(/^NOTIFY /, 10_000), /\r\n\r\nSIP\/2\.0 200 OK/);

      // The phone says nothing more: Asterisk's deferred session end sends a BYE 60 s after the REFER.
      const bye = await alice.nextMessage(/^BYE /, 90_000, (m) => m.includes(dialog.callId));
      assert.ok(Date.now() - referredAt >= 55_000, `the BYE came ${Date.now() - referredAt} ms after the REFER`);
      assert.ok(bye.length > 0);
      const end = await nextEvent(suite.events, (e) => e.type === 'StasisEnd' && e.channel?.id === aliceId, 20_000);
      assert.equal(end.channel.id, aliceId);

      assert.equal((await ari(`/channels/${bobId}`, 'DELETE')).status, 204);
      // The `;1` ended 30 s in, with its `;2`'s Hangup().
      await ari(`/channels/${transfer.replace_channel.id}`, 'DELETE');
      await ari(`/bridges/${bridge.id}`, 'DELETE');
      const bobRun = await bob.done;
      assert.equal(bobRun.status, 0, bobRun.output);
    } finally {
      alice.close();
    }
  });
});
