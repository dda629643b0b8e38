// The `h` extension runs while the hung-up channel still exists, as Asterisk 22's __ast_pbx_run
// runs it before ast_hangup: after the soft APPUNLOAD hang-up request, before ChannelDestroyed, with
// applications that wait returning at once (Wait(1000) ends the extension), and before the CDR is
// posted (CDR(userfield) written in `h` reaches the record; lastapp stays the call's). Each expected
// sequence is what Asterisk 22.10.1 sent for the same Local channel flow
// (captured: /work/tools/hext37-captures/ast-local-delete.txt, ast-local-hangup.txt).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CallDetailRecord } from '../../src/core/cdr/record.ts';
import { channelName, channelOf, collectUntil, startWatchedPbx, stopWatchedPbx, type AriEvent } from './pbx-helpers.ts';
import type { EventSocket } from '../helpers/server.ts';
import type { PbxServer } from './pbx-helpers.ts';

const DIALPLAN = `
[hext]
exten => bye,1,Answer()
 same => n,Set(CDR(userfield)=main)
 same => n,Wait(30)
exten => hang,1,Answer()
 same => n,Set(CDR(userfield)=main)
 same => n,Wait(0.3)
 same => n,Hangup()
exten => h,1,NoOp(h starts \${CDR(userfield)})
 same => n,Set(CDR(userfield)=from-h)
 same => n,UserEvent(HExten,uf: \${CDR(userfield)},cause: \${HANGUPCAUSE})
 same => n,Wait(1000)
 same => n,UserEvent(AfterWait)
`;

let pbx: PbxServer;
let events: EventSocket;
const posted: CallDetailRecord[] = [];
before(async () => {
  ({ pbx, events } = await startWatchedPbx(DIALPLAN));
  pbx.server.core.records.onRecord((record) => posted.push(record));
});
after(() => stopWatchedPbx({ pbx, events }));

/** One line per event, as the capture script prints the ones that matter here. */
function describeEvent(event: AriEvent): string {
  const name = channelName(event).replace(/-[0-9a-f]+;/, ';');
  const dialplan = channelOf(event).dialplan as Record<string, unknown> | undefined;
  const where = dialplan ? ` @${String(dialplan.exten)},${String(dialplan.priority)} ${String(dialplan.app_name)}` : '';
  switch (event.type) {
    case 'ChannelHangupRequest':
      return `${event.type} ${name} ${String(event.cause)}${event.soft ? ' soft' : ''}`;
    case 'ChannelDestroyed':
      return `${event.type} ${name} ${String(event.cause)}${where}`;
    case 'ChannelVarset':
      return `${event.type} ${name} ${String(event.variable)}=${String(event.value)}`;
    case 'ChannelUserevent': {
      // Compared by content: the order of the fields in the JSON is not what is checked here.
      const fields = event.userevent as Record<string, string>;
      return `${event.type} ${name} ${Object.keys(fields).sort().map((key) => `${key}=${fields[key]}`).join(' ')}`;
    }
    default:
      return `${event.type} ${name}${where}`;
  }
}

const SHOWN = new Set(['ChannelHangupRequest', 'StasisEnd', 'ChannelVarset', 'ChannelDialplan', 'ChannelUserevent', 'ChannelDestroyed']);

async function originate(exten: string): Promise<{ one: string; two: string }> {
  const response = await pbx.server.ari(`/channels?endpoint=Local/${exten}@hext&app=pbx-watch`, { method: 'POST' });
  assert.equal(response.status, 200);
  const { id, name } = (await response.json()) as { id: string; name: string };
  await collectUntil(events, (event) => event.type === 'StasisStart' && channelOf(event).id === id, 10_000);
  return { one: id, two: name.replace(/;1$/, ';2') };
}

/** The events from the first hang-up request on, until both halves are destroyed. */
async function untilBothDestroyed(two: string): Promise<string[]> {
  const one = two.replace(/;2$/, ';1');
  const destroyed = new Set<string>();
  const seen = await collectUntil(
    events,
    (event) => {
      if (event.type === 'ChannelDestroyed') destroyed.add(channelName(event));
      return destroyed.has(one) && destroyed.has(two);
    },
    15_000,
  );
  const first = seen.findIndex((event) => event.type === 'ChannelHangupRequest');
  return seen.slice(first).filter((event) => SHOWN.has(event.type)).map(describeEvent);
}

