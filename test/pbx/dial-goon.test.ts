// Dial()'s options for where the answered callee goes, end to end on Local channels: F (the
// callee goes on at the caller's next priority when the caller hangs up), F(place), G(place) (both
// go into the dialplan at the answer, unbridged), e (the callee runs the caller's context's `h`),
// B (a pre-dial handler on the caller), f and o (the caller ids the callee is given), I (no
// connected-line update to the caller while the callee rings).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Channel } from '../../src/core/channels/channel.ts';
import type { EventSocket } from '../helpers/server.ts';
import { assertNoChannels, channelName, collectUntil, dialplanTrace, originate, varsets, type AriEvent, type PbxServer, withPbxEvents } from './pbx-helpers.ts';

const DIALPLAN = `
[goon]
exten => quiet,1,Answer()
 same => n,Wait(60)

exten => f,1,Dial(Local/quiet@goon,,F)
 same => n,Set(WENT=\${CHANNEL(name)})
 same => n,Hangup()

exten => fplace,1,Dial(Local/quiet@goon,,F(goon^landed^2))
 same => n,Set(WENT=caller)
exten => landed,1,Set(WENT=wrong priority)
 same => n,Set(WENT=landed)
 same => n,Hangup()

exten => fgone,1,Dial(Local/quiet@goon,,F)
 same => n,Set(WENT=caller goes on)

exten => g,1,Dial(Local/quiet@goon,,G(goon^both^1))
 same => n,Set(SIDE=not reached)
exten => both,1,Set(SIDE=first)
 same => n,Set(SIDE=second)
 same => n,Hangup()

exten => gmissing,1,Dial(Local/quiet@goon,,G(goon^nowhere^1))
 same => n,Set(SIDE=next)
 same => n,Hangup()

exten => bcaller,1,Dial(Local/quiet@goon,,B(predial^s^1(x^y)))
 same => n,Set(AFTER=\${PRE})

exten => showcid,1,Set(SEEN=\${CALLERID(name)}|\${CALLERID(num)})
 same => n,Answer()
 same => n,Wait(60)
exten => fx,1,Set(CALLERID(all)=Alice <100>)
 same => n,Dial(Local/showcid@goon,,f(Bob <200>))
exten => fplain,1,Set(CALLERID(all)=Alice <100>)
 same => n,Dial(Local/showcid@goon,,f)
exten => ocaller,1,Set(CALLERID(all)=Alice <100>)
 same => n,Dial(Local/showcid@goon,,o)
exten => ogiven,1,Set(CALLERID(all)=Alice <100>)
 same => n,Dial(Local/showcid@goon,,o(Carol <300>))
exten => icid,1,Set(CALLERID(all)=Alice <100>)
 same => n,Dial(Local/showcid@goon,,I)
exten => nocid,1,Set(CALLERID(all)=Alice <100>)
 same => n,Dial(Local/showcid@goon)

[predial]
exten => s,1,Set(PRE=\${ARG1}\${ARG2}-\${CONTEXT})
 same => n,Return()

[hctx]
exten => quiet,1,Answer()
 same => n,Wait(60)
exten => e,1,Dial(Local/quiet@hctx,,e)
exten => h,1,Set(HRAN=\${CHANNEL(name)})
`;

let pbx: PbxServer;
let events: EventSocket;
withPbxEvents(DIALPLAN, (started) => ({ pbx, events } = started));

const peerName = (event: AriEvent): string => String((event.peer as Record<string, unknown> | undefined)?.name ?? '');
/** A Dial event of `caller`'s with this status (the originate's own Dial events have no caller). */
const isDialOf = (caller: Channel, status: string) => (event: AriEvent): boolean =>
  event.type === 'Dial' && event.dialstatus === status && String((event.caller as Record<string, unknown> | undefined)?.name) === caller.name;

/**
 * Starts the call, waits until caller and callee are bridged (or, with `bridged` false, until the
 * callee answered); returns the callee's name and every event seen so far.
 */
async function answered(exten: string, bridged = true): Promise<{ call: ReturnType<typeof originate>; callee: string; seen: AriEvent[] }> {
  const call = originate(pbx.server, `Local/${exten}`);
  const seen = await collectUntil(events, isDialOf(call.two, 'ANSWER'), 20_000);
  const callee = peerName(seen.at(-1)!);
  if (bridged) seen.push(...(await collectUntil(events, (event) => event.type === 'ChannelEnteredBridge' && channelName(event) === call.two.name, 20_000)));
  return { call, callee, seen };
}

