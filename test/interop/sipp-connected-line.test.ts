// Connected line over SIP (chan_pjsip, res_pjsip_caller_id), with SIPp on both sides: alice calls
// bob through Dial(); once answered alice is told whom she talks to (bob's caller id) by a re-INVITE,
// or by an UPDATE when her Allow lists UPDATE or her endpoint says connected_line_method=update,
// with P-Asserted-Identity (send_pai); nothing with send_connected_line=no. A trusted bob's UPDATE
// with P-Asserted-Identity becomes his caller id and alice's connected line (ChannelCallerId,
// ChannelConnectedLine).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { explained, HAVE_SIPP, nextEvent, randomPort, sipp, sippListening, sippServerInSuite, startSippServer, tracedMessages, waitFor, writeSippTone, type Json, type SippRun } from './sipp-peer.ts';

const BOB_PORT = randomPort();
const APP = 'colp';
const DIALPLAN = `
[colp]
exten => 100,1,Dial(PJSIP/bob,30)
 same => n,Hangup()
exten => 101,1,Dial(PJSIP/bobc,30)
 same => n,Hangup()
; What the caller's dialplan reads of its connected line once the call is over.
exten => h,1,Set(SEEN=\${CONNECTEDLINE(name)}|\${CONNECTEDLINE(num)})
`;

const phone = { context: 'colp', allow: 'ulaw' };
const RES_PJSIP = {
  endpoint: {
    alice: { ...phone, send_pai: 'yes' },
    alicu: { ...phone, send_pai: 'yes', connected_line_method: 'update' },
    alicn: { ...phone, send_pai: 'yes', send_connected_line: 'no' },
    alicp: phone,
    alicr: { ...phone, send_pai: 'yes', rpid_immediate: 'yes' },
    bob: { ...phone, aors: 'bob', trust_id_inbound: 'yes' },
    // A callee with a callerid of its own: its outbound channel starts with it (chan_pjsip's).
    bobc: { ...phone, aors: 'bob', callerid: '"Bob" <200>' },
  },
  aor: { bob: { contact: `sip:bob@127.0.0.1:${BOB_PORT}` } },
};

const setup = sippServerInSuite(HAVE_SIPP ? false : 'sipp is not installed', () => startSippServer('sipp-colp', DIALPLAN, RES_PJSIP, APP));

/**
 * How alice's update names bob: his channel's caller id, which Dial() gives a callee without a caller
 * number of its own: the extension dialled. bobc's endpoint has a callerid, which his channel keeps.
 */
const BOB = '<sip:100@HOST>';
const BOBC = '"Bob" <sip:200@HOST>';
const WITHOUT_UPDATE = 'INVITE, ACK, CANCEL, BYE, OPTIONS';
const WITH_UPDATE = 'INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE';

/** A SIPp bob on BOB_PORT running `scenario`, once it listens. */
async function bob(scenario: string, args: string[] = []): Promise<{ done: Promise<SippRun> }> {
  // The phones stream audio.wav once answered.
  if (!existsSync(join(setup.work, 'audio.wav'))) writeSippTone(setup.work, 440, 2, 0.3);
  const run = sipp(scenario, ['-mp', String(2 * Math.floor(randomPort() / 2)), ...args], { cwd: setup.work, port: BOB_PORT, timeoutMs: 60_000, trace: true });
  await sippListening(BOB_PORT);
  return run;
}

/** `caller` (SIPp, `scenario`, traced) calls 100. */
function caller(name: string, scenario: string, extra: string[] = [], exten = '100'): { done: Promise<SippRun> } {
  const mediaPort = 2 * Math.floor(randomPort() / 2);
  return sipp(scenario, [setup.target(), '-s', exten, '-set', 'caller', name, '-mp', String(mediaPort), ...extra], { cwd: setup.work, timeoutMs: 60_000, trace: true });
}

/** Reads events until `caller`'s channel is destroyed; every SIPp must end well and every channel go. */
async function finish(name: string, runs: Array<{ done: Promise<SippRun> }>, events: Json[] = []): Promise<{ events: Json[]; results: SippRun[] }> {
  await nextEvent(setup.events, (event) => (events.push(event), event.type === 'ChannelDestroyed' && String(event.channel?.name).startsWith(`PJSIP/${name}-`)), 90_000);
  const results = await Promise.all(runs.map((run) => run.done));
  for (const result of results) assert.equal(result.status, 0, `${result.output}\n${result.messages.slice(-3000)}`);
  await waitFor('every channel to end', () => (setup.server.core.channels.size === 0 ? true : undefined), 30_000);
  return { events, results };
}

