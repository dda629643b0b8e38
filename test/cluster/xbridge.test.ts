// A bridge whose channels live on two cluster members (docs/cluster.md, "A bridge across
// members"): a channel on A playing 1000 Hz and one on B playing 600 Hz are put into one bridge on
// B through A's ARI; B's recording of the bridge holds A's tone, and a spy on A's channel hears
// B's tone. The application hears both channels enter and leave with the bridge's snapshot, as on
// one server; no helper channel or bridge shows in any listing; removeChannel, a hangup, the
// bridge's destruction and a member stopping end the leg on both members. A real nats-server -js;
// both members in this process.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect } from '@nats-io/transport-node';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { findFile, wavSamples } from '../helpers/recorded-audio.ts';
import { tonePower } from '../helpers/tone-power.ts';
import { clusterStatus, dialplanDir, type Json, mediaLegsHeld, memberSettings, NO_NATS, until } from './cluster-fixture.ts';

const ID = { a: '02:00:00:00:5a:01', b: '02:00:00:00:5b:01' };
const APP = 'xb';
const DIALPLAN = `[xb]
exten => tone-a,1,Answer()
 same => n,PlayTones(1000)
 same => n,Wait(120)
exten => tone-b,1,Answer()
 same => n,PlayTones(600)
 same => n,Wait(120)
exten => both-in-app,1,Answer()
 same => n,Stasis(xb)
exten => dtmf-a,1,Answer()
 same => n(wait),GotoIf($["\${GLOBAL(XB_GO)}" = "1"]?send)
 same => n,Wait(0.1)
 same => n,Goto(wait)
 same => n(send),SendDTMF(7)
 same => n,Wait(120)
`;
const skip = NO_NATS;

/** The sample rate of a WAV file (its fmt chunk follows the RIFF header in what the server writes). */
function wavRate(file: string): number {
  return readFileSync(file).readUInt32LE(24);
}

