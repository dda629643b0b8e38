// StasisBroadcast across cluster members: a channel on member A is offered to an application
// connected to B and one connected to A; the first claim wins wherever it was made (the claim goes
// to the channel's member), later claims answer 409 on either member, and the winner on B gets the
// channel's StasisStart. A real nats-server -js; both members in this process.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { AUTH, startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { dialplanDir, type Json, memberSettings, NO_NATS, until } from './cluster-fixture.ts';

const ID = { a: '02:00:00:00:4a:01', b: '02:00:00:00:4b:01' };
const DIALPLAN = `[bc]
exten => offer,1,Answer()
 same => n,StasisBroadcast(20000,,from-a,yes)
 same => n,Hangup()
exten => park,1,Answer()
 same => n,Wait(60)
`;
const skip = NO_NATS;

async function nextMatching(socket: EventSocket, type: string, match: (event: Json) => boolean, timeoutMs = 20_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const event = (await socket.nextOfType(type, Math.max(1, deadline - Date.now()))) as Json;
    if (match(event)) return event;
  }
}

describe('StasisBroadcast claims across cluster members', { skip }, () => {
  let nats: NatsServer;
  let dir: string;
  let a: TestServer;
  let b: TestServer;
  let onB: EventSocket;
  let onA: EventSocket;

  before(async () => {
    dir = dialplanDir('patchbay-cluster-broadcast-', DIALPLAN);
    nats = await startNatsServer();
    const settings = (node: string, serverId: string): Json => memberSettings(nats.url, dir, node, serverId, { failure_seconds: 3 });
    a = await startTestServer(settings('nodeA', ID.a));
    b = await startTestServer(settings('nodeB', ID.b));
    onB = await b.events('app=claimer');
    onA = await a.events('app=local-claimer');
    // Each member stands in for the application homed on the other once it is announced.
    for (const [server, app] of [[a, 'claimer'], [b, 'local-claimer']] as const) {
      await until(`application ${app} known on the other member`, async () => (await fetch(`${server.url}/ari/applications/${app}`, { headers: { authorization: AUTH } })).status === 200);
    }
  });

  after(async () => {
    await onB?.close();
    await onA?.close();
    await b?.stop();
    await a?.stop();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the first claim wins across members, and the winner on B gets A's channel", async () => {
    assert.equal((await a.ari('/channels?endpoint=Local/offer@bc&extension=park&context=bc&channelId=bc-1&otherChannelId=bc-2', { method: 'POST' })).status, 200);
    const offeredOnB = await nextMatching(onB, 'CallBroadcast', (event) => event.channel?.id === 'bc-2');
    assert.equal(offeredOnB.asterisk_id, ID.a);
    await nextMatching(onA, 'CallBroadcast', (event) => event.channel?.id === 'bc-2');
    // Claimed through B, where the channel is not: decided on A.
    const first = await b.ari('/events/claim?channelId=bc-2&application=claimer', { method: 'POST' });
    assert.equal(first.status, 204, await first.clone().text());
    const late = await a.ari('/events/claim?channelId=bc-2&application=local-claimer', { method: 'POST' });
    assert.equal(late.status, 409);
    const lateThroughB = await b.ari('/events/claim?channelId=bc-2&application=local-claimer', { method: 'POST' });
    assert.equal(lateThroughB.status, 409);
    const started = await nextMatching(onB, 'StasisStart', (event) => event.channel?.id === 'bc-2');
    assert.equal(started.asterisk_id, ID.a);
    assert.deepEqual(started.args, ['from-a']);
    assert.equal((await b.ari('/channels/bc-2', { method: 'DELETE' })).status, 204);
  });

  it('a claim for a channel nobody holds answers 404 as on a single server', async () => {
    assert.equal((await b.ari('/events/claim?channelId=nobody-has-it&application=claimer', { method: 'POST' })).status, 404);
  });
});
