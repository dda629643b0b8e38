// The NOTIFYs a transferring phone gets for a blind transfer in a Dial() call, in Asterisk 22's
// order (res_pjsip_refer; docs/sip.md "Transfers (REFER)"): after the 202 nothing until the
// transferee's news, then "100 Trying" with it; ringing (180) keeps the subscription active; the
// outcome ends it: 200 when the transferee joins a bridge or is sent audio, 486 busy, 503 when it
// hangs up first. A Dial() run by the transferee passes the callee's ringing to it (answered as it
// is): 180. Then the phone hangs up itself; Patchbay, as Asterisk's deferred session termination,
// sends no BYE for 60 s after the REFER, and one without Reason only to a phone that never does.
// The transferor is SIPp (refer-notify-sequence.xml, the NOTIFYs read back from its message trace);
// one held-back check uses the raw test phone. The transferee is SIPp bob, called by Dial(); carol
// rings and answers the Dial() of extension 250; Ringing() at 210 is heard in band at once. The same scenario against Asterisk
// 22.10.1 gave the same NOTIFYs for each destination, and its BYE 60 s after the REFER (docs/sip.md).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { RawPhone } from './raw-phone.ts';
import { receivedMessages, receivedNotifies, receivedTimed } from './sipp-trace.ts';
import { HAVE_SIPP, HAVE_SOX, nextEvent, randomPort, sipp, sippPhones, sippServerInSuite, startSippServer, writeSippTone, type Json } from './sipp-peer.ts';

const SKIP = !HAVE_SIPP ? 'sipp is not installed' : !HAVE_SOX ? 'sox is not installed' : false;
const BOB_PORT = randomPort();
const CAROL_PORT = BOB_PORT + 9 > 65000 ? BOB_PORT - 9 : BOB_PORT + 9;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const DIALPLAN = [
  '[phones]',
  'exten => 300,1,Dial(PJSIP/bob,20)',
  ' same => n,Hangup()',
  // Ringing to the answered transferee: 180, and 200 at once with the ring tone heard in band.
  'exten => 210,1,Ringing()',
  ' same => n,Wait(20)',
  ' same => n,Hangup()',
  'exten => 220,1,Busy(2)',
  // Nothing said or played to the transferee before it hangs up: 503.
  'exten => 230,1,Wait(4)',
  ' same => n,Hangup()',
  // Audio to the transferee: 200.
  'exten => 240,1,Playback(tone)',
  ' same => n,Hangup()',
  // Only Dial(): carol's ringing reaches the (answered) transferee, then her answer.
  'exten => 250,1,Dial(PJSIP/carol,20)',
  ' same => n,Hangup()',
  // The application's transfers (ari-only handling).
  'exten => 500,1,Stasis(watcher)',
  ' same => n,Hangup()',
  '',
].join('\n');

const suite = sippServerInSuite(SKIP, async () => {
  const started = await startSippServer(
    'refer-notify',
    DIALPLAN,
    sippPhones({ alice: undefined, bob: BOB_PORT, carol: CAROL_PORT }),
    'watcher',
    (work) => {
      const sounds = join(work, 'sounds');
      mkdirSync(join(sounds, 'en'), { recursive: true });
      // 1 s of a 500 Hz tone, signed linear 8 kHz.
      const samples = new Int16Array(8000).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 500 * i) / 8000)));
      writeFileSync(join(sounds, 'en', 'tone.sln'), Buffer.from(samples.buffer));
      return { dirs: { sounds } };
    },
  );
  writeSippTone(started.work, 1000, 4, 0.5);
  return started;
});

const named = (prefix: string) => (channel: Json | undefined) => String(channel?.name ?? '').startsWith(prefix);

/**
 * SIPp alice calls 300 (bob answers), REFERs bob to `target`; her NOTIFYs, the transfer event and
 * the messages she received. `ender`: who ends her dialog after the last NOTIFY (she, or Patchbay).
 */
