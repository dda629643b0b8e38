// Pickup() from the dialplan on Local channels: by PICKUPMARK, by extension@context and by group
// (groups set through CHANNEL(), the callee's in Dial()'s pre-dial handler), what a Dial() reports
// when its callee is picked up (DIALSTATUS, DIALEDPEERNAME, the Dial events, cause 26), and a
// Pickup() that finds nothing going on in the dialplan. SIP phones: test/interop/sipp-call-pickup.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { EventSocket } from '../helpers/server.ts';
import { channelName, channelOf, collectUntil, collectUntilAll, originate, type AriEvent, type PbxServer, withPbxEvents } from './pbx-helpers.ts';

const DIALPLAN = `
[pickup-test]
exten => ringing,1,Ringing()
 same => n,Wait(120)

exten => caller,1,Set(__PICKUPMARK=desk7)
 same => n,Dial(Local/ringing@pickup-test,,b(pickup-test^groups^1))
 same => n,Hangup()

exten => groups,1,Set(CHANNEL(callgroup)=4,9-10)
 same => n,Set(CHANNEL(namedcallgroup)=sales, support)
 same => n,Return()

exten => bymark,1,UserEvent(Picking)
 same => n,Pickup(nothing@PICKUPMARK&desk7@PICKUPMARK)
 same => n,UserEvent(NoPickup)

exten => byexten,1,UserEvent(Picking)
 same => n,Pickup(caller@pickup-test)
 same => n,UserEvent(NoPickup)

exten => bygroup,1,Set(CHANNEL(pickupgroup)=1-3,10)
 same => n,Set(PG=\${CHANNEL(pickupgroup)})
 same => n,Pickup()
 same => n,UserEvent(NoPickup)

exten => byname,1,Set(CHANNEL(namedpickupgroup)=support)
 same => n,Pickup()
 same => n,UserEvent(NoPickup)

exten => outside,1,Set(CHANNEL(pickupgroup)=5)
 same => n,Set(CHANNEL(namedpickupgroup)=marketing)
 same => n,Pickup()
 same => n,UserEvent(NoPickup,groups: \${CHANNEL(pickupgroup)}/\${CHANNEL(namedpickupgroup)})
`;

let pbx: PbxServer;
let events: EventSocket;
withPbxEvents(DIALPLAN, (started) => ({ pbx, events } = started));

const isUserEvent = (name: string) => (event: AriEvent) => event.type === 'ChannelUserevent' && event.eventname === name;

/** The caller's Dial() ringing its Local callee: returns the caller half and the callee's ;1 name once it rings. */
async function ringingCall(): Promise<{ caller: ReturnType<typeof originate>; seen: AriEvent[]; callee: string }> {
  const caller = originate(pbx.server, 'Local/caller@pickup-test');
  const seen = await collectUntil(events, (e) => e.type === 'ChannelStateChange' && /^Local\/ringing@pickup-test-.*;1$/.test(channelName(e)) && channelOf(e).state === 'Ringing');
  return { caller, seen, callee: channelName(seen.at(-1)!) };
}

describe('Pickup() on Local channels', () => {
  for (const exten of ['bymark', 'byexten', 'bygroup', 'byname']) {
    test(`Pickup at ${exten}: the picker takes the ringing callee's place; Dial() says ANSWER, the callee ends with cause 26`, async () => {
      const { caller, seen, callee } = await ringingCall();
      const picker = originate(pbx.server, `Local/${exten}@pickup-test`);
      const pickerName = picker.two.name;
      const calleeGone = (e: AriEvent): boolean => e.type === 'ChannelDestroyed' && channelName(e) === callee;
      const pickerAnswers = (e: AriEvent): boolean => e.type === 'Dial' && e.dialstatus === 'ANSWER' && (e.peer as Record<string, unknown>).name === pickerName;
      seen.push(...(await collectUntilAll(events, [calleeGone, pickerAnswers, (e) => e.type === 'ChannelVarset' && e.variable === 'DIALEDPEERNAME' && e.value === pickerName])));
      assert.equal(seen.find(calleeGone)!.cause, 26, 'the callee is hung up as answered elsewhere');
      assert.equal(await picker.status, 'ANSWER', "the picker's originate is answered");
      assert.equal(caller.two.getVariable('DIALSTATUS'), 'ANSWER');
      assert.equal(caller.two.getVariable('DIALEDPEERNUMBER'), 'ringing@pickup-test');
      // CHANNEL(pickupgroup) reads as Asterisk prints a group (ast_print_group).
      if (exten === 'bygroup') assert.equal(picker.two.getVariable('PG'), '1, 2, 3, 10');
      const dials = seen.filter((e) => e.type === 'Dial' && e.caller !== undefined).map((e) => `${String((e.peer as Record<string, unknown>).name)}:${String(e.dialstatus)}`);
      assert.deepEqual(dials, [`${callee}:`, `${callee}:CANCEL`, `${pickerName}:ANSWER`]);
      assert.equal(seen.some(isUserEvent('NoPickup')), false);
      // Hanging the caller up ends the picker too, and its dialplan run with it.
      caller.two.hangup();
      await collectUntil(events, (e) => e.type === 'ChannelDestroyed' && channelName(e) === pickerName);
      assert.equal(picker.two.hangingUp, true);
    });
  }

  test('Pickup() outside the groups (and with nothing ringing) goes on in the dialplan', async () => {
    const { caller, callee } = await ringingCall();
    const picker = originate(pbx.server, 'Local/outside@pickup-test');
    const seen = await collectUntil(events, (e) => isUserEvent('NoPickup')(e) && channelName(e) === picker.two.name);
    assert.deepEqual(seen.at(-1)!.userevent, { eventname: 'NoPickup', groups: '5/marketing' });
    assert.equal(pbx.server.core.channels.get(callee)?.state, 'Ringing', 'the callee still rings');
    caller.two.hangup();
    await collectUntil(events, (e) => e.type === 'ChannelDestroyed' && channelName(e) === callee);
    const again = originate(pbx.server, 'Local/bygroup@pickup-test');
    await collectUntil(events, (e) => isUserEvent('NoPickup')(e) && channelName(e) === again.two.name);
  });
});
