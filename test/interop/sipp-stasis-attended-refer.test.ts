// An attended REFER (Refer-To with Replaces naming the phone's other call) from a SIP phone whose
// calls are in an application, with Asterisk 22's default transfer handling: res_stasis's bridges
// can be neither merged nor swapped, so ast_bridge_transfer_attended links the two bridges with a
// Local pair (`Local/_attended@transfer`): `;2` takes the second leg's seat and `;1` the first's,
// each entering the application with StasisStart `replace_channel` when its seat is in an
// application's bridge; the second leg is hung up (its BYE), the first stays in the application
// until its phone's BYE; BridgeAttendedTransfer says destination_type `link`; the phone gets 202,
// NOTIFY 100 and 200 (terminated). Also: a second leg in a Dial() call (the dialplan), and
// PJSIP_TRANSFER_HANDLING(ari-only), which leaves the transfer to the application (ChannelTransfer
// with refer_to's requested_destination naming the call to replace).
// SIPp alice makes both calls in one scenario (refer-attended.xml), SIPp bob and carol answer. A raw
// phone checks the rest: `Refer-Sub: false` (the outcome as the REFER's response, no NOTIFY) and
// that the link carries audio (carol, a raw phone, hears the tone SIPp bob streams).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { dominantTone } from '../helpers/rtp-tone.ts';
import { RawPhone } from './raw-phone.ts';
import { endTransferLink } from './stasis-transfer-cleanup.ts';
import { receivedMessages, receivedNotifies } from './sipp-trace.ts';
import { HAVE_SIPP, HAVE_SOX, nextEvent, randomPort, sipp, sippPhones, sippServerInSuite, startSippServer, waitFor, writeSippTone, type Json } from './sipp-peer.ts';

const SKIP = !HAVE_SIPP ? 'sipp is not installed' : !HAVE_SOX ? 'sox is not installed' : false;
const BOB_PORT = randomPort();
const CAROL_PORT = BOB_PORT === 39999 ? 20000 : BOB_PORT + 1;

const DIALPLAN = [
  '[phones]',
  'exten => 500,1,Stasis(desk)',
  ' same => n,Hangup()',
  'exten => 600,1,Dial(PJSIP/carol)',
  ' same => n,Hangup()',
  'exten => 700,1,Set(PJSIP_TRANSFER_HANDLING()=ari-only)',
  ' same => n,Stasis(desk)',
  ' same => n,Hangup()',
  '',
].join('\n');

const suite = sippServerInSuite(SKIP, async () => {
  const started = await startSippServer('stasis-attended', DIALPLAN, sippPhones({ alice: undefined, bob: BOB_PORT, carol: CAROL_PORT }), 'desk');
  writeSippTone(started.work, 1000, 4, 0.5);
  return started;
});

const ari = (path: string, method = 'POST') => suite.server.ari(path, { method });
const short = (name: unknown) => String(name).replace(/-[0-9a-f]+(;[12])?$/, '$1');

/**
 * Every event this file has read, in order: a wait looks there first, so that an event read while
 * waiting for another is not lost (channel ids are unique, so earlier tests' events never match).
 */
const consumed: Json[] = [];

/** The first event matching, read already or the next to come. */
async function eventMatching(match: (e: Json) => boolean, timeoutMs = 30_000, from = 0): Promise<Json> {
  const found = consumed.slice(from).find(match);
  if (found) return found;
  for (;;) {
    const event = await nextEvent(suite.events, () => true, timeoutMs);
    consumed.push(event);
    if (match(event)) return event;
  }
}

/** Every event read from now until `last` matches (included). */
async function eventsUntil(last: (e: Json) => boolean): Promise<Json[]> {
  const from = consumed.length;
  await eventMatching(last, 30_000, from);
  return consumed.slice(from);
}

/** The position of the first event matching, failing with the events seen. */
function indexOf(seen: Json[], match: (e: Json) => boolean, what: string): number {
  const found = seen.findIndex(match);
  assert.ok(found >= 0, `${what} (got ${seen.map((e) => `${e.type} ${short(e.channel?.name ?? '')}`).join(', ')})`);
  return found;
}