async function transferTo(
  target: string,
  extraPeers: Array<Promise<unknown>> = [],
  ender: 'phone' | 'server' = 'phone',
): Promise<{ notifies: Array<{ frag: string; state: string }>; transfer: Json; received: string[]; transferAt: number; aliceEndedAt: number }> {
  const trace = join(suite.work, `alice-${target}-${ender}.log`);
  const sippTimeout = ender === 'server' ? 120_000 : 40_000;
  const bob = sipp('answer-incoming.xml', [], { cwd: suite.work, port: BOB_PORT, timeoutMs: sippTimeout });
  await bob.listening;
  const alice = sipp('refer-notify-sequence.xml', [suite.target(), '-s', '300', '-set', 'caller', 'alice', '-set', 'target', target, '-set', 'ender', ender, '-trace_msg', '-message_file', trace], { cwd: suite.work, timeoutMs: sippTimeout });
  const transfer = await nextEvent(suite.events, (e) => e.type === 'BridgeBlindTransfer', 20_000);
  const transferAt = Date.now();
  const aliceRun = await alice.done;
  const aliceEndedAt = Date.now();
  // A failure tells what alice received, when, and SIPp's own account of it.
  if (aliceRun.status !== 0) {
    const failure = `${aliceRun.output}\nalice received, in order:\n${existsSync(trace) ? receivedTimed(trace).map(({ at, message }) => `at ${at % 100_000} ms: ${message}`).join('\n----\n') : '(no trace)'}`;
    // bob is ended before the failure is told, so that the next test finds his port free.
    const stranded = suite.server.core.channels.get(transfer.transferee.id);
    if (stranded && !stranded.hangingUp) stranded.hangup(16);
    await Promise.race([bob.done, sleep(10_000)]);
    assert.fail(failure);
  }
  // bob ends with the destination's Hangup() (or the test's), whichever the extension does.
  const bobChannel = suite.server.core.channels.get(transfer.transferee.id);
  if (bobChannel && !bobChannel.hangingUp) bobChannel.hangup(16);
  const [bobRun] = await Promise.all([bob.done, ...extraPeers]);
  assert.equal(bobRun.status, 0, bobRun.output);
  return { notifies: receivedNotifies(trace), transfer, received: receivedMessages(trace), transferAt, aliceEndedAt };
}

/**
 * SIPp carol runs `scenario` for the transferee's Dial() at 250: the transfer succeeds and alice hears
 * NOTIFY 100 and 180 (active), then 200 (terminated), whether carol answers or only rings.
 */
async function transferToCarolRunning(scenario: string): Promise<void> {
  const carol = sipp(scenario, [], { cwd: suite.work, port: CAROL_PORT, timeoutMs: 40_000 });
  await carol.listening;
  const { notifies, transfer } = await transferTo('250', [carol.done.then((run) => assert.equal(run.status, 0, run.output))]);
  assert.equal(transfer.result, 'Success');
  assert.deepEqual(notifies.map((n) => [n.frag, n.state.replace(/=\d+$/, '=N')]), [
    ['SIP/2.0 100 Trying', 'active;expires=N'],
    ['SIP/2.0 180 Ringing', 'active;expires=N'],
    ['SIP/2.0 200 OK', 'terminated;reason=noresource'],
  ]);
}

