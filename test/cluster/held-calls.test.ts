// The calls-wait grace of an application across members (docs/events-resume.md, docs/cluster.md
// "Calls wait for an away application on every member"). Its resumable connection is on member B
// and drops: channels sent to it on A and C wait there as held channels (they stay up, they are
// not in the application) and are hung up at B's deadline; when the application comes back to B
// with resumeAfter, the channels waiting on A and C enter in the order they arrived across the
// members, after the replay, numbered on from the last event seen. A real nats-server -js; the
// three members in this process.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { dialplanDir, type Json, NO_NATS, stopThreeMembers, type ThreeMembers, until as pollUntil, untilMembersSeen } from './cluster-fixture.ts';

const DIALPLAN = `[held]
exten => park,1,Answer()
 same => n,Wait(120)
exten => stasis,1,Stasis(gone-app,dialplan)
 same => n,Set(GLOBAL(HELD_STATUS)=\${STASISSTATUS})
 same => n,Wait(120)
`;
const skip = NO_NATS;
const GRACE_SECONDS = 10;
/** What may pass after the grace before its end is seen: the grace itself and a loaded machine's lateness. */
const PAST_GRACE_MS = GRACE_SECONDS * 1000 + 20_000;

/** Polls every 50 ms. */
const until = (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> => pollUntil(what, check, timeoutMs, 50);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('calls wait for an away application on every member', { skip }, () => {
  let nats: NatsServer;
  let dir: string;
  const servers: ThreeMembers = { a: undefined, b: undefined, c: undefined };
  const a = (): TestServer => servers.a!;
  const b = (): TestServer => servers.b!;
  const c = (): TestServer => servers.c!;

  /** Until the member stands in for the application as away, its calls held (its own view). */
  async function heldOn(server: TestServer, app: string): Promise<void> {
    await until(`${app} held on ${server.url}`, () => server.core.applications.isHeld(app) && !server.core.applications.isActive(app));
  }

  before(async () => {
    dir = dialplanDir('patchbay-cluster-held-', DIALPLAN);
    nats = await startNatsServer();
    let n = 0;
    for (const name of ['a', 'b', 'c'] as const) {
      servers[name] = await startTestServer({
        server_id: `02:00:00:00:6${n++}:01`,
        dialplan: { file: join(dir, 'extensions.conf') },
        // Everything a test does while the calls wait must fit in the grace: 3 s did not on a
        // loaded machine (CI read the application's view after it had ended).
        ari: { event_log: { reconnect_grace_seconds: GRACE_SECONDS } },
        cluster: { nats_url: nats.url, node_id: `node${name.toUpperCase()}`, failure_seconds: 3 },
      });
    }
    for (const server of [a(), b(), c()]) {
      await untilMembersSeen(server.url, 3, 50);
    }
  });

  after(async () => {
    await stopThreeMembers(servers);
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('channels sent to it on A and C wait, and are hung up (or Stasis() fails) at the end of B\'s grace period', async () => {
    const app = 'gone-app';
    const socket = await b().events(`app=${app}&resumable=true`);
    for (const server of [a(), c()]) await until(`${app} known on ${server.url}`, () => server.core.applications.isActive(app));
    await socket.close();
    await heldOn(a(), app);
    await heldOn(c(), app);
    assert.equal((await a().ari(`/channels?endpoint=Local/park@held&app=${app}&channelId=g-a`, { method: 'POST' })).status, 200);
    assert.equal((await c().ari(`/channels?endpoint=Local/park@held&app=${app}&channelId=g-c`, { method: 'POST' })).status, 200);
    // Stasis() in A's dialplan waits too, and goes on with STASISSTATUS=FAILED when the grace ends.
    assert.equal((await a().ari('/channels?endpoint=Local/stasis@held&extension=park&context=held&channelId=g-dp&otherChannelId=g-dp-2', { method: 'POST' })).status, 200);
    await until('all waiting', () => a().core.stasis.waitingFor(app).length === 2 && c().core.stasis.waitingFor(app).length === 1);
    await sleep(300);
    // Up, and not in the application: held.
    for (const [server, id] of [[a(), 'g-a'], [c(), 'g-c']] as const) {
      assert.equal((await b().ari(`/channels/${id}`)).status, 200, `${id} waits`);
      assert.equal(server.core.channels.get(id)?.stasis, undefined, `${id} is not in the application`);
    }
    // The application's view through A says so.
    const view = (await (await a().ari(`/applications/${app}`)).json()) as Json;
    assert.equal(view.connected, false);
    assert.equal(typeof view.calls_held_until, 'string');
    await until('both hung up after the grace period', async () => (await b().ari('/channels/g-a')).status === 404 && (await b().ari('/channels/g-c')).status === 404, PAST_GRACE_MS);
    await until('the dialplan went on', async () => ((await (await b().ari('/asterisk/variable?variable=HELD_STATUS')).json()) as Json).value === 'FAILED', PAST_GRACE_MS);
    assert.equal((await b().ari('/channels/g-dp-2')).status, 200, 'the dialplan channel is not hung up');
    assert.equal((await b().ari('/channels/g-dp', { method: 'DELETE' })).status, 204);
    await until('the application forgotten on every member', async () => (await b().ari(`/applications/${app}`)).status === 404 && !a().core.applications.get(app) && !c().core.applications.get(app), PAST_GRACE_MS);
  });

  it('back at B with resumeAfter, the channels waiting on A and C enter in their arrival order across members', async () => {
    const app = 'back-app';
    let socket = await b().events(`app=${app}&resumable=true`);
    for (const server of [a(), c()]) await until(`${app} known on ${server.url}`, () => server.core.applications.isActive(app));
    // One event before the drop, to resume after.
    assert.equal((await b().ari(`/events/user/before?application=${app}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 204);
    const seen = (await socket.nextOfType('ChannelUserevent', 10_000)).sequence as number;
    await socket.close();
    await heldOn(a(), app);
    await heldOn(c(), app);
    const order = [['w1', a()], ['w2', c()], ['w3', a()], ['w4', c()], ['w5', c()], ['w6', a()]] as const;
    for (const [id, server] of order) {
      assert.equal((await server.ari(`/channels?endpoint=Local/park@held&app=${app}&channelId=${id}`, { method: 'POST' })).status, 200);
      await until(`${id} waiting`, () => server.core.stasis.waitingFor(app).some((channel) => channel.id === id));
    }
    socket = await b().events(`app=${app}&resumeAfter=${seen}`);
    const starts: string[] = [];
    const sequences: number[] = [];
    while (starts.length < order.length) {
      const message = (await socket.next(20_000)) as Json;
      if (typeof message.sequence === 'number') sequences.push(message.sequence);
      if (message.type === 'StasisStart') starts.push(message.channel.id);
    }
    assert.deepEqual(starts, order.map(([id]) => id));
    sequences.forEach((value, index) => assert.equal(value, seen + 1 + index, `sequence at ${index}`));
    // A and C stand in for the connected application again: a new channel enters at once.
    await until('A active again', () => a().core.applications.isActive(app));
    assert.equal((await a().ari(`/channels?endpoint=Local/park@held&app=${app}&channelId=w7`, { method: 'POST' })).status, 200);
    const late = (await socket.nextOfType('StasisStart', 10_000)) as Json;
    assert.equal(late.channel.id, 'w7');
    for (const id of [...order.map(([name]) => name), 'w7']) assert.equal((await b().ari(`/channels/${id}`, { method: 'DELETE' })).status, 204, id);
    await socket.close();
  });

  it('a plain connection going away: a channel sent to it on A is refused at once, as on one server', async () => {
    const app = 'plain-app';
    const socket = await b().events(`app=${app}`);
    await until(`${app} known on A`, () => a().core.applications.isActive(app));
    await socket.close();
    await until(`${app} gone from A`, () => !a().core.applications.isActive(app) && !a().core.applications.isHeld(app));
    const response = await a().ari(`/channels?endpoint=Local/park@held&app=${app}&channelId=p-a`, { method: 'POST' });
    // Refused or hung up at once: never waiting.
    await until('p-a gone', async () => (await b().ari('/channels/p-a')).status === 404, 10_000);
    assert.ok(response.status === 200 || response.status >= 400);
    assert.equal(a().core.stasis.waitingFor(app).length, 0);
  });

  it('hostile held-calls messages are answered 400 and change nothing', async () => {
    const nc: NatsConnection = await connect({ servers: nats.url });
    try {
      for (const bad of ['not json', '{}', '{"op":"release","app":""}', '{"op":"release","app":"x"}', `{"op":"list","app":"${'x'.repeat(300)}"}`, '{"op":"explode","app":"x"}']) {
        const reply = JSON.parse(new TextDecoder().decode((await nc.request('pb.patchbay.node.nodeA.held-calls', bad, { timeout: 5000 })).data)) as Json;
        assert.equal(reply.status, 400, bad);
      }
      const listed = JSON.parse(new TextDecoder().decode((await nc.request('pb.patchbay.node.nodeA.held-calls', '{"op":"list","app":"nobody"}', { timeout: 5000 })).data)) as Json;
      assert.deepEqual(listed, { channels: [] });
      const released = JSON.parse(new TextDecoder().decode((await nc.request('pb.patchbay.node.nodeA.held-calls', '{"op":"release","app":"nobody","channel":"none"}', { timeout: 5000 })).data)) as Json;
      assert.deepEqual(released, { released: false });
    } finally {
      await nc.close();
    }
  });
});
