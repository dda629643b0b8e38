// A bridge on member B whose two channels live on members A and C (two media legs into one
// bridge), asked for through C: A's 1000 Hz reaches C's channel (a spy on it, recorded on C) and
// C's 600 Hz reaches A's, through B's mix. A real nats-server -js; the three members in this process.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { EventSocket, TestServer } from '../helpers/server.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { findFile, wavSamples } from '../helpers/recorded-audio.ts';
import { tonePower } from '../helpers/tone-power.ts';
import { dialplanDir, type Json, mediaLegsHeld, NO_NATS, startThreeMembers, stopThreeMembers, type ThreeMembers, until, untilThreeKnow } from './cluster-fixture.ts';

const APP = 'x3';
const DIALPLAN = `[x3]
exten => tone-1000,1,Answer()
 same => n,PlayTones(1000)
 same => n,Wait(120)
exten => tone-600,1,Answer()
 same => n,PlayTones(600)
 same => n,Wait(120)
`;
const skip = NO_NATS;

describe('a bridge of one member mixing channels of two others', { skip }, () => {
  let nats: NatsServer;
  let dir: string;
  const servers: ThreeMembers = { a: undefined, b: undefined, c: undefined };
  let app: EventSocket;
  const events = (): Json[] => app.messages as Json[];
  const legsHeld = (server: TestServer): Promise<number> => mediaLegsHeld(server.url);

  before(async () => {
    dir = dialplanDir('patchbay-cluster-xbridge3-', DIALPLAN);
    nats = await startNatsServer();
    await startThreeMembers(servers, nats.url, dir, 7, { failure_seconds: 3 });
    app = await servers.b!.events(`app=${APP}`);
    await untilThreeKnow(servers, APP);
  });

  after(async () => {
    await app?.close();
    await stopThreeMembers(servers);
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("mixes A's and C's channels in B's bridge, asked through C", async () => {
    const { a, b, c } = servers as Record<'a' | 'b' | 'c', TestServer>;
    for (const [server, exten, id] of [[a, 'tone-1000', 'on-a'], [c, 'tone-600', 'on-c']] as const) {
      assert.equal((await server.ari(`/channels?endpoint=Local/${exten}@x3&app=${APP}&channelId=${id}&otherChannelId=${id}-2`, { method: 'POST' })).status, 200);
      await until(`StasisStart of ${id}`, () => events().some((event) => event.type === 'StasisStart' && event.channel?.id === id));
    }
    assert.equal((await b.ari('/bridges?bridgeId=on-b', { method: 'POST' })).status, 200);
    // Found through C once B's subscription for it has reached NATS.
    await until('the bridge found through C', async () => (await c.ari('/bridges/on-b')).status === 200);
    const added = await c.ari('/bridges/on-b/addChannel?channel=on-a,on-c', { method: 'POST' });
    assert.equal(added.status, 204, await added.clone().text());
    assert.equal(await legsHeld(b), 2);
    assert.deepEqual([await legsHeld(a), await legsHeld(c)], [1, 1]);
    assert.deepEqual((((await (await a.ari('/bridges/on-b')).json()) as Json).channels as string[]).sort(), ['on-a', 'on-c']);

    // What each channel hears, recorded on its own member through a spy.
    for (const [server, id] of [[a, 'on-a'], [c, 'on-c']] as const) {
      assert.equal((await server.ari(`/channels/${id}/snoop?spy=out&app=${APP}&snoopId=${id}-spy`, { method: 'POST' })).status, 200);
      await until(`the spy of ${id}`, () => events().some((event) => event.type === 'StasisStart' && event.channel?.id === `${id}-spy`));
      assert.equal((await server.ari(`/channels/${id}-spy/record?name=${id}-hears&format=wav`, { method: 'POST' })).status, 201);
    }
    await new Promise((resolve) => setTimeout(resolve, 3000));
    for (const [server, id] of [[a, 'on-a'], [c, 'on-c']] as const) assert.equal((await server.ari(`/recordings/live/${id}-hears/stop`, { method: 'POST' })).status, 204);
    const heard = async (server: TestServer, id: string): Promise<{ samples: Int16Array; rate: number }> => {
      let file: string | undefined;
      await until(`${id}'s recording`, () => (file = findFile(join(server.dataDir, 'recordings'), `${id}-hears.wav`)) !== undefined);
      return { samples: wavSamples(file!), rate: readFileSync(file!).readUInt32LE(24) };
    };
    const onA = await heard(a, 'on-a');
    const onC = await heard(c, 'on-c');
    const quietA = tonePower(onA.samples, 1700, onA.rate) + 1;
    const quietC = tonePower(onC.samples, 1700, onC.rate) + 1;
    assert.ok(tonePower(onC.samples, 1000, onC.rate) > 100 * quietC, `A's tone heard on C: ${tonePower(onC.samples, 1000, onC.rate)} vs ${quietC}`);
    assert.ok(tonePower(onA.samples, 600, onA.rate) > 100 * quietA, `C's tone heard on A: ${tonePower(onA.samples, 600, onA.rate)} vs ${quietA}`);

    assert.equal((await a.ari('/bridges/on-b', { method: 'DELETE' })).status, 204);
    for (const server of [a, b, c]) await until(`no legs on ${server.url}`, async () => (await legsHeld(server)) === 0);
  });

  it("a move of A's channel from B's bridge to C's: one ChannelLeftBridge, before the ChannelEnteredBridge", async () => {
    const { a, b, c } = servers as Record<'a' | 'b' | 'c', TestServer>;
    assert.equal((await a.ari(`/channels?endpoint=Local/tone-1000@x3&app=${APP}&channelId=mv-a&otherChannelId=mv-a-2`, { method: 'POST' })).status, 200);
    await until('StasisStart of mv-a', () => events().some((event) => event.type === 'StasisStart' && event.channel?.id === 'mv-a'));
    for (const [server, id] of [[b, 'mv-b'], [c, 'mv-c']] as const) {
      assert.equal((await server.ari(`/bridges?bridgeId=${id}`, { method: 'POST' })).status, 200);
      await until(`${id} found through A`, async () => (await a.ari(`/bridges/${id}`)).status === 200);
    }
    assert.equal((await a.ari('/bridges/mv-b/addChannel?channel=mv-a', { method: 'POST' })).status, 204);
    await until('mv-a in mv-b', () => events().some((event) => event.type === 'ChannelEnteredBridge' && event.channel?.id === 'mv-a'));
    const since = events().length;
    assert.equal((await a.ari('/bridges/mv-c/addChannel?channel=mv-a', { method: 'POST' })).status, 204);
    await until('mv-a in mv-c', () => events().slice(since).some((event) => event.type === 'ChannelEnteredBridge' && event.channel?.id === 'mv-a'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const moves = events()
      .slice(since)
      .filter((event) => /^Channel(Entered|Left)Bridge$/.test(event.type) && event.channel?.id === 'mv-a')
      .map((event) => `${event.type} ${event.bridge.id} ${(event.bridge.channels as string[]).join(',')}`);
    assert.deepEqual(moves, ['ChannelLeftBridge mv-b ', 'ChannelEnteredBridge mv-c mv-a']);
    await until('the leg moved: none on B, one on A and on C', async () => (await legsHeld(b)) === 0 && (await legsHeld(a)) === 1 && (await legsHeld(c)) === 1);
    assert.equal((await a.ari('/channels/mv-a', { method: 'DELETE' })).status, 204);
    for (const id of ['mv-b', 'mv-c']) assert.equal((await a.ari(`/bridges/${id}`, { method: 'DELETE' })).status, 204);
    for (const server of [a, b, c]) await until(`no legs on ${server.url}`, async () => (await legsHeld(server)) === 0);
  });
});
