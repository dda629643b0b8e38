// The recording fast path against SIPp (media.workers: 1): a recording of a SIP call whose stream
// runs in the media worker is written into its file by the worker, and the file holds what the
// caller sent — SIPp streams a 300 Hz tone. Through ARI: mute (silence in the file), unmute, pause
// (nothing written), unpause and stop; a recording of a two-party bridge (relayed in the worker
// before) mixed and written in the worker; a snoop mid-recording taking the recording back to the main
// thread with no gap in the file; max_silence_seconds ending a recording of a silent caller and
// terminate_on ending one on an RFC 4733 digit (raw phone), both while the worker writes; a worker
// killed mid-recording ending it as finished (the channel hangs up with cause 38), the file
// holding what was written so far.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { goertzelPower } from '../../src/media/goertzel.ts';
import { decodeWav } from '../../src/media/wav-reader.ts';
import { recordingOffloadCounts } from '../../src/core/recordings/recording-offload.ts';
import { AUTH, type EventSocket, type TestServer } from '../helpers/server.ts';
import { HAVE_SIPP, HAVE_SOX, nextEvent, sipp, startSippServer, waitFor, writeSippTone, type Json, type SippServer } from './sipp-peer.ts';
import { callSdpElsewhere, NO_SIPP_OR_SOX, stasisChannelOf, waitForWorkers, type SdpElsewhereCall } from './sipp-worker-calls.ts';
import { RawPhone } from './raw-phone.ts';
import { PacedRtpSender, telephoneEvent } from './paced-rtp-sender.ts';

let setup: SippServer;
let work: string;
let server: TestServer;
let events: EventSocket;

const target = (): string => `127.0.0.1:${server.core.pjsip.port}`;
const TONE_HZ = 300;
const FRAME = 160;

before(async () => {
  if (!HAVE_SIPP || !HAVE_SOX) return;
  setup = await startSippServer('worker-recording', ['[rec-in]', 'exten => 100,1,Answer()', ' same => n,Stasis(recworker)', ''].join('\n'), {
    endpoint: { recorder: { context: 'rec-in', allow: 'ulaw', aors: 'recorder', rtp_symmetric: 'no' } },
    aor: { recorder: { max_contacts: 1 } },
  }, 'recworker', { media: { workers: 1 } });
  ({ work, server, events } = setup);
  writeSippTone(work, TONE_HZ, 60, 0.4);
  await waitForWorkers(server);
});

after(async () => {
  if (!HAVE_SIPP || !HAVE_SOX) return;
  await setup.close();
});

type Call = Omit<SdpElsewhereCall, 'heard'>;

/** A call from SIPp streaming the tone; what the server sends goes to a socket nobody reads. */
const call = (): Promise<Call> => callSdpElsewhere(target(), work, '100', 'recorder', { timeoutMs: 90_000 });

/** The channel SIPp's call put into Stasis (a snoop channel's StasisStart is not it). */
const stasisChannel = (run: Call['run']): Promise<string> => stasisChannelOf(events, run, (e) => e.type === 'StasisStart' && !String(e.channel.name).startsWith('Snoop/'));

async function record(channelId: string, name: string, query = ''): Promise<void> {
  const response = await server.ari(`/channels/${channelId}/record?name=${name}&format=wav${query}`, { method: 'POST' });
  assert.equal(response.status, 201, await response.text());
  await nextEvent(events, (e) => e.type === 'RecordingStarted' && e.recording.name === name, 10_000);
}

async function control(name: string, operation: string): Promise<void> {
  const response = await server.ari(`/recordings/live/${name}/${operation}`, { method: 'POST' });
  assert.equal(response.status, 204, `${operation}: ${await response.text()}`);
}

async function stored(name: string): Promise<Int16Array> {
  const response = await server.ari(`/recordings/stored/${name}/file`);
  assert.equal(response.status, 200);
  const wav = decodeWav(new Uint8Array(await response.arrayBuffer()));
  assert.equal(wav.rate, 8000);
  return wav.samples;
}

