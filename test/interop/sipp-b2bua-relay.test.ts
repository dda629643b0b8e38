// A B2BUA call with media workers (media.workers: 1): SIPp calls in, Patchbay calls a second SIPp
// (Dial(), or ARI's originate and a two-party bridge), and both legs' streams share the worker, which
// relays the audio between them (no frame crosses the main thread). The media of both phones is the
// test's (RtpToneEnd sockets named in the scenarios' SDP): the caller sends 1 kHz, the callee 600 Hz,
// and each must hear the other's tone. RFC 4733 digits sent by the caller reach the callee and are
// still reported (ChannelDtmfReceived). In the bridge, a recording of the bridge stops the relay (the
// main thread mixes again: audio keeps flowing, and the recording has both tones); when it ends the
// relay starts again. A worker that dies under a relayed call ends both legs with cause 38.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeWav } from '../../src/media/wav-reader.ts';
import { RtpToneEnd, sendRfc4733 } from '../helpers/rtp-tone.ts';
import { tonePower } from '../helpers/tone-power.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { HAVE_SIPP, nextEvent, randomPort, sipp, waitFor, type Json } from './sipp-peer.ts';
import { waitForWorkers } from './sipp-worker-calls.ts';

const BOB_PORT = randomPort();
/** An RTP range of its own, away from other tests' servers. */
const RTP_START = 43000 + 2 * Math.floor(Math.random() * 2000);
const CALLER_HZ = 1000;
const CALLEE_HZ = 600;

let work: string;
let server: TestServer;
let events: EventSocket;

const target = (): string => `127.0.0.1:${server.core.pjsip.port}`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

before(async () => {
  if (!HAVE_SIPP) return;
  work = mkdtempSync(join(tmpdir(), 'patchbay-b2bua-relay-'));
  const dialplanFile = join(work, 'extensions.conf');
  writeFileSync(dialplanFile, ['[b2bua]', 'exten => 500,1,Dial(PJSIP/bob,30)', ' same => n,Hangup()', 'exten => 600,1,Answer()', ' same => n,Stasis(b2b)', ' same => n,Hangup()', ''].join('\n'));
  server = await startTestServer({
    media: { workers: 1 },
    sip: { rtp_port_start: RTP_START, rtp_port_end: RTP_START + 200 },
    config_objects: {
      res_pjsip: {
        endpoint: {
          alice: { context: 'b2bua', allow: 'ulaw', aors: 'alice', rtp_symmetric: 'no' },
          bob: { context: 'b2bua', allow: 'ulaw', aors: 'bob', rtp_symmetric: 'no' },
        },
        aor: { alice: { max_contacts: 1 }, bob: { max_contacts: 1, contact: `sip:bob@127.0.0.1:${BOB_PORT}` } },
      },
    },
    dialplan: { file: dialplanFile },
  } as never);
  events = await server.events('app=b2b&subscribeAll=true');
  await waitForWorkers(server);
});

after(async () => {
  if (!HAVE_SIPP) return;
  await events.close();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
});

/** Patchbay's RTP port for a party, once its SIPp wrote it (see the scenarios). */
async function rtpPortFrom(file: string): Promise<number> {
  const path = join(work, file);
  return waitFor(`${file}`, () => {
    if (!existsSync(path)) return undefined;
    const port = Number(readFileSync(path, 'utf8').trim());
    return port > 0 ? port : undefined;
  }, 20_000);
}

interface Parties {
  readonly caller: RtpToneEnd;
  readonly callee: RtpToneEnd;
  readonly callerRun: ReturnType<typeof sipp>;
  readonly calleeRun: ReturnType<typeof sipp>;
  close(): void;
}

/** The two phones: SIPp's signalling, the test's media; the callee SIPp waits, then the caller calls `exten`. */
async function startParties(exten: string): Promise<Parties> {
  for (const file of ['caller-rtp-port', 'callee-rtp-port']) rmSync(join(work, file), { force: true });
  const caller = await new RtpToneEnd().open();
  const callee = await new RtpToneEnd().open();
  const calleeRun = sipp('b2bua-callee.xml', ['-set', 'mport', String(callee.port)], { cwd: work, port: BOB_PORT, timeoutMs: 120_000 });
  await calleeRun.listening;
  const callerRun = sipp('b2bua-caller.xml', [target(), '-s', exten, '-set', 'caller', 'alice', '-set', 'mport', String(caller.port)], { cwd: work, timeoutMs: 120_000 });
  return {
    caller,
    callee,
    callerRun,
    calleeRun,
    close: () => {
      caller.close();
      callee.close();
    },
  };
}

/** Each phone sends its tone to Patchbay's port of its leg. */
async function startTones(parties: Parties): Promise<void> {
  const calleePort = await rtpPortFrom('callee-rtp-port');
  const callerPort = await rtpPortFrom('caller-rtp-port');
  parties.callee.startTone(CALLEE_HZ, calleePort);
  parties.caller.startTone(CALLER_HZ, callerPort);
}

