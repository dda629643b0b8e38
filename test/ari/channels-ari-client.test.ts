// Channel control with the real npm `ari-client`: originate into an application with arguments,
// variables (functions and report_events), move between applications, continue into the dialplan
// by label, hang up with a reason, and the events of all that in order.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import ari, { type Client } from 'ari-client';
import { internals } from '../helpers/ari-client.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const APP = 'chan-app';
const SECOND_APP = 'chan-app-2';

const DIALPLAN = `
[default]
exten => answer,1,Answer()
 same => n,Wait(3600)

[labels]
exten => target,1,NoOp(first)
 same => n(entry),NoOp(labelled)
 same => n,Wait(3600)
`;

type AriEvent = Record<string, any>;

let server: TestServer;
let client: Client;
/** Every event the client received, in order. */
const events: AriEvent[] = [];
let waiters: { match: (event: AriEvent) => boolean; resolve: (event: AriEvent) => void }[] = [];

before(async () => {
  const dir = (await import('node:fs')).mkdtempSync(join((await import('node:os')).tmpdir(), 'patchbay-dialplan-'));
  const file = join(dir, 'extensions.conf');
  writeFileSync(file, DIALPLAN);
  server = await startTestServer({ dialplan: { file } });
  client = await withTimeout(ari.connect(server.url, 'asterisk', 'asterisk'), 'connect');
  (client as unknown as NodeJS.EventEmitter).on('*', (event: AriEvent) => {
    events.push(event);
    const waiter = waiters.find((candidate) => candidate.match(event));
    if (waiter) {
      waiters = waiters.filter((candidate) => candidate !== waiter);
      waiter.resolve(event);
    }
  });
  await withTimeout(client.start([APP, SECOND_APP]), 'start');
});

after(async () => {
  client?.stop();
  if (client) internals(client)._ws?.terminate();
  await server?.stop();
});

function withTimeout<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The first event (already received or still to come) that matches. */
function waitFor(what: string, match: (event: AriEvent) => boolean): Promise<AriEvent> {
  const seen = events.find(match);
  if (seen) return Promise.resolve(seen);
  return withTimeout(new Promise<AriEvent>((resolve) => waiters.push({ match, resolve })), what);
}

const about = (id: string) => (event: AriEvent) => event.channel?.id === id || event.peer?.id === id;
const label = (event: AriEvent): string => `${event.type}${event.dialstatus !== undefined ? `(${event.dialstatus})` : ''}@${event.application}`;

