// Recording a bridge whose channels live on other members: the bridge's member records its mix,
// in which A's and C's channels stand through media legs (docs/cluster.md, "A bridge across
// members"). The recording hears both, a digit from a channel of another member ends a recording
// made with terminateOn, and the end of a recording whose bridge is destroyed still reaches the
// channels' application. A live recording of a channel on A is muted and unmuted through B (each
// control crosses NATS to A): the silence is where the wall clock says. A live recording's name is
// taken on every member while it records, and a member that answers nothing holds no control up. A real nats-server -js; the three members in this process.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect } from '@nats-io/transport-node';
import type { EventSocket, TestServer } from '../helpers/server.ts';
import { startNatsServer, type NatsServer } from '../helpers/nats-server.ts';
import { findFile, wavSamples } from '../helpers/recorded-audio.ts';
import { tonePower } from '../helpers/tone-power.ts';
import { silentFrames, spanBounds, timed, watchDroppedTicks } from '../ari/recordings-helpers.ts';
import { clusterStatus, dialplanDir, type Json, mediaLegsHeld, NO_NATS, startThreeMembers, stopThreeMembers, type ThreeMembers, until, untilThreeKnow } from './cluster-fixture.ts';

const APP = 'xrec';
// tone-600-dtmf sends '#' once the global XREC_GO is 1 (set through any member: globals are shared).
const DIALPLAN = `[xrec]
exten => tone-1000,1,Answer()
 same => n,PlayTones(1000)
 same => n,Wait(120)
exten => tone-600-dtmf,1,Answer()
 same => n,PlayTones(600)
 same => n(wait),GotoIf($["\${GLOBAL(XREC_GO)}" = "1"]?send)
 same => n,Wait(0.1)
 same => n,Goto(wait)
 same => n(send),SendDTMF(#)
 same => n,Wait(120)
`;
const skip = NO_NATS;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The members' request_timeout_ms: a request that waited for a silent member takes at least this long. */
const SLOW_ANSWER_MS = 20_000;