/** Whether `end` heard mostly `hz` (and not its own tone) over the last `ms`. */
function hears(end: RtpToneEnd, hz: number, own: number, ms = 1000): { heard: number; own: number; packets: number } {
  const now = Date.now();
  const samples = end.samples(now - ms, now);
  return { heard: tonePower(samples, hz, 8000), own: tonePower(samples, own, 8000), packets: samples.length / 160 };
}

/** Both phones hear the other's tone, loud and alone, with packets flowing (≥ 30 of the last second's 50). */
async function bothWaysAudio(parties: Parties, what: string): Promise<void> {
  await waitFor(`${what}: audio both ways`, () => {
    const atCaller = hears(parties.caller, CALLEE_HZ, CALLER_HZ);
    const atCallee = hears(parties.callee, CALLER_HZ, CALLEE_HZ);
    const good = (h: { heard: number; own: number; packets: number }): boolean => h.packets >= 30 && h.heard > 1e6 && h.heard > 20 * h.own;
    return good(atCaller) && good(atCallee) ? true : undefined;
  }, 20_000);
}

/** The longest silence between PCMU packets `end` received from `from` to `to` (ms since the epoch). */
function longestGap(end: RtpToneEnd, from: number, to: number): number {
  const times = end.received.filter((packet) => packet.payloadType === 0 && packet.at >= from && packet.at < to).map((packet) => packet.at);
  let gap = times.length === 0 ? to - from : 0;
  for (let i = 1; i < times.length; i++) gap = Math.max(gap, times[i] - times[i - 1]);
  return gap;
}

/**
 * Neither phone went without audio for long around a switch between relay and mixer at `at`: a
 * tick or two is the design; the bound is loose (the test's own process, which runs the server,
 * may stall on a loaded machine) and catches a path that stalled.
 */
function noGapAround(parties: Parties, at: number, what: string): void {
  for (const end of [parties.caller, parties.callee]) {
    const gap = longestGap(end, at - 1000, at + 1000);
    assert.ok(gap < 1000, `${what}: a ${gap} ms gap in the audio`);
  }
}

/** The media worker relays `count` streams (its load report, once a second). */
async function relayedStreams(count: number, what: string): Promise<void> {
  const pool = server.core.pjsip.mediaWorkers!;
  await waitFor(`${what}: ${count} relayed streams`, () => (pool.loads()[0].relayedStreams === count ? true : undefined), 15_000);
}