/**
 * Alice's next call into the application (not yet answered): a mixing bridge, `callee` originated into
 * the application, both in the bridge, then alice's call answered.
 */
async function bridgedWith(callee: string, from: number, known: ReadonlySet<string> = new Set()): Promise<{ aliceId: string; calleeId: string; bridge: Json }> {
  const start = await eventMatching((e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith('PJSIP/alice-') && !known.has(e.channel.id), 20_000, from);
  const aliceId = String(start.channel.id);
  const bridge = (await (await ari('/bridges?type=mixing')).json()) as Json;
  const originated = (await (await ari(`/channels?endpoint=PJSIP/${callee}&app=desk`)).json()) as Json;
  const calleeId = String(originated.id);
  await eventMatching((e) => e.type === 'StasisStart' && e.channel?.id === calleeId, 20_000);
  assert.equal((await ari(`/bridges/${bridge.id}/addChannel?channel=${calleeId}`)).status, 204);
  assert.equal((await ari(`/bridges/${bridge.id}/addChannel?channel=${aliceId}`)).status, 204);
  assert.equal((await ari(`/channels/${aliceId}/answer`)).status, 204);
  return { aliceId, calleeId, bridge };
}

function startAlice(first: string, second: string): { done: ReturnType<typeof sipp>['done']; trace: string } {
  const trace = join(suite.work, `alice-${first}-${second}.log`);
  const run = sipp('refer-attended.xml', [suite.target(), '-s', first, '-set', 'caller', 'alice', '-set', 'second', second, '-trace_msg', '-message_file', trace], { cwd: suite.work, timeoutMs: 90_000 });
  return { done: run.done, trace };
}

/** Runs `work`; a failure shows the end of alice's message trace (what she sent and received last). */
async function showingAlice<T>(trace: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const tail = existsSync(trace) ? readFileSync(trace, 'latin1').slice(-4000) : '(no trace)';
    throw new Error(`${error instanceof Error ? error.message : String(error)}\nalice's trace ends:\n${tail}`, { cause: error });
  }
}