describe('REFER NOTIFYs of a blind transfer in a Dial() call, as Asterisk 22 sends them (SIPp transferor)', { skip: SKIP }, () => {
  test('Ringing() to the answered transferee: NOTIFY 100, 180 (active), then 200 (terminated) with the ring tone it hears in band, as Asterisk; the phone\'s BYE gets 200 and Patchbay sends none', { timeout: 90_000 }, async () => {
    const { notifies, transfer, received, transferAt, aliceEndedAt } = await transferTo('210');
    // The 200 came with the tone, long before the destination's Wait(20) ended.
    assert.ok(aliceEndedAt - transferAt < 15_000, `the transfer ended ${aliceEndedAt - transferAt} ms after it started`);
    assert.deepEqual(received.filter((m) => m.startsWith('BYE ')), [], 'the dialog is the phone\'s to end');
    assert.equal(transfer.result, 'Success');
    assert.ok(named('PJSIP/bob-')(transfer.transferee));
    assert.deepEqual(
      notifies.map((n) => n.frag),
      ['SIP/2.0 100 Trying', 'SIP/2.0 180 Ringing', 'SIP/2.0 200 OK'],
    );
    assert.match(notifies[0].state, /^active;expires=(59\d|600)$/);
    assert.match(notifies[1].state, /^active;expires=\d+$/);
    assert.equal(notifies[2].state, 'terminated;reason=noresource');
  });

  test('the transferee runs Dial() and carol rings, then answers: the ringing reaches the answered transferee, NOTIFY 100, 180 (active), then 200 (terminated)', { timeout: 90_000 }, async () => {
    await transferToCarolRunning('answer-incoming.xml');
  });

  test('carol rings and does not answer: the transferee hears ringback in band, which reports 200 while she still rings, as Asterisk', { timeout: 90_000 }, async () => {
    // Before the transferee's hangup (transferTo's) cancels her, carol has rung and alice heard the 200.
    await transferToCarolRunning('ring-wait-cancel.xml');
  });

  test('a phone that never hangs up: its channel is destroyed with the transfer (cause 16), Patchbay\'s BYE comes 60 s after the REFER, without Reason', { timeout: 180_000 }, async () => {
    // Every event, beside the queue transferTo() reads: when alice's channel went, and how.
    const seen: Array<{ at: number; event: Json }> = [];
    const record = (data: unknown): void => void seen.push({ at: Date.now(), event: JSON.parse(String(data)) as Json });
    suite.events.socket.on('message', record);
    const { notifies, received, transferAt, aliceEndedAt } = await transferTo('240', [], 'server').finally(() => suite.events.socket.off('message', record));
    const gone = seen.find(({ event }) => event.type === 'ChannelDestroyed' && named('PJSIP/alice-')(event.channel));
    assert.ok(gone, 'alice\'s channel destroyed');
    assert.equal(gone.event.cause, 16);
    assert.ok(gone.at - transferAt < 30_000, 'with the transfer, long before the BYE');
    assert.deepEqual(seen.filter(({ at, event }) => at > transferAt + 30_000 && named('PJSIP/alice-')(event.channel)), [], 'nothing of alice\'s channel at the BYE');
    assert.deepEqual(notifies.map((n) => n.frag), ['SIP/2.0 100 Trying', 'SIP/2.0 200 OK']);
    const byes = received.filter((m) => m.startsWith('BYE '));
    // One BYE request (a retransmission, if alice's 200 was late, repeats its CSeq).
    assert.equal(new Set(byes.map((m) => /^CSeq:\s*(.*)$/im.exec(m)?.[1])).size, 1);
    assert.doesNotMatch(byes[0], /^Reason:/im, 'the deferred BYE carries no Reason, as Asterisk\'s');
    // A lower bound only: a loaded machine delays the BYE, never brings it forward.
    assert.ok(aliceEndedAt - transferAt >= 55_000, `BYE after ${aliceEndedAt - transferAt} ms`);
  });

  test('the transferee is sent Busy(): NOTIFY 100, then 486 Busy Here (terminated)', { timeout: 90_000 }, async () => {
    const { notifies } = await transferTo('220');
    assert.deepEqual(notifies.map((n) => [n.frag, n.state.replace(/=\d+$/, '=N')]), [
      ['SIP/2.0 100 Trying', 'active;expires=N'],
      ['SIP/2.0 486 Busy Here', 'terminated;reason=noresource'],
    ]);
  });

  test('the transferee hangs up before anything reached it: NOTIFY 100, then 503 Service Unavailable (terminated)', { timeout: 90_000 }, async () => {
    const { notifies } = await transferTo('230');
    assert.deepEqual(notifies.map((n) => [n.frag, n.state.replace(/=\d+$/, '=N')]), [
      ['SIP/2.0 100 Trying', 'active;expires=N'],
      ['SIP/2.0 503 Service Unavailable', 'terminated;reason=noresource'],
    ]);
  });

  test('audio played to the transferee: NOTIFY 100, then 200 OK (terminated)', { timeout: 90_000 }, async () => {
    const { notifies } = await transferTo('240');
    assert.deepEqual(notifies.map((n) => [n.frag, n.state.replace(/=\d+$/, '=N')]), [
      ['SIP/2.0 100 Trying', 'active;expires=N'],
      ['SIP/2.0 200 OK', 'terminated;reason=noresource'],
    ]);
  });

  test('"100 Trying" is held back until the outcome: no NOTIFY while the transferee waits, then 100 and 503; no BYE from Patchbay, the phone\'s gets 200', { timeout: 90_000 }, async () => {
    const bob = sipp('answer-incoming.xml', [], { cwd: suite.work, port: BOB_PORT, timeoutMs: 40_000 });
    await bob.listening;
    const alice = new RawPhone('alice');
    await alice.open();
    alice.serverPort = suite.server.core.pjsip.port;
    try {
      const { dialog, final } = await alice.call('300');
      assert.match(final, /^SIP\/2\.0 200/);
      await nextEvent(suite.events, (e) => e.type === 'Dial' && named('PJSIP/bob-')(e.peer) && e.dialstatus === 'ANSWER', 15_000);
      assert.match(await alice.request(dialog, 'REFER', ['Refer-To: <sip:230@127.0.0.1>']), /^SIP\/2\.0 202/);
      await nextEvent(suite.events, (e) => e.type === 'BridgeBlindTransfer', 10_000);
      // bob waits 4 s in 230 before hanging up: nothing reaches alice meanwhile (a slow machine only delays it more).
      await assert.rejects(alice.nextMessage(/^NOTIFY /, 1000), 'no NOTIFY before the transferee\'s outcome');
      const trying = await alice.nextMessage(/^NOTIFY /, 15_000);
      assert.match(trying, /\r\n\r\nSIP\/2\.0 100 Trying/);
      assert.match(trying, /^Subscription-State:\s*active;expires=\d+/im);
      const outcome = await alice.nextMessage(/^NOTIFY /, 5000);
      assert.match(outcome, /\r\n\r\nSIP\/2\.0 503 Service Unavailable/);
      assert.match(outcome, /^Subscription-State:\s*terminated;reason=noresource/im);
      await assert.rejects(alice.nextMessage(/^BYE /, 1000, (m) => m.includes(dialog.callId)), 'the dialog is the phone\'s to end');
      assert.match(await alice.request(dialog, 'BYE'), /^SIP\/2\.0 200/);
      const bobRun = await bob.done;
      assert.equal(bobRun.status, 0, bobRun.output);
    } finally {
      alice.close();
    }
  });
});