const recordOf = (channel: string): Promise<CallDetailRecord> =>
  (async () => {
    for (let tries = 0; tries < 200; tries++) {
      const record = posted.find((r) => r.channel === channel);
      if (record) return record;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no record for ${channel}`);
  })();

describe('the h extension runs before the channel is destroyed', () => {
  test('a Local ;1 deleted by ARI: ;1 goes, then ;2 runs h and is destroyed after it', { timeout: 60_000 }, async () => {
    const { one, two } = await originate('bye');
    // The `;2` is in Wait(30) once it has set the userfield.
    await collectUntil(events, (event) => event.type === 'ChannelDialplan' && channelName(event) === two && event.dialplan_app === 'Wait', 10_000);
    assert.equal((await pbx.server.ari(`/channels/${one}`, { method: 'DELETE' })).status, 204);
    assert.deepEqual(await untilBothDestroyed(two), [
      'ChannelHangupRequest Local/bye@hext;1 32 soft',
      'StasisEnd Local/bye@hext;1 @bye,1 Stasis',
      'ChannelVarset Local/bye@hext;1 STASISSTATUS=SUCCESS',
      'ChannelHangupRequest Local/bye@hext;2 16',
      'ChannelDestroyed Local/bye@hext;1 16 @bye,1 AppDial2',
      'ChannelHangupRequest Local/bye@hext;2 16 soft',
      'ChannelDialplan Local/bye@hext;2 @h,1 NoOp',
      'ChannelDialplan Local/bye@hext;2 @h,2 Set',
      'ChannelDialplan Local/bye@hext;2 @h,3 UserEvent',
      'ChannelUserevent Local/bye@hext;2 cause=16 eventname=HExten uf=from-h',
      'ChannelDialplan Local/bye@hext;2 @h,4 Wait',
      'ChannelDestroyed Local/bye@hext;2 16 @h,4 ',
    ]);
    const record = await recordOf(two);
    assert.equal(record.userfield, 'from-h');
    assert.equal(record.lastapp, 'Wait');
    assert.equal(record.lastdata, '30');
    assert.equal(record.dst, 'bye');
  });

  test('Hangup() in the ;2 dialplan: h runs before the technology is told, so ;1 hangs up after it', { timeout: 60_000 }, async () => {
    const { two } = await originate('hang');
    assert.deepEqual(await untilBothDestroyed(two), [
      'ChannelHangupRequest Local/hang@hext;2 16 soft',
      'ChannelDialplan Local/hang@hext;2 @h,1 NoOp',
      'ChannelDialplan Local/hang@hext;2 @h,2 Set',
      'ChannelDialplan Local/hang@hext;2 @h,3 UserEvent',
      'ChannelUserevent Local/hang@hext;2 cause=16 eventname=HExten uf=from-h',
      'ChannelDialplan Local/hang@hext;2 @h,4 Wait',
      'ChannelHangupRequest Local/hang@hext;1 16',
      // As without an `h` extension, ;2 is destroyed before ;1's Stasis notices the hang-up (Asterisk
      // 22: 6 of 7 captures; the 7th, ast-local-hangup-0-rare-order.txt, had ;1 first).
      'ChannelDestroyed Local/hang@hext;2 16 @h,4 ',
      'StasisEnd Local/hang@hext;1 @hang,1 Stasis',
      'ChannelVarset Local/hang@hext;1 STASISSTATUS=SUCCESS',
      'ChannelDestroyed Local/hang@hext;1 16 @hang,1 AppDial2',
    ]);
    const record = await recordOf(two);
    assert.equal(record.userfield, 'from-h');
    assert.equal(record.lastapp, 'Hangup');
  });

  test('the h extension is looked up once per hang-up: the step found when the hang-up is taken over is the one run', { timeout: 60_000 }, async () => {
    // Counts the dialplan's lookups of h,1 (every lookup of an extension goes through find) while one call ends.
    const dialplan = pbx.server.core.dialplan;
    const find = dialplan.find;
    let lookups = 0;
    dialplan.find = function (context, exten, priority, callerId) {
      if (exten === 'h' && priority === 1) lookups++;
      return find.call(this, context, exten, priority, callerId);
    };
    try {
      const { two } = await originate('hang');
      const seen = await untilBothDestroyed(two);
      assert.ok(seen.includes('ChannelDialplan Local/hang@hext;2 @h,1 NoOp'), 'the h extension ran');
      assert.ok(seen.indexOf('ChannelDialplan Local/hang@hext;2 @h,4 Wait') < seen.indexOf('ChannelDestroyed Local/hang@hext;2 16 @h,4 '), 'before ChannelDestroyed');
      assert.equal(lookups, 1, 'one lookup of h for the one hang-up that runs it');
    } finally {
      dialplan.find = find;
    }
  });
});
