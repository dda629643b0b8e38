// RTPAUDIOQOS and its companions as SIPp calls end, against what Asterisk 22.10.1 sent for the same
// flows (captured with a subscribe-all application; docs/sip.md "Call quality variables"):
// - the far end's BYE: the five variables, then ChannelHangupRequest (no soft flag), StasisEnd, ...
// - ARI DELETE: the five variables, then ChannelHangupRequest 32 soft, StasisEnd, ...
// - a member of a two-member bridge: each variable on the channel, then its *BRIDGED copy on the
//   peer; the peer, hung up later alone in the bridge, gets its own five and nobody a *BRIDGED one;
// - the dialplan's `h` extension reads ${RTPAUDIOQOS} after the far end's BYE;
// - a ringing call the far end cancels had no media agreed: no RTPAUDIOQOS at all.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventsUntilDestroyed, HAVE_SIPP, HAVE_SOX, nextEvent, sippCall, startSippServer, waitFor, writeSippTone, type Json, type SippServer } from './sipp-peer.ts';

const APP = 'qos';
const DIALPLAN = `
[qos-in]
exten => stasis,1,Answer()
 same => n,Stasis(${APP})
exten => wait,1,Goto(qos-h,wait,1)
exten => ring,1,Ringing()
 same => n,Wait(30)

[qos-h]
exten => wait,1,Answer()
 same => n,Wait(60)
exten => h,1,Set(GLOBAL(QOS_SEEN)=\${RTPAUDIOQOS})
`;

const NAMES = ['RTPAUDIOQOS', 'RTPAUDIOQOSJITTER', 'RTPAUDIOQOSLOSS', 'RTPAUDIOQOSRTT', 'RTPAUDIOQOSMES'];
const FIXED = '\\d{3}\\.\\d{6}';
const FORMATS: Record<string, RegExp> = {
  RTPAUDIOQOS: /^ssrc=(\d+);themssrc=(\d+);lp=(\d+);rxjitter=(\d+\.\d{6});rxcount=(\d+);txjitter=(\d+\.\d{6});txcount=(\d+);rlp=(\d+);rtt=(\d+\.\d{6});rxmes=\d+\.\d{6};txmes=\d+\.\d{6}$/,
  RTPAUDIOQOSJITTER: new RegExp(`^${['minrxjitter', 'maxrxjitter', 'avgrxjitter', 'stdevrxjitter', 'mintxjitter', 'maxtxjitter', 'avgtxjitter', 'stdevtxjitter'].map((l) => `${l}=${FIXED};`).join('')}$`),
  RTPAUDIOQOSLOSS: new RegExp(`^${['minrxlost', 'maxrxlost', 'avgrxlost', 'stdevrxlost', 'mintxlost', 'maxtxlost', 'avgtxlost', 'stdevtxlost'].map((l) => `  ${l}=${FIXED};`).join('')}$`),
  RTPAUDIOQOSRTT: new RegExp(`^${['minrtt', 'maxrtt', 'avgrtt', 'stdevrtt'].map((l) => `     ${l}=${FIXED};`).join('')}$`),
  RTPAUDIOQOSMES: new RegExp(`^${['minrxmes', 'maxrxmes', 'avgrxmes', 'stdevrxmes', 'mintxmes', 'maxtxmes', 'avgtxmes', 'stdevtxmes'].map((l) => `   ${l}=${FIXED};`).join('')}$`),
};

let peer: SippServer;

before(async () => {
  if (!HAVE_SIPP) return;
  peer = await startSippServer('sipp-rtp-quality', DIALPLAN, { endpoint: { bob: { context: 'qos-in', allow: 'ulaw' } } }, APP);
  if (HAVE_SOX) writeSippTone(peer.work, 440, 30, 0.5);
});

after(async () => {
  if (HAVE_SIPP) await peer.close();
});

/** SIPp calling `exten` as bob, streaming audio.wav, from its own SIP and media ports. */
const call = (scenario: string, exten: string, extra: string[] = []) => sippCall(peer, 'bob', scenario, exten, extra);