describe('B2BUA audio relayed in a media worker', { skip: !HAVE_SIPP ? 'sipp is not installed' : false }, () => {
  test('Dial(): both legs in one worker, tones both ways, the relay engaged, DTMF passed on and reported', { timeout: 150_000 }, async () => {
    const parties = await startParties('500');
    try {
      const callerCreated = await nextEvent(events, (e) => e.type === 'ChannelCreated' && String(e.channel?.name).startsWith('PJSIP/alice-'), 20_000);
      await startTones(parties);
      await relayedStreams(2, 'Dial');
      await bothWaysAudio(parties, 'Dial, relayed');
      assert.equal(server.core.pjsip.mediaWorkers!.streams, 2, 'both legs run in the one worker');
      // The call's basic bridge shows native_rtp while the worker relays, as Asterisk's two RTP legs
      // (its smart bridge switches after both entered: the enter events still say simple_bridge).
      const listed = (await (await server.ari('/bridges')).json()) as Json[];
      const basic = listed.find((bridge) => bridge.bridge_class === 'basic' && bridge.channels.includes(callerCreated.channel.id));
      assert.equal(basic?.technology, 'native_rtp');

      // A digit from the caller: reported on its channel, and sent on to the callee as RFC 4733 events.
      const before = parties.callee.received.length;
      await sendRfc4733(parties.caller, await rtpPortFrom('caller-rtp-port'), 5, 200);
      const dtmf: Json = await nextEvent(events, (e) => e.type === 'ChannelDtmfReceived' && e.channel?.id === callerCreated.channel.id, 10_000);
      assert.equal(dtmf.digit, '5');
      await waitFor('the digit at the callee', () => (parties.callee.received.slice(before).some((p) => p.payloadType === 101 && p.payload[0] === 5) ? true : undefined), 10_000);
      await bothWaysAudio(parties, 'Dial, after the digit');

      assert.equal((await server.ari(`/channels/${callerCreated.channel.id}`, { method: 'DELETE' })).status, 204);
      assert.equal((await parties.callerRun.done).status, 0, 'the caller got its BYE');
      assert.equal((await parties.calleeRun.done).status, 0, 'the callee got its BYE');
      await relayedStreams(0, 'after the call');
      const destroyed: Json = await nextEvent(events, (e) => e.type === 'BridgeDestroyed' && e.bridge?.bridge_class === 'basic', 10_000);
      assert.equal(destroyed.bridge.technology, 'native_rtp', 'the bridge is destroyed showing the technology it had');
    } finally {
      parties.close();
    }
  });

  test('a two-party bridge: relayed; a bridge recording falls back to mixing (audio on, recorded), and the relay returns after', { timeout: 150_000 }, async () => {
    const parties = await startParties('600');
    try {
      const callerStart: Json = await nextEvent(events, (e) => e.type === 'StasisStart' && String(e.channel?.name).startsWith('PJSIP/alice-'), 20_000);
      const callerId = callerStart.channel.id as string;
      const originated = await server.ari(`/channels?endpoint=PJSIP/bob&app=b2b&originator=${callerId}`, { method: 'POST' });
      assert.equal(originated.status, 200);
      const calleeId = ((await originated.json()) as Json).id as string;
      await nextEvent(events, (e) => e.type === 'StasisStart' && e.channel?.id === calleeId, 20_000);
      const created = await server.ari('/bridges?type=mixing', { method: 'POST' });
      const bridgeId = ((await created.json()) as Json).id as string;
      assert.equal((await server.ari(`/bridges/${bridgeId}/addChannel?channel=${callerId},${calleeId}`, { method: 'POST' })).status, 204);
      await startTones(parties);
      const bridge = server.core.bridges.get(bridgeId)!;
      await waitFor('the relay', () => (bridge.relayed ? true : undefined), 15_000);
      await relayedStreams(2, 'bridge');
      await bothWaysAudio(parties, 'bridge, relayed');

      // A recording of the bridge needs the mix here: the relay stops, the audio goes on through the mixer.
      const recordingAt = Date.now();
      assert.equal((await server.ari(`/bridges/${bridgeId}/record?name=b2bua-relay&format=wav`, { method: 'POST' })).status, 201);
      assert.equal(bridge.relayed, false, 'a recording stops the relay at once');
      await relayedStreams(0, 'recording');
      await bothWaysAudio(parties, 'bridge, recording');
      await sleep(1500);
      await bothWaysAudio(parties, 'bridge, still recording');
      noGapAround(parties, recordingAt, 'relay → mixer');
      const stoppedAt = Date.now();
      assert.equal((await server.ari('/recordings/live/b2bua-relay/stop', { method: 'POST' })).status, 204);
      const file = await server.ari('/recordings/stored/b2bua-relay/file');
      assert.equal(file.status, 200);
      const wav = decodeWav(new Uint8Array(await file.arrayBuffer()));
      assert.ok(wav.samples.length >= wav.rate, `at least a second recorded (${wav.samples.length} samples)`);
      assert.ok(tonePower(wav.samples, CALLER_HZ, wav.rate) > 1e6, 'the caller\'s tone is in the recording');
      assert.ok(tonePower(wav.samples, CALLEE_HZ, wav.rate) > 1e6, 'the callee\'s tone is in the recording');

      // Nothing needs the audio here any more: the relay starts again.
      await waitFor('the relay again', () => (bridge.relayed ? true : undefined), 15_000);
      assert.ok(bridge.relayEngagements >= 2, 'the relay started again after the recording');
      await relayedStreams(2, 'after the recording');
      await bothWaysAudio(parties, 'bridge, relayed again');
      await sleep(Math.max(0, stoppedAt + 1000 - Date.now()));
      noGapAround(parties, stoppedAt, 'mixer → relay');

      assert.equal((await server.ari(`/channels/${callerId}`, { method: 'DELETE' })).status, 204);
      assert.equal((await server.ari(`/channels/${calleeId}`, { method: 'DELETE' })).status, 204);
      assert.equal((await parties.callerRun.done).status, 0, 'the caller got its BYE');
      assert.equal((await parties.calleeRun.done).status, 0, 'the callee got its BYE');
      await server.ari(`/bridges/${bridgeId}`, { method: 'DELETE' });
    } finally {
      parties.close();
    }
  });

  test('the worker dies under a relayed Dial() call: both legs end with cause 38, both phones get a BYE', { timeout: 150_000 }, async () => {
    const pool = server.core.pjsip.mediaWorkers!;
    const parties = await startParties('500');
    try {
      const callerCreated: Json = await nextEvent(events, (e) => e.type === 'ChannelCreated' && String(e.channel?.name).startsWith('PJSIP/alice-'), 20_000);
      const calleeCreated: Json = await nextEvent(events, (e) => e.type === 'ChannelCreated' && String(e.channel?.name).startsWith('PJSIP/bob-'), 20_000);
      await startTones(parties);
      await relayedStreams(2, 'before the crash');
      await bothWaysAudio(parties, 'before the crash');
      await pool.kill(0);
      const ids = new Set([callerCreated.channel.id, calleeCreated.channel.id]);
      const causes = new Map<string, number>();
      while (causes.size < 2) {
        const destroyed: Json = await nextEvent(events, (e) => e.type === 'ChannelDestroyed' && ids.has(e.channel?.id), 15_000);
        causes.set(destroyed.channel.id, destroyed.cause);
      }
      assert.deepEqual([...causes.values()], [38, 38]);
      assert.equal((await parties.callerRun.done).status, 0, 'the caller got its BYE');
      assert.equal((await parties.calleeRun.done).status, 0, 'the callee got its BYE');
    } finally {
      parties.close();
    }
    await waitFor('the restarted worker', () => (pool.loads()[0].running ? true : undefined), 30_000);
  });
});
