// SIPp calls into a dialplan with an `h` extension: the extension runs while the channel still
// exists, as in Asterisk 22 (__ast_pbx_run runs it before ast_hangup): after the soft APPUNLOAD
// hang-up request, before ChannelDestroyed, its Wait(1000) returning at once; the CDR is posted
// after it, so the userfield it writes reaches the record. Expected sequences: what Asterisk 22.10.1
// sent for the same flows (captured: /work/tools/hext37-captures/ast-bye.txt, ast-delete.txt,
// ast-dialplan-hangup.txt, ast-stasis-bye.txt).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CallDetailRecord } from '../../src/core/cdr/record.ts';
import { hangupStory as storyOf } from './hangup-story.ts';
import { HAVE_SIPP, HAVE_SOX, nextEvent, sippCall, startSippServer, waitFor, writeSippTone, type Json, type SippServer } from './sipp-peer.ts';

const DIALPLAN = `
[hext-in]
exten => bye,1,Goto(hext,bye,1)
exten => hang,1,Goto(hext,hang,1)
exten => stasis,1,Goto(hext,stasis,1)

[hext]
exten => bye,1,Answer()
 same => n,Set(CDR(userfield)=main)
 same => n,Wait(30)
exten => hang,1,Answer()
 same => n,Set(CDR(userfield)=main)
 same => n,Wait(2)
 same => n,Hangup()
exten => stasis,1,Answer()
 same => n,Set(CDR(userfield)=main)
 same => n,Stasis(hext-watch)
exten => h,1,NoOp(h starts \${CDR(userfield)})
 same => n,Set(CDR(userfield)=from-h)
 same => n,UserEvent(HExten,uf: \${CDR(userfield)},qos: \${IF(\$[\${LEN(\${RTPAUDIOQOS})} > 0]?set:empty)})
 same => n,Wait(1000)
 same => n,UserEvent(AfterWait)
`;

let peer: SippServer;
const posted: CallDetailRecord[] = [];

before(async () => {
  if (!HAVE_SIPP) return;
  peer = await startSippServer('sipp-hangup-extension', DIALPLAN, { endpoint: { bob: { context: 'hext-in', allow: 'ulaw' } } }, 'hext-watch');
  if (HAVE_SOX) writeSippTone(peer.work, 440, 30, 0.5);
  peer.server.core.records.onRecord((record) => posted.push(record));
});

after(async () => {
  if (HAVE_SIPP) await peer.close();
});

const call = (scenario: string, exten: string, extra: string[] = []) => sippCall(peer, 'bob', scenario, exten, extra);

/** The call's events from its first hang-up request to its ChannelDestroyed, as the capture lists them (quality variables aside). */
const hangupStory = (channelId: string, seen: Json[]): Promise<string[]> =>
  storyOf(peer, channelId, seen, {
    where: (dialplan) => `@${dialplan.exten},${dialplan.priority} ${dialplan.app_name}`,
    userevent: (event) => `Userevent ${event.eventname} uf=${event.userevent.uf} qos=${event.userevent.qos}`,
    destroyed: (where) => `Destroyed ${where}`,
  });

/**
 * The `h` steps; `qos` whether ${RTPAUDIOQOS} was set when they ran: yes after the far end's BYE or
 * an ARI DELETE, not after Hangup() (chan_pjsip sets it as the technology hangs up, after `h`).
 */
const hSteps = (qos: 'set' | 'empty'): string[] => ['Dialplan @h,1 NoOp', 'Dialplan @h,2 Set', 'Dialplan @h,3 UserEvent', `Userevent HExten uf=from-h qos=${qos}`, 'Dialplan @h,4 Wait'];

async function assertRecord(channelName: string, lastapp: string, lastdata: string): Promise<void> {
  const record = await waitFor('the record', () => posted.find((r) => r.channel === channelName), 20_000);
  assert.equal(record.userfield, 'from-h');
  assert.equal(record.lastapp, lastapp);
  assert.equal(record.lastdata, lastdata);
  assert.equal(record.dcontext, 'hext');
}

describe('the h extension of a SIP call', { skip: HAVE_SIPP && HAVE_SOX ? false : 'sipp or sox is not installed' }, () => {
  test('the caller\'s BYE: APPUNLOAD, h, then ChannelDestroyed; the userfield h wrote is in the CDR', { timeout: 90_000 }, async () => {
    const seen: Json[] = [];
    const run = call('call-hangup.xml', 'bye', ['-d', '2000']);
    const start = await nextEvent(peer.events, (event) => (seen.push(event), event.type === 'ChannelCreated' && event.channel?.name.startsWith('PJSIP/bob-')), 20_000);
    // The BYE's own hang-up request has no `cause`, as in Asterisk's capture (chan_pjsip queues it without one).
    assert.deepEqual(await hangupStory(start.channel.id, seen), ['HangupRequest', 'HangupRequest 16 soft', ...hSteps('set'), 'Destroyed @h,4 ']);
    assert.equal((await run.done).status, 0);
    await assertRecord(start.channel.name, 'Wait', '30');
  });

  test('ARI DELETE: the EXPLICIT request, APPUNLOAD, h, then ChannelDestroyed', { timeout: 90_000 }, async () => {
    const seen: Json[] = [];
    const run = call('call-wait-bye.xml', 'bye');
    const start = await nextEvent(peer.events, (event) => (seen.push(event), event.type === 'ChannelDialplan' && event.dialplan_app === 'Wait' && event.channel?.name.startsWith('PJSIP/bob-')), 20_000);
    assert.equal((await peer.server.ari(`/channels/${start.channel.id}`, { method: 'DELETE' })).status, 204);
    assert.deepEqual(await hangupStory(start.channel.id, seen), ['HangupRequest 32 soft', 'HangupRequest 16 soft', ...hSteps('set'), 'Destroyed @h,4 ']);
    assert.equal((await run.done).status, 0);
    await assertRecord(start.channel.name, 'Wait', '30');
  });

  test('the dialplan\'s Hangup(): one APPUNLOAD request, h, then ChannelDestroyed (the BYE after h)', { timeout: 90_000 }, async () => {
    const seen: Json[] = [];
    const run = call('call-wait-bye.xml', 'hang');
    const start = await nextEvent(peer.events, (event) => (seen.push(event), event.type === 'ChannelCreated' && event.channel?.name.startsWith('PJSIP/bob-')), 20_000);
    assert.deepEqual(await hangupStory(start.channel.id, seen), ['HangupRequest 16 soft', ...hSteps('empty'), 'Destroyed @h,4 ']);
    assert.equal((await run.done).status, 0);
    await assertRecord(start.channel.name, 'Hangup', '');
  });

  test('the caller\'s BYE while in Stasis() from the dialplan: StasisEnd, APPUNLOAD, h, then ChannelDestroyed', { timeout: 90_000 }, async () => {
    const seen: Json[] = [];
    const run = call('call-hangup.xml', 'stasis', ['-d', '2000']);
    const start = await nextEvent(peer.events, (event) => (seen.push(event), event.type === 'StasisStart' && event.channel?.name.startsWith('PJSIP/bob-')), 20_000);
    assert.deepEqual(await hangupStory(start.channel.id, seen), ['HangupRequest', 'StasisEnd', 'HangupRequest 16 soft', ...hSteps('set'), 'Destroyed @h,4 ']);
    assert.equal((await run.done).status, 0);
    await assertRecord(start.channel.name, 'Stasis', 'hext-watch');
  });
});