/** Every event up to `channelId`'s ChannelDestroyed (the ones before it kept in `into`). */
const untilDestroyed = (channelId: string, into: Json[]): Promise<Json[]> => eventsUntilDestroyed(peer, channelId, into);

/** Waits until the channel received some RTP (its rtp_statistics), so the figures are worth checking. */
async function receivedSome(channelId: string): Promise<void> {
  await waitFor('RTP received', async () => {
    const response = await peer.server.ari(`/channels/${channelId}/rtp_statistics`);
    if (response.status !== 200) return undefined;
    const stats = (await response.json()) as { rxcount: number };
    return stats.rxcount >= 20 ? true : undefined;
  }, 20_000);
}

const qosOf = (events: Json[], channelId: string) =>
  events.filter((event) => event.type === 'ChannelVarset' && event.channel?.id === channelId && String(event.variable).startsWith('RTPAUDIOQOS'));

/** The five variables, in Asterisk's order, in Asterisk's formats, with figures that fit a call of a few seconds' audio. */
function assertQuality(varsets: Json[]): void {
  assert.deepEqual(varsets.map((event) => event.variable), NAMES);
  for (const event of varsets) assert.match(event.value, FORMATS[event.variable], event.variable);
  const [, ssrc, themssrc, lp, rxjitter, rxcount, , , rlp, rtt] = FORMATS.RTPAUDIOQOS.exec(varsets[0].value)!;
  assert.ok(Number(ssrc) > 0 && Number(themssrc) > 0, varsets[0].value);
  assert.ok(Number(rxcount) >= 20, `rxcount ${rxcount}`);
  // Loopback: a lost packet would be the machine's load, not the network; bound it loosely.
  assert.ok(Number(lp) < Number(rxcount), `lp ${lp}`);
  assert.ok(Number(rxjitter) < 2, `rxjitter ${rxjitter}`);
  assert.equal(Number(rlp), 0, 'SIPp sends no RTCP: nothing reported lost');
  assert.equal(Number(rtt), 0, 'SIPp sends no RTCP: no round trip measured');
}

const indexOf = (events: Json[], match: (event: Json) => boolean) => events.findIndex(match);