/** Per 20 ms frame of the file: 's' silence (all zero), 't' the tone, '?' anything else. */
function frames(samples: Int16Array): string {
  let out = '';
  for (let at = 0; at + FRAME <= samples.length; at += FRAME) {
    const frame = samples.subarray(at, at + FRAME);
    let energy = 0;
    for (const sample of frame) energy += sample * sample;
    if (energy === 0) out += 's';
    else out += goertzelPower(frame, TONE_HZ, 8000) > 0.5 * (energy / FRAME) ? 't' : '?';
  }
  return out;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether the recording of that name is written by the worker now. */
function inWorker(name: string): boolean {
  return server.core.recordings.list().some((recording) => recording.name === name && recording.writtenElsewhere);
}

describe('recordings written in the media worker', { skip: NO_SIPP_OR_SOX }, () => {
  test('the worker writes the caller\'s tone; mute writes silence, pause writes nothing, stop ends it', { timeout: 150_000 }, async () => {
    const { run, socket } = await call();
    try {
      const channelId = await stasisChannel(run);
      await sleep(500);
      const handedOver = recordingOffloadCounts.handedOver;
      await record(channelId, 'worker-tone');
      await waitFor('the worker to write the recording', () => (inWorker('worker-tone') ? true : undefined));
      assert.equal(recordingOffloadCounts.handedOver, handedOver + 1);
      const pool = server.core.pjsip.mediaWorkers!;
      await waitFor('the load report: one recording in the worker', () => (pool.loads()[0].recordings === 1 ? true : undefined), 15_000);
      const metrics = await (await fetch(`${server.url}/metrics`, { headers: { authorization: AUTH } })).text();
      assert.match(metrics, /^patchbay_media_worker_recordings\{worker="0"\} 1$/m);
      await sleep(1000);
      await control('worker-tone', 'mute');
      await sleep(1000);
      await control('worker-tone', 'unmute');
      await sleep(1000);
      await control('worker-tone', 'pause');
      await sleep(1000);
      await control('worker-tone', 'unpause');
      await sleep(1000);
      assert.ok(inWorker('worker-tone'), 'the controls left the recording in the worker');
      const live = (await (await server.ari('/recordings/live/worker-tone')).json()) as Json;
      assert.ok(live.duration >= 3, `GET /recordings/live reads the worker's progress (${live.duration} s)`);
      await control('worker-tone', 'stop');
      const finished: Json = await nextEvent(events, (e) => e.type === 'RecordingFinished' && e.recording.name === 'worker-tone', 10_000);
      const samples = await stored('worker-tone');
      const shape = frames(samples);
      // 1.5–2.5 s of tone, 1 s of silence (muted), 1 s + 1 s of tone (the paused second is not in the file).
      const seconds = samples.length / 8000;
      assert.ok(seconds > 3.6 && seconds < 6.2, `the paused second is missing: ${seconds.toFixed(2)} s (${shape})`);
      assert.equal(finished.recording.duration, Math.round(seconds));
      const muted = /s{35,}/.exec(shape);
      assert.ok(muted, `a second of silence where it was muted: ${shape}`);
      const before = shape.slice(0, muted.index);
      const afterwards = shape.slice(muted.index + muted[0].length);
      assert.ok((before.match(/t/g)?.length ?? 0) > 40, `the tone before the mute: ${before}`);
      assert.ok((afterwards.match(/t/g)?.length ?? 0) > 80, `the tone after the unmute: ${afterwards}`);
      assert.equal((await server.ari(`/channels/${channelId}`, { method: 'DELETE' })).status, 204);
      assert.equal((await run.done).status, 0);
    } finally {
      socket.close();
    }
  });

  test('a snoop mid-recording takes it back to the main thread with no gap in the file', { timeout: 150_000 }, async () => {
    const { run, socket } = await call();
    try {
      const channelId = await stasisChannel(run);
      await sleep(500);
      const takenBack = recordingOffloadCounts.takenBack;
      await record(channelId, 'worker-snooped');
      const startedAt = Date.now();
      await waitFor('the worker to write the recording', () => (inWorker('worker-snooped') ? true : undefined));
      await sleep(1500);
      const snoop = await server.ari(`/channels/${channelId}/snoop?app=recworker&spy=in`, { method: 'POST' });
      const snoopBody = await snoop.text();
      assert.equal(snoop.status, 200, snoopBody);
      const snoopId = (JSON.parse(snoopBody) as Json).id as string;
      await waitFor('the recording back on the main thread', () => (recordingOffloadCounts.takenBack === takenBack + 1 && !inWorker('worker-snooped') ? true : undefined));
      await sleep(1500);
      assert.equal((await server.ari(`/channels/${snoopId}`, { method: 'DELETE' })).status, 204);
      // The snoop gone, the worker writes it again.
      await waitFor('the recording in the worker again', () => (inWorker('worker-snooped') ? true : undefined));
      await sleep(1000);
      const wall = (Date.now() - startedAt) / 1000;
      await control('worker-snooped', 'stop');
      await nextEvent(events, (e) => e.type === 'RecordingFinished' && e.recording.name === 'worker-snooped', 10_000);
      const shape = frames(await stored('worker-snooped'));
      const seconds = shape.length / 50;
      // No time is lost at either hand-over: the file is as long as the recording ran (a tick or two either way).
      assert.ok(seconds > 3.5 && seconds >= wall - 0.6, `the whole time is in the file (${seconds.toFixed(2)} s of ${wall.toFixed(2)} s)`);
      // And no stretch of it is missing audio: a frame or a few may be silence where the caller's audio came late on a
      // loaded machine (its jitter buffer then fills in), on either thread; a lost stretch would be far longer.
      const middle = shape.slice(5, -5);
      assert.ok(!/s{10,}/.test(middle), `no gap in the file: ${shape}`);
      assert.ok((middle.match(/t/g)?.length ?? 0) >= middle.length - 15, `the tone throughout: ${shape}`);
      assert.equal((await server.ari(`/channels/${channelId}`, { method: 'DELETE' })).status, 204);
      assert.equal((await run.done).status, 0);
    } finally {
      socket.close();
    }
  });

  test('max_silence_seconds ends a recording of a silent caller, and terminate_on a digit (RFC 4733), while the worker writes', { timeout: 120_000 }, async () => {
    const phone = new RawPhone('recorder');
    await phone.open();
    phone.serverPort = server.core.pjsip.port;
    try {
      const { final } = await phone.call('100');
      assert.match(final, /^SIP\/2.0 200/);
      const rtpPort = Number(/m=audio (\d+)/.exec(final)?.[1]);
      const start: Json = await nextEvent(events, (e) => e.type === 'StasisStart' && String(e.channel.name).startsWith('PJSIP/'), 20_000);
      const channelId = start.channel.id as string;
      const endedThere = recordingOffloadCounts.endedThere;
      await record(channelId, 'worker-silence', '&max_silence_seconds=1');
      const silenced: Json = await nextEvent(events, (e) => e.type === 'RecordingFinished' && e.recording.name === 'worker-silence', 15_000);
      assert.equal(recordingOffloadCounts.endedThere, endedThere + 1, 'the worker ended it on the silence');
      assert.equal(silenced.recording.silence_duration, silenced.recording.duration);
      assert.equal(silenced.recording.talking_duration, 0);
      const silent = await stored('worker-silence');
      assert.ok(silent.length >= 8000 && silent.length <= 8000 * 2, `a second of silence (${silent.length} samples)`);

      // RFC 4733: a few audio packets for the server to learn the source, the recording, then digit #.
      const rtp = new PacedRtpSender(phone, rtpPort, 0x5eed4321, { sequence: 100, timestamp: 1600 });
      await rtp.ulawSilence(10);
      await record(channelId, 'worker-digit', '&terminate_on=%23');
      await waitFor('the worker to write the recording', () => (inWorker('worker-digit') ? true : undefined));
      await rtp.ulawSilence(25);
      await rtp.send(101, telephoneEvent(11, 160, false), true);
      await rtp.send(101, telephoneEvent(11, 320, false));
      for (let i = 0; i < 3; i++) await rtp.send(101, telephoneEvent(11, 640, true));
      const finished: Json = await nextEvent(events, (e) => e.type === 'RecordingFinished' && e.recording.name === 'worker-digit', 10_000);
      assert.equal(finished.recording.state, 'done');
      assert.ok((await stored('worker-digit')).length > 0);
      assert.equal((await server.ari(`/channels/${channelId}`, { method: 'DELETE' })).status, 204);
    } finally {
      phone.close();
    }
  });

  test('a recording of a two-party bridge relayed in the worker: the two are mixed there instead and the worker writes the mix; the relay comes back after', { timeout: 150_000 }, async () => {
    const first = await call();
    const second = await call();
    try {
      const a = await stasisChannel(first.run);
      const b = await stasisChannel(second.run);
      const created = await server.ari('/bridges?type=mixing', { method: 'POST' });
      const bridgeId = ((await created.json()) as Json).id as string;
      assert.equal((await server.ari(`/bridges/${bridgeId}/addChannel?channel=${a},${b}`, { method: 'POST' })).status, 204);
      const bridge = server.core.bridges.get(bridgeId)!;
      await waitFor('the relay', () => (bridge.relayed ? true : undefined), 15_000);
      const response = await server.ari(`/bridges/${bridgeId}/record?name=worker-pair&format=wav`, { method: 'POST' });
      assert.equal(response.status, 201, await response.text());
      await nextEvent(events, (e) => e.type === 'RecordingStarted' && e.recording.name === 'worker-pair', 10_000);
      await waitFor('the worker to write the recording', () => (inWorker('worker-pair') ? true : undefined), 15_000);
      assert.equal(bridge.relayed, false);
      assert.equal(bridge.mixedByTechnology, true, 'the pair is mixed in the worker, not on the main thread');
      await sleep(2000);
      await control('worker-pair', 'stop');
      await nextEvent(events, (e) => e.type === 'RecordingFinished' && e.recording.name === 'worker-pair', 10_000);
      await waitFor('the relay again', () => (bridge.relayed ? true : undefined), 15_000);
      const shape = frames(await stored('worker-pair'));
      assert.ok(shape.length >= 90, `two seconds recorded (${shape.length} frames)`);
      // Both callers send the same tone: the mix holds it (louder), every frame past the first few.
      assert.ok((shape.slice(5).match(/t/g)?.length ?? 0) >= shape.length - 10, `the tone in the mix: ${shape}`);
      assert.equal((await server.ari(`/bridges/${bridgeId}`, { method: 'DELETE' })).status, 204);
      for (const id of [a, b]) assert.equal((await server.ari(`/channels/${id}`, { method: 'DELETE' })).status, 204);
      assert.equal((await first.run.done).status, 0);
      assert.equal((await second.run.done).status, 0);
    } finally {
      first.socket.close();
      second.socket.close();
    }
  });

  test('a media worker killed mid-recording: the recording finishes (the channel hangs up, cause 38) and the file keeps what was written', { timeout: 120_000 }, async () => {
    const pool = server.core.pjsip.mediaWorkers!;
    const { run, socket } = await call();
    try {
      const channelId = await stasisChannel(run);
      await sleep(500);
      await record(channelId, 'worker-killed');
      await waitFor('the worker to write the recording', () => (inWorker('worker-killed') ? true : undefined));
      await sleep(2500);
      await pool.kill(0);
      const finished: Json = await nextEvent(events, (e) => (e.type === 'RecordingFinished' || e.type === 'RecordingFailed') && e.recording.name === 'worker-killed', 15_000);
      assert.equal(finished.type, 'RecordingFinished');
      const destroyed: Json = await nextEvent(events, (e) => e.type === 'ChannelDestroyed' && e.channel?.id === channelId, 15_000);
      assert.equal(destroyed.cause, 38);
      const shape = frames(await stored('worker-killed'));
      // Flushed once a second: at least the first two seconds are in the file, and they hold the tone.
      assert.ok(shape.length >= 100, `what was flushed is kept (${shape.length} frames)`);
      assert.ok((shape.match(/t/g)?.length ?? 0) >= 90, `the tone: ${shape}`);
      assert.equal((await run.done).status, 0, 'the caller got a BYE');
    } finally {
      socket.close();
    }
    await waitFor('the restarted worker', () => (pool.loads()[0].running ? true : undefined), 60_000);
  });
});
