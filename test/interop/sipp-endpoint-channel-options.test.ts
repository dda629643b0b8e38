// The endpoint options that give each of its channels something of its own, as chan_pjsip does,
// with SIPp as the phone: set_var (several lines in pjsip.conf, `__` inheritance kept in the name,
// escapes decoded), accountcode (ChannelCreated, CHANNEL(accountcode), the CDR) and callerid_tag
// (CALLERID(tag)), on a call from the phone and on one the server places to it; device_state_busy_at;
// user_eq_phone; moh_suggest; allow_transfer=no
// (a REFER answered 603, the call left as it was).
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { CallDetailRecord } from '../../src/core/cdr/record.ts';
import { HAVE_SIPP, HAVE_SOX, callSippCallee, nextEvent, ofChannel, randomPort, sipp, sippServerInSuite, tracedMessages, startSippServer, waitFor, writeSippTone, type Json } from './sipp-peer.ts';

const APP = 'endpoint-vars-app';
const CALLEE_PORT = randomPort();
let TRUNK_PORT = randomPort();
while (TRUNK_PORT === CALLEE_PORT) TRUNK_PORT = randomPort();
const records: CallDetailRecord[] = [];

const DIALPLAN = [
  '[billing]',
  // What the dialplan sees of the endpoint's options, in one variable the test reads over ARI.
  'exten => 300,1,Set(SEEN=${TRUNK}|${GREETING}|${CHANNEL(accountcode)}|${CALLERID(tag)})',
  ` same => n,Stasis(${APP})`,
  ' same => n,Hangup()',
  `exten => 400,1,Stasis(${APP})`,
  '',
].join('\n');

/** pjsip.conf as an Asterisk admin writes it: set_var on several lines, one of them written again. */
function pjsipConf(work: string): Json {
  const dir = join(work, 'asterisk');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'pjsip.conf'),
    [
      '[billed]',
      'type = endpoint',
      'context = billing',
      'allow = ulaw',
      'accountcode = acct-7',
      'callerid_tag = north-desk',
      'set_var = __TRUNK=south',
      'set_var = GREETING=hello\\tworld',
      'set_var = __TRUNK=east',
      '',
      '[callee]',
      'type = endpoint',
      'context = billing',
      'allow = ulaw',
      'aors = callee',
      'accountcode = acct-out',
      'callerid_tag = callee-tag',
      'set_var = _ROUTE=via-ari',
      '',
      '[busy1]',
      'type = endpoint',
      'context = billing',
      'allow = ulaw',
      'device_state_busy_at = 1',
      '',
      '[jazzy]',
      'type = endpoint',
      'context = billing',
      'allow = ulaw',
      'moh_suggest = jazz',
      '',
      '[locked]',
      'type = endpoint',
      'context = billing',
      'allow = ulaw',
      'allow_transfer = no',
      '',
      '[phonetrunk]',
      'type = endpoint',
      'context = billing',
      'allow = ulaw',
      'aors = phonetrunk',
      'user_eq_phone = yes',
      'callerid = "Desk" <+15550100>',
      '',
      '[phonetrunk]',
      'type = aor',
      `contact = sip:phonetrunk@127.0.0.1:${TRUNK_PORT}`,
      '',
      '[callee]',
      'type = aor',
      `contact = sip:callee@127.0.0.1:${CALLEE_PORT}`,
      '',
    ].join('\n'),
  );
  return { asterisk_config_dir: dir };
}

const setup = sippServerInSuite(HAVE_SIPP && HAVE_SOX ? false : 'sipp or sox is not installed', async () => {
  const started = await startSippServer('endpoint-vars', DIALPLAN, {}, APP, pjsipConf);
  writeSippTone(started.work, 440, 4, 0.3);
  started.server.core.records.onRecord((record) => records.push(record));
  return started;
});

async function variable(id: string, name: string): Promise<string> {
  const response = await setup.server.ari(`/channels/${id}/variable?variable=${encodeURIComponent(name)}`);
  const body = (await response.json()) as Json;
  assert.equal(response.status, 200, JSON.stringify(body));
  return body.value as string;
}

