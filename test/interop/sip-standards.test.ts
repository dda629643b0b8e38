// What RFC 3261 asks of a user agent, against SIPp (issue 19, items 11–13):
// - in-dialog requests are matched by Call-ID and both tags: a BYE that shares only the Call-ID
//   (a stranger's From tag, or a To tag the server never gave) gets 481 and ends nothing;
// - an unknown method gets 501, a SUBSCRIBE for an event package nobody serves 489, an INVITE
//   whose body is not SDP 415 with Accept: application/sdp;
// - the 200 to a CANCEL carries the To tag of the INVITE's responses (§9.2);
// - Busy() ends its channel once the 486 is sent (as chan_pjsip: the session is over).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { EventSocket, TestServer } from '../helpers/server.ts';
import { HAVE_SIPP, nextEvent, ofChannel, sipp, startSippServer, waitFor, type Json, type SippServer } from './sipp-peer.ts';

let peer: SippServer;
let work: string;
let server: TestServer;
let events: EventSocket;
let target: () => string;

before(async () => {
  if (!HAVE_SIPP) return;
  peer = await startSippServer('sip-standards', '[std-in]\nexten => 100,1,Stasis(std-app)\nexten => 486,1,Busy()\n', {
    endpoint: { bob: { context: 'std-in', allow: 'ulaw', aors: 'bob' } },
    aor: { bob: { max_contacts: 1 } },
  }, 'std-app');
  ({ work, server, events, target } = peer);
});

after(async () => {
  if (HAVE_SIPP) await peer.close();
});

async function sipChannels(): Promise<Json[]> {
  const channels = (await (await server.ari('/channels')).json()) as Json[];
  return channels.filter((channel) => String(channel.name).startsWith('PJSIP/'));
}

/** The header lines named `name` of every message in a SIPp message log whose first line matches `first`. */
function headersIn(log: string, first: RegExp, name: string): string[] {
  const messages = log.split(/\r?\n\r?\n/);
  return messages.filter((message) => first.test(message.replace(/^[\s\S]*?(?=(SIP\/2\.0 |[A-Z]+ sip:))/, '').split(/\r?\n/)[0])).flatMap((message) => message.split(/\r?\n/).filter((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`)));
}

describe('SIP standards with SIPp', { skip: HAVE_SIPP ? false : 'sipp is not installed (Debian package sip-tester)' }, () => {
  test('BYEs with the call\'s Call-ID but a stranger\'s From tag or an unknown To tag get 481 and end nothing; the real BYE then gets 200', { timeout: 60_000 }, async () => {
    const run = sipp('forged-bye.xml', [target(), '-s', '100', '-set', 'caller', 'bob'], { cwd: work });
    const start = await nextEvent(events, (e) => e.type === 'StasisStart' && e.application === 'std-app');
    const id = start.channel.id as string;
    assert.equal((await server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
    const ended = await nextEvent(events, (e) => (e.type === 'ChannelHangupRequest' || e.type === 'ChannelDestroyed') && e.channel?.id === id, 20_000);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    // The channel lived until the real BYE (the last message of the scenario).
    assert.ok(ended.type === 'ChannelHangupRequest' || ended.cause === 16, JSON.stringify(ended));
  });

  test('FROB → 501, SUBSCRIBE for an event package not served → 489, INVITE with a text/plain body → 415 with Accept: application/sdp; no channel is made', { timeout: 60_000 }, async () => {
    const run = sipp('refusals.xml', [target(), '-s', '100', '-set', 'caller', 'bob'], { cwd: work });
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    assert.deepEqual(await sipChannels(), []);
  });

  test('the 200 to a CANCEL carries the same To tag as the 180 and the 487 of the INVITE', { timeout: 60_000 }, async () => {
    const log = join(work, 'cancel-messages.log');
    const run = sipp('cancel-ringing.xml', [target(), '-s', '100', '-set', 'caller', 'bob', '-d', '300', '-trace_msg', '-message_file', log], { cwd: work });
    const start = await nextEvent(events, (e) => e.type === 'StasisStart' && e.application === 'std-app');
    const id = start.channel.id as string;
    assert.equal((await server.ari(`/channels/${id}/ring`, { method: 'POST' })).status, 204);
    await nextEvent(events, ofChannel('ChannelDestroyed', id));
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    const text = readFileSync(log, 'latin1');
    const tagOf = (line: string | undefined): string | undefined => (line ? /;\s*tag=([^;>\s]+)/i.exec(line)?.[1] : undefined);
    const ringing = tagOf(headersIn(text, /^SIP\/2\.0 180 /, 'To')[0]);
    const cancelled = headersIn(text, /^SIP\/2\.0 (200|487) /, 'To').map(tagOf);
    assert.ok(ringing, text.slice(-3000));
    assert.equal(cancelled.length, 2, text.slice(-3000));
    assert.deepEqual(cancelled, [ringing, ringing], 'one To tag for the 180, the 200 to the CANCEL and the 487');
  });

  test('Busy() answers 486 and its channel ends with cause 17 (it does not stay in state Busy)', { timeout: 60_000 }, async () => {
    const run = sipp('call-expect-busy.xml', [target(), '-s', '486', '-set', 'caller', 'bob'], { cwd: work });
    const destroyed = nextEvent(events, (e) => e.type === 'ChannelDestroyed' && String(e.channel?.name).startsWith('PJSIP/bob-'), 15_000);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    assert.equal((await destroyed).cause, 17);
    await waitFor('no SIP channel left', async () => ((await sipChannels()).length === 0 ? true : undefined), 5000);
  });
});