/** Every event until each named channel is destroyed (by name: some end before their events are read). */
async function untilGone(names: readonly string[], timeoutMs = 20_000): Promise<AriEvent[]> {
  const waiting = new Set(names);
  return collectUntil(
    events,
    (event) => {
      if (event.type === 'ChannelDestroyed') waiting.delete(channelName(event));
      return waiting.size === 0;
    },
    timeoutMs,
  );
}

const both = (callee: string): string[] => [callee, callee.replace(/;1$/, ';2')];
const pair = (call: { one: Channel; two: Channel }): string[] => [call.one.name, call.two.name];

describe('Dial options e, F, G', () => {
  test("F: when the caller hangs up, the callee goes on at the caller's next priority", async () => {
    const { call, callee } = await answered('f@goon');
    call.one.hangup();
    const seen = await untilGone([...pair(call), ...both(callee)]);
    assert.deepEqual(varsets(seen, callee, 'WENT'), [callee], 'the callee ran f,2');
    assert.deepEqual(varsets(seen, call.two.name, 'WENT'), [], 'the caller did not');
    assert.deepEqual(dialplanTrace(seen, callee).slice(0, 2), [`Set(WENT=${callee})@goon,f,2`, 'Hangup()@goon,f,3']);
    assertNoChannels(pbx.server);
  });

  test('F(context^exten^priority): the callee goes there; a callee that hangs up goes nowhere and the caller ends', async () => {
    const { call, callee } = await answered('fplace@goon');
    call.one.hangup();
    const seen = await untilGone([...pair(call), ...both(callee)]);
    assert.deepEqual(varsets(seen, callee, 'WENT'), ['landed']);
    assert.deepEqual(dialplanTrace(seen, callee)[0], 'Set(WENT=landed)@goon,landed,2');

    // The callee hangs up: F does not apply (the callee is gone) and, without g, the caller ends.
    const other = await answered('fgone@goon');
    const quiet = pbx.server.core.channels.get(other.callee.replace(/;1$/, ';2'));
    assert.ok(quiet, 'the callee’s other half');
    quiet.hangup();
    const ended = await untilGone([...pair(other.call), ...both(other.callee)]);
    assert.deepEqual(dialplanTrace(ended, other.callee), []);
    assert.deepEqual(varsets(ended, other.call.two.name, 'WENT'), []);
    assertNoChannels(pbx.server);
  });

  test('G(context^exten^priority): at the answer the caller goes there and the callee to the next priority, unbridged', async () => {
    const { call, callee, seen } = await answered('g@goon', false);
    seen.push(...(await untilGone([...pair(call), ...both(callee)])));
    assert.deepEqual(varsets(seen, call.two.name, 'SIDE'), ['first', 'second']);
    assert.deepEqual(varsets(seen, callee, 'SIDE'), ['second']);
    assert.deepEqual(dialplanTrace(seen, callee).filter((step) => !step.startsWith('AppDial')), ['Set(SIDE=second)@goon,both,2', 'Hangup()@goon,both,3']);
    assert.ok(!seen.some((event) => event.type === 'ChannelEnteredBridge'), 'never bridged');

    // A place that does not exist: the callee is hung up, the caller goes on at its next priority.
    const missing = await answered('gmissing@goon', false);
    const ended = await untilGone([...pair(missing.call), ...both(missing.callee)]);
    assert.deepEqual(varsets(ended, missing.call.two.name, 'SIDE'), ['next']);
    assert.ok(pbx.server.logLines.some((line) => line.includes('cannot send the call to G(goon^nowhere^1)')));
    assertNoChannels(pbx.server);
  });

  test("e: the callee runs the h extension of the caller's context, whoever hangs up", async () => {
    const { call, callee } = await answered('e@hctx');
    call.one.hangup();
    const seen = await untilGone([...pair(call), ...both(callee)]);
    assert.deepEqual(varsets(seen, callee, 'HRAN'), [callee]);
    assert.deepEqual(dialplanTrace(seen, callee), [`Set(HRAN=${callee})@hctx,h,1`]);
    // The caller's own run has the same h extension: it runs there too.
    assert.deepEqual(varsets(seen, call.two.name, 'HRAN'), [call.two.name]);

    const other = await answered('e@hctx');
    const quiet = pbx.server.core.channels.get(other.callee.replace(/;1$/, ';2'));
    assert.ok(quiet, 'the callee’s other half');
    quiet.hangup();
    const ended = await untilGone([...pair(other.call), ...both(other.callee)]);
    assert.deepEqual(varsets(ended, other.callee, 'HRAN'), [other.callee]);
    assertNoChannels(pbx.server);
  });

  test('B(context^exten^priority(args)): the caller runs the handler before any callee exists, then dials', async () => {
    const call = originate(pbx.server, 'Local/bcaller@goon');
    const seen = await collectUntil(events, isDialOf(call.two, ''), 20_000);
    const callee = peerName(seen.at(-1)!);
    assert.deepEqual(varsets(seen, call.two.name, 'PRE'), ['xy-predial'], 'the handler ran first, with its arguments');
    assert.ok(dialplanTrace(seen, call.two.name).includes('Set(PRE=xy-predial)@predial,s,1'));
    assert.ok(!seen.some((event) => event.type === 'ChannelCreated' && channelName(event) === callee && seen.indexOf(event) < seen.findIndex((e) => e.type === 'ChannelVarset' && e.variable === 'PRE')), 'no callee before the handler');
    const quiet = pbx.server.core.channels.get(callee.replace(/;1$/, ';2'));
    assert.ok(quiet);
    quiet.hangup();
    const ended = await untilGone([...pair(call), ...both(callee)]);
    assert.deepEqual(varsets(ended, call.two.name, 'AFTER'), [], 'without g the caller ends with the callee');
    assertNoChannels(pbx.server);
  });

  test('f(x) and o[(x)]: the callee is sent x as caller id; o gives the callee itself the caller id the caller sees', async () => {
    const run = async (exten: string): Promise<{ seen: string; peer: string }> => {
      const call = originate(pbx.server, `Local/${exten}@goon`);
      const seen = await collectUntil(events, isDialOf(call.two, ''), 20_000);
      const dialEvent = seen.at(-1)!;
      const callee = peerName(dialEvent);
      const peerCaller = (dialEvent.peer as Record<string, Record<string, unknown>>).caller!;
      const half = callee.replace(/;1$/, ';2');
      const shown = await collectUntil(events, (event) => event.type === 'ChannelVarset' && channelName(event) === half && event.variable === 'SEEN', 20_000);
      pbx.server.core.channels.get(half)?.hangup();
      await untilGone([...pair(call), ...both(callee)]);
      return { seen: String(shown.at(-1)!.value), peer: `${String(peerCaller.name)}|${String(peerCaller.number)}` };
    };
    // Without options the callee hears the caller, and shows the extension dialed.
    assert.deepEqual(await run('nocid'), { seen: 'Alice|100', peer: '|nocid' });
    assert.deepEqual(await run('fx'), { seen: 'Bob|200', peer: '|fx' });
    // f alone changes only what a forward's channel is sent.
    assert.deepEqual(await run('fplain'), { seen: 'Alice|100', peer: '|fplain' });
    assert.deepEqual(await run('ocaller'), { seen: 'Alice|100', peer: 'Alice|100' });
    assert.deepEqual(await run('ogiven'), { seen: 'Alice|100', peer: 'Carol|300' });
    assertNoChannels(pbx.server);
  });

  test('I: the caller is not told whom it calls while the callee rings (without I, a ChannelConnectedLine)', async () => {
    const updates = async (exten: string): Promise<AriEvent[]> => {
      const call = originate(pbx.server, `Local/${exten}@goon`);
      const seen = await collectUntil(events, isDialOf(call.two, ''), 20_000);
      const callee = peerName(seen.at(-1)!);
      const half = callee.replace(/;1$/, ';2');
      // The callee's dialplan runs after the update Dial() makes at once (none with I).
      const ringing = await collectUntil(events, (event) => event.type === 'ChannelVarset' && channelName(event) === half && event.variable === 'SEEN', 20_000);
      pbx.server.core.channels.get(half)?.hangup();
      await untilGone([...pair(call), ...both(callee)]);
      return ringing.filter((event) => event.type === 'ChannelConnectedLine' && channelName(event) === call.two.name);
    };
    assert.ok((await updates('nocid')).length > 0, 'without I the caller learns whom it calls');
    assert.deepEqual(await updates('icid'), []);
    assertNoChannels(pbx.server);
  });
});
