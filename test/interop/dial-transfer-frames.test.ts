// What a subscribe-all ARI application sees of SIP phones in a Dial() call, asserted as captured
// against Asterisk 22.10.1 (xferfid36; docs/differences.md "Transfers and connected line in Dial()"):
// - Dial-time identity: the callee shows the extension dialed as its caller id and the caller as
//   its connected line (ChannelDialplan already shows both, then ChannelCallerId and
//   ChannelConnectedLine), then the Dial event, then the caller's ChannelConnectedLine naming
//   the extension;
// - hold from the caller: ChannelHold (musicclass default) and ChannelUnhold on its channel;
// - a blind transfer by the callee: BridgeBlindTransfer in Asterisk's field order, with the basic
//   bridge as it was before the transfer (both parties); BLINDTRANSFER on both parties;
// - an attended transfer (REFER with Replaces naming the phone's second call):
//   BridgeAttendedTransfer with both transferer bridges, destination_bridge the second one,
//   is_external false.
// The phones are raw-phone.ts (several dialogs and a REFER with Replaces from one phone).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { RawPhone, type PhoneDialog } from './raw-phone.ts';
import { answeredInvite, channelsDrained, eventsUntilMatch } from './raw-phone-suite.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

let work: string;
let server: TestServer;
let events: EventSocket;
const alice = new RawPhone('alice');
const carol = new RawPhone('carol');
const dave = new RawPhone('dave');

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'patchbay-dial-xfer-'));
  const dialplanFile = join(work, 'extensions.conf');
  writeFileSync(dialplanFile, ['[phones]', 'exten => 200,1,Dial(PJSIP/carol,20)', ' same => n,Hangup()', 'exten => 400,1,Dial(PJSIP/dave,20)', ' same => n,Hangup()', ''].join('\n'));
  for (const phone of [alice, carol, dave]) await phone.open();
  const endpoint = (name: string) => ({ context: 'phones', allow: 'ulaw', aors: name });
  server = await startTestServer({
    config_objects: {
      res_pjsip: {
        endpoint: { alice: endpoint('alice'), carol: endpoint('carol'), dave: endpoint('dave') },
        aor: Object.fromEntries([alice, carol, dave].map((phone) => [phone.user, { contact: `sip:${phone.user}@127.0.0.1:${phone.sipPort}` }])),
      },
    },
    dialplan: { file: dialplanFile },
  } as never);
  for (const phone of [alice, carol, dave]) phone.serverPort = server.core.pjsip.port;
  events = await server.events('app=watcher&subscribeAll=true');
});

after(async () => {
  for (const phone of [alice, carol, dave]) phone.close();
  await events.close();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});

const eventsUntil = (match: (event: Json) => boolean, timeoutMs = 15_000): Promise<Json[]> => eventsUntilMatch(events, match, timeoutMs);

const named = (prefix: string) => (channel: Json | undefined) => String(channel?.name ?? '').startsWith(prefix);

const answered = (phone: RawPhone): Promise<PhoneDialog> => answeredInvite(phone, 10_000);

/** Waits until the channels of this test are gone, so the next one starts from nothing. */
const drained = (): Promise<void> => channelsDrained(server, events, 15_000);

