// The playback fast path against SIPp (media.workers: 1): a sound played to a SIP call whose stream
// runs in the media worker is sent by the worker by itself, and the caller hears the file — 600 Hz
// for its first 5 s, 1400 Hz for the next 5 s, so what is heard says where the player is. Through
// ARI: pause (silence) and unpause, forward/reverse/restart moving the worker's player, stop (and
// nothing heard after it), a recording started mid-playback taking the sound back to the main
// thread at its position (the caller keeps hearing it), a hang-up and a worker's death mid-playback;
// and the dialplan's
// Playback() sending the whole file before the next priority, and Background() interrupted by a
// digit (RFC 4733 from a raw phone) while the worker plays. SIPp streams from its media port
// while its SDP names the test's socket (call-sdp-elsewhere.xml): the test hears what the server sends.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ulawToLinear } from '../../src/media/g711.ts';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { playbackOffloadCounts } from '../../src/core/playback/offload.ts';
import type { EventSocket, TestServer } from '../helpers/server.ts';
import { HAVE_SIPP, HAVE_SOX, nextEvent, sipp, startSippServer, waitFor, writeSippTone, type Json, type SippServer } from './sipp-peer.ts';
import { callSdpElsewhere, NO_SIPP_OR_SOX, stasisChannelOf, waitForWorkers, type SdpElsewhereCall } from './sipp-worker-calls.ts';
import { RawPhone } from './raw-phone.ts';
import { PacedRtpSender, telephoneEvent } from './paced-rtp-sender.ts';

let setup: SippServer;
let work: string;
let server: TestServer;
let events: EventSocket;

const target = (): string => `127.0.0.1:${server.core.pjsip.port}`;

/** `seconds` of a sine at `hz`, 8 kHz signed linear. */
function sine(hz: number, seconds: number): Int16Array {
  const samples = new Int16Array(8000 * seconds);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(12000 * Math.sin((2 * Math.PI * hz * i) / 8000));
  return samples;
}

function sln(...parts: Int16Array[]): Buffer {
  return Buffer.concat(parts.map((part) => Buffer.from(part.buffer, part.byteOffset, part.byteLength)));
}

const DIALPLAN = ['[play-in]', 'exten => 100,1,Answer()', ' same => n,Stasis(playworker)', 'exten => 200,1,Answer()', ' same => n,Playback(short)', ' same => n,Hangup()',
  'exten => 300,1,Answer()', ' same => n,Background(steps)', ' same => n,Hangup()', 'exten => 5,1,Set(PRESSED=5)', ' same => n,Hangup()', ''].join('\n');

before(async () => {
  if (!HAVE_SIPP || !HAVE_SOX) return;
  setup = await startSippServer('worker-playback', DIALPLAN, {
    endpoint: { player: { context: 'play-in', allow: 'ulaw', aors: 'player', rtp_symmetric: 'no' } },
    aor: { player: { max_contacts: 1 } },
  }, 'playworker', (dir) => {
    const sounds = join(dir, 'sounds');
    mkdirSync(join(sounds, 'en'), { recursive: true });
    writeFileSync(join(sounds, 'en', 'steps.sln'), sln(sine(600, 5), sine(1400, 5)));
    writeFileSync(join(sounds, 'en', 'short.sln'), sln(sine(600, 2)));
    return { media: { workers: 1 }, dirs: { sounds } };
  });
  ({ work, server, events } = setup);
  // SIPp streams a quiet 300 Hz tone (nothing the server plays has it).
  writeSippTone(work, 300, 60, 0.2);
  await waitForWorkers(server);
});

after(async () => {
  if (!HAVE_SIPP || !HAVE_SOX) return;
  await setup.close();
});

type Call = SdpElsewhereCall;

/** A call from SIPp to `exten`; `heard` collects the u-law payloads the server sends to the SDP's port. */
const call = (exten: string): Promise<Call> => callSdpElsewhere(target(), work, exten, 'player', { timeoutMs: 90_000, collect: true });

/** The channel SIPp's call put into Stasis. */
const stasisChannel = (run: Call['run']): Promise<string> => stasisChannelOf(events, run);

function linear(packets: readonly Buffer[]): Int16Array {
  const samples = new Int16Array(packets.length * 160);
  let at = 0;
  for (const payload of packets) for (const code of payload.subarray(0, 160)) samples[at++] = ulawToLinear(code);
  return samples;
}

/** The share of `hz` in the energy of the last `packets` packets heard (0 for silence). */
function share(heard: readonly Buffer[], hz: number, packets = 25): number {
  const samples = linear(heard.slice(-packets));
  let total = 0;
  for (const sample of samples) total += sample * sample;
  return total > 0 ? goertzelPower(samples, hz, 8000) / (total / samples.length) : 0;
}

/** The mean power of the last `packets` packets heard. */
function power(heard: readonly Buffer[], packets = 25): number {
  const samples = linear(heard.slice(-packets));
  let total = 0;
  for (const sample of samples) total += sample * sample;
  return samples.length > 0 ? total / samples.length : 0;
}

