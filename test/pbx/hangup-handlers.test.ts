// Hang-up handlers (CHANNEL(hangup_handler_push|pop|wipe)) as Asterisk 22 runs them: once the
// channel hung up, after its `h` extension and before ChannelDestroyed, last pushed first, each a
// subroutine with its own ${ARGn} and the channel's variables, each at most once; a handler that
// loops is cut short (200 steps) and the next one still runs. A channel no dialplan runs (the
// Stasis `;1` of an ARI originate) runs the handlers ARI pushed on it the same way.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { channelName, channelOf, collectUntil, collectUntilAll, startWatchedPbx, stopWatchedPbx, type AriEvent } from './pbx-helpers.ts';
import type { EventSocket } from '../helpers/server.ts';
import type { PbxServer } from './pbx-helpers.ts';

const DIALPLAN = `
[hh]
exten => lifo,1,Answer()
 same => n,Set(MYVAR=kept)
 same => n,Set(CHANNEL(hangup_handler_push)=handlers,s,1(first,a))
 same => n,Set(CHANNEL(hangup_handler_push)=handlers,s,1(second,b))
 same => n,Set(CHANNEL(hangup_handler_push)=local,1(third))
 same => n,Wait(30)
exten => popwipe,1,Answer()
 same => n,Set(CHANNEL(hangup_handler_push)=handlers,s,1(A))
 same => n,Set(CHANNEL(hangup_handler_push)=handlers,s,1(B))
 same => n,Set(CHANNEL(hangup_handler_pop)=handlers,s,1(C))
 same => n,Set(CHANNEL(hangup_handler_pop)=)
 same => n,Set(CHANNEL(hangup_handler_push)=handlers,s,1(D))
 same => n,Wait(30)
exten => wipe,1,Answer()
 same => n,Set(CHANNEL(hangup_handler_push)=handlers,s,1(gone1))
 same => n,Set(CHANNEL(hangup_handler_push)=handlers,s,1(gone2))
 same => n,Set(CHANNEL(hangup_handler_wipe)=handlers,s,1(only))
 same => n,Wait(30)
exten => loop,1,Answer()
 same => n,Set(N=0)
 same => n,Set(CHANNEL(hangup_handler_push)=handlers,s,1(after-loop))
 same => n,Set(CHANNEL(hangup_handler_push)=handlers,spin,1)
 same => n,Wait(30)
exten => plain,1,Answer()
 same => n,Wait(30)
exten => repush,1,Answer()
 same => n,Set(CHANNEL(hangup_handler_push)=handlers,again,1)
 same => n,Wait(30)
exten => instasis,1,Answer()
 same => n,Set(CHANNEL(hangup_handler_push)=handlers,s,1(in-stasis))
 same => n,Stasis(pbx-watch)
exten => dialer,1,Dial(Local/callee@hh,,b(hh^push-callee^1(from-b)))
exten => push-callee,1,Set(CHANNEL(hangup_handler_push)=handlers,s,1(\${ARG1},callee))
 same => n,Return()
exten => callee,1,Answer()
 same => n,Wait(30)
exten => local,1,UserEvent(Handler,which: \${ARG1},where: \${CONTEXT})
 same => n,Return()
exten => h,1,UserEvent(HExten)

[handlers]
exten => s,1,UserEvent(Handler,which: \${ARG1},n: \${ARG2},var: \${MYVAR},loops: \${N})
 same => n,Wait(5)
 same => n,Return()
exten => spin,1,Set(N=$[\${N}+1])
 same => n,Goto(1)
exten => again,1,UserEvent(Again)
 same => n,Set(CHANNEL(hangup_handler_push)=handlers,again,1)
 same => n,Return()
`;

let pbx: PbxServer;
let events: EventSocket;
before(async () => {
  ({ pbx, events } = await startWatchedPbx(DIALPLAN));
});
after(() => stopWatchedPbx({ pbx, events }));

/** Originates Local/exten@hh into the watching application; the `;2` runs the extension. */
async function originate(exten: string): Promise<{ one: string; oneName: string; two: string }> {
  const response = await pbx.server.ari(`/channels?endpoint=Local/${exten}@hh&app=pbx-watch`, { method: 'POST' });
  assert.equal(response.status, 200);
  const { id, name } = (await response.json()) as { id: string; name: string };
  await collectUntil(events, (event) => event.type === 'StasisStart' && channelOf(event).id === id, 10_000);
  return { one: id, oneName: name, two: name.replace(/;1$/, ';2') };
}

/** Waits until `two` runs Wait() (its handlers are pushed by then). */
async function untilWaiting(two: string): Promise<void> {
  await collectUntil(events, (event) => event.type === 'ChannelDialplan' && channelName(event) === two && event.dialplan_app === 'Wait', 10_000);
}