describe('RTPAUDIOQOS variables as a SIP call ends', { skip: HAVE_SIPP && HAVE_SOX ? false : 'sipp or sox is not installed' }, () => {
  test('the far end hangs up (BYE): the five variables, then the hang-up', { timeout: 90_000 }, async () => {
    const run = call('call-hangup.xml', 'stasis', ['-d', '4000']);
    const events: Json[] = [];
    const start = await nextEvent(peer.events, (event) => (events.push(event), event.type === 'StasisStart'), 20_000);
    const id: string = start.channel.id;
    await untilDestroyed(id, events);
    assert.equal((await run.done).status, 0);
    const varsets = qosOf(events, id);
    assertQuality(varsets);
    const lastVarset = events.indexOf(varsets[varsets.length - 1]);
    const request = indexOf(events, (event) => event.type === 'ChannelHangupRequest' && event.channel?.id === id);
    const stasisEnd = indexOf(events, (event) => event.type === 'StasisEnd' && event.channel?.id === id);
    assert.ok(lastVarset < request && request < stasisEnd, 'the variables come before the hang-up request and StasisEnd');
    assert.equal(events[request].soft, undefined, 'a hang-up the technology queued is not soft');
    assert.ok(!events.some((event) => String(event.variable).endsWith('BRIDGED')), 'no bridge, no peer');
  });

  test('ARI deletes the channel: the five variables, then the soft hang-up request', { timeout: 90_000 }, async () => {
    const run = call('call-wait-bye.xml', 'stasis');
    const events: Json[] = [];
    const start = await nextEvent(peer.events, (event) => (events.push(event), event.type === 'StasisStart'), 20_000);
    const id: string = start.channel.id;
    await receivedSome(id);
    assert.equal((await peer.server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
    await untilDestroyed(id, events);
    assert.equal((await run.done).status, 0);
    const varsets = qosOf(events, id);
    assertQuality(varsets);
    const request = indexOf(events, (event) => event.type === 'ChannelHangupRequest' && event.channel?.id === id);
    assert.ok(events.indexOf(varsets[4]) < request);
    assert.equal(events[request].cause, 32);
    assert.equal(events[request].soft, true);
    assert.equal(qosOf(events, id).length, 5, 'set once: the technology\'s hang-up leaves them as they are');
  });

  test('a member of a two-member bridge: each variable, then its BRIDGED copy on the peer', { timeout: 120_000 }, async () => {
    // Long enough for the second call and the bridge on a loaded machine: the BYE must come while both are bridged.
    const first = call('call-hangup.xml', 'stasis', ['-d', '12000']);
    const events: Json[] = [];
    const a = (await nextEvent(peer.events, (event) => (events.push(event), event.type === 'StasisStart'), 20_000)).channel.id as string;
    const second = call('call-wait-bye.xml', 'stasis');
    const b = (await nextEvent(peer.events, (event) => (events.push(event), event.type === 'StasisStart' && event.channel?.id !== a), 20_000)).channel.id as string;
    const bridge = (await (await peer.server.ari('/bridges?type=mixing', { method: 'POST' })).json()) as { id: string };
    assert.equal((await peer.server.ari(`/bridges/${bridge.id}/addChannel?channel=${a},${b}`, { method: 'POST' })).status, 204);
    await receivedSome(a);
    assert.equal(peer.server.channel(a)?.bridgeId, bridge.id, 'both bridged before the first call ends');
    await untilDestroyed(a, events);
    assert.equal((await first.done).status, 0);
    const qos = events.filter((event) => event.type === 'ChannelVarset' && String(event.variable).startsWith('RTPAUDIOQOS'));
    assert.deepEqual(
      qos.map((event) => `${event.channel.id === a ? 'a' : 'b'} ${event.variable}`),
      NAMES.flatMap((name) => [`a ${name}`, `b ${name}BRIDGED`]),
    );
    for (let index = 0; index < qos.length; index += 2) assert.equal(qos[index + 1].value, qos[index].value);
    assertQuality(qosOf(events, a));
    const request = indexOf(events, (event) => event.type === 'ChannelHangupRequest' && event.channel?.id === a);
    assert.ok(events.indexOf(qos[qos.length - 1]) < request);

    // The peer, alone in the bridge now: its own five, no BRIDGED for anyone.
    const later: Json[] = [];
    assert.equal((await peer.server.ari(`/channels/${b}`, { method: 'DELETE' })).status, 204);
    await untilDestroyed(b, later);
    assert.equal((await second.done).status, 0);
    assert.deepEqual(
      later.filter((event) => event.type === 'ChannelVarset' && String(event.variable).startsWith('RTPAUDIOQOS')).map((event) => `${event.channel.id === b ? 'b' : '?'} ${event.variable}`),
      NAMES.map((name) => `b ${name}`),
    );
    await peer.server.ari(`/bridges/${bridge.id}`, { method: 'DELETE' });
  });

  test('the dialplan\'s h extension reads ${RTPAUDIOQOS} after the far end\'s BYE', { timeout: 90_000 }, async () => {
    const run = call('call-hangup.xml', 'wait', ['-d', '3000']);
    assert.equal((await run.done).status, 0);
    const seen = await waitFor('QOS_SEEN', async () => {
      const response = await peer.server.ari('/asterisk/variable?variable=QOS_SEEN');
      if (response.status !== 200) return undefined;
      const { value } = (await response.json()) as { value: string };
      return value ? value : undefined;
    }, 20_000);
    assert.match(seen, FORMATS.RTPAUDIOQOS);
  });

  test('a ringing call cancelled by the far end: no media was agreed, no RTPAUDIOQOS', { timeout: 90_000 }, async () => {
    const run = call('cancel-ringing.xml', 'ring', ['-d', '1500']);
    const events: Json[] = [];
    // (The events of the calls before are still queued: this call's channel is the one dialling `ring`.)
    const created = await nextEvent(peer.events, (event) => event.type === 'ChannelCreated' && event.channel?.dialplan?.exten === 'ring', 20_000);
    await untilDestroyed(created.channel.id, events);
    assert.equal((await run.done).status, 0);
    assert.deepEqual(qosOf(events, created.channel.id), []);
  });
});