describe('a bridge with channels of two cluster members', { skip }, () => {
  let nats: NatsServer;
  let dir: string;
  let a: TestServer;
  let b: TestServer;
  let app: EventSocket;
  let aStopped = false;
  /** Every event of the application, in the order its home (B) numbered them. */
  const events = (): Json[] => app.messages as Json[];
  const bridgeEvents = (bridge: string): Json[] => events().filter((event) => /^Channel(Entered|Left)Bridge$/.test(event.type) && event.bridge?.id === bridge);
  const legsHeld = (server: TestServer): Promise<number> => mediaLegsHeld(server.url);
  const bridgeChannels = async (server: TestServer, bridge: string): Promise<string[]> => (((await (await server.ari(`/bridges/${bridge}`)).json()) as Json).channels as string[]).sort();
  const waitEvent = async (what: string, match: (event: Json) => boolean): Promise<Json> => {
    let found: Json | undefined;
    await until(what, () => (found = events().find(match)) !== undefined);
    return found!;
  };
  /** A bridge made on `on`, once every member finds it (a member's subscription for it reaches NATS a moment after its creation). */
  const createBridge = async (on: TestServer, id: string): Promise<void> => {
    assert.equal((await on.ari(`/bridges?bridgeId=${id}`, { method: 'POST' })).status, 200);
    for (const server of [a, b]) await until(`bridge ${id} found through ${server.url}`, async () => (await server.ari(`/bridges/${id}`)).status === 200);
  };
  const originate = async (server: TestServer, exten: string, id: string, callerId = ''): Promise<void> => {
    const caller = callerId === '' ? '' : `&callerId=${encodeURIComponent(callerId)}`;
    const response = await server.ari(`/channels?endpoint=Local/${exten}@xb&app=${APP}&channelId=${id}&otherChannelId=${id}-2${caller}`, { method: 'POST' });
    assert.equal(response.status, 200, await response.clone().text());
    await waitEvent(`StasisStart of ${id}`, (event) => event.type === 'StasisStart' && event.channel?.id === id);
  };

  before(async () => {
    dir = dialplanDir('patchbay-cluster-xbridge-', DIALPLAN);
    nats = await startNatsServer();
    const settings = (node: string, serverId: string): Json => memberSettings(nats.url, dir, node, serverId, { failure_seconds: 3, max_media_legs: 2 });
    a = await startTestServer(settings('nodeA', ID.a));
    b = await startTestServer(settings('nodeB', ID.b));
    app = await b.events(`app=${APP}`);
    await until('the application known on A', async () => (await a.ari(`/applications/${APP}`)).status === 200);
    for (const server of [a, b]) {
      await until(`both members seen from ${server.url}`, async () => ((await clusterStatus(server.url)).members.length === 2));
    }
    await originate(a, 'tone-a', 'xa', 'Alice <100>');
    await originate(b, 'tone-b', 'xb1', 'Bob <200>');
  });

  after(async () => {
    await app?.close();
    await b?.stop();
    if (!aStopped) await a?.stop();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('mixes A\'s channel into B\'s bridge both ways, showing only what one server would', async () => {
    await createBridge(b, 'xq');
    // Through A, whose channel it is; the bridge's owner (B) decides.
    const added = await a.ari('/bridges/xq/addChannel?channel=xb1,xa', { method: 'POST' });
    assert.equal(added.status, 204, await added.clone().text());
    const entered = await waitEvent('xa entering xq', (event) => event.type === 'ChannelEnteredBridge' && event.channel?.id === 'xa');
    assert.deepEqual([...entered.bridge.channels].sort(), ['xa', 'xb1']);
    assert.match(entered.channel.name, /^Local\/tone-a@xb-/);
    assert.equal(entered.channel.state, 'Up');
    assert.deepEqual(bridgeEvents('xq').map((event) => `${event.type} ${event.channel.id}`), ['ChannelEnteredBridge xb1', 'ChannelEnteredBridge xa']);
    for (const server of [a, b]) assert.deepEqual(await bridgeChannels(server, 'xq'), ['xa', 'xb1']);
    // Two parties see each other's caller as their connected line, each raised by its own member.
    const xaConnected = await waitEvent("xa's connected line", (event) => event.type === 'ChannelConnectedLine' && event.channel?.id === 'xa');
    assert.deepEqual([xaConnected.channel.connected, xaConnected.asterisk_id], [{ name: 'Bob', number: '200' }, ID.a]);
    const xbConnected = await waitEvent("xb1's connected line", (event) => event.type === 'ChannelConnectedLine' && event.channel?.id === 'xb1');
    assert.deepEqual([xbConnected.channel.connected, xbConnected.asterisk_id], [{ name: 'Alice', number: '100' }, ID.b]);
    assert.equal(events().filter((event) => event.type === 'ChannelConnectedLine' && event.channel?.id === 'xa').length, 1, 'no connected line from the hidden bridge');
    // Nothing of the leg in listings: the channels are the two Local pairs, the bridge is xq.
    for (const server of [a, b]) {
      const channels = ((await (await server.ari('/channels')).json()) as Json[]).map((channel) => channel.id as string).sort();
      assert.deepEqual(channels, ['xa', 'xa-2', 'xb1', 'xb1-2']);
      assert.deepEqual(((await (await server.ari('/bridges')).json()) as Json[]).map((bridge) => bridge.id), ['xq']);
    }
    assert.equal(await legsHeld(a), 1);
    assert.equal(await legsHeld(b), 1);

    // What A's channel hears (a spy on it, on A), and the whole mix of the bridge (on B).
    assert.equal((await a.ari(`/channels/xa/snoop?spy=out&app=${APP}&snoopId=xa-spy`, { method: 'POST' })).status, 200);
    await waitEvent('the spy in the application', (event) => event.type === 'StasisStart' && event.channel?.id === 'xa-spy');
    assert.equal((await a.ari('/channels/xa-spy/record?name=xa-hears&format=wav', { method: 'POST' })).status, 201);
    assert.equal((await b.ari('/bridges/xq/record?name=xq-mix&format=wav', { method: 'POST' })).status, 201);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    assert.equal((await a.ari('/recordings/live/xa-hears/stop', { method: 'POST' })).status, 204);
    assert.equal((await b.ari('/recordings/live/xq-mix/stop', { method: 'POST' })).status, 204);
    let mixFile: string | undefined;
    let hearsFile: string | undefined;
    await until('both recordings on disk', () => (mixFile = findFile(join(b.dataDir, 'recordings'), 'xq-mix.wav')) !== undefined && (hearsFile = findFile(join(a.dataDir, 'recordings'), 'xa-hears.wav')) !== undefined);
    const mix = wavSamples(mixFile!);
    const mixRate = wavRate(mixFile!);
    const hears = wavSamples(hearsFile!);
    const hearsRate = wavRate(hearsFile!);
    assert.ok(mix.length > mixRate, `the mix holds over a second (${mix.length} samples at ${mixRate})`);
    assert.ok(hears.length > hearsRate, `the spy holds over a second (${hears.length} samples at ${hearsRate})`);
    // A → B: A's 1000 Hz is in B's mix, beside B's own 600 Hz, far above a frequency nobody plays.
    const mixQuiet = tonePower(mix, 1700, mixRate) + 1;
    assert.ok(tonePower(mix, 1000, mixRate) > 100 * mixQuiet, `A's tone in B's mix: ${tonePower(mix, 1000, mixRate)} vs ${mixQuiet}`);
    assert.ok(tonePower(mix, 600, mixRate) > 100 * mixQuiet, `B's tone in B's mix: ${tonePower(mix, 600, mixRate)} vs ${mixQuiet}`);
    // B → A: A's channel hears B's 600 Hz, and not its own tone back (a bridge's mix-minus).
    const hearsQuiet = tonePower(hears, 1700, hearsRate) + 1;
    const heard600 = tonePower(hears, 600, hearsRate);
    assert.ok(heard600 > 100 * hearsQuiet, `B's tone heard by A's channel: ${heard600} vs ${hearsQuiet}`);
    assert.ok(tonePower(hears, 1000, hearsRate) < heard600 / 20, `A's channel does not hear itself: ${tonePower(hears, 1000, hearsRate)} vs ${heard600}`);
    assert.equal((await a.ari('/channels/xa-spy', { method: 'DELETE' })).status, 204);
  });

  it("passes DTMF across: a digit from A's channel reaches B's channel in the bridge", async () => {
    await originate(a, 'dtmf-a', 'xg');
    await originate(b, 'tone-b', 'xh');
    await createBridge(b, 'xt');
    assert.equal((await b.ari('/bridges/xt/addChannel?channel=xg,xh', { method: 'POST' })).status, 204);
    // The digit reaches xh's far end (the Local pair's other half): the application listens to it.
    assert.equal((await b.ari(`/applications/${APP}/subscription?eventSource=channel:xh-2`, { method: 'POST' })).status, 200);
    assert.equal((await a.ari('/asterisk/variable?variable=XB_GO&value=1', { method: 'POST' })).status, 204);
    const digit = await waitEvent('the digit at xh-2', (event) => event.type === 'ChannelDtmfReceived' && event.channel?.id === 'xh-2');
    assert.equal(digit.digit, '7');
    assert.ok(events().some((event) => event.type === 'ChannelDtmfReceived' && event.channel?.id === 'xg' && event.digit === '7'), "A's channel's own DTMF event, from A");
    for (const id of ['xg', 'xh']) assert.equal((await b.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
    assert.equal((await b.ari('/bridges/xt', { method: 'DELETE' })).status, 204);
    await until('only the first leg left', async () => (await legsHeld(a)) === 1 && (await legsHeld(b)) === 1);
  });

  it("passes hold across: B's channel's far end holding puts A's channel on hold", async () => {
    // Both halves of each Local pair in the application: a hold of B's far half is a hold from
    // the far end of B's bridged half, which its bridge passes on.
    for (const [server, id] of [[a, 'xk'], [b, 'xl']] as const) {
      await originate(server, 'both-in-app', id);
      await waitEvent(`StasisStart of ${id}-2`, (event) => event.type === 'StasisStart' && event.channel?.id === `${id}-2`);
    }
    await createBridge(b, 'xu');
    assert.equal((await b.ari('/bridges/xu/addChannel?channel=xk,xl', { method: 'POST' })).status, 204);
    assert.equal((await b.ari('/channels/xl-2/hold', { method: 'POST' })).status, 204);
    const held = await waitEvent("A's far half held", (event) => event.type === 'ChannelHold' && event.channel?.id === 'xk-2');
    assert.equal(held.asterisk_id, ID.a);
    assert.equal((await b.ari('/channels/xl-2/hold', { method: 'DELETE' })).status, 204);
    await waitEvent("A's far half unheld", (event) => event.type === 'ChannelUnhold' && event.channel?.id === 'xk-2');
    for (const id of ['xk', 'xl']) assert.equal((await b.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
    assert.equal((await b.ari('/bridges/xu', { method: 'DELETE' })).status, 204);
    await until('only the first leg left', async () => (await legsHeld(a)) === 1 && (await legsHeld(b)) === 1);
  });

  it('removeChannel through B ends the leg on both members; the channel joins other bridges', async () => {
    const removed = await b.ari('/bridges/xq/removeChannel?channel=xa', { method: 'POST' });
    assert.equal(removed.status, 204, await removed.clone().text());
    const left = await waitEvent('xa leaving xq', (event) => event.type === 'ChannelLeftBridge' && event.channel?.id === 'xa');
    assert.deepEqual(left.bridge.channels, ['xb1']);
    await until('the legs gone on both members', async () => (await legsHeld(a)) === 0 && (await legsHeld(b)) === 0);
    assert.deepEqual(await bridgeChannels(b, 'xq'), ['xb1']);
    assert.equal((await a.ari('/bridges/xq/removeChannel?channel=xa', { method: 'POST' })).status, 422);
    // A bridge of its own member, then back across.
    await createBridge(a, 'qa');
    assert.equal((await b.ari('/bridges/qa/addChannel?channel=xa', { method: 'POST' })).status, 204);
    await waitEvent('xa entering qa', (event) => event.type === 'ChannelEnteredBridge' && event.channel?.id === 'xa' && event.bridge.id === 'qa');
    assert.equal((await b.ari('/bridges/xq/addChannel?channel=xa', { method: 'POST' })).status, 204);
    await waitEvent('xa leaving qa', (event) => event.type === 'ChannelLeftBridge' && event.channel?.id === 'xa' && event.bridge.id === 'qa');
    await until('xa in xq again', () => bridgeEvents('xq').filter((event) => event.type === 'ChannelEnteredBridge' && event.channel.id === 'xa').length === 2);
    assert.deepEqual(await bridgeChannels(a, 'qa'), []);
    assert.deepEqual(await bridgeChannels(b, 'xq'), ['xa', 'xb1']);
    assert.equal(await legsHeld(a), 1);
    assert.equal((await a.ari('/bridges/qa', { method: 'DELETE' })).status, 204);
  });

  it('a hangup of the channel on A ends the leg and takes it out of the bridge on B', async () => {
    assert.equal((await b.ari('/channels/xa', { method: 'DELETE' })).status, 204);
    await until('xa left xq', () => bridgeEvents('xq').filter((event) => event.type === 'ChannelLeftBridge' && event.channel.id === 'xa').length === 2);
    await until('the legs gone on both members', async () => (await legsHeld(a)) === 0 && (await legsHeld(b)) === 0);
    assert.deepEqual(await bridgeChannels(b, 'xq'), ['xb1']);
    assert.deepEqual(
      bridgeEvents('xq').map((event) => `${event.type} ${event.channel.id}`),
      ['ChannelEnteredBridge xb1', 'ChannelEnteredBridge xa', 'ChannelLeftBridge xa', 'ChannelEnteredBridge xa', 'ChannelLeftBridge xa'],
    );
  });

  it('destroying the bridge ends its legs; the channel stays in its application', async () => {
    await originate(a, 'tone-a', 'xc');
    assert.equal((await a.ari('/bridges/xq/addChannel?channel=xc', { method: 'POST' })).status, 204);
    await until('the leg up', async () => (await legsHeld(a)) === 1 && (await legsHeld(b)) === 1);
    assert.equal((await a.ari('/bridges/xq', { method: 'DELETE' })).status, 204);
    await waitEvent('xc leaving xq', (event) => event.type === 'ChannelLeftBridge' && event.channel?.id === 'xc');
    await until('the legs gone on both members', async () => (await legsHeld(a)) === 0 && (await legsHeld(b)) === 0);
    assert.equal((await b.ari('/channels/xc')).status, 200);
  });

  it('refuses past max_media_legs with 503, and answers hostile leg messages without acting', async () => {
    await createBridge(b, 'xr');
    await originate(a, 'tone-a', 'xd');
    await originate(a, 'tone-a', 'xe');
    assert.equal((await b.ari('/bridges/xr/addChannel?channel=xc,xd', { method: 'POST' })).status, 204);
    const third = await b.ari('/bridges/xr/addChannel?channel=xe', { method: 'POST' });
    assert.equal(third.status, 503);
    assert.match(((await third.json()) as Json).message, /max_media_legs/);
    const nc = await connect({ servers: nats.url });
    try {
      const ask = async (node: string, data: string): Promise<Json> => JSON.parse(Buffer.from((await nc.request(`pb.patchbay.node.${node}.legs`, data, { timeout: 10_000 })).data).toString()) as Json;
      assert.equal((await ask('nodeA', '{not json')).status, 400);
      assert.equal((await ask('nodeA', JSON.stringify({ op: 'open', leg: 'x', channel: 'xe', peer: 'nodeB', address: 'not-an-ip', port: 4000 }))).status, 400);
      assert.equal((await ask('nodeA', JSON.stringify({ op: 'open', leg: 'x', channel: 'xe', peer: 'nodeB', address: '127.0.0.1', port: 70000 }))).status, 400);
      // Only a live member may open a leg: anyone else could aim a channel's audio anywhere.
      assert.equal((await ask('nodeA', JSON.stringify({ op: 'open', leg: 'x', channel: 'xe', peer: 'mallory', address: '127.0.0.1', port: 4000 }))).status, 403);
      assert.equal((await ask('nodeB', JSON.stringify({ op: 'add', bridge: 'xr', channels: [{ id: 'xe', node: 'no.de' }], roles: [] }))).status, 400);
      assert.equal((await ask('nodeB', JSON.stringify({ op: 'add', bridge: 'nope', channels: [{ id: 'xe', node: 'nodeA' }], roles: [] }))).status, 404);
      assert.equal((await ask('nodeB', JSON.stringify({ op: 'remove', bridge: 'xr', channels: 'xc' }))).status, 400);
      assert.equal((await ask('nodeB', JSON.stringify({ op: 'close', leg: '../../etc' }))).status, 400);
      assert.equal((await ask('nodeB', JSON.stringify({ op: 'close', leg: 'no-such-leg' }))).status, 200);
    } finally {
      await nc.close();
    }
    assert.equal(await legsHeld(a), 2);
    assert.deepEqual(await bridgeChannels(b, 'xr'), ['xc', 'xd']);
  });

  it('a member stopping ends its legs on the other: the channels leave the bridge', async () => {
    aStopped = true;
    await a.stop();
    await until('xc and xd left xr', () => bridgeEvents('xr').filter((event) => event.type === 'ChannelLeftBridge').length === 2);
    await until('no legs on B', async () => (await legsHeld(b)) === 0);
    assert.deepEqual(await bridgeChannels(b, 'xr'), []);
  });
});