describe('Dial() between SIP phones: identity, hold and transfers as Asterisk 22 raises them', () => {
  // Each test starts with no channel and no event left from the one before (even a failed one).
  beforeEach(drained);

  test('Dial-time connected line: the callee shows the extension and the caller, then Dial, then the caller sees the extension; hold and unhold', { timeout: 60_000 }, async () => {
    const daveIn = answered(dave);
    const call = alice.call('400');
    const frames = await eventsUntil((e) => e.type === 'ChannelConnectedLine' && named('PJSIP/alice-')(e.channel));
    const fromDave = frames.findIndex((e) => e.type === 'ChannelCreated' && named('PJSIP/dave-')(e.channel));
    assert.ok(fromDave >= 0, 'dave was created');
    const sequence = frames.slice(fromDave).filter((e) => e.type !== 'ChannelVarset' && e.type !== 'DeviceStateChanged');
    assert.deepEqual(sequence.map((e) => `${e.type} ${String(e.channel?.name ?? e.peer?.name).replace(/-[0-9a-f]+$/, '')}`), [
      'ChannelCreated PJSIP/dave',
      'ChannelDialplan PJSIP/dave',
      'ChannelCallerId PJSIP/dave',
      'ChannelConnectedLine PJSIP/dave',
      'Dial PJSIP/dave',
      'ChannelConnectedLine PJSIP/alice',
    ]);
    const [, dialplan, callerId, connected, dial, callerSide] = sequence;
    for (const event of [dialplan, callerId, connected]) {
      assert.deepEqual([event.channel.caller.number, event.channel.caller.name, event.channel.connected.number, event.channel.connected.name], ['400', '', 'alice', ''], event.type);
    }
    assert.deepEqual([dialplan.channel.dialplan.app_name, dialplan.channel.dialplan.exten], ['AppDial', '400']);
    assert.deepEqual([callerId.caller_presentation, callerId.caller_presentation_txt], [0, 'Presentation Allowed, Not Screened']);
    assert.deepEqual(Object.keys(dial).filter((key) => key !== 'asterisk_id' && key !== 'application' && key !== 'sequence'), ['type', 'timestamp', 'dialstatus', 'forward', 'dialstring', 'caller', 'peer']);
    assert.deepEqual([dial.dialstatus, dial.forward, dial.dialstring], ['', '', 'dave']);
    assert.deepEqual([callerSide.channel.connected.number, callerSide.channel.connected.name], ['400', '']);
    await daveIn;
    const answeredDial = (await eventsUntil((e) => e.type === 'Dial' && e.dialstatus === 'ANSWER')).at(-1)!;
    assert.deepEqual([answeredDial.forward, answeredDial.dialstring], ['', ''], 'app_dial\'s outcome carries no dialstring');
    const { dialog, final } = await call;
    assert.match(final, /^SIP\/2\.0 200/);
    await eventsUntil((e) => e.type === 'ChannelEnteredBridge' && named('PJSIP/alice-')(e.channel));
    assert.match(await alice.reinvite(dialog, 'sendonly'), /^SIP\/2\.0 200/);
    const hold = (await eventsUntil((e) => e.type === 'ChannelHold')).at(-1)!;
    assert.ok(named('PJSIP/alice-')(hold.channel));
    assert.equal(hold.musicclass, 'default');
    assert.match(await alice.reinvite(dialog, 'sendrecv'), /^SIP\/2\.0 200/);
    const unhold = (await eventsUntil((e) => e.type === 'ChannelUnhold')).at(-1)!;
    assert.ok(named('PJSIP/alice-')(unhold.channel));
    assert.match(await alice.request(dialog, 'BYE'), /^SIP\/2\.0 200/);
    await eventsUntil((e) => e.type === 'ChannelDestroyed' && named('PJSIP/dave-')(e.channel));
    await dave.nextMessage(/^BYE /, 10_000);
    await drained();
  });

  test('blind transfer by the callee: BridgeBlindTransfer in Asterisk\'s field order with the bridge before the transfer; BLINDTRANSFER on both', { timeout: 60_000 }, async () => {
    const daveIn = answered(dave);
    const carolIn = answered(carol);
    const call = await alice.call('400');
    assert.match(call.final, /^SIP\/2\.0 200/);
    const daveDialog = await daveIn;
    const entered = (await eventsUntil((e) => e.type === 'ChannelEnteredBridge' && named('PJSIP/alice-')(e.channel))).at(-1)!;
    assert.match(await dave.request(daveDialog, 'REFER', ['Refer-To: <sip:200@127.0.0.1>', 'Referred-By: <sip:dave@127.0.0.1>']), /^SIP\/2\.0 202/);
    const frames = await eventsUntil((e) => e.type === 'BridgeBlindTransfer');
    const transfer = frames.at(-1)!;
    assert.deepEqual(Object.keys(transfer).filter((key) => key !== 'asterisk_id' && key !== 'application' && key !== 'sequence'), ['type', 'timestamp', 'channel', 'exten', 'context', 'result', 'is_external', 'transferee', 'bridge']);
    assert.deepEqual([transfer.exten, transfer.context, transfer.result, transfer.is_external], ['200', 'phones', 'Success', true]);
    assert.ok(named('PJSIP/dave-')(transfer.channel));
    assert.ok(named('PJSIP/alice-')(transfer.transferee));
    assert.equal(transfer.bridge.id, entered.bridge.id, 'the Dial() call\'s basic bridge');
    assert.deepEqual([transfer.bridge.bridge_class, transfer.bridge.bridge_type, transfer.bridge.channels.length], ['basic', 'mixing', 2]);
    const blind = (name: string) => frames.find((e) => e.type === 'ChannelVarset' && e.variable === 'BLINDTRANSFER' && named(name)(e.channel));
    assert.equal(blind('PJSIP/alice-')?.value, transfer.channel.name, 'the transferee names the transferer');
    assert.equal(blind('PJSIP/dave-')?.value, transfer.transferee.name, 'the transferer names the transferee');
    const marks = frames.filter((e) => (e.type === 'ChannelVarset' && /TRANSFER|^_*SIPREFER/.test(e.variable)) || e.type === 'ChannelUnhold').map((e) => `${e.type === 'ChannelUnhold' ? 'Unhold' : `${e.variable}=${String(e.value).replace(/-[0-9a-f]+$/, '')}`} ${String(e.channel.name).replace(/-[0-9a-f]+$/, '')}`);
    assert.deepEqual(marks, [
      'Unhold PJSIP/dave',
      'BLINDTRANSFER=PJSIP/dave PJSIP/alice',
      'BLINDTRANSFER=PJSIP/alice PJSIP/dave',
      'SIPTRANSFER=yes PJSIP/alice',
      'SIPREFERRINGCONTEXT=phones PJSIP/alice',
      '__SIPREFERREDBYHDR=<sip:dave@127.0.0.1> PJSIP/alice',
      'SIPREFERTOHDR=sip:200@127.0.0.1 PJSIP/alice',
    ], 'what res_pjsip_refer and the bridging core leave, in Asterisk\'s order');
    // The transferer is destroyed with no hang-up request of its own, as Asterisk does.
    const untilDestroyed = await eventsUntil((e) => e.type === 'ChannelDestroyed' && e.channel?.id === transfer.channel.id);
    assert.equal(untilDestroyed.filter((e) => e.type === 'ChannelHangupRequest' && e.channel?.id === transfer.channel.id).length, 0);
    assert.equal(untilDestroyed.at(-1)!.cause, 16);
    await carolIn;
    await eventsUntil((e) => e.type === 'Dial' && e.dialstatus === 'ANSWER' && named('PJSIP/carol-')(e.peer));
    assert.match(await alice.request(call.dialog, 'BYE'), /^SIP\/2\.0 200/);
    await carol.nextMessage(/^BYE /, 10_000);
    await drained();
  });

  test('attended transfer: BridgeAttendedTransfer with both transferer bridges, destination_bridge the second, is_external false', { timeout: 60_000 }, async () => {
    const daveIn = answered(dave);
    const first = await alice.call('400');
    assert.match(first.final, /^SIP\/2\.0 200/);
    const daveDialog = await daveIn;
    const firstBridge = (await eventsUntil((e) => e.type === 'ChannelEnteredBridge' && named('PJSIP/alice-')(e.channel))).at(-1)!.bridge;
    assert.match(await alice.reinvite(first.dialog, 'sendonly'), /^SIP\/2\.0 200/);
    const carolIn = answered(carol);
    const second = await alice.call('200');
    assert.match(second.final, /^SIP\/2\.0 200/);
    await carolIn;
    const secondBridge = (await eventsUntil((e) => e.type === 'ChannelEnteredBridge' && named('PJSIP/alice-')(e.channel))).at(-1)!.bridge;
    const replaces = encodeURIComponent(`${second.dialog.callId};to-tag=${second.dialog.remoteTag};from-tag=${second.dialog.localTag}`);
    assert.match(await alice.request(first.dialog, 'REFER', [`Refer-To: <sip:200@127.0.0.1?Replaces=${replaces}>`, 'Referred-By: <sip:alice@127.0.0.1>']), /^SIP\/2\.0 202/);
    const frames = await eventsUntil((e) => e.type === 'BridgeAttendedTransfer');
    const transfer = frames.at(-1)!;
    const marks = frames.filter((e) => (e.type === 'ChannelVarset' && e.variable === 'ATTENDEDTRANSFER') || e.type === 'ChannelUnhold').map((e) => `${e.type === 'ChannelUnhold' ? 'Unhold' : `ATTENDEDTRANSFER=${String(e.value).replace(/-[0-9a-f]+$/, '')}`} ${String(e.channel.name).replace(/-[0-9a-f]+$/, '')}`);
    assert.deepEqual(marks, ['Unhold PJSIP/alice', 'Unhold PJSIP/alice', 'ATTENDEDTRANSFER=PJSIP/dave PJSIP/alice', 'ATTENDEDTRANSFER=PJSIP/alice PJSIP/dave', 'ATTENDEDTRANSFER= PJSIP/dave'], 'the target gets no mark; the transferee\'s is cleared as it enters the target\'s bridge');
    const moves = frames.filter((e) => e.type === 'ChannelLeftBridge' || e.type === 'ChannelEnteredBridge' || e.type === 'BridgeDestroyed').map((e) => `${e.type} ${String(e.channel?.name ?? '').replace(/-[0-9a-f]+$/, '')} ${e.bridge.id === firstBridge.id ? 'first' : 'second'}`);
    assert.deepEqual(moves, [
      'ChannelLeftBridge PJSIP/dave first',
      'ChannelLeftBridge PJSIP/alice second',
      'ChannelEnteredBridge PJSIP/dave second',
      'ChannelLeftBridge PJSIP/alice first',
      'BridgeDestroyed  first',
    ]);
    assert.deepEqual(Object.keys(transfer).filter((key) => key !== 'asterisk_id' && key !== 'application' && key !== 'sequence'), [
      'type', 'timestamp', 'transferer_first_leg', 'transferer_second_leg', 'result', 'is_external', 'transferee', 'transfer_target',
      'transferer_first_leg_bridge', 'transferer_second_leg_bridge', 'destination_type', 'destination_bridge',
    ]);
    assert.deepEqual([transfer.result, transfer.is_external, transfer.destination_type], ['Success', false, 'bridge']);
    assert.ok(named('PJSIP/dave-')(transfer.transferee));
    assert.ok(named('PJSIP/carol-')(transfer.transfer_target));
    assert.equal(transfer.transferer_first_leg_bridge.id, firstBridge.id);
    assert.equal(transfer.transferer_second_leg_bridge.id, secondBridge.id);
    assert.equal(transfer.destination_bridge, secondBridge.id, 'the transferee joins the target\'s bridge (Asterisk\'s swap)');
    assert.deepEqual([transfer.transferer_first_leg_bridge.channels.length, transfer.transferer_second_leg_bridge.channels.length], [2, 2]);
    await alice.nextMessage(/^BYE /, 10_000, (m) => m.includes(second.dialog.callId));
    assert.match(await dave.request(daveDialog, 'BYE'), /^SIP\/2\.0 200/);
    await carol.nextMessage(/^BYE /, 10_000);
    await drained();
  });
});
