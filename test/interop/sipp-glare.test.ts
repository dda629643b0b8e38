// Offer glare with a real peer, SIPp (RFC 3261 §14.1–14.2, RFC 3311 §5.2), both sides of it:
// - the far end's re-INVITE and UPDATE offers that cross our own re-INVITE (a hold from ARI with
//   moh_passthrough=yes) are refused 491 Request Pending, and our re-INVITE is then answered and ACKed;
// - our re-INVITE refused 491 by the far end is sent again after the RFC 3261 §14.1 wait: 2.1–4 s,
//   since the server placed the call (it owns the Call-ID), and its answer is taken.
// Skipped with a message when sipp is not installed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HAVE_SIPP, callSippCallee, explained, nextEvent as nextEventOn, randomPort, sipp as runSipp, startSippServer, tracedMessages, type Json, type SippCallee, type SippRun, type SippServer } from './sipp-peer.ts';

const APP = 'glare-app';
/** Where SIPp plays bob, the callee (his static contact). */
const BOB_PORT = randomPort();
let setup: SippServer;

before(async () => {
  if (!HAVE_SIPP) return;
  setup = await startSippServer(
    'sipp-glare',
    `[glare-in]\nexten => 100,1,Stasis(${APP})\n`,
    {
      // Hold from ARI re-INVITEs the phone (sendonly) instead of playing music to it.
      endpoint: {
        carol: { context: 'glare-in', allow: 'ulaw', aors: 'carol', moh_passthrough: 'yes' },
        bob: { context: 'glare-in', allow: 'ulaw', aors: 'bob', moh_passthrough: 'yes' },
      },
      aor: { carol: { max_contacts: 1 }, bob: { contact: `sip:bob@127.0.0.1:${BOB_PORT}` } },
    },
    APP,
  );
});

after(async () => {
  if (!HAVE_SIPP) return;
  await setup.close();
});

// Generous: on a loaded 2-core machine SIPp's first INVITE may reach the app seconds late.
const nextEvent = (match: (event: Json) => boolean, timeoutMs = 30_000): Promise<Json> => nextEventOn(setup.events, match, timeoutMs);
const post = (path: string, method = 'POST'): Promise<Response> => setup.server.ari(path, { method });
/** Bob as the server calls him: SIPp at his static contact. */
const BOB: SippCallee = { port: BOB_PORT, endpoint: 'PJSIP/bob', app: APP, eventTimeoutMs: 30_000 };

/** When SIPp received each message whose first line matches `firstLine` (ms since the epoch), from its -trace_msg log. */
function receivedTimes(run: SippRun, firstLine: RegExp): number[] {
  const times: number[] = [];
  // Each message is introduced by a dashed line ending in the date and time, then a line saying
  // "UDP message received [n] bytes :" (or sent), then the message.
  for (const block of run.messages.split(/^-{20,}[ \t]*/m)) {
    const stamp = /^(\d{4}-\d{2}-\d{2})\s+(\d{2}:\d{2}:\d{2})\.(\d{3})/.exec(block);
    const [direction, first] = block.split(/\r?\n/).slice(1).map((line) => line.trim()).filter((line) => line.length > 0);
    if (!stamp || !/received/i.test(direction ?? '') || !firstLine.test(first ?? '')) continue;
    times.push(Date.parse(`${stamp[1]}T${stamp[2]}.${stamp[3]}`));
  }
  return times;
}

describe('offer glare (491 Request Pending) with SIPp', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  test('an UPDATE offer and a re-INVITE crossing our hold re-INVITE are refused 491; our re-INVITE is then answered and ACKed', { timeout: 90_000 }, async () => {
    const run = runSipp('glare-crossing.xml', [setup.target(), '-s', '100', '-set', 'caller', 'carol'], { cwd: setup.work, timeoutMs: 60_000, trace: true });
    const id = await explained(run, async () => {
      const start = await nextEvent((e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith('PJSIP/carol-'));
      const channel = start.channel.id as string;
      assert.equal((await post(`/channels/${channel}/answer`)).status, 204);
      await nextEvent((e) => e.type === 'ChannelStateChange' && e.channel?.id === channel && e.channel.state === 'Up');
      assert.equal((await post(`/channels/${channel}/hold`)).status, 204);
      // SIPp hangs up once our re-INVITE is answered and ACKed.
      const destroyed = await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === channel, 60_000);
      assert.equal(destroyed.cause, 16, 'the caller hung up normally');
      return channel;
    });
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    // A 491 comes again for a retransmitted request, or until its ACK (Timer G): one per CSeq counts.
    const refused = new Set(tracedMessages(result, /^SIP\/2\.0 491/).map((message) => /^CSeq:\s*(.+?)\s*$/im.exec(message)?.[1]));
    assert.deepEqual([...refused], ['2 UPDATE', '3 INVITE'], `both crossing offers refused 491 (${id})`);
    const ours = tracedMessages(result, /^INVITE /).filter((message) => /^a=sendonly/m.test(message));
    assert.ok(ours.length >= 1, 'our hold re-INVITE reached SIPp (once, or retransmitted before its 100)');
  });

  test('our re-INVITE refused 491 by the far end is sent again 2.1–4 s later (we own the Call-ID), and its answer is taken', { timeout: 90_000 }, async () => {
    const result = await callSippCallee(setup, BOB, 'glare-refuse-retry.xml', async (id) => {
      assert.equal((await post(`/channels/${id}/hold`)).status, 204);
      // SIPp hangs up once the retried re-INVITE is answered and ACKed.
      const destroyed = await nextEvent((e) => e.type === 'ChannelDestroyed' && e.channel?.id === id, 60_000);
      assert.equal(destroyed.cause, 16, 'the callee hung up normally');
    });
    // A retransmission (a slow SIPp on a loaded machine) is the same CSeq: the first arrival of each counts.
    const cseq = (message: string | undefined): number => Number(/^CSeq:\s*(\d+)/im.exec(message ?? '')?.[1]);
    const invites = tracedMessages(result, /^INVITE /);
    const times = receivedTimes(result, /^INVITE /);
    assert.equal(times.length, invites.length, 'each INVITE\'s arrival time is in the trace');
    const firstOf = new Map<number, { message: string; at: number }>();
    invites.forEach((message, index) => firstOf.has(cseq(message)) || firstOf.set(cseq(message), { message, at: times[index] ?? 0 }));
    const [, hold, retry] = [...firstOf.values()];
    assert.equal(firstOf.size, 3, 'the call\'s INVITE, the hold re-INVITE, and its retry (a new transaction, a higher CSeq)');
    assert.match(hold?.message ?? '', /^a=sendonly/m);
    assert.match(retry?.message ?? '', /^a=sendonly/m, 'the retry offers the same hold');
    const wait = (retry?.at ?? 0) - (hold?.at ?? 0);
    // 2.1–4 s after the 491 (RFC 3261 §14.1); the upper bound leaves room for a loaded machine.
    assert.ok(wait >= 2_090, `the retry came ${wait} ms after the first re-INVITE (at least 2.1 s after the 491)`);
    assert.ok(wait < 10_000, `the retry came ${wait} ms after the first re-INVITE`);
  });
});
