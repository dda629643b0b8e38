// Two applications on one WebSocket, homed on member B, hearing a channel of member A: A raises
// StasisEnd in one and StasisStart in the other in one go at each move, and each application's
// relayed events reach B through a stream consumer of its own. B hands them to the connection in
// A's raise order (docs/cluster.md, "Order across applications on one WebSocket"), each
// application's numbering consecutive; a relayed event naming one that never comes (a hostile or
// lost message) waits at most a second. A real nats-server -js; both members in this process.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { dialplanDir, type Json, memberSettings, NO_NATS, until as pollUntil } from './cluster-fixture.ts';

const ID = { a: '02:00:00:00:5a:01', b: '02:00:00:00:5b:01' };
const FIRST = 'ord-1';
const SECOND = 'ord-2';
const MOVES = 30;
const DIALPLAN = `[ord]
exten => park,1,Answer()
 same => n,Wait(120)
`;
const skip = NO_NATS;

/** Polls every 50 ms. */
const until = (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> => pollUntil(what, check, timeoutMs, 50);

describe('the order of two applications\' relayed events on one WebSocket', { skip }, () => {
  let nats: NatsServer;
  let dir: string;
  let a: TestServer;
  let b: TestServer;
  let socket: EventSocket;
  let nc: NatsConnection;
  const events = (): Json[] => socket.messages as Json[];

  before(async () => {
    dir = dialplanDir('patchbay-cluster-order-', DIALPLAN);
    nats = await startNatsServer();
    const settings = (node: string, serverId: string): Json => memberSettings(nats.url, dir, node, serverId, { failure_seconds: 3 });
    a = await startTestServer(settings('nodeA', ID.a));
    b = await startTestServer(settings('nodeB', ID.b));
    socket = await b.events(`app=${FIRST},${SECOND}`);
    // A relays both applications, and knows they share one connection on B.
    for (const app of [FIRST, SECOND]) await until(`${app} known on A`, async () => (await a.ari(`/applications/${app}`)).status === 200);
    nc = await connect({ servers: nats.url });
  });

  after(async () => {
    await nc?.close();
    await socket?.close();
    await b?.stop();
    await a?.stop();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('moves of A\'s channel between the two applications arrive at B in A\'s order, each application numbered consecutively', async () => {
    const created = await a.ari(`/channels?endpoint=Local/park@ord&app=${FIRST}&channelId=ord-chan&otherChannelId=ord-chan-2`, { method: 'POST' });
    assert.equal(created.status, 200, await created.clone().text());
    await until('StasisStart on B', () => events().some((event) => event.type === 'StasisStart' && event.channel?.id === 'ord-chan'));
    // Each move raises StasisEnd in one application and StasisStart in the other, on A, in one go.
    for (let i = 0; i < MOVES; i++) {
      const to = i % 2 === 0 ? SECOND : FIRST;
      const moved = await a.ari(`/channels/ord-chan/move?app=${to}`, { method: 'POST' });
      assert.equal(moved.status, 204, await moved.clone().text());
    }
    const story = (): string[] => events().filter((event) => (event.type === 'StasisStart' || event.type === 'StasisEnd') && event.channel?.id === 'ord-chan').map((event) => `${event.type}@${event.application}`);
    await until('every move heard on B', () => story().length === 1 + 2 * MOVES);
    const expected = [`StasisStart@${FIRST}`];
    for (let i = 0; i < MOVES; i++) {
      const [from, to] = i % 2 === 0 ? [FIRST, SECOND] : [SECOND, FIRST];
      expected.push(`StasisEnd@${from}`, `StasisStart@${to}`);
    }
    assert.deepEqual(story(), expected);
    for (const app of [FIRST, SECOND]) {
      const numbers = events().filter((event) => event.application === app && typeof event.sequence === 'number').map((event) => event.sequence as number);
      numbers.forEach((value, index) => assert.equal(value, numbers[0]! + index, `${app}: sequence at ${index}`));
    }
    assert.equal((await a.ari('/channels/ord-chan', { method: 'DELETE' })).status, 204);
    await until('ChannelDestroyed on B', () => events().some((event) => event.type === 'ChannelDestroyed' && event.channel?.id === 'ord-chan'));
  });

  it('an event naming one that never comes is held at most about a second; hostile tags are ignored', async () => {
    const subject = (app: string): string => `pb.patchbay.events.${app}`;
    const userEvent = (name: string): string => JSON.stringify({ type: 'ChannelUserevent', timestamp: '2026-11-27T10:00:00.000+0000', eventname: name, userevent: {}, asterisk_id: ID.a });
    const tagged = (value: string): ReturnType<typeof headers> => {
      const h = headers();
      h.set('Pb-Order', value);
      return h;
    };
    // Waits for counter 5 of the other application from a source that never sends it.
    const started = Date.now();
    nc.publish(subject(FIRST), userEvent('waits'), { headers: tagged(JSON.stringify({ s: 'ghost', n: 9, h: 'nodeB', a: { [SECOND]: 5 } })) });
    // Broken tags: delivered at once, as untagged events.
    for (const bad of ['not json', '{"s":"x","n":-1,"h":"nodeB"}', '{"s":"x","n":3,"h":"nodeB","a":{"ord-2":7}}', 'x'.repeat(5000), '[1,2]']) {
      nc.publish(subject(SECOND), userEvent(`bad-tag-${bad.length}`), { headers: tagged(bad) });
    }
    await nc.flush();
    await until('the hostile-tag events', () => events().filter((event) => String(event.eventname).startsWith('bad-tag-')).length === 5, 10_000);
    await until('the waiting event', () => events().some((event) => event.eventname === 'waits'), 10_000);
    const waited = Date.now() - started;
    assert.ok(waited >= 500, `held for the event it names (${waited} ms)`);
    // Events keep flowing afterwards, through A's relay as usual.
    assert.equal((await a.ari(`/events/user/after?application=${FIRST}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 204);
    await until('a later event', () => events().some((event) => event.eventname === 'after'));
  });
});