describe('REFER on a channel in Stasis: the application carries the transfer out (Asterisk\'s ari-only handling, captured)', { skip: SKIP }, () => {
  test('202 and ChannelTransfer, no NOTIFY until transfer_progress; then 100 (active), 200 (terminated) and ChannelTransfer with each state; the phone hangs up', { timeout: 90_000 }, async () => {
    const trace = join(suite.work, 'alice-stasis.log');
    const alice = sipp('refer-notify-sequence.xml', [suite.target(), '-s', '500', '-set', 'caller', 'alice', '-set', 'target', '200', '-set', 'ender', 'phone', '-trace_msg', '-message_file', trace], { cwd: suite.work, timeoutMs: 40_000 });
    const start = await nextEvent(suite.events, (e) => e.type === 'StasisStart' && named('PJSIP/alice-')(e.channel), 15_000);
    const id = String(start.channel.id);
    assert.equal((await suite.server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
    const transfer = await nextEvent(suite.events, (e) => e.type === 'ChannelTransfer', 15_000);
    assert.equal(transfer.state, undefined, 'no state in the first event');
    assert.equal(transfer.refer_to.requested_destination.destination, '200');
    assert.equal(transfer.referred_by.source_channel.id, id);
    // The application takes its time: the phone hears nothing meanwhile (checked from the trace's clock).
    await sleep(1500);
    assert.equal((await suite.server.ari(`/channels/${id}/transfer_progress?states=channel_progress`, { method: 'POST' })).status, 204);
    assert.equal((await nextEvent(suite.events, (e) => e.type === 'ChannelTransfer', 10_000)).state, 'channel_progress');
    assert.equal((await suite.server.ari(`/channels/${id}/transfer_progress?states=channel_answered`, { method: 'POST' })).status, 204);
    assert.equal((await nextEvent(suite.events, (e) => e.type === 'ChannelTransfer', 10_000)).state, 'channel_answered');
    const gone = await nextEvent(suite.events, (e) => e.type === 'ChannelDestroyed' && e.channel?.id === id, 20_000);
    assert.equal(gone.cause, 16, 'the phone\'s BYE');
    const run = await alice.done;
    assert.equal(run.status, 0, run.output);
    assert.deepEqual(receivedNotifies(trace).map((n) => [n.frag, n.state.replace(/=\d+$/, '=N')]), [
      ['SIP/2.0 100 Trying', 'active;expires=N'],
      ['SIP/2.0 200 OK', 'terminated;reason=noresource'],
    ]);
    const timed = receivedTimed(trace);
    const accepted = timed.find(({ message }) => /^SIP\/2\.0 202/.test(message));
    const firstNotify = timed.find(({ message }) => message.startsWith('NOTIFY '));
    assert.ok(accepted && firstNotify);
    const gap = (firstNotify.at - accepted.at + 86_400_000) % 86_400_000;
    assert.ok(gap >= 1000, `the first NOTIFY ${gap} ms after the 202: held back until the application's report`);
    assert.deepEqual(timed.filter(({ message }) => message.startsWith('BYE ')), [], 'the phone hung up');
  });
});
