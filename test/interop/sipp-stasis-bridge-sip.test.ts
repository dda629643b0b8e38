// SIP channels in a Stasis mixing bridge, against what Asterisk 22.10.1 sent a subscribe-all
// application for the same flow (three SIPp calls as endpoint `load` into Stasis, answered by the
// application; docs/differences.md "SIP channels in Stasis bridges"):
//   each call: ChannelCreated, ChannelVarset SIPDOMAIN (the Request-URI's host), ChannelDialplan, …;
//   A and B bridged: BRIDGEPEER and BRIDGEPVTCALLID (the other's SIP Call-ID) on both, then each
//   party's ChannelConnectedLine (the other's caller id);
//   C added: comma lists, BRIDGEPVTCALLID cleared on A and B;
//   A removed: A's BRIDGEPEER cleared, ChannelLeftBridge, C and B told each other with Call-IDs, and
//   C — whose connected line was still empty — gets ChannelConnectedLine (B's did not change: none);
//   C's BYE: ChannelHangupRequest (no cause field: chan_pjsip queues it without one), its variables cleared, ChannelLeftBridge, StasisEnd, … ChannelDestroyed;
//   the bridge deleted: B cleared, ChannelLeftBridge, BridgeDestroyed.
// Asterisk sets the same BRIDGEPEER values two or three times at each two-party reconfiguration
// (its native_rtp switch reconfigures again); Patchbay sets them once: repeats are left out here.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HAVE_SIPP, HAVE_SOX, nextEvent, randomPort, sipp, startSippServer, writeSippTone, type Json, type SippServer } from './sipp-peer.ts';

const APP = 'sipbridge';
const DIALPLAN = `
[sb-in]
exten => sb,1,Stasis(${APP})
 same => n,Hangup()
`;

let peer: SippServer;

before(async () => {
  if (!HAVE_SIPP || !HAVE_SOX) return;
  peer = await startSippServer('sipp-stasis-bridge-sip', DIALPLAN, { endpoint: { load: { context: 'sb-in', allow: 'ulaw' } } }, APP);
  writeSippTone(peer.work, 440, 60, 0.5);
});

after(async () => {
  if (HAVE_SIPP && HAVE_SOX) await peer.close();
});

/** Every event the application received, in order. */
const events: Json[] = [];
const until = (match: (event: Json) => boolean, timeoutMs = 30_000) => nextEvent(peer.events, (event) => (events.push(event), match(event)), timeoutMs);

