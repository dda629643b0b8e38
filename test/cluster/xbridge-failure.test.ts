// A cluster member dying mid-bridge (docs/cluster.md, "A bridge across members"): member A, in a
// process of its own, holds a channel in B's bridge and a bridge holding one of B's channels; A
// is killed with SIGKILL. Once B declares it dead, A's channel leaves B's bridge
// (ChannelLeftBridge, then ChannelDestroyed cause 38), B's channel is out of A's bridge and still
// in its application, free to join another bridge, and B holds no leg any more.
import assert from 'node:assert/strict';
import { type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AUTH, startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { dialplanDir, type Json, mediaLegsHeld as legsHeld, memberSettings, NO_NATS, startMemberProcess, until, untilMembersSeen } from './cluster-fixture.ts';

const ID = { a: '02:00:00:00:6a:01', b: '02:00:00:00:6b:01' };
const APP = 'xf';
const FAILURE_SECONDS = 3;
const DIALPLAN = `[xf]
exten => park,1,Answer()
 same => n,Wait(120)
`;
const skip = NO_NATS;

describe('a cluster member dying with bridges across members', { skip }, () => {
  let nats: NatsServer;
  let dir: string;
  let nodeA: ChildProcess;
  let urlA: string;
  let b: TestServer;
  let app: EventSocket;
  const events = (): Json[] => app.messages as Json[];
  const ariA = (path: string, init: RequestInit = {}): Promise<Response> => fetch(`${urlA}/ari${path}`, { ...init, headers: { authorization: AUTH } });

  before(async () => {
    dir = dialplanDir('patchbay-cluster-xbridge-failure-', DIALPLAN);
    nats = await startNatsServer();
    const settings = (node: string, serverId: string): Json => memberSettings(nats.url, dir, node, serverId, { failure_seconds: FAILURE_SECONDS });
    ({ child: nodeA, url: urlA } = await startMemberProcess(settings('nodeA', ID.a)));
    b = await startTestServer(settings('nodeB', ID.b));
    app = await b.events(`app=${APP}`);
    for (const url of [urlA, b.url]) await untilMembersSeen(url, 2);
    await until('the application known on A', async () => (await ariA(`/applications/${APP}`)).status === 200);
  });

  after(async () => {
    await app?.close();
    if (nodeA && nodeA.exitCode === null && nodeA.signalCode === null) nodeA.kill('SIGKILL');
    await b?.stop();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("ends the legs of a killed member: its channel leaves B's bridge, B's channel is free again", async () => {
    for (const [origin, id] of [[ariA, 'fa'], [b.ari.bind(b), 'fb']] as const) {
      assert.equal((await origin(`/channels?endpoint=Local/park@xf&app=${APP}&channelId=${id}&otherChannelId=${id}-2`, { method: 'POST' })).status, 200);
      await until(`StasisStart of ${id}`, () => events().some((event) => event.type === 'StasisStart' && event.channel?.id === id));
    }
    // A's channel in B's bridge, B's channel in A's bridge.
    assert.equal((await b.ari('/bridges?bridgeId=on-b', { method: 'POST' })).status, 200);
    assert.equal((await ariA('/bridges?bridgeId=on-a', { method: 'POST' })).status, 200);
    // Found through B once A's subscription for it has reached NATS.
    await until("A's bridge found through B", async () => (await b.ari('/bridges/on-a')).status === 200);
    assert.equal((await b.ari('/bridges/on-b/addChannel?channel=fa', { method: 'POST' })).status, 204);
    assert.equal((await b.ari('/bridges/on-a/addChannel?channel=fb', { method: 'POST' })).status, 204);
    assert.equal(await legsHeld(b.url), 2);
    assert.equal(await legsHeld(urlA), 2);

    nodeA.kill('SIGKILL');
    await until('A dead on B: its channel out of the bridge and destroyed (cause 38)', () => events().some((event) => event.type === 'ChannelDestroyed' && event.channel?.id === 'fa'), FAILURE_SECONDS * 1000 + 15_000);
    const left = events().find((event) => event.type === 'ChannelLeftBridge' && event.channel?.id === 'fa' && event.bridge?.id === 'on-b');
    assert.ok(left, "A's channel left B's bridge");
    assert.deepEqual(left.bridge.channels, []);
    const destroyed = events().find((event) => event.type === 'ChannelDestroyed' && event.channel?.id === 'fa')!;
    assert.equal(destroyed.cause, 38);
    // In a single server's order: out of the bridge, then gone.
    assert.ok(events().indexOf(left) < events().indexOf(destroyed));
    await until('no legs on B', async () => (await legsHeld(b.url)) === 0);
    assert.deepEqual(((await (await b.ari('/bridges/on-b')).json()) as Json).channels, []);
    // B's channel hears that it left A's bridge (B raises it from its copy of the bridge), once.
    await until("B's channel out of A's bridge", () => events().some((event) => event.type === 'ChannelLeftBridge' && event.channel?.id === 'fb'));
    const fbLeft = events().filter((event) => event.type === 'ChannelLeftBridge' && event.channel?.id === 'fb');
    assert.deepEqual(fbLeft.map((event) => [event.bridge.id, event.bridge.channels, event.asterisk_id]), [['on-a', [], ID.b]]);
    // B's channel is in its application still, and joins a bridge of B's.
    assert.equal((await b.ari('/channels/fb')).status, 200);
    assert.equal((await b.ari('/bridges?bridgeId=on-b-2', { method: 'POST' })).status, 200);
    assert.equal((await b.ari('/bridges/on-b-2/addChannel?channel=fb', { method: 'POST' })).status, 204);
    assert.deepEqual(((await (await b.ari('/bridges/on-b-2')).json()) as Json).channels, ['fb']);
  });
});