/** The user events and the destruction of `name`, in order, from the events until both halves are destroyed. */
async function endOf(oneName: string, name: string): Promise<string[]> {
  const destroyed = new Set<string>();
  const seen = await collectUntil(
    events,
    (event) => {
      if (event.type === 'ChannelDestroyed') destroyed.add(channelName(event));
      return destroyed.has(oneName) && destroyed.has(oneName.replace(/;1$/, ';2'));
    },
    30_000,
  );
  return seen.filter((event) => channelName(event) === name && (event.type === 'ChannelUserevent' || event.type === 'ChannelDestroyed')).map(describe2);
}

function describe2(event: AriEvent): string {
  if (event.type !== 'ChannelUserevent') return event.type;
  const fields = event.userevent as Record<string, string>;
  return Object.keys(fields)
    .filter((key) => key !== 'eventname')
    .sort()
    .reduce((text, key) => `${text} ${key}=${fields[key]}`, String(event.eventname));
}

async function hangUpFirstHalf(one: string): Promise<void> {
  assert.equal((await pbx.server.ari(`/channels/${one}`, { method: 'DELETE' })).status, 204);
}

describe('hang-up handlers', () => {
  test('run after h, last pushed first, each with its own arguments and the channel\'s variables, once', { timeout: 60_000 }, async () => {
    const { one, oneName, two } = await originate('lifo');
    await untilWaiting(two);
    await hangUpFirstHalf(one);
    assert.deepEqual(await endOf(oneName, two), [
      'HExten',
      // An omitted context is the one the channel was in when it pushed the handler.
      'Handler where=hh which=third',
      'Handler loops= n=b var=kept which=second',
      'Handler loops= n=a var=kept which=first',
      'ChannelDestroyed',
    ]);
  });

  test('pop replaces the last pushed handler, wipe replaces them all; an empty value only removes', { timeout: 60_000 }, async () => {
    const popped = await originate('popwipe');
    await untilWaiting(popped.two);
    await hangUpFirstHalf(popped.one);
    // A, B; pop → A, C; pop (empty) → A; push → A, D.
    assert.deepEqual(await endOf(popped.oneName, popped.two), [
      'HExten',
      'Handler loops= n= var= which=D',
      'Handler loops= n= var= which=A',
      'ChannelDestroyed',
    ]);
    const wiped = await originate('wipe');
    await untilWaiting(wiped.two);
    await hangUpFirstHalf(wiped.one);
    assert.deepEqual(await endOf(wiped.oneName, wiped.two), ['HExten', 'Handler loops= n= var= which=only', 'ChannelDestroyed']);
  });

  test('a handler that loops is cut short after 200 steps and the next one still runs', { timeout: 60_000 }, async () => {
    const { one, oneName, two } = await originate('loop');
    await untilWaiting(two);
    await hangUpFirstHalf(one);
    // spin's two steps a turn: 100 turns in 200 steps.
    assert.deepEqual(await endOf(oneName, two), ['HExten', 'Handler loops=100 n= var= which=after-loop', 'ChannelDestroyed']);
  });

  test('a handler that pushes itself again runs 100 times in one hang-up, not without end; the server goes on', { timeout: 60_000 }, async () => {
    const { one, oneName, two } = await originate('repush');
    await untilWaiting(two);
    await hangUpFirstHalf(one);
    const story = await endOf(oneName, two);
    assert.deepEqual(story, ['HExten', ...Array<string>(100).fill('Again'), 'ChannelDestroyed']);
    assert.equal((await pbx.server.ari('/channels')).status, 200);
  });

  test('a handler ARI pushes on a Stasis channel no dialplan runs runs before its ChannelDestroyed', { timeout: 60_000 }, async () => {
    const { one, oneName, two } = await originate('plain');
    await untilWaiting(two);
    const push = (value: string): Promise<Response> =>
      pbx.server.ari(`/channels/${one}/variable?variable=${encodeURIComponent('CHANNEL(hangup_handler_push)')}&value=${encodeURIComponent(value)}`, { method: 'POST' });
    assert.equal((await push('handlers,s,1(from-ari,1)')).status, 204);
    assert.equal((await push('handlers,s,1(from-ari,2)')).status, 204);
    await hangUpFirstHalf(one);
    assert.deepEqual(await endOf(oneName, oneName), [
      'Handler loops= n=2 var= which=from-ari',
      'Handler loops= n=1 var= which=from-ari',
      'ChannelDestroyed',
    ]);
  });

  test('a handler a Dial() pre-dial handler (b()) pushes on the callee runs when the callee hangs up, before its ChannelDestroyed', { timeout: 60_000 }, async () => {
    const response = await pbx.server.ari('/channels?endpoint=Local/dialer@hh&app=pbx-watch', { method: 'POST' });
    assert.equal(response.status, 200);
    const { id: one, name: oneName } = (await response.json()) as { id: string; name: string };
    const two = oneName.replace(/;1$/, ';2');
    // The callee `Local/callee@hh-…;1` is Dial()'s: no dialplan runs on it; its `;2` answers and
    // waits, and only then is the caller's `;1` answered into the application.
    let calleeTwo = '';
    await collectUntilAll(events, [
      (event) => event.type === 'StasisStart' && channelOf(event).id === one,
      (event) => {
        const waiting = event.type === 'ChannelDialplan' && channelName(event).startsWith('Local/callee@hh-') && event.dialplan_app === 'Wait';
        if (waiting) calleeTwo = channelName(event);
        return waiting;
      },
    ]);
    const callee = calleeTwo.replace(/;2$/, ';1');
    await hangUpFirstHalf(one);
    const destroyed = new Set<string>();
    const seen = await collectUntil(
      events,
      (event) => {
        if (event.type === 'ChannelDestroyed') destroyed.add(channelName(event));
        return [oneName, two, callee, calleeTwo].every((name) => destroyed.has(name));
      },
      30_000,
    );
    const story = seen.filter((event) => channelName(event) === callee && (event.type === 'ChannelUserevent' || event.type === 'ChannelDestroyed')).map(describe2);
    assert.deepEqual(story, ['Handler loops= n=callee var= which=from-b', 'ChannelDestroyed']);
  });

  test('a channel in Stasis() hung up by its Local partner runs h, then its handlers, once destroyed (as h alone)', { timeout: 60_000 }, async () => {
    const response = await pbx.server.ari('/channels?endpoint=Local/instasis@hh&app=pbx-watch', { method: 'POST' });
    assert.equal(response.status, 200);
    const { id: one, name: oneName } = (await response.json()) as { id: string; name: string };
    const two = oneName.replace(/;1$/, ';2');
    await collectUntilAll(events, [
      (event) => event.type === 'StasisStart' && channelOf(event).id === one,
      (event) => event.type === 'StasisStart' && channelName(event) === two,
    ]);
    await hangUpFirstHalf(one);
    // Its Stasis() lets it go only once it is destroyed: `h`, then the handler, run after that, as
    // the `h` extension alone does (docs/dialplan.md, The h extension).
    const destroyed = await collectUntil(events, (event) => event.type === 'ChannelDestroyed' && channelName(event) === two, 15_000);
    assert.ok(!destroyed.some((event) => event.type === 'ChannelUserevent' && channelName(event) === two));
    const after = await collectUntil(events, (event) => event.type === 'ChannelUserevent' && channelName(event) === two && event.eventname === 'Handler', 15_000);
    assert.deepEqual(after.filter((event) => event.type === 'ChannelUserevent' && channelName(event) === two).map(describe2), [
      'HExten',
      'Handler loops= n= var= which=in-stasis',
    ]);
  });

  test('a Stasis channel no dialplan runs, hung up by its Local partner: StasisEnd, then the handler ARI pushed, then ChannelDestroyed (Asterisk order)', { timeout: 60_000 }, async () => {
    const { one, oneName, two } = await originate('plain');
    await untilWaiting(two);
    const variable = encodeURIComponent('CHANNEL(hangup_handler_push)');
    assert.equal((await pbx.server.ari(`/channels/${one}/variable?variable=${variable}&value=${encodeURIComponent('handlers,s,1(partner-gone)')}`, { method: 'POST' })).status, 204);
    const twoId = String(pbx.server.core.channels.list().find((channel) => channel.name === two)?.id);
    assert.equal((await pbx.server.ari(`/channels/${twoId}`, { method: 'DELETE' })).status, 204);
    const destroyed = new Set<string>();
    const seen = await collectUntil(
      events,
      (event) => {
        if (event.type === 'ChannelDestroyed') destroyed.add(channelName(event));
        return destroyed.has(oneName) && destroyed.has(two);
      },
      30_000,
    );
    const story = seen.filter((event) => channelName(event) === oneName && ['StasisEnd', 'ChannelUserevent', 'ChannelDestroyed'].includes(event.type)).map(describe2);
    // As Asterisk: the channel's Stasis thread notices the hang-up once the partner is destroyed and
    // ends the application (StasisEnd), then ast_hangup runs the handler, then the channel is destroyed.
    assert.deepEqual(story, ['StasisEnd', 'Handler loops= n= var= which=partner-gone', 'ChannelDestroyed']);
    const order = seen.filter((event) => (event.type === 'ChannelDestroyed' && channelName(event) === two) || (event.type === 'StasisEnd' && channelName(event) === oneName)).map((event) => `${event.type} ${channelName(event)}`);
    assert.deepEqual(order, [`ChannelDestroyed ${two}`, `StasisEnd ${oneName}`], 'the partner is destroyed before the channel leaves its application');
  });

  test('a handler is not run on a channel whose stack was wiped from ARI', { timeout: 60_000 }, async () => {
    const { one, oneName, two } = await originate('plain');
    await untilWaiting(two);
    const write = (item: string, value: string): Promise<Response> =>
      pbx.server.ari(`/channels/${one}/variable?variable=${encodeURIComponent(`CHANNEL(${item})`)}&value=${encodeURIComponent(value)}`, { method: 'POST' });
    assert.equal((await write('hangup_handler_push', 'handlers,s,1(never)')).status, 204);
    assert.equal((await write('hangup_handler_wipe', '')).status, 204);
    await hangUpFirstHalf(one);
    assert.deepEqual(await endOf(oneName, oneName), ['ChannelDestroyed']);
  });
});
