// StasisBroadcast() and POST /events/claim over real WebSockets: every matching application gets
// CallBroadcast, the first claim wins (204) and its application gets StasisStart with the
// broadcast's args, later claims conflict (409), nobody claiming lets the dialplan go on with
// STASISSTATUS=TIMEOUT, and a channel that is not being broadcast is not found (404).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { EventEmitter } from 'node:events';
import ari, { type Client } from 'ari-client';
import { internals } from '../helpers/ari-client.ts';
import type { EventSocket } from '../helpers/server.ts';
import { channelOf, collectUntil, originate, startPbxServer, untilDestroyed, varsets, watchAll, type AriEvent, type PbxServer } from '../pbx/pbx-helpers.ts';

const DIALPLAN = `
[bc]
exten => offer,1,StasisBroadcast(5000,^bc-,one:two,yes)
 same => n,Set(AFTER=\${STASISSTATUS})
 same => n,Hangup()
exten => quiet,1,StasisBroadcast(5000,^bc-)
 same => n,Set(AFTER=\${STASISSTATUS})
 same => n,Hangup()
exten => timeout,1,StasisBroadcast(150,^bc-)
 same => n,Set(AFTER=\${STASISSTATUS})
 same => n,Hangup()
exten => only-a,1,StasisBroadcast(150,^bc-a$)
 same => n,Set(AFTER=\${STASISSTATUS})
 same => n,Hangup()
exten => badfilter,1,StasisBroadcast(150,(a|b)(c|d)(e|f)(g|h)+(x)*(y)*(z)*)
 same => n,Set(AFTER=\${STASISSTATUS})
 same => n,Hangup()
exten => clients,1,StasisBroadcast(5000,^cli-,from-client)
 same => n,Set(AFTER=\${STASISSTATUS})
 same => n,Hangup()
exten => ghost,1,StasisBroadcast(5000,^bc-)
 same => n,Set(AFTER=\${STASISSTATUS})
 same => n,Hangup()
`;

let pbx: PbxServer;
let watch: EventSocket;
let appA: EventSocket;
let appB: EventSocket;

before(async () => {
  pbx = await startPbxServer(DIALPLAN);
  watch = await watchAll(pbx.server, 'watch');
  appA = await pbx.server.events('app=bc-a');
  appB = await pbx.server.events('app=bc-b');
});

after(async () => {
  await Promise.all([watch.close(), appA.close(), appB.close()]);
  await pbx.stop();
});

const claim = (channelId: string, application: string): Promise<Response> =>
  pbx.server.ari(`/events/claim?channelId=${encodeURIComponent(channelId)}&application=${encodeURIComponent(application)}`, { method: 'POST' });

const types = (events: readonly AriEvent[]): string[] => events.map((event) => event.type);

