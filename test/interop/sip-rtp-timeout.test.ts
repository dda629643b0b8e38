// rtp_timeout against SIPp (issue 21, item 18: a far end that stops sending must not hold a call
// and its ports for ever): a phone that answers nothing with RTP after the call is set up is hung
// up by Patchbay — a BYE on the wire, cause 44 as chan_pjsip gives — once the endpoint's
// rtp_timeout passes; an endpoint without rtp_timeout keeps the same silent call. A phone that
// holds the call (a=sendonly) and then sends nothing is hung up the same way once the endpoint's
// rtp_timeout_hold passes, counted from the hold, though its rtp_timeout is far longer.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { EventSocket, TestServer } from '../helpers/server.ts';
import { HAVE_SIPP, nextEvent, ofChannel, sipp, startSippServer, type SippServer } from './sipp-peer.ts';

let peer: SippServer;
let work: string;
let server: TestServer;
let events: EventSocket;
let target: () => string;

before(async () => {
  if (!HAVE_SIPP) return;
  peer = await startSippServer('rtp-timeout', '[rtp-in]\nexten => 100,1,Stasis(rtp-app)\n', {
    endpoint: {
      quiet: { context: 'rtp-in', allow: 'ulaw', rtp_timeout: '2' },
      patient: { context: 'rtp-in', allow: 'ulaw' },
      heldquiet: { context: 'rtp-in', allow: 'ulaw', rtp_timeout: '30', rtp_timeout_hold: '2' },
    },
  }, 'rtp-app');
  ({ work, server, events, target } = peer);
});

after(async () => {
  if (HAVE_SIPP) await peer.close();
});

/** A call from `caller` (SIPp, no RTP ever) answered by the app; the channel id and SIPp's run. */
async function silentCall(caller: string, scenario = 'call-silent-wait-bye.xml') {
  const run = sipp(scenario, [target(), '-s', '100', '-set', 'caller', caller], { cwd: work, timeoutMs: 30_000 });
  const start = await nextEvent(events, (e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith(`PJSIP/${caller}-`));
  const id = start.channel.id as string;
  // The server starts the timeout when it answers, before its reply reaches us: the time is taken
  // when the request is sent (taken after the reply, a loaded machine made the hang-up look early).
  const answerSentAt = Date.now();
  assert.equal((await server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
  return { id, run, answerSentAt };
}

describe('rtp_timeout with SIPp as a phone that sends no RTP', { skip: HAVE_SIPP ? false : 'sipp is not installed' }, () => {
  test('rtp_timeout=2: the server sends BYE after about 2 s of silence; the channel ends with cause 44', { timeout: 60_000 }, async () => {
    const { id, run, answerSentAt } = await silentCall('quiet');
    const destroyed = await nextEvent(events, ofChannel('ChannelDestroyed', id), 15_000);
    const after = Date.now() - answerSentAt;
    assert.equal(destroyed.cause, 44);
    assert.ok(after >= 1_900, `hung up after ${after} ms, before the 2 s timeout`);
    // SIPp got the BYE and answered it: its scenario ends with success.
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
  });

  test('no rtp_timeout (the default 0): the silent call stays up until the app hangs it up', { timeout: 60_000 }, async () => {
    const { id, run } = await silentCall('patient');
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    assert.equal((await server.ari(`/channels/${id}`)).status, 200, 'still up after 3.5 s of silence');
    assert.equal((await server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
    assert.equal((await nextEvent(events, ofChannel('ChannelDestroyed', id))).cause, 16);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
  });

  test('rtp_timeout_hold=2 (rtp_timeout=30): a held phone that sends nothing gets a BYE about 2 s after the hold; cause 44', { timeout: 60_000 }, async () => {
    const { id, run, answerSentAt } = await silentCall('heldquiet', 'call-hold-silent-wait-bye.xml');
    await nextEvent(events, ofChannel('ChannelHold', id), 15_000);
    // The hold began when the server answered the re-INVITE, before this event reached us.
    const heldAt = Date.now();
    const destroyed = await nextEvent(events, ofChannel('ChannelDestroyed', id), 20_000);
    assert.equal(destroyed.cause, 44);
    // The hold follows the answer, so the 2 s cannot have passed before 2 s after the answer was asked.
    assert.ok(Date.now() - answerSentAt >= 1_900, `hung up ${Date.now() - answerSentAt} ms after the answer, before the 2 s timeout`);
    assert.ok(Date.now() - heldAt < 20_000, 'hung up long before the 30 s rtp_timeout');
    // SIPp saw a=recvonly in the answer to its hold (check_it), then got the BYE and answered it.
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
  });
});