describe('recording across cluster members', { skip }, () => {
  let nats: NatsServer;
  let dir: string;
  const servers: ThreeMembers = { a: undefined, b: undefined, c: undefined };
  let app: EventSocket;
  const events = (): Json[] => app.messages as Json[];
  const legsHeld = (server: TestServer): Promise<number> => mediaLegsHeld(server.url);
  const recordingEvent = (type: string, name: string): Promise<void> => until(`${type} of ${name}`, () => events().some((event) => event.type === type && event.recording?.name === name));
  const finishedState = (name: string): string | undefined => events().find((event) => event.type === 'RecordingFinished' && event.recording?.name === name)?.recording.state;

  before(async () => {
    dir = dialplanDir('patchbay-cluster-xrec-', DIALPLAN);
    nats = await startNatsServer();
    await startThreeMembers(servers, nats.url, dir, 8, { failure_seconds: 3, request_timeout_ms: SLOW_ANSWER_MS });
    watchDroppedTicks(servers.a!.core.media.clock, servers.b!.core.media.clock, servers.c!.core.media.clock);
    // The application's home is C: the bridge's events (B) and the channels' (A, C) reach it through the stream.
    app = await servers.c!.events(`app=${APP}`);
    await untilThreeKnow(servers, APP);
  });

  after(async () => {
    await app?.close();
    await stopThreeMembers(servers);
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const originate = async (server: TestServer, exten: string, id: string): Promise<void> => {
    const response = await server.ari(`/channels?endpoint=Local/${exten}@xrec&app=${APP}&channelId=${id}&otherChannelId=${id}-2`, { method: 'POST' });
    assert.equal(response.status, 200, await response.clone().text());
    await until(`StasisStart of ${id}`, () => events().some((event) => event.type === 'StasisStart' && event.channel?.id === id));
  };

  const post = async (server: TestServer, path: string, status: number): Promise<void> => {
    const response = await server.ari(path, { method: 'POST' });
    assert.equal(response.status, status, `POST ${path}: ${await response.clone().text()}`);
  };

  it("records the mix of B's bridge holding channels of A and C; DTMF of another member ends it; the end reaches the application", async () => {
    const { a, b, c } = servers as Record<'a' | 'b' | 'c', TestServer>;
    await originate(a, 'tone-1000', 'ra');
    await originate(c, 'tone-600-dtmf', 'rc');
    await post(b, '/bridges?bridgeId=rb', 200);
    await until('the bridge found through A', async () => (await a.ari('/bridges/rb')).status === 200);
    await post(a, '/bridges/rb/addChannel?channel=ra,rc', 204);
    assert.equal(await legsHeld(b), 2);

    // The whole mix, asked through A (the bridge is B's): both members' tones are in B's file.
    await post(a, '/bridges/rb/record?name=rb-mix&format=wav', 201);
    await recordingEvent('RecordingStarted', 'rb-mix');
    await sleep(2000);
    await post(c, '/recordings/live/rb-mix/stop', 204);
    await recordingEvent('RecordingFinished', 'rb-mix');
    let file: string | undefined;
    await until('the mix recording', () => (file = findFile(join(b.dataDir, 'recordings'), 'rb-mix.wav')) !== undefined);
    const samples = wavSamples(file!);
    const rate = readFileSync(file!).readUInt32LE(24);
    const quiet = tonePower(samples, 1700, rate) + 1;
    assert.ok(tonePower(samples, 1000, rate) > 100 * quiet, `A's tone in the mix: ${tonePower(samples, 1000, rate)} vs ${quiet}`);
    assert.ok(tonePower(samples, 600, rate) > 100 * quiet, `C's tone in the mix: ${tonePower(samples, 600, rate)} vs ${quiet}`);

    // A digit from C's channel (its far end's SendDTMF) crosses to B's stand-in and ends the recording.
    await post(c, `/bridges/rb/record?name=rb-dtmf&format=wav&terminateOn=${encodeURIComponent('#')}`, 201);
    await recordingEvent('RecordingStarted', 'rb-dtmf');
    await post(a, '/asterisk/variable?variable=XREC_GO&value=1', 204);
    await recordingEvent('RecordingFinished', 'rb-dtmf');
    assert.equal(finishedState('rb-dtmf'), 'done');

    // The bridge destroyed under a recording (through A): its end reaches the channels' application.
    await post(a, '/bridges/rb/record?name=rb-end&format=wav', 201);
    await recordingEvent('RecordingStarted', 'rb-end');
    assert.equal((await a.ari('/bridges/rb', { method: 'DELETE' })).status, 204);
    await recordingEvent('RecordingFinished', 'rb-end');
    assert.equal(finishedState('rb-end'), 'done');
    for (const server of [a, b, c]) await until(`no legs on ${server.url}`, async () => (await legsHeld(server)) === 0);
    assert.equal(b.core.recordings.size, 0);
    for (const id of ['ra', 'rc']) assert.equal((await b.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
  });

  it("mutes and unmutes through B a live recording of A's channel: the silence is one stretch where the wall clock puts it", async () => {
    const { a, b } = servers as Record<'a' | 'b' | 'c', TestServer>;
    // The far end's tone is made on A, the recording's member: one clock paces both, as with a phone.
    await originate(a, 'tone-1000', 'ma');
    await post(b, '/channels/ma/record?name=ma-muted&format=wav', 201);
    await recordingEvent('RecordingStarted', 'ma-muted');
    await sleep(400);
    const muted = await timed(() => post(b, '/recordings/live/ma-muted/mute', 204));
    await sleep(400);
    const unmuted = await timed(() => post(b, '/recordings/live/ma-muted/unmute', 204));
    await sleep(400);
    await post(b, '/recordings/live/ma-muted/stop', 204);
    await recordingEvent('RecordingFinished', 'ma-muted');
    let file: string | undefined;
    await until('the muted recording', () => (file = findFile(join(a.dataDir, 'recordings'), 'ma-muted.wav')) !== undefined);
    const samples = wavSamples(file!);
    // The first frames may be quiet while the tone starts.
    const silent = silentFrames(samples, 160).filter((frame) => frame > 2);
    assert.ok(silent.length > 0, 'the muted time is silence in the file');
    assert.equal(silent.at(-1)! - silent[0], silent.length - 1, 'the silence is one stretch');
    const allowed = spanBounds(muted, unmuted);
    assert.ok(silent.length * 20 >= allowed.shortest && silent.length * 20 <= allowed.longest, `${silent.length} silent frames; the wall clock allows ${allowed.shortest}–${allowed.longest} ms of them`);
    const quiet = tonePower(samples.subarray(silent[0] * 160, (silent.at(-1)! + 1) * 160), 1000, 8000);
    assert.equal(quiet, 0, 'nothing while muted');
    for (const [what, part] of [['before', samples.subarray(0, silent[0] * 160)], ['after', samples.subarray((silent.at(-1)! + 1) * 160)]] as const) {
      assert.ok(tonePower(part, 1000, 8000) > 1000 * (tonePower(part, 1700, 8000) + 1), `the tone ${what} the mute`);
    }
    assert.equal((await b.ari('/channels/ma', { method: 'DELETE' })).status, 204);
  });

  it('a live recording name is taken cluster-wide: recording it on another member answers 409, as one server does', async () => {
    const { a, b, c } = servers as Record<'a' | 'b' | 'c', TestServer>;
    await originate(a, 'tone-1000', 'na');
    await originate(c, 'tone-1000', 'nc');
    await post(b, '/channels/na/record?name=shared-name&format=wav', 201);
    await recordingEvent('RecordingStarted', 'shared-name');
    const taken = "Recording 'shared-name' already exists and can not be overwritten";
    // Through a front (B), and on the member holding the other channel itself (C).
    for (const server of [b, c]) {
      const response = await server.ari('/channels/nc/record?name=shared-name&format=wav&ifExists=overwrite', { method: 'POST' });
      assert.equal(response.status, 409);
      assert.equal(((await response.json()) as Json).message, taken);
    }
    assert.equal((await b.ari('/bridges?bridgeId=nb', { method: 'POST' })).status, 200);
    assert.equal((await c.ari('/bridges/nb/record?name=shared-name&format=wav', { method: 'POST' })).status, 409);
    assert.equal((await c.ari('/bridges/nb', { method: 'DELETE' })).status, 204);
    // Free again once stopped: C records under it (its own recordings directory has no such file).
    await post(c, '/recordings/live/shared-name/stop', 204);
    await recordingEvent('RecordingFinished', 'shared-name');
    await post(b, '/channels/nc/record?name=shared-name&format=wav', 201);
    await post(a, '/recordings/live/shared-name/stop', 204);
    for (const id of ['na', 'nc']) assert.equal((await b.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
  });

  it('a member alive by its heartbeats but answering nothing does not hold up the controls of a live recording', async () => {
    const { a, b } = servers as Record<'a' | 'b' | 'c', TestServer>;
    const nc = await connect({ servers: nats.url });
    // nodeZ: heartbeats, and requests on its subject swallowed.
    nc.subscribe('pb.patchbay.node.nodeZ.ari', { callback: () => undefined });
    const beat = (): void => nc.publish('pb.patchbay.hb', JSON.stringify({ node: 'nodeZ', instance: 'silent-1', asteriskId: '02:00:00:00:8f:01', ari: 'http://127.0.0.1:9', load: { channels: 0, bridges: 0 }, draining: false }));
    beat();
    const heartbeats = setInterval(beat, 500);
    const members = async (): Promise<number> => (await clusterStatus(b.url)).members.length;
    try {
      await until('the silent member seen by B', async () => (await members()) === 4);
      await originate(a, 'tone-1000', 'sz');
      // Each answered by A long before the silent member's request_timeout_ms (half of it is the bound, for a loaded machine).
      const quick = async (what: string, path: string, method: string, status: number): Promise<void> => {
        const began = Date.now();
        const response = await b.ari(path, { method });
        assert.equal(response.status, status, `${what}: ${await response.clone().text()}`);
        assert.ok(Date.now() - began < SLOW_ANSWER_MS / 2, `${what} took ${Date.now() - began} ms`);
      };
      await quick('record (its name checked with every member)', '/channels/sz/record?name=silent-member&format=wav', 'POST', 201);
      await recordingEvent('RecordingStarted', 'silent-member');
      await quick('GET of the live recording', '/recordings/live/silent-member', 'GET', 200);
      await quick('mute', '/recordings/live/silent-member/mute', 'POST', 204);
      await quick('stop', '/recordings/live/silent-member/stop', 'POST', 204);
      await recordingEvent('RecordingFinished', 'silent-member');
    } finally {
      clearInterval(heartbeats);
      await nc.close();
    }
    assert.equal((await b.ari('/channels/sz', { method: 'DELETE' })).status, 204);
    await until('the silent member declared dead', async () => (await members()) === 3);
  });
});