/** Waits until `packets` more packets were heard (the server sends 50 a second). */
async function hear(heard: readonly Buffer[], packets: number): Promise<void> {
  const until = heard.length + packets;
  await waitFor(`${packets} packets`, () => (heard.length >= until ? true : undefined), 20_000);
}

async function control(playbackId: string, operation: string): Promise<void> {
  const response = await server.ari(`/playbacks/${playbackId}/control?operation=${operation}`, { method: 'POST' });
  assert.equal(response.status, 204, `${operation}: ${await response.text()}`);
}

describe('playback made in the media worker', { skip: NO_SIPP_OR_SOX }, () => {
  test('ARI: the caller hears the file from the worker; pause, unpause, forward, reverse, restart and stop act on its player', { timeout: 150_000 }, async () => {
    const pool = server.core.pjsip.mediaWorkers!;
    const { heard, run, socket } = await call('100');
    try {
      const channelId = await stasisChannel(run);
      const handedOver = playbackOffloadCounts.handedOver;
      const response = await server.ari(`/channels/${channelId}/play?media=sound:steps&skipms=5000`, { method: 'POST' });
      assert.equal(response.status, 201);
      const playbackId = ((await response.json()) as Json).id as string;
      await nextEvent(events, (e) => e.type === 'PlaybackStarted' && e.playback.id === playbackId, 10_000);
      await hear(heard, 40);
      assert.equal(pool.streams, 1, 'the stream runs in the worker');
      assert.equal(playbackOffloadCounts.handedOver, handedOver + 1, 'the worker plays the sound');
      assert.equal(server.core.generators.resting, 1, 'the channel rests: no frame is made on the main thread');
      assert.ok(share(heard, 600) > 0.5, `the file's first tone is heard (600 Hz share ${share(heard, 600).toFixed(2)})`);

      await control(playbackId, 'pause');
      await hear(heard, 30);
      assert.ok(power(heard, 20) < 100, `paused: silence (power ${power(heard, 20).toFixed(0)})`);
      await control(playbackId, 'unpause');
      await nextEvent(events, (e) => e.type === 'PlaybackStarted' && e.playback.id === playbackId, 10_000);
      await hear(heard, 30);
      assert.ok(share(heard, 600, 20) > 0.5, 'unpaused: the first tone again');

      await control(playbackId, 'forward');
      await hear(heard, 30);
      assert.ok(share(heard, 1400, 20) > 0.5, `forward 5 s: the second tone (1400 Hz share ${share(heard, 1400, 20).toFixed(2)})`);
      await control(playbackId, 'reverse');
      await hear(heard, 30);
      assert.ok(share(heard, 600, 20) > 0.5, 'reverse 5 s: the first tone');
      await control(playbackId, 'forward');
      await hear(heard, 30);
      await control(playbackId, 'restart');
      await hear(heard, 30);
      assert.ok(share(heard, 600, 20) > 0.5, 'restart: the first tone');

      assert.equal((await server.ari(`/playbacks/${playbackId}`, { method: 'DELETE' })).status, 204);
      const finished: Json = await nextEvent(events, (e) => e.type === 'PlaybackFinished' && e.playback.id === playbackId, 10_000);
      assert.equal(finished.playback.state, 'complete');
      await waitFor('the channel to leave the fast path', () => (server.core.generators.resting === 0 ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 300));
      const afterStop = heard.length;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const later = heard.slice(afterStop);
      assert.ok(later.length === 0 || share(later, 600, later.length) + share(later, 1400, later.length) < 0.1, `nothing of the file after stop (${later.length} packets)`);

      assert.equal((await server.ari(`/channels/${channelId}`, { method: 'DELETE' })).status, 204);
      assert.equal((await run.done).status, 0);
    } finally {
      socket.close();
    }
  });

  test('a recording started mid-playback takes the sound back at its position; a hang-up mid-playback ends it', { timeout: 150_000 }, async () => {
    const { heard, run, socket } = await call('100');
    try {
      const channelId = await stasisChannel(run);
      const takenBack = playbackOffloadCounts.takenBack;
      const response = await server.ari(`/channels/${channelId}/play?media=sound:steps&offsetms=3000`, { method: 'POST' });
      const playbackId = ((await response.json()) as Json).id as string;
      await hear(heard, 40);
      assert.ok(share(heard, 600, 20) > 0.5, 'offsetms 3000: still the first tone');
      assert.equal(server.core.generators.resting, 1);
      const recording = await server.ari(`/channels/${channelId}/record?name=tap-${Date.now()}&format=wav`, { method: 'POST' });
      assert.equal(recording.status, 201, await recording.text());
      await waitFor('the sound to come back', () => (playbackOffloadCounts.takenBack === takenBack + 1 ? true : undefined));
      assert.equal(server.core.generators.resting, 0);
      await hear(heard, 50);
      // 3 s in, plus about 1 s: the file's second tone comes at 5 s, made on the main thread now.
      await waitFor('the second tone, from the main thread', () => (share(heard, 1400, 20) > 0.5 ? true : undefined), 10_000);
      assert.equal((await server.ari(`/channels/${channelId}`, { method: 'DELETE' })).status, 204);
      const finished: Json = await nextEvent(events, (e) => e.type === 'PlaybackFinished' && e.playback.id === playbackId, 10_000);
      assert.equal(finished.playback.state, 'complete');
      assert.equal((await run.done).status, 0);
    } finally {
      socket.close();
    }

    // Hung up while the worker plays.
    const second = await call('100');
    try {
      const channelId = await stasisChannel(second.run);
      const response = await server.ari(`/channels/${channelId}/play?media=sound:steps`, { method: 'POST' });
      const playbackId = ((await response.json()) as Json).id as string;
      await hear(second.heard, 25);
      assert.equal(server.core.generators.resting, 1);
      assert.equal((await server.ari(`/channels/${channelId}`, { method: 'DELETE' })).status, 204);
      await nextEvent(events, (e) => e.type === 'PlaybackFinished' && e.playback.id === playbackId, 10_000);
      assert.equal(server.core.generators.resting, 0);
      assert.equal((await second.run.done).status, 0);
    } finally {
      second.socket.close();
    }
    await waitFor('the streams to close', () => (server.core.pjsip.mediaWorkers!.streams === 0 ? true : undefined));
  });

  test('a media worker that dies mid-playback ends the call with cause 38 and the playback with it', { timeout: 120_000 }, async () => {
    const pool = server.core.pjsip.mediaWorkers!;
    const { heard, run, socket } = await call('100');
    try {
      const channelId = await stasisChannel(run);
      const response = await server.ari(`/channels/${channelId}/play?media=sound:steps`, { method: 'POST' });
      const playbackId = ((await response.json()) as Json).id as string;
      await hear(heard, 25);
      assert.equal(server.core.generators.resting, 1);
      await pool.kill(0);
      const finished: Json = await nextEvent(events, (e) => e.type === 'PlaybackFinished' && e.playback.id === playbackId, 15_000);
      assert.equal(finished.playback.state, 'complete');
      const destroyed: Json = await nextEvent(events, (e) => e.type === 'ChannelDestroyed' && e.channel?.id === channelId, 15_000);
      assert.equal(destroyed.cause, 38);
      assert.equal(server.core.generators.resting, 0);
      assert.equal((await run.done).status, 0, 'the caller got a BYE');
    } finally {
      socket.close();
    }
    await waitFor('the restarted worker', () => (pool.loads()[0].running ? true : undefined), 60_000);
  });

  test('Playback() in the dialplan: the worker plays the whole file, then the next priority hangs up', { timeout: 90_000 }, async () => {
    const ended = playbackOffloadCounts.ended;
    const { heard, run, socket } = await call('200');
    try {
      const result = await run.done;
      assert.equal(result.status, 0, `the caller got the BYE after the file: ${result.output}`);
      assert.equal(playbackOffloadCounts.ended, ended + 1, 'the worker played it to its end');
      // 2 s of 600 Hz: about 100 packets of it (the first from the main thread), then the BYE.
      const toned = heard.filter((payload) => share([payload], 600, 1) > 0.5).length;
      assert.ok(toned >= 90 && toned <= 105, `the whole file was heard once (${toned} packets of it)`);
    } finally {
      socket.close();
    }
  });

  test('Background() in the dialplan: a digit received while the worker plays interrupts it and the dialplan goes on at that extension', { timeout: 90_000 }, async () => {
    const phone = new RawPhone('player');
    await phone.open();
    phone.serverPort = server.core.pjsip.port;
    try {
      const { final } = await phone.call('300');
      assert.match(final, /^SIP\/2.0 200/);
      const rtpPort = Number(/m=audio (\d+)/.exec(final)?.[1]);
      await waitFor('the file from the worker', () => (server.core.generators.resting === 1 && phone.received.length >= 25 ? true : undefined), 20_000);
      const heard = phone.received.slice(-20).map((packet) => packet.payload);
      assert.ok(share(heard, 600, 20) > 0.5, 'the first tone of the file');
      // RFC 4733: a few audio packets for the server to learn the source, then digit 5 (three end packets).
      const rtp = new PacedRtpSender(phone, rtpPort, 0x5eed1234, { sequence: 1000, timestamp: 8000 });
      await rtp.ulawSilence(10);
      await rtp.send(101, telephoneEvent(5, 160, false), true);
      await rtp.send(101, telephoneEvent(5, 320, false));
      await rtp.send(101, telephoneEvent(5, 480, false));
      for (let i = 0; i < 3; i++) await rtp.send(101, telephoneEvent(5, 800, true));
      const pressed = Date.now();
      await phone.nextMessage(/^BYE /, 15_000);
      // The file is 10 s long: a BYE within a few seconds is the digit's doing.
      assert.ok(Date.now() - pressed < 5000, 'Background() was interrupted');
      await waitFor('the channel to leave the fast path', () => (server.core.generators.resting === 0 ? true : undefined));
    } finally {
      phone.close();
    }
  });
});