/** A SIPp call as `load` into Stasis, answered by the application. */
async function enter(scenario: string, extra: string[] = []): Promise<{ id: string; callId: string; done: Promise<{ status: number | null }> }> {
  const mediaPort = 2 * Math.floor(randomPort() / 2);
  const run = sipp(scenario, [peer.target(), '-s', 'sb', '-set', 'caller', 'load', '-mp', String(mediaPort), ...extra], { cwd: peer.work, timeoutMs: 90_000 });
  const known = new Set(events.filter((event) => event.type === 'StasisStart').map((event) => event.channel.id));
  const start = await until((event) => event.type === 'StasisStart' && !known.has(event.channel.id));
  const id: string = start.channel.id;
  assert.equal((await peer.server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
  await until((event) => event.type === 'ChannelStateChange' && event.channel?.id === id && event.channel.state === 'Up');
  return { id, callId: start.channel.protocol_id, done: run.done };
}

/** The events from `from` on, as lines; RTPAUDIOQOS*, device states and repeated identical ChannelVarsets left out. */
function lines(from: number, names: Map<string, string>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const event of events.slice(from)) {
    if (event.type === 'DeviceStateChanged' || event.type === 'ChannelStateChange') continue;
    if (event.type === 'ChannelVarset' && String(event.variable).startsWith('RTPAUDIOQOS')) continue;
    const who = event.channel ? names.get(event.channel.id) ?? event.channel.name : '';
    let line = `${event.type} ${who}`.trim();
    if (event.type === 'ChannelVarset') line += ` ${event.variable}=${event.value}`;
    if (event.type === 'ChannelConnectedLine') line += ` ${event.channel.connected.name}/${event.channel.connected.number}`;
    if (event.type === 'ChannelHangupRequest' && event.soft) line += ' soft';
    if (event.type === 'ChannelVarset' && seen.has(line)) continue;
    seen.add(line);
    out.push(line);
  }
  return out;
}

describe('SIP channels in a Stasis mixing bridge (Asterisk 22 capture)', { skip: HAVE_SIPP && HAVE_SOX ? false : 'sipp or sox is not installed' }, () => {
  test('two, then three SIPp calls bridged; one removed, one hangs up by BYE, the bridge deleted', { timeout: 170_000 }, async () => {
    const a = await enter('call-wait-bye.xml');
    const b = await enter('call-wait-bye.xml');
    const names = new Map([[a.id, 'A'], [b.id, 'B']]);
    for (const party of [a, b]) {
      const channel = peer.server.channel(party.id)!;
      assert.match(channel.name, /^PJSIP\/load-[0-9a-f]{8}$/);
      assert.match(party.callId, /@127\.0\.0\.1$/, 'protocol_id is the SIP Call-ID');
    }
    // As chan_pjsip: SIPDOMAIN (the Request-URI's host) between ChannelCreated and ChannelDialplan, no other variable.
    const opening = events.filter((event) => event.channel?.id === a.id).slice(0, 5).map((event) => `${event.type}${event.variable ? ` ${event.variable}=${event.value}` : ''}`);
    assert.deepEqual(opening, ['ChannelCreated', 'ChannelVarset SIPDOMAIN=127.0.0.1', 'ChannelDialplan', 'ChannelVarset STASISSTATUS=', 'StasisStart']);
    const nameOf = (party: { id: string }) => peer.server.channel(party.id)!.name;
    const [nameA, nameB] = [nameOf(a), nameOf(b)];

    let mark = events.length;
    const bridge = (await (await peer.server.ari('/bridges?type=mixing', { method: 'POST' })).json()) as { id: string };
    assert.equal((await peer.server.ari(`/bridges/${bridge.id}/addChannel?channel=${a.id},${b.id}`, { method: 'POST' })).status, 204);
    await until((event) => event.type === 'ChannelConnectedLine' && event.channel?.id === b.id);
    assert.deepEqual(lines(mark, names), [
      'BridgeCreated',
      'ChannelEnteredBridge A',
      'ChannelEnteredBridge B',
      ...[`A BRIDGEPEER=${nameB}`, `A BRIDGEPVTCALLID=${b.callId}`, `B BRIDGEPEER=${nameA}`, `B BRIDGEPVTCALLID=${a.callId}`].map((line) => `ChannelVarset ${line}`),
      'ChannelConnectedLine A SIPp Caller/load',
      'ChannelConnectedLine B SIPp Caller/load',
    ]);

    // C hangs up by BYE 12 s after its answer: long enough for the add and the removal on a loaded machine.
    const c = await enter('call-hangup.xml', ['-d', '12000']);
    names.set(c.id, 'C');
    const nameC = nameOf(c);
    mark = events.length;
    assert.equal((await peer.server.ari(`/bridges/${bridge.id}/addChannel?channel=${c.id}`, { method: 'POST' })).status, 204);
    await until((event) => event.type === 'ChannelVarset' && event.channel?.id === b.id && event.variable === 'BRIDGEPVTCALLID');
    assert.deepEqual(lines(mark, names), [
      'ChannelEnteredBridge C',
      `ChannelVarset C BRIDGEPEER=${nameA},${nameB}`,
      `ChannelVarset A BRIDGEPEER=${nameC},${nameB}`,
      'ChannelVarset A BRIDGEPVTCALLID=',
      `ChannelVarset B BRIDGEPEER=${nameC},${nameA}`,
      'ChannelVarset B BRIDGEPVTCALLID=',
    ]);

    mark = events.length;
    assert.equal((await peer.server.ari(`/bridges/${bridge.id}/removeChannel?channel=${a.id}`, { method: 'POST' })).status, 204);
    await until((event) => event.type === 'ChannelConnectedLine' && event.channel?.id === c.id);
    assert.deepEqual(lines(mark, names), [
      'ChannelVarset A BRIDGEPEER=',
      'ChannelLeftBridge A',
      `ChannelVarset C BRIDGEPEER=${nameB}`,
      `ChannelVarset C BRIDGEPVTCALLID=${b.callId}`,
      `ChannelVarset B BRIDGEPEER=${nameC}`,
      `ChannelVarset B BRIDGEPVTCALLID=${c.callId}`,
      'ChannelConnectedLine C SIPp Caller/load',
    ]);
    assert.deepEqual(peer.server.channel(c.id)?.connected, { name: 'SIPp Caller', number: 'load' });

    mark = events.length;
    await until((event) => event.type === 'ChannelDestroyed' && event.channel?.id === c.id, 60_000);
    assert.equal((await c.done).status, 0);
    assert.deepEqual(lines(mark, names), [
      'ChannelHangupRequest C',
      'ChannelVarset C BRIDGEPEER=',
      'ChannelVarset C BRIDGEPVTCALLID=',
      'ChannelLeftBridge C',
      'StasisEnd C',
      'ChannelVarset C STASISSTATUS=SUCCESS',
      'ChannelHangupRequest C soft',
      'ChannelDestroyed C',
    ]);
    const byeRequest = events.find((event) => event.type === 'ChannelHangupRequest' && event.channel?.id === c.id)!;
    assert.equal('cause' in byeRequest, false, 'chan_pjsip queues the BYE\'s hang-up without a cause');
    const destroyed = events.find((event) => event.type === 'ChannelDestroyed' && event.channel?.id === c.id)!;
    assert.equal(destroyed.cause, 16);
    assert.deepEqual(destroyed.channel.connected, { name: 'SIPp Caller', number: 'load' }, 'the snapshot keeps the connected line the bridge gave it');

    mark = events.length;
    assert.equal((await peer.server.ari(`/bridges/${bridge.id}`, { method: 'DELETE' })).status, 204);
    await until((event) => event.type === 'BridgeDestroyed');
    assert.deepEqual(lines(mark, names), ['ChannelVarset B BRIDGEPEER=', 'ChannelVarset B BRIDGEPVTCALLID=', 'ChannelLeftBridge B', 'BridgeDestroyed']);

    for (const party of [a, b]) {
      assert.equal((await peer.server.ari(`/channels/${party.id}`, { method: 'DELETE' })).status, 204);
      await until((event) => event.type === 'ChannelDestroyed' && event.channel?.id === party.id);
      assert.equal((await party.done).status, 0);
    }
  });
});