/** What alice received after her REFER: its 202, call B's BYE, NOTIFY 100 (active) and 200 (terminated). */
function assertAliceSaw(trace: string): void {
  const received = receivedMessages(trace);
  const referAnswer = received.findIndex((m) => /^SIP\/2\.0 \d+/.test(m) && /^CSeq:\s*2 REFER/im.test(m));
  assert.ok(referAnswer >= 0 && /^SIP\/2\.0 202/.test(received[referAnswer]!), 'the REFER got 202');
  const byes = received.filter((m) => m.startsWith('BYE '));
  assert.equal(byes.length, 1, 'one BYE: the second call\'s');
  assert.match(byes[0]!, /^Call-ID:\s*b\/\/\//im);
  const notifies = receivedNotifies(trace);
  assert.deepEqual(notifies.map((n) => n.frag), ['SIP/2.0 100 Trying', 'SIP/2.0 200 OK']);
  assert.match(notifies[0]!.state, /^active;expires=\d+$/);
  assert.equal(notifies[1]!.state, 'terminated;reason=noresource');
}

/** SIPp answering the server's calls to a phone whose contact is at `port`. */
const answering = (port: number) => sipp('answer-incoming.xml', [], { cwd: suite.work, port, timeoutMs: 90_000 });

/** One attended REFER run: where its events start, SIPp bob and carol answering, SIPp alice calling. */
interface AttendedRun {
  readonly from: number;
  readonly bob: ReturnType<typeof answering>;
  readonly carol: ReturnType<typeof answering>;
  readonly alice: ReturnType<typeof startAlice>;
}

/**
 * bob and carol answer, then alice calls `first` and `second` and REFERs her first call to her
 * second (refer-attended.xml); `work` drives the calls, a failure showing the end of alice's trace.
 */
async function attendedRefer(first: string, second: string, work: (run: AttendedRun) => Promise<void>): Promise<void> {
  const from = consumed.length;
  const bob = answering(BOB_PORT);
  const carol = answering(CAROL_PORT);
  // SIPp binds its port as it starts; the server's INVITE to it must not come before.
  await Promise.all([bob.listening, carol.listening]);
  const alice = startAlice(first, second);
  await showingAlice(alice.trace, () => work({ from, bob, carol, alice }));
}

/** Alice's two calls into the application, the first bridged with bob, the second with carol. */
async function bothBridged(from: number): Promise<{ first: Awaited<ReturnType<typeof bridgedWith>>; second: Awaited<ReturnType<typeof bridgedWith>> }> {
  const first = await bridgedWith('bob', from);
  const second = await bridgedWith('carol', from, new Set([first.aliceId]));
  return { first, second };
}

/** Alice's scenario ended as it expects, and she saw the REFER's 202, one BYE and the two NOTIFYs. */
async function aliceEnded(alice: AttendedRun['alice']): Promise<void> {
  const aliceRun = await alice.done;
  assert.equal(aliceRun.status, 0, aliceRun.output);
  assertAliceSaw(alice.trace);
}

/** Ends the callees' channels and the bridges a test made, then bob's and carol's SIPp runs ended as expected. */
async function endCallees(run: AttendedRun, calleeIds: readonly string[], bridges: readonly Json[]): Promise<void> {
  for (const id of calleeIds) assert.equal((await ari(`/channels/${id}`, 'DELETE')).status, 204);
  for (const bridge of bridges) await ari(`/bridges/${bridge.id}`, 'DELETE');
  for (const callee of [await run.bob.done, await run.carol.done]) assert.equal(callee.status, 0, callee.output);
}

describe('an attended REFER from channels in Stasis bridges: Asterisk\'s default handling (a Local link)', { skip: SKIP }, () => {
  test('both calls in application bridges: ;2 and ;1 take the legs\' seats (StasisStart replace_channel), the second leg hangs up, BridgeAttendedTransfer link; 202, BYE, NOTIFY 100 and 200', { timeout: 150_000 }, async () => {
    await attendedRefer('500', '500', async (run) => {
      const { first, second } = await bothBridged(run.from);

      const seen = await eventsUntil((e) => e.type === 'BridgeAttendedTransfer');
      assert.equal(seen.filter((e) => e.type === 'ChannelTransfer').length, 0, 'no ChannelTransfer: the core carries the transfer out');
      const transfer = seen.at(-1)!;
      const one = transfer.destination_link_first_leg as Json;
      const two = transfer.destination_link_second_leg as Json;
      assert.match(String(one.name), /^Local\/_attended@transfer-[0-9a-f]+;1$/);
      assert.match(String(two.name), /^Local\/_attended@transfer-[0-9a-f]+;2$/);

      // In Asterisk's order of fields, the legs and bridges as they were before the transfer.
      assert.deepEqual(Object.keys(transfer).filter((key) => !['asterisk_id', 'application', 'sequence'].includes(key)), [
        'type', 'timestamp', 'transferer_first_leg', 'transferer_second_leg', 'result', 'is_external', 'transferee', 'transfer_target',
        'transferer_first_leg_bridge', 'transferer_second_leg_bridge', 'destination_type', 'destination_link_first_leg', 'destination_link_second_leg',
      ]);
      assert.deepEqual([transfer.result, transfer.is_external, transfer.destination_type], ['Success', false, 'link']);
      assert.equal(transfer.transferer_first_leg.id, first.aliceId);
      assert.equal(transfer.transferer_second_leg.id, second.aliceId);
      assert.equal(transfer.transferee.id, first.calleeId);
      assert.equal(transfer.transfer_target.id, second.calleeId);
      assert.equal(transfer.transferer_first_leg_bridge.id, first.bridge.id);
      assert.equal(transfer.transferer_second_leg_bridge.id, second.bridge.id);
      assert.deepEqual([...transfer.transferer_first_leg_bridge.channels].sort(), [first.aliceId, first.calleeId].sort());
      assert.deepEqual([...transfer.transferer_second_leg_bridge.channels].sort(), [second.aliceId, second.calleeId].sort());

      // The marks, then ;2 into the second bridge, ;1 into the first, then the second leg's hang-up.
      const mark = (id: string) => indexOf(seen, (e) => e.type === 'ChannelVarset' && e.variable === 'ATTENDEDTRANSFER' && e.channel?.id === id, `ATTENDEDTRANSFER on ${id}`);
      const created = indexOf(seen, (e) => e.type === 'ChannelCreated' && e.channel.id === one.id, 'ChannelCreated ;1');
      assert.ok(mark(first.aliceId) < created && mark(first.calleeId) < created, 'the first leg and the transferee are marked before the Local pair exists');
      assert.match(String(seen[mark(first.aliceId)]!.value), /^PJSIP\/bob-/, 'the first leg names its bridge peer');
      assert.ok(String(seen[mark(first.calleeId)]!.value).startsWith('PJSIP/alice-'));
      assert.ok(String(seen[mark(String(one.id))]!.value).startsWith('PJSIP/alice-'), ';1 names the first leg');
      const startTwo = indexOf(seen, (e) => e.type === 'StasisStart' && e.channel.id === two.id, 'StasisStart ;2');
      const leftTwo = indexOf(seen, (e) => e.type === 'ChannelLeftBridge' && e.channel.id === second.aliceId, 'ChannelLeftBridge second leg');
      const enteredTwo = indexOf(seen, (e) => e.type === 'ChannelEnteredBridge' && e.channel.id === two.id, 'ChannelEnteredBridge ;2');
      const startOne = indexOf(seen, (e) => e.type === 'StasisStart' && e.channel.id === one.id, 'StasisStart ;1');
      const leftOne = indexOf(seen, (e) => e.type === 'ChannelLeftBridge' && e.channel.id === first.aliceId, 'ChannelLeftBridge first leg');
      const enteredOne = indexOf(seen, (e) => e.type === 'ChannelEnteredBridge' && e.channel.id === one.id, 'ChannelEnteredBridge ;1');
      const hangup = indexOf(seen, (e) => e.type === 'ChannelHangupRequest' && e.channel.id === second.aliceId, 'ChannelHangupRequest second leg');
      assert.ok(created < startTwo && startTwo < leftTwo && leftTwo < enteredTwo && enteredTwo < startOne && startOne < leftOne && leftOne < enteredOne && enteredOne < hangup, 'in order');
      assert.equal(seen[startTwo]!.replace_channel?.id, second.aliceId);
      assert.equal(seen[startOne]!.replace_channel?.id, first.aliceId);
      assert.equal(seen[startOne]!.application, 'desk');
      assert.equal(seen[enteredTwo]!.bridge.id, second.bridge.id);
      assert.equal(seen[enteredOne]!.bridge.id, first.bridge.id);
      assert.deepEqual([...seen[enteredOne]!.bridge.channels].sort(), [first.calleeId, String(one.id)].sort());
      assert.equal(seen.filter((e) => e.type === 'StasisEnd' && e.channel?.id === first.aliceId).length, 0, 'the first leg stays in the application');

      // The second leg ends (StasisEnd, ChannelDestroyed); alice hangs the first up after the NOTIFYs.
      await eventMatching((e) => e.type === 'ChannelDestroyed' && e.channel?.id === second.aliceId, 20_000);
      await eventMatching((e) => e.type === 'StasisEnd' && e.channel?.id === first.aliceId, 60_000);
      await aliceEnded(run.alice);

      // The link is one Local pair: hanging ;1 up ends ;2 with it.
      assert.equal((await ari(`/channels/${one.id}`, 'DELETE')).status, 204);
      await eventMatching((e) => e.type === 'ChannelDestroyed' && e.channel?.id === two.id, 20_000);
      await endCallees(run, [first.calleeId, second.calleeId], [first.bridge, second.bridge]);
    });
  });

  test('the second call in the dialplan (Dial): ;1 enters the application in the first leg\'s seat, ;2 takes the second leg\'s place next to the callee; BridgeAttendedTransfer link', { timeout: 150_000 }, async () => {
    await attendedRefer('500', '600', async ({ from, bob, carol, alice }) => {
      const first = await bridgedWith('bob', from);
      // The Dial() call's basic bridge: alice's second call and carol in it.
      const dialed = await eventMatching((e) => e.type === 'ChannelEnteredBridge' && String(e.channel?.name).startsWith('PJSIP/alice-') && e.channel.id !== first.aliceId, 30_000, from);
      const secondId = String(dialed.channel.id);

      const seen = await eventsUntil((e) => e.type === 'BridgeAttendedTransfer');
      const transfer = seen.at(-1)!;
      assert.deepEqual([transfer.result, transfer.destination_type], ['Success', 'link']);
      assert.equal(transfer.transferer_first_leg.id, first.aliceId);
      assert.equal(transfer.transferer_second_leg.id, secondId);
      assert.equal(transfer.transferee.id, first.calleeId);
      assert.match(String(transfer.transfer_target.name), /^PJSIP\/carol-/);
      assert.equal(transfer.transferer_second_leg_bridge.id, dialed.bridge.id);
      const one = transfer.destination_link_first_leg as Json;
      const two = transfer.destination_link_second_leg as Json;
      const startOne = indexOf(seen, (e) => e.type === 'StasisStart' && e.channel.id === one.id, 'StasisStart ;1');
      assert.equal(seen[startOne]!.replace_channel?.id, first.aliceId);
      assert.equal(seen.filter((e) => e.type === 'StasisStart' && e.channel.id === two.id).length, 0, ';2 is in the Dial() call, not in the application');
      const enteredTwo = indexOf(seen, (e) => e.type === 'ChannelEnteredBridge' && e.channel.id === two.id, 'ChannelEnteredBridge ;2');
      assert.equal(seen[enteredTwo]!.bridge.id, dialed.bridge.id);
      indexOf(seen, (e) => e.type === 'ChannelEnteredBridge' && e.channel.id === one.id && e.bridge.id === first.bridge.id, 'ChannelEnteredBridge ;1');
      indexOf(seen, (e) => e.type === 'ChannelHangupRequest' && e.channel.id === secondId, 'the second leg is hung up');

      await eventMatching((e) => e.type === 'StasisEnd' && e.channel?.id === first.aliceId, 60_000);
      await aliceEnded(alice);

      // carol's call now ends with the link: hanging ;1 up hangs ;2 up, and its Dial() call carol (her BYE).
      assert.equal((await ari(`/channels/${one.id}`, 'DELETE')).status, 204);
      const carolRun = await carol.done;
      assert.equal(carolRun.status, 0, carolRun.output);
      assert.equal((await ari(`/channels/${first.calleeId}`, 'DELETE')).status, 204);
      await ari(`/bridges/${first.bridge.id}`, 'DELETE');
      const bobRun = await bob.done;
      assert.equal(bobRun.status, 0, bobRun.output);
    });
  });

  test('ari-only: ChannelTransfer names the call to replace (protocol_id, from/to tags, destination_channel, its peer and bridge); nothing moves until the application acts', { timeout: 150_000 }, async () => {
    await attendedRefer('700', '500', async (run) => {
      const { first, second } = await bothBridged(run.from);

      const seen = await eventsUntil((e) => e.type === 'ChannelTransfer');
      assert.equal(seen.filter((e) => e.type === 'BridgeAttendedTransfer' || e.type === 'ChannelLeftBridge').length, 0, 'the core does nothing');
      const transfer = seen.at(-1)!;
      const wanted = transfer.refer_to.requested_destination as Json;
      assert.equal(wanted.destination, '500');
      assert.match(String(wanted.protocol_id), /^b\/\/\/[^;]+@/);
      assert.deepEqual(wanted.additional_protocol_params.map((p: Json) => p.parameter_name), ['from', 'to']);
      assert.match(String(wanted.additional_protocol_params[0].parameter_value), /SIPpTagB/);
      assert.equal(transfer.refer_to.destination_channel.id, second.aliceId);
      assert.equal(transfer.refer_to.connected_channel.id, second.calleeId);
      assert.equal(transfer.refer_to.bridge.id, second.bridge.id);
      assert.equal(transfer.referred_by.source_channel.id, first.aliceId);
      assert.equal(transfer.referred_by.connected_channel.id, first.calleeId);
      assert.equal(transfer.referred_by.bridge.id, first.bridge.id);

      // The application carries it out its own way: the second call ends, and it reports success.
      assert.equal((await ari(`/channels/${second.aliceId}`, 'DELETE')).status, 204);
      await eventMatching((e) => e.type === 'ChannelDestroyed' && e.channel?.id === second.aliceId, 20_000);
      assert.equal((await ari(`/channels/${first.aliceId}/transfer_progress?states=channel_answered`)).status, 204);
      await eventMatching((e) => e.type === 'StasisEnd' && e.channel?.id === first.aliceId, 60_000);
      await aliceEnded(run.alice);
      await endCallees(run, [first.calleeId, second.calleeId], [first.bridge, second.bridge]);
    });
  });

  test('Refer-Sub: false: 200 with Refer-Sub: false and no NOTIFY; the link carries audio: carol hears bob\'s tone through the Local pair', { timeout: 150_000 }, async () => {
    const from = consumed.length;
    const bob = answering(BOB_PORT);
    await bob.listening;
    const alice = new RawPhone('alice');
    const carol = new RawPhone('carol');
    await alice.open();
    await carol.open(CAROL_PORT);
    alice.serverPort = suite.server.core.pjsip.port;
    carol.serverPort = suite.server.core.pjsip.port;
    try {
      const callingFirst = alice.call('500');
      const first = await bridgedWith('bob', from);
      const a = await callingFirst;
      assert.match(a.final, /^SIP\/2\.0 200/);
      const callingSecond = alice.call('500');
      const second = await bridgedWith('carol', from, new Set([first.aliceId]));
      const b = await callingSecond;
      assert.match(b.final, /^SIP\/2\.0 200/);

      const replaces = encodeURIComponent(`${b.dialog.callId};to-tag=${b.dialog.remoteTag};from-tag=${b.dialog.localTag}`);
      const linkedAt = Date.now();
      const answer = await alice.request(a.dialog, 'REFER', [`Refer-To: <sip:500@127.0.0.1?Replaces=${replaces}>`, 'Refer-Sub: false']);
      assert.match(answer, /^SIP\/2\.0 200/);
      assert.match(answer, /^Refer-Sub:\s*false/im);
      const transfer = await eventMatching((e) => e.type === 'BridgeAttendedTransfer', 30_000, from);
      assert.deepEqual([transfer.result, transfer.destination_type], ['Success', 'link']);
      await alice.nextMessage(/^BYE /, 10_000, (m) => m.includes(b.dialog.callId));

      // bob's tone reaches carol: bob → first bridge → ;1 → ;2 → second bridge → carol.
      const heard = await waitFor('bob\'s tone at carol', () => {
        const tone = dominantTone(carol.audioBetween(linkedAt, Date.now()), 1000);
        return tone.loudSamples >= 4000 ? tone : undefined;
      }, 30_000);
      assert.ok(Math.abs(heard.frequency - 1000) < 100, `carol hears ${heard.frequency} Hz`);
      // Nothing of the subscription: a check that something does not happen keeps a short, fixed wait.
      await assert.rejects(alice.nextMessage(/^NOTIFY /, 1000));

      assert.match(await alice.request(a.dialog, 'BYE'), /^SIP\/2\.0 200/);
      await eventMatching((e) => e.type === 'StasisEnd' && e.channel?.id === first.aliceId, 30_000, from);
      await endTransferLink(suite, transfer, [first, second], bob);
    } finally {
      alice.close();
      carol.close();
    }
  });
});