const headerLines = (message: string, name: string): string[] => message.split(/\r?\n/).filter((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`)).map((line) => line.slice(name.length + 1).trim());
/** The server's requests to a caller (its own INVITE to 100, traced too, is not one). */
const requestsTo = (run: SippRun, method: string): string[] => tracedMessages(run, new RegExp(`^${method} sip:(?!100@)`));

describe('connected line over SIP, as chan_pjsip sends and res_pjsip_caller_id reads it', { skip: HAVE_SIPP ? false : 'sipp is not installed' }, () => {
  test('after the answer, alice (Allow without UPDATE) gets a re-INVITE with SDP naming bob in P-Asserted-Identity; bob, sending no PAI, gets nothing', { timeout: 180_000 }, async () => {
    const callee = await bob('answer-incoming.xml');
    const alice = caller('alice', 'colp-caller.xml', ['-set', 'allow', WITHOUT_UPDATE]);
    const [result] = (await finish('alice', [alice, callee])).results;
    const reinvites = requestsTo(result!, 'INVITE');
    assert.equal(reinvites.length, 1, result!.messages.slice(-3000));
    assert.deepEqual(headerLines(reinvites[0]!, 'P-Asserted-Identity').map((line) => line.replace(/@[^>;]+/, '@HOST')), [BOB]);
    assert.match(reinvites[0]!, /\r?\n\r?\nv=0/, 'the re-INVITE offers our SDP');
    assert.equal(requestsTo(result!, 'UPDATE').length, 0);
  });

  test("the callee's endpoint has callerid \"Bob\" <200>: alice's connected line becomes it (ChannelConnectedLine, CONNECTEDLINE) and her update names it", { timeout: 180_000 }, async () => {
    const callee = await bob('answer-incoming.xml');
    const alice = caller('alice', 'colp-caller.xml', ['-set', 'allow', WITH_UPDATE], '101');
    const events: Json[] = [];
    const connected = await nextEvent(setup.events, (e) => (events.push(e), e.type === 'ChannelConnectedLine' && String(e.channel?.name).startsWith('PJSIP/alice-') && e.channel?.connected?.number === '200'), 60_000);
    assert.equal(connected.channel.connected.name, 'Bob');
    const created = events.find((e) => e.type === 'ChannelCreated' && String(e.channel?.name).startsWith('PJSIP/bobc-'));
    assert.deepEqual(created?.channel?.caller, { name: 'Bob', number: '200' }, 'bobc is created with his endpoint\'s callerid');
    const { result } = await finish('alice', [alice, callee], events).then((done) => ({ result: done.results[0]! }));
    const seen = events.find((e) => e.type === 'ChannelVarset' && e.variable === 'SEEN' && String(e.channel?.name).startsWith('PJSIP/alice-'));
    assert.equal(seen?.value, 'Bob|200', 'CONNECTEDLINE(name) and (num) on alice');
    const updates = requestsTo(result, 'UPDATE');
    assert.equal(updates.length, 1, result.messages.slice(-3000));
    assert.deepEqual(headerLines(updates[0]!, 'P-Asserted-Identity').map((line) => line.replace(/@[^>;]+/, '@HOST')), [BOBC]);
    assert.ok(!events.some((e) => e.type === 'ChannelConnectedLine' && String(e.channel?.name).startsWith('PJSIP/alice-') && e.channel?.connected?.number === '101'), 'alice is never told the extension she dialled');
  });

  test("alice's Allow lists UPDATE: the update is an UPDATE without SDP (chan_pjsip's rule), though connected_line_method=invite", { timeout: 180_000 }, async () => {
    const callee = await bob('answer-incoming.xml');
    const alice = caller('alice', 'colp-caller.xml', ['-set', 'allow', WITH_UPDATE]);
    const [result] = (await finish('alice', [alice, callee])).results;
    const updates = requestsTo(result!, 'UPDATE');
    assert.equal(updates.length, 1, result!.messages.slice(-3000));
    assert.deepEqual(headerLines(updates[0]!, 'P-Asserted-Identity').map((line) => line.replace(/@[^>;]+/, '@HOST')), [BOB]);
    assert.deepEqual(headerLines(updates[0]!, 'Content-Length'), ['0']);
    assert.equal(requestsTo(result!, 'INVITE').length, 0);
  });

  test('connected_line_method=update: an UPDATE even when the Allow does not list it', { timeout: 180_000 }, async () => {
    const callee = await bob('answer-incoming.xml');
    const alice = caller('alicu', 'colp-caller.xml', ['-set', 'allow', WITHOUT_UPDATE]);
    const [result] = (await finish('alicu', [alice, callee])).results;
    const updates = requestsTo(result!, 'UPDATE');
    assert.equal(updates.length, 1, result!.messages.slice(-3000));
    assert.deepEqual(headerLines(updates[0]!, 'P-Asserted-Identity').map((line) => line.replace(/@[^>;]+/, '@HOST')), [BOB]);
  });

  test('rpid_immediate=yes: before the answer, Dial()\'s update of the caller goes at once as a 180 naming bob, though bob never rang; then the update after the answer', { timeout: 180_000 }, async () => {
    const callee = await bob('colp-callee-answer.xml');
    const alice = caller('alicr', 'colp-caller.xml', ['-set', 'allow', WITH_UPDATE]);
    const [result] = (await finish('alicr', [alice, callee])).results;
    const ringing = tracedMessages(result!, /^SIP\/2\.0 180/);
    assert.ok(ringing.length >= 1, result!.messages.slice(-3000));
    assert.deepEqual(headerLines(ringing[0]!, 'P-Asserted-Identity').map((line) => line.replace(/@[^>;]+/, '@HOST')), [BOB]);
    assert.equal(requestsTo(result!, 'UPDATE').length, 1);
  });

  test('send_connected_line=no: no re-INVITE or UPDATE once answered, and the 200 OK carries no P-Asserted-Identity', { timeout: 180_000 }, async () => {
    const callee = await bob('answer-incoming.xml');
    const alice = caller('alicn', 'call-wait-bye.xml');
    const events: Json[] = [];
    await explained(alice, async () => {
      const up = await nextEvent(setup.events, (e) => (events.push(e), e.type === 'ChannelStateChange' && e.channel?.state === 'Up' && String(e.channel?.name).startsWith('PJSIP/alicn-')), 60_000);
      await nextEvent(setup.events, (e) => (events.push(e), e.type === 'ChannelEnteredBridge' && String(e.channel?.name).startsWith('PJSIP/bob-')), 60_000);
      // What must not happen: a short fixed wait for an update that should never come.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const hangup = await setup.server.ari(`/channels/${String(up.channel.id)}`, { method: 'DELETE' });
      assert.equal(hangup.status, 204);
    });
    const [result] = (await finish('alicn', [alice, callee], events)).results;
    assert.equal(requestsTo(result!, 'INVITE').length, 0);
    assert.equal(requestsTo(result!, 'UPDATE').length, 0);
    const [ok] = tracedMessages(result!, /^SIP\/2\.0 200/);
    assert.ok(ok, 'alice got the 200 OK');
    assert.deepEqual(headerLines(ok, 'P-Asserted-Identity'), []);
  });

  test("a trusted bob's UPDATE with P-Asserted-Identity: ChannelCallerId on bob's channel, ChannelConnectedLine on alice's naming the new party", { timeout: 180_000 }, async () => {
    const callee = await bob('colp-callee-update.xml', ['-set', 'name', 'Carol Moved', '-set', 'number', '300']);
    const alice = caller('alicp', 'call-wait-bye.xml');
    const events: Json[] = [];
    await explained(callee, async () => {
      const connected = await nextEvent(setup.events, (e) => (events.push(e), e.type === 'ChannelConnectedLine' && String(e.channel?.name).startsWith('PJSIP/alicp-') && e.channel?.connected?.number === '300'), 60_000);
      assert.equal(connected.channel.connected.name, 'Carol Moved');
      const callerId = events.find((e) => e.type === 'ChannelCallerId' && String(e.channel?.name).startsWith('PJSIP/bob-') && e.channel?.caller?.number === '300');
      assert.ok(callerId, 'ChannelCallerId on bob naming 300');
      assert.equal(callerId.channel.caller.name, 'Carol Moved');
      assert.ok(events.indexOf(callerId) < events.indexOf(connected), 'bob’s caller id changes before alice’s connected line');
      const hangup = await setup.server.ari(`/channels/${String(connected.channel.id)}`, { method: 'DELETE' });
      assert.equal(hangup.status, 204);
    });
    await finish('alicp', [alice, callee], events);
  });
});