describe('set_var, accountcode and callerid_tag on the endpoint\'s channels (SIPp)', { skip: HAVE_SIPP && HAVE_SOX ? false : 'sipp or sox is not installed' }, () => {
  test('a call from the phone: the variables set as the channel is made, before SIPDOMAIN; accountcode in every snapshot and the CDR; CALLERID(tag)', { timeout: 120_000 }, async () => {
    const seen: Json[] = [];
    const run = sipp('call-silent-wait-bye.xml', [setup.target(), '-s', '300', '-set', 'caller', 'billed'], { cwd: setup.work, port: randomPort(), timeoutMs: 60_000 });
    const start = await nextEvent(setup.events, (event) => (seen.push(event), event.type === 'StasisStart' && event.channel?.name?.startsWith('PJSIP/billed-')), 45_000);
    const id = start.channel.id as string;
    assert.equal(start.channel.accountcode, 'acct-7');
    assert.equal(await variable(id, 'SEEN'), 'east|hello\tworld|acct-7|north-desk');
    assert.equal(await variable(id, 'CALLERID(tag)'), 'north-desk');
    assert.equal(await variable(id, 'DEVICE_STATE(PJSIP/billed)'), 'INUSE', 'no device_state_busy_at: the channels\' states');
    const mine = seen.filter((event) => event.channel?.id === id);
    assert.equal(mine[0]?.type, 'ChannelCreated');
    assert.equal(mine[0]?.channel.accountcode, 'acct-7', 'the channel is made with the account');
    const sets = mine.filter((event) => event.type === 'ChannelVarset').map((event) => `${event.variable}=${event.value}`);
    // The name keeps its inheritance prefix; the line written again kept its first place.
    assert.deepEqual(sets.slice(0, 3), ['__TRUNK=east', 'GREETING=hello\tworld', 'SIPDOMAIN=127.0.0.1']);
    // The phone's scenario is a call answered, then hung up by the far end.
    assert.equal((await setup.server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
    await nextEvent(setup.events, (event) => event.type === 'ChannelStateChange' && event.channel?.id === id && event.channel.state === 'Up', 45_000);
    assert.equal((await setup.server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
    await nextEvent(setup.events, ofChannel('ChannelDestroyed', id), 45_000);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    const record = await waitFor('the CDR', () => records.find((r) => r.channel === start.channel.name), 30_000);
    assert.equal(record.accountcode, 'acct-7');
  });

  test('a call the server places to the endpoint: its channel has the account, the tag and the variables of its endpoint', { timeout: 120_000 }, async () => {
    let id = '';
    let name = '';
    await callSippCallee(setup, { port: CALLEE_PORT, endpoint: 'PJSIP/callee', app: APP, eventTimeoutMs: 45_000 }, 'answer-incoming.xml', async (answered) => {
      id = answered;
      const channel = (await (await setup.server.ari(`/channels/${id}`)).json()) as Json;
      name = channel.name as string;
      assert.equal(channel.accountcode, 'acct-out');
      assert.equal(await variable(id, 'ROUTE'), 'via-ari');
      assert.equal(await variable(id, '_ROUTE'), 'via-ari');
      assert.equal(await variable(id, 'CALLERID(tag)'), 'callee-tag');
      assert.equal(await variable(id, 'CHANNEL(accountcode)'), 'acct-out');
      assert.equal((await setup.server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
      await nextEvent(setup.events, ofChannel('ChannelDestroyed', id), 45_000);
    });
    const record = await waitFor('the CDR', () => records.find((r) => r.channel === name), 30_000);
    assert.equal(record.accountcode, 'acct-out');
  });

  test('allow_transfer=no: the phone\'s REFER is answered 603 Decline, the application sees no transfer, and the call goes on until the phone hangs up', { timeout: 120_000 }, async () => {
    const seen: Json[] = [];
    const run = sipp('refer-refused.xml', [setup.target(), '-s', '400', '-set', 'caller', 'locked'], { cwd: setup.work, port: randomPort(), timeoutMs: 60_000, trace: true });
    const start = await nextEvent(setup.events, (event) => event.type === 'StasisStart' && event.channel?.name?.startsWith('PJSIP/locked-'), 45_000);
    const id = start.channel.id as string;
    assert.equal((await setup.server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
    // The phone hangs up only once its REFER was refused: the BYE's hang-up request is after it.
    const hangup = await nextEvent(setup.events, (event) => (seen.push(event), event.type === 'ChannelHangupRequest' && event.channel?.id === id), 45_000);
    assert.equal(hangup.cause, undefined, 'the BYE, not a transfer, ended the call');
    await nextEvent(setup.events, ofChannel('ChannelDestroyed', id), 45_000);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
    assert.deepEqual(seen.filter((event) => event.type === 'ChannelTransfer'), []);
    const [refusal] = tracedMessages(result, /^SIP\/2\.0 603 /);
    assert.ok(refusal, result.messages);
    assert.match(refusal, /^CSeq:\s*2 REFER/im);
    assert.deepEqual(tracedMessages(result, /^NOTIFY /), []);
  });

  test('device_state_busy_at=1: the endpoint\'s device is BUSY with its one call, ringing as answered', { timeout: 120_000 }, async () => {
    const run = sipp('call-silent-wait-bye.xml', [setup.target(), '-s', '400', '-set', 'caller', 'busy1'], { cwd: setup.work, port: randomPort(), timeoutMs: 60_000 });
    const start = await nextEvent(setup.events, (event) => event.type === 'StasisStart' && event.channel?.name?.startsWith('PJSIP/busy1-'), 45_000);
    const id = start.channel.id as string;
    assert.equal(await variable(id, 'DEVICE_STATE(PJSIP/busy1)'), 'BUSY', 'ringing in, one channel in use');
    assert.equal((await setup.server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
    await nextEvent(setup.events, (event) => event.type === 'ChannelStateChange' && event.channel?.id === id && event.channel.state === 'Up', 45_000);
    assert.equal(await variable(id, 'DEVICE_STATE(PJSIP/busy1)'), 'BUSY', 'answered');
    assert.equal((await setup.server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
    await nextEvent(setup.events, ofChannel('ChannelDestroyed', id), 45_000);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
  });

  test('user_eq_phone=yes: our INVITE to a number carries ;user=phone on its Request-URI, To and From; a user that is no number is left alone', { timeout: 120_000 }, async () => {
    /** ARI calls `user@phonetrunk` as the caller `+15550100`; SIPp answers; resolves with the INVITE SIPp got. */
    const inviteTo = async (user: string): Promise<string> => {
      const run = sipp('answer-incoming.xml', [], { cwd: setup.work, port: TRUNK_PORT, timeoutMs: 60_000, trace: true });
      await run.listening;
      const created = await setup.server.ari(`/channels?endpoint=${encodeURIComponent(`PJSIP/${user}@phonetrunk`)}&app=${APP}&callerId=${encodeURIComponent('+15550100')}`, { method: 'POST' });
      const channel = (await created.json()) as Json;
      assert.equal(created.status, 200, JSON.stringify(channel));
      await nextEvent(setup.events, (event) => event.type === 'ChannelStateChange' && event.channel?.id === channel.id && event.channel.state === 'Up', 45_000);
      assert.equal((await setup.server.ari(`/channels/${channel.id}`, { method: 'DELETE' })).status, 204);
      await nextEvent(setup.events, ofChannel('ChannelDestroyed', channel.id), 45_000);
      const result = await run.done;
      assert.equal(result.status, 0, result.output);
      const [invite] = tracedMessages(result, /^INVITE /);
      assert.ok(invite, result.messages);
      return invite;
    };
    const invite = await inviteTo('5551234');
    assert.match(invite, /^INVITE sip:5551234@127\.0\.0\.1:\d+;user=phone SIP\/2\.0/);
    assert.match(invite, /^To:\s*<sip:5551234@127\.0\.0\.1:\d+;user=phone>/im);
    assert.match(invite, /^From:[^\r\n]*<sip:\+15550100@[^>;]+;user=phone>;tag=/im);
    const plain = await inviteTo('desk-7');
    assert.match(plain, /^INVITE sip:desk-7@127\.0\.0\.1:\d+ SIP\/2\.0/);
    assert.match(plain, /^To:\s*<sip:desk-7@127\.0\.0\.1:\d+>/im);
    assert.match(plain, /^From:[^\r\n]*<sip:\+15550100@[^>;]+;user=phone>;tag=/im, 'the From\'s user is still a number');
  });

  test('moh_suggest=jazz: the phone\'s hold re-INVITE raises ChannelHold with musicclass jazz', { timeout: 120_000 }, async () => {
    const run = sipp('hold-resume.xml', [setup.target(), '-s', '400', '-set', 'caller', 'jazzy'], { cwd: setup.work, port: randomPort(), timeoutMs: 60_000 });
    const start = await nextEvent(setup.events, (event) => event.type === 'StasisStart' && event.channel?.name?.startsWith('PJSIP/jazzy-'), 45_000);
    const id = start.channel.id as string;
    assert.equal((await setup.server.ari(`/channels/${id}/answer`, { method: 'POST' })).status, 204);
    const hold = await nextEvent(setup.events, ofChannel('ChannelHold', id), 45_000);
    assert.equal(hold.musicclass, 'jazz');
    await nextEvent(setup.events, ofChannel('ChannelUnhold', id), 45_000);
    await nextEvent(setup.events, ofChannel('ChannelDestroyed', id), 45_000);
    const result = await run.done;
    assert.equal(result.status, 0, result.output);
  });
});