describe('channels through ari-client', () => {
  let first: Record<string, any>;
  let firstPeerId: string;

  test('originate into an application with args: 200 Down at once, then Dial and StasisStart with the args', async () => {
    first = await client.channels.originate({
      endpoint: 'Local/answer@default',
      app: APP,
      appArgs: 'one,two',
      callerId: '"Alice" <100>',
      variables: { GREETING: 'hello', 'CONNECTEDLINE(name)': 'Carol' },
    });
    assert.equal(first.state, 'Down');
    assert.match(first.name, /^Local\/answer@default-[0-9a-f]{8};1$/);
    assert.deepEqual(first.caller, { name: 'Alice', number: '100' });
    // ast_dial's prerun has marked the channel before the response (Asterisk 22 answers AppDial2).
    assert.equal(first.dialplan.app_name, 'AppDial2');

    const start = await waitFor('StasisStart', (event) => event.type === 'StasisStart' && event.channel.id === first.id);
    assert.equal(start.application, APP);
    assert.deepEqual(start.args, ['one', 'two']);
    assert.equal(start.channel.state, 'Up');
    assert.equal(start.channel.dialplan.app_name, 'Stasis');
    assert.equal(start.channel.dialplan.app_data, `${APP},one,two`);
    assert.deepEqual(start.channel.connected, { name: 'Carol', number: '100' });

    const dials = events.filter((event) => event.type === 'Dial' && event.peer.id === first.id).map((event) => event.dialstatus);
    assert.deepEqual(dials, ['', 'ANSWER']);
    // The app is subscribed to the Local peer too: it sees the ;2 half run its dialplan.
    const peerDialplan = await waitFor('peer ChannelDialplan', (event) => event.type === 'ChannelDialplan' && event.channel.name === first.name.replace(/;1$/, ';2'));
    firstPeerId = peerDialplan.channel.id;
    assert.equal(peerDialplan.application, APP);

    const listed: { id: string }[] = await client.channels.list();
    assert.deepEqual(listed.map((channel) => channel.id).sort(), [first.id, firstPeerId].sort());
    const got = await client.channels.get({ channelId: first.id });
    assert.equal(got.state, 'Up');
  });

  test('variables: read and write plain ones and functions; report_events shows in channelvars', async () => {
    assert.deepEqual(await client.channels.getChannelVar({ channelId: first.id, variable: 'GREETING' }), { value: 'hello' });
    assert.deepEqual(await client.channels.getChannelVar({ channelId: first.id, variable: 'CALLERID(name)' }), { value: 'Alice' });
    assert.deepEqual(await client.channels.getChannelVar({ channelId: first.id, variable: 'CALLERID(all)' }), { value: '"Alice" <100>' });
    await assert.rejects(client.channels.getChannelVar({ channelId: first.id, variable: 'NOPE' }), /Provided variable was not found/);

    await client.channels.setChannelVar({ channelId: first.id, variable: 'CALLERID(name)', value: 'Bob' });
    const callerId = await waitFor('ChannelCallerId', (event) => event.type === 'ChannelCallerId' && event.channel.id === first.id && event.channel.caller.name === 'Bob');
    assert.equal(callerId.caller_presentation_txt, 'Presentation Allowed, Not Screened');
    assert.deepEqual(await client.channels.getChannelVar({ channelId: first.id, variable: 'CALLERID(name)' }), { value: 'Bob' });

    await client.channels.setChannelVar({ channelId: first.id, variable: 'REPORTED', value: 'yes', report_events: true } as Parameters<Client['channels']['setChannelVar']>[0]);
    const varset = await waitFor('ChannelVarset', (event) => event.type === 'ChannelVarset' && event.variable === 'REPORTED');
    assert.equal(varset.value, 'yes');
    assert.deepEqual(varset.channel.channelvars, { REPORTED: 'yes' });
    const snapshot = await client.channels.get({ channelId: first.id });
    assert.deepEqual(snapshot.channelvars, { REPORTED: 'yes' });

    await client.channels.setChannelVar({ channelId: first.id, variable: 'CONNECTEDLINE(num)', value: '300' });
    const connected = await waitFor('ChannelConnectedLine', (event) => event.type === 'ChannelConnectedLine' && event.channel.id === first.id);
    assert.deepEqual(connected.channel.connected, { name: 'Carol', number: '300' });

    await internals(client).channels.setChannelVars({ channelId: first.id, variables: { MANY: 'one', 'CALLERID(num)': '200' } });
    const many = await internals(client).channels.getChannelVars({ channelId: first.id, variables: 'MANY,CALLERID(num), REPORTED' });
    assert.deepEqual(many, { variables: { MANY: 'one', 'CALLERID(num)': '200', REPORTED: 'yes' } });

    // Unsetting: no value.
    await client.channels.setChannelVar({ channelId: first.id, variable: 'MANY' });
    await assert.rejects(client.channels.getChannelVar({ channelId: first.id, variable: 'MANY' }), /not found/);
  });

  test('move: the second application receives StasisStart, the first StasisEnd; a missing one gives ApplicationMoveFailed', async () => {
    await client.channels.move({ channelId: first.id, app: SECOND_APP, appArgs: 'moved,here' });
    const end = await waitFor('StasisEnd', (event) => event.type === 'StasisEnd' && event.channel.id === first.id);
    assert.equal(end.application, APP);
    const start = await waitFor('StasisStart 2', (event) => event.type === 'StasisStart' && event.application === SECOND_APP);
    assert.equal(start.channel.id, first.id);
    assert.deepEqual(start.args, ['moved', 'here']);

    await client.channels.move({ channelId: first.id, app: 'nobody-home', appArgs: 'x' });
    const failed = await waitFor('ApplicationMoveFailed', (event) => event.type === 'ApplicationMoveFailed');
    assert.equal(failed.application, SECOND_APP);
    assert.equal(failed.destination, 'nobody-home');
    assert.deepEqual(failed.args, ['x']);
    assert.equal(failed.channel.id, first.id);
  });

  test('continue another originated channel into the dialplan by label', async () => {
    const second = await client.channels.originate({ endpoint: 'Local/answer@default', app: APP });
    await waitFor('StasisStart second', (event) => event.type === 'StasisStart' && event.channel.id === second.id);
    await client.channels.continueInDialplan({ channelId: second.id, context: 'labels', extension: 'target', label: 'entry' });
    await waitFor('StasisEnd second', (event) => event.type === 'StasisEnd' && event.channel.id === second.id);
    const step = await waitFor('labelled step', (event) => event.type === 'ChannelDialplan' && event.channel.id === second.id && event.dialplan_app === 'NoOp');
    assert.equal(step.dialplan_app_data, 'labelled');
    assert.deepEqual(
      { context: step.channel.dialplan.context, exten: step.channel.dialplan.exten, priority: step.channel.dialplan.priority },
      { context: 'labels', exten: 'target', priority: 2 },
    );
    // Out of Stasis now: control operations answer 409, hangup still works.
    await assert.rejects(client.channels.answer({ channelId: second.id }), /not in Stasis/);
    await client.channels.hangup({ channelId: second.id });
    const destroyed = await waitFor('second destroyed', (event) => event.type === 'ChannelDestroyed' && event.channel.id === second.id);
    assert.equal(destroyed.cause, 16);
  });

  test('hang up with a reason: ChannelDestroyed carries its cause; the events came in order', async () => {
    await client.channels.hangup({ channelId: first.id, reason: 'busy' });
    const destroyed = await waitFor('ChannelDestroyed', (event) => event.type === 'ChannelDestroyed' && event.channel.id === first.id && event.application === SECOND_APP);
    assert.equal(destroyed.cause, 17);
    assert.equal(destroyed.cause_txt, 'User busy');
    const request = events.find((event) => event.type === 'ChannelHangupRequest' && event.channel.id === first.id);
    // A soft hang-up's cause is its reason flag: AST_SOFTHANGUP_EXPLICIT for DELETE, whatever the reason.
    assert.equal(request?.cause, 32);
    assert.equal(request?.soft, true);
    const peerGone = await waitFor('peer destroyed', (event) => event.type === 'ChannelDestroyed' && event.channel.id === firstPeerId);
    assert.equal(peerGone.cause, 17);

    // The first channel's life as the applications saw it.
    const wanted = new Set(['Dial', 'ChannelStateChange', 'ChannelDialplan', 'StasisStart', 'StasisEnd', 'ChannelCallerId', 'ChannelHangupRequest', 'ChannelDestroyed', 'ApplicationMoveFailed']);
    const story = events.filter((event) => about(first.id)(event) && wanted.has(event.type)).map(label);
    assert.deepEqual(story, [
      `Dial()@${APP}`,
      `ChannelStateChange@${APP}`,
      `Dial(ANSWER)@${APP}`,
      // No ChannelDialplan: Stasis runs where AppDial2 was shown (same place, an application before).
      `StasisStart@${APP}`,
      `ChannelCallerId@${APP}`,
      `ChannelCallerId@${APP}`,
      `StasisEnd@${APP}`,
      `StasisStart@${SECOND_APP}`,
      `ApplicationMoveFailed@${SECOND_APP}`,
      `ChannelHangupRequest@${APP}`,
      `ChannelHangupRequest@${SECOND_APP}`,
      `StasisEnd@${SECOND_APP}`,
      `ChannelDestroyed@${APP}`,
      `ChannelDestroyed@${SECOND_APP}`,
    ]);
    // No event failed its model check on the way.
    assert.equal(events.filter((event) => event.error !== undefined).length, 0);
    assert.equal(server.logLines.filter((line) => line.includes('does not match')).length, 0);
  });

  test('nothing leaks: no channel left, no application subscribed to a dead channel', async () => {
    assert.equal(server.allChannels().length, 0);
    for (const app of server.core.applications.list()) assert.deepEqual(app.snapshot().channel_ids, [], app.name);
    const apps = await client.applications.list();
    for (const app of apps) assert.deepEqual(app.channel_ids, [], app.name);
    assert.deepEqual(await client.channels.list(), []);
  });
});