describe('StasisBroadcast and claim', () => {
  test('both applications are offered the call; the first claim wins, the second conflicts', async () => {
    const { one, two } = originate(pbx.server, 'Local/offer@bc');
    const offerA = (await appA.nextOfType('CallBroadcast')) as AriEvent;
    const offerB = (await appB.nextOfType('CallBroadcast')) as AriEvent;
    for (const [offer, app] of [[offerA, 'bc-a'], [offerB, 'bc-b']] as const) {
      assert.equal(offer.application, app);
      assert.equal(channelOf(offer).id, two.id);
      assert.equal(offer.called, 'offer');
      assert.equal(typeof offer.caller, 'string');
      assert.equal(offer.asterisk_id, pbx.server.core.serverId);
    }
    assert.equal(two.stasis, undefined, 'not under Stasis control while the broadcast is pending');

    const won = await claim(two.id, 'bc-a');
    assert.equal(won.status, 204);
    const lost = await claim(two.id, 'bc-b');
    assert.equal(lost.status, 409);
    assert.deepEqual(await lost.json(), { message: 'Channel has already been claimed by another application' });

    // notify_claimed=yes: every offered application hears who won; the winner then gets the channel.
    const seenA = await collectUntil(appA, (event) => event.type === 'StasisStart');
    assert.deepEqual(types(seenA), ['CallClaimed', 'StasisStart']);
    assert.equal(seenA[0]!.winner_app, 'bc-a');
    assert.deepEqual(seenA[1]!.args, ['one', 'two']);
    assert.equal(channelOf(seenA[1]!).id, two.id);
    const claimedB = (await appB.nextOfType('CallClaimed')) as AriEvent;
    assert.equal(claimedB.winner_app, 'bc-a');
    assert.equal(claimedB.application, 'bc-b');
    assert.deepEqual(await appB.quiet(150), [], 'the loser gets no StasisStart');

    // Still claimed while the winner holds it: 409, also over the WebSocket.
    appB.send({ type: 'RESTRequest', request_id: 'late', method: 'POST', uri: `events/claim?channelId=${two.id}&application=bc-b` });
    const late = await appB.nextOfType('RESTResponse');
    assert.equal(late.status_code, 409);

    // Continuing returns to the dialplan with STASISSTATUS=SUCCESS; then the channel is not broadcasting.
    assert.equal((await pbx.server.ari(`/channels/${two.id}/continue`, { method: 'POST' })).status, 204);
    const events = await untilDestroyed(watch, [one, two]);
    assert.deepEqual(varsets(events, two.name, 'AFTER'), ['SUCCESS']);
    assert.equal((await claim(two.id, 'bc-b')).status, 404);
    assert.equal(pbx.server.core.broadcasts.size, 0);
  });

  test('without notify_claimed the loser learns only from its 409', async () => {
    const { one, two } = originate(pbx.server, 'Local/quiet@bc');
    await appA.nextOfType('CallBroadcast');
    await appB.nextOfType('CallBroadcast');
    assert.equal((await claim(two.id, 'bc-b')).status, 204);
    assert.equal((await claim(two.id, 'bc-a')).status, 409);
    const start = (await appB.nextOfType('StasisStart')) as AriEvent;
    assert.deepEqual(start.args, []);
    assert.deepEqual(await appA.quiet(150), []);
    assert.equal((await pbx.server.ari(`/channels/${two.id}`, { method: 'DELETE' })).status, 204);
    await untilDestroyed(watch, [one, two]);
  });

  test('nobody claims: the dialplan goes on with STASISSTATUS=TIMEOUT and a late claim is not found', async () => {
    const { one, two } = originate(pbx.server, 'Local/timeout@bc');
    await appA.nextOfType('CallBroadcast');
    await appB.nextOfType('CallBroadcast');
    const events = await untilDestroyed(watch, [one, two]);
    assert.deepEqual(varsets(events, two.name, 'AFTER'), ['TIMEOUT']);
    assert.equal((await claim(two.id, 'bc-a')).status, 404);
    assert.equal(pbx.server.core.broadcasts.size, 0);
  });

  test('app_filter selects the applications; a refused pattern offers the call to every application', async () => {
    const filtered = originate(pbx.server, 'Local/only-a@bc');
    const offer = (await appA.nextOfType('CallBroadcast')) as AriEvent;
    assert.equal(channelOf(offer).id, filtered.two.id);
    await untilDestroyed(watch, [filtered.one, filtered.two]);
    assert.deepEqual(appB.messages.filter((m) => m.type === 'CallBroadcast'), [], 'bc-b does not match ^bc-a$');

    // Four quantified groups: Asterisk refuses the pattern as dangerous and filters nothing.
    const open = originate(pbx.server, 'Local/badfilter@bc');
    await appA.nextOfType('CallBroadcast');
    await appB.nextOfType('CallBroadcast');
    const events = await untilDestroyed(watch, [open.one, open.two]);
    assert.ok(events.some((event) => event.type === 'CallBroadcast' && event.application === 'watch'), 'the watcher is offered the call too');
    assert.ok(pbx.server.logLines.some((line) => line.includes('app_filter refused')));
  });

  test('a claim by an application that is not connected wins, and StasisBroadcast fails', async () => {
    const { one, two } = originate(pbx.server, 'Local/ghost@bc');
    await appA.nextOfType('CallBroadcast');
    assert.equal((await claim(two.id, 'nobody-here')).status, 204);
    const events = await untilDestroyed(watch, [one, two]);
    assert.deepEqual(varsets(events, two.name, 'AFTER'), ['FAILED']);
    await appB.nextOfType('CallBroadcast');
  });

  test('claim errors: unknown channel 404, missing parameters 400, module unloaded 501', async () => {
    const unknown = await claim('no-such-channel', 'bc-a');
    assert.equal(unknown.status, 404);
    assert.deepEqual(await unknown.json(), { message: 'Channel not found or not in broadcast state' });
    assert.equal((await pbx.server.ari('/events/claim?channelId=x', { method: 'POST' })).status, 400);
    assert.equal((await pbx.server.ari('/events/claim?application=bc-a', { method: 'POST' })).status, 400);
    // A JSON body carries the parameters as well.
    const body = await pbx.server.ari('/events/claim', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ channelId: 'nope', application: 'bc-a' }) });
    assert.equal(body.status, 404);

    assert.equal((await pbx.server.ari('/asterisk/modules/res_stasis_broadcast.so', { method: 'DELETE' })).status, 204);
    try {
      assert.equal((await claim('no-such-channel', 'bc-a')).status, 501);
      const { one, two } = originate(pbx.server, 'Local/offer@bc');
      const events = await untilDestroyed(watch, [one, two]);
      assert.deepEqual(varsets(events, two.name, 'AFTER'), ['FAILED']);
      assert.ok(!events.some((event) => event.type === 'CallBroadcast'));
    } finally {
      assert.equal((await pbx.server.ari('/asterisk/modules/res_stasis_broadcast.so', { method: 'POST' })).status, 204);
    }
  });
});

describe('with the npm ari-client', () => {
  const clients: Client[] = [];
  after(() => {
    for (const client of clients) {
      client.stop();
      internals(client)._ws?.terminate();
    }
  });

  test('two clients get CallBroadcast as an event; claimChannel resolves for one and rejects 409 for the other', async () => {
    for (const app of ['cli-one', 'cli-two']) {
      const client = await ari.connect(pbx.server.url, 'asterisk', 'asterisk');
      await client.start(app);
      clients.push(client);
    }
    const [first, second] = clients as [Client, Client];
    // The typings list Asterisk's events before 22.10: CallBroadcast is not among them.
    const emitter = (client: Client): EventEmitter => client as unknown as EventEmitter;
    const offered = (client: Client): Promise<{ event: AriEvent; channel: { id: string } }> =>
      new Promise((resolve) => emitter(client).once('CallBroadcast', (event: AriEvent, channel: { id: string }) => resolve({ event, channel })));
    const started = new Promise<AriEvent>((resolve) => emitter(first).once('StasisStart', (event: AriEvent) => resolve(event)));
    const offers = Promise.all([offered(first), offered(second)]);
    const { one, two } = originate(pbx.server, 'Local/clients@bc');
    const [offerOne, offerTwo] = await offers;
    assert.equal(offerOne.channel.id, two.id, 'ari-client hands the channel of the event over as a Channel instance');
    assert.equal(offerTwo.event.application, 'cli-two');

    await internals(first).events.claimChannel({ channelId: two.id, application: 'cli-one' });
    await assert.rejects(internals(second).events.claimChannel({ channelId: two.id, application: 'cli-two' }), (err: Error) => /409|already been claimed/.test(String(err.message)));
    const start = await started;
    assert.deepEqual(start.args, ['from-client']);
    await first.channels.continueInDialplan({ channelId: two.id });
    const events = await untilDestroyed(watch, [one, two]);
    assert.deepEqual(varsets(events, two.name, 'AFTER'), ['SUCCESS']);
  });
});
