// Live recordings of channels and bridges over ARI, on a real server with a real event WebSocket.
// A known tone is written into the far (;2) half of a Local pair on the media clock; the ;1 half
// is in the application and is recorded, and the WAV bytes are checked: header fields, sample
// rate, data size against the duration, and the tone's frequency and level in the samples.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Channel } from '../../src/core/channels/channel.ts';
import { readAudioFile } from '../../src/media/audio-file.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { unlessCluster } from '../helpers/cluster-server.ts';
import { droppedTicksSince, nextEvent, parseWav, recordingNamed, silentFrames, sleep, spanBounds, timed, ToneFeeder, toneAmplitude, watchDroppedTicks, type Json } from './recordings-helpers.ts';

const APP = 'rec-app';

let server: TestServer;
let events: EventSocket;
let recordingsDir: string;
const feeders: ToneFeeder[] = [];

before(async () => {
  server = await startTestServer();
  recordingsDir = server.config.dirs.recordings;
  events = await server.events(`app=${APP}`);
  const members = server.clusterMembers ? [server.clusterMembers.a, server.clusterMembers.b, server.clusterMembers.c] : [server];
  watchDroppedTicks(...members.map((member) => member.core.media.clock));
});

after(async () => {
  for (const feeder of feeders) feeder.stop();
  await events?.close();
  await server?.stop();
});

async function call(method: string, path: string): Promise<Response> {
  return server.ari(path, { method });
}

async function ok(method: string, path: string, status = 204): Promise<Response> {
  const response = await call(method, path);
  assert.equal(response.status, status, `${method} ${path}: ${response.status} ${await response.clone().text()}`);
  return response;
}

async function refused(method: string, path: string, status: number, message?: string): Promise<Json> {
  const response = await call(method, path);
  // The status first: a success (204, no body) must fail as what it is, not as unparsable JSON.
  const text = await response.text();
  assert.equal(response.status, status, `${method} ${path}: ${response.status} ${text}`);
  const body = JSON.parse(text) as Json;
  if (message !== undefined) assert.equal(body.message, message);
  return body;
}

let pairs = 0;
/** A Local pair whose ;1 half is in the application (answered); ;2 runs Answer/Wait. */
async function pair(): Promise<{ one: Channel; two: Channel }> {
  const id = `rec-${++pairs}`;
  await ok('POST', `/channels/${id}?endpoint=Local/answer@default&app=${APP}&otherChannelId=${id}-2`, 200);
  await nextEvent(events, 'StasisStart', (event) => event.channel.id === id);
  return { one: server.channel(id)!, two: server.channel(`${id}-2`)! };
}

/** A tone into `channel`, paced by the clock its consumer runs on: by default the channel's member's (its recordings run there). */
function feed(channel: Channel, media = server.mediaOf(channel)): ToneFeeder {
  const feeder = new ToneFeeder(media, channel);
  feeders.push(feeder);
  return feeder;
}

async function record(channelId: string, query: string): Promise<Json> {
  const response = await ok('POST', `/channels/${channelId}/record?${query}`, 201);
  return (await response.json()) as Json;
}

const started = (name: string): Promise<Json> => nextEvent(events, 'RecordingStarted', recordingNamed(name));
const finished = (name: string): Promise<Json> => nextEvent(events, 'RecordingFinished', recordingNamed(name));
const fileOf = (name: string, extension = 'wav'): string => join(recordingsDir, `${name}.${extension}`);

async function hangup(channel: Channel): Promise<void> {
  if (!channel.hangingUp) await ok('DELETE', `/channels/${channel.id}`);
}

describe('recording a channel', () => {
  test('a 1 kHz tone written into the far end is in the WAV file at its frequency and level', async () => {
    const { one, two } = await pair();
    const feeder = feed(two).tone(1000, 8000);
    // The recording runs somewhere between these wall-clock bounds: it starts after the request
    // is sent and before RecordingStarted arrives, and stops after the stop request is sent and
    // before its answer. On a loaded machine either gap may be long, so it is measured, not assumed.
    const begun = await timed(async () => {
      const body = await record(one.id, 'name=tone1&format=wav');
      assert.deepEqual(body, { name: 'tone1', format: 'wav', target_uri: `channel:${one.id}`, state: 'queued' });
      const start = await started('tone1');
      assert.equal(start.recording.state, 'recording');
      assert.equal(start.application, APP);
    });
    await sleep(1000);
    const live = (await (await ok('GET', '/recordings/live/tone1', 200)).json()) as Json;
    assert.equal(live.state, 'recording');
    assert.equal(live.duration, live.total_duration);
    const stopped = await timed(() => ok('POST', '/recordings/live/tone1/stop'));
    const done = await finished('tone1');
    feeder.stop();
    assert.equal(done.recording.state, 'done');
    assert.equal(done.recording.target_uri, `channel:${one.id}`);
    assert.equal(done.recording.talking_duration, undefined, 'no silence detection was asked for');
    await refused('GET', '/recordings/live/tone1', 404, 'Recording not found');

    const wav = parseWav(readFileSync(fileOf('tone1')));
    assert.equal(wav.rate, 8000);
    assert.equal(wav.byteRate, 16000);
    assert.equal(wav.dataSize % 320, 0, 'whole 20 ms frames');
    const recordedMs = (wav.dataSize / 2 / 8000) * 1000;
    const { shortest, longest } = spanBounds(begun, stopped);
    assert.ok(recordedMs >= shortest && recordedMs <= longest, `recorded ${recordedMs} ms; the wall clock allows ${shortest}–${longest} ms`);
    // Whole seconds of what was written: 1 for the second slept on an idle machine, but a loaded
    // one (CI) may answer the stop late, and the file and the durations then agree on more.
    assert.equal(done.recording.duration, Math.round(recordedMs / 1000));
    assert.equal(done.recording.total_duration, done.recording.duration);
    assert.ok(done.recording.duration >= 1);
    // Skip the first frames (the tone may start a tick late) and measure the rest.
    const level = toneAmplitude(wav.samples, 1000, 8000, 320, wav.samples.length);
    assert.ok(Math.abs(level - 8000) < 400, `1 kHz at peak ${level.toFixed(0)}`);
    assert.ok(toneAmplitude(wav.samples, 1500, 8000, 320, wav.samples.length) < 100, 'nothing at 1.5 kHz');
    assert.ok(toneAmplitude(wav.samples, 600, 8000, 320, wav.samples.length) < 100, 'nothing at 600 Hz');
    await hangup(one);
  });

  test('ulaw, sln16 and wav16 files carry the tone too (wav16 at 16 kHz)', async () => {
    const { one, two } = await pair();
    const feeder = feed(two).tone(1000, 6000);
    await record(one.id, 'name=fmt-ulaw&format=ulaw');
    await record(one.id, 'name=fmt-sln16&format=sln16');
    await record(one.id, 'name=fmt-wav16&format=wav16');
    await started('fmt-wav16');
    await sleep(500);
    for (const name of ['fmt-ulaw', 'fmt-sln16', 'fmt-wav16']) await ok('POST', `/recordings/live/${name}/stop`);
    feeder.stop();
    const ulaw = statSync(fileOf('fmt-ulaw', 'ulaw')).size;
    assert.equal(ulaw % 160, 0, 'whole frames of 1-byte samples');
    const wav16 = parseWav(readFileSync(fileOf('fmt-wav16', 'wav16')));
    assert.equal(wav16.rate, 16000);
    assert.equal(wav16.byteRate, 32000);
    for (const [name, extension, rate] of [
      ['fmt-ulaw', 'ulaw', 8000],
      ['fmt-sln16', 'sln16', 16000],
      ['fmt-wav16', 'wav16', 16000],
    ] as const) {
      const audio = readAudioFile(fileOf(name, extension))!;
      assert.equal(audio.rate, rate, name);
      const level = toneAmplitude(audio.samples, 1000, rate, rate / 25, audio.samples.length);
      assert.ok(Math.abs(level - 6000) < 500, `${name}: 1 kHz at ${level.toFixed(0)}`);
    }
    await hangup(one);
  });

  test('a silent party still gives a file of the real length', async () => {
    const { one } = await pair();
    const begun = await timed(async () => {
      await record(one.id, 'name=quiet1&format=wav');
      await started('quiet1');
    });
    await sleep(600);
    const stopped = await timed(() => ok('POST', '/recordings/live/quiet1/stop'));
    const wav = parseWav(readFileSync(fileOf('quiet1')));
    const { shortest, longest } = spanBounds(begun, stopped);
    const ms = (wav.dataSize / 16000) * 1000;
    assert.ok(ms >= shortest && ms <= longest, `data ${wav.dataSize} bytes (${ms} ms); the wall clock allows ${shortest}–${longest} ms`);
    assert.equal(silentFrames(wav.samples, 160).length, wav.samples.length / 160);
    await hangup(one);
  });
});

describe('live recording controls', () => {
  test('pause leaves the paused time out; pause and unpause are idempotent; POST /unpause is an alias', async () => {
    const { one, two } = await pair();
    const feeder = feed(two).tone(1000, 8000);
    const begun = await timed(async () => {
      await record(one.id, 'name=paused1&format=wav');
      await started('paused1');
    });
    await sleep(400);
    const pausedBy = await timed(() => ok('POST', '/recordings/live/paused1/pause'));
    // Whatever is said while paused (2 kHz) must not reach the file.
    feeder.tone(2000, 8000);
    await ok('POST', '/recordings/live/paused1/pause');
    const paused = (await (await ok('GET', '/recordings/live/paused1', 200)).json()) as Json;
    assert.equal(paused.state, 'paused');
    await sleep(500);
    feeder.tone(600, 8000);
    const unpausedBy = await timed(() => ok('POST', '/recordings/live/paused1/unpause'));
    await ok('DELETE', '/recordings/live/paused1/pause');
    await ok('POST', '/recordings/live/paused1/unpause');
    assert.equal(((await (await ok('GET', '/recordings/live/paused1', 200)).json()) as Json).state, 'recording');
    await sleep(400);
    const stopped = await timed(() => ok('POST', '/recordings/live/paused1/stop'));
    const done = await finished('paused1');
    feeder.stop();
    const wav = parseWav(readFileSync(fileOf('paused1')));
    const ms = (wav.samples.length / 8000) * 1000;
    // What was recorded is the time before the pause and after the unpause (about 800 ms of 1300 ms
    // on an idle machine), within what the wall clock allows around those requests.
    const before = spanBounds(begun, pausedBy);
    const afterwards = spanBounds(unpausedBy, stopped);
    const [shortest, longest] = [before.shortest + afterwards.shortest, before.longest + afterwards.longest];
    assert.ok(ms >= shortest && ms <= longest, `${ms} ms recorded; without the paused time the wall clock allows ${shortest}–${longest} ms`);
    assert.equal(done.recording.duration, Math.round(ms / 1000));
    let frames2k = 0;
    for (let start = 0; start + 160 <= wav.samples.length; start += 160) {
      if (toneAmplitude(wav.samples, 2000, 8000, start, start + 160) > 2000) frames2k++;
    }
    assert.equal(frames2k, 0, 'no 2 kHz frame from the paused time');
    assert.ok(toneAmplitude(wav.samples, 1000, 8000, 320, 2400) > 7000, 'the 1 kHz before the pause');
    assert.ok(toneAmplitude(wav.samples, 600, 8000, wav.samples.length - 2400, wav.samples.length) > 7000, 'the 600 Hz after it');
    await hangup(one);
  });

  test('mute writes silence and keeps the time; mute and unmute are idempotent; POST /unmute is an alias', async () => {
    const { one, two } = await pair();
    const feeder = feed(two).tone(1000, 8000);
    const begun = await timed(async () => {
      await record(one.id, 'name=muted1&format=wav');
      await started('muted1');
    });
    await sleep(400);
    const mutedBy = await timed(() => ok('POST', '/recordings/live/muted1/mute'));
    await ok('POST', '/recordings/live/muted1/mute');
    await sleep(400);
    const unmutedBy = await timed(() => ok('POST', '/recordings/live/muted1/unmute'));
    await ok('DELETE', '/recordings/live/muted1/mute');
    await ok('POST', '/recordings/live/muted1/unmute');
    await sleep(400);
    const stopped = await timed(() => ok('POST', '/recordings/live/muted1/stop'));
    feeder.stop();
    const wav = parseWav(readFileSync(fileOf('muted1')));
    const ms = (wav.samples.length / 8000) * 1000;
    // About 1200 ms and 20 silent frames on an idle machine; what the wall clock allows under load.
    const whole = spanBounds(begun, stopped);
    assert.ok(ms >= whole.shortest && ms <= whole.longest, `the muted time is recorded (${ms} ms; the wall clock allows ${whole.shortest}–${whole.longest} ms)`);
    const silent = silentFrames(wav.samples, 160).filter((frame) => frame > 2);
    const muted = spanBounds(mutedBy, unmutedBy);
    assert.ok(silent.length * 20 >= muted.shortest && silent.length * 20 <= muted.longest, `${silent.length} silent frames; the wall clock allows ${muted.shortest}–${muted.longest} ms of them`);
    assert.equal(silent.at(-1)! - silent[0], silent.length - 1, 'the silence is one stretch');
    assert.ok(toneAmplitude(wav.samples, 1000, 8000, 320, silent[0] * 160) > 7500, 'tone before the mute');
    assert.ok(toneAmplitude(wav.samples, 1000, 8000, (silent.at(-1)! + 1) * 160, wav.samples.length) > 7500, 'tone after it');
    await hangup(one);
  });

  test('cancel (DELETE) discards the file and reports canceled; controls on a gone recording are 404', async () => {
    const { one, two } = await pair();
    const feeder = feed(two).tone(1000, 8000);
    await record(one.id, 'name=cancel1&format=wav');
    await started('cancel1');
    await sleep(300);
    assert.ok(existsSync(fileOf('cancel1')));
    await ok('DELETE', '/recordings/live/cancel1');
    const done = await finished('cancel1');
    feeder.stop();
    assert.equal(done.recording.state, 'canceled');
    assert.equal(existsSync(fileOf('cancel1')), false, 'the file is removed');
    for (const [method, path] of [
      ['DELETE', '/recordings/live/cancel1'],
      ['POST', '/recordings/live/cancel1/stop'],
      ['POST', '/recordings/live/cancel1/pause'],
      ['POST', '/recordings/live/cancel1/unmute'],
      ['GET', '/recordings/live/cancel1'],
    ] as const) {
      await refused(method, path, 404, 'Recording not found');
    }
    await refused('GET', '/recordings/stored/cancel1', 404);
    await hangup(one);
  });

  test('beep: 250 ms of 1 kHz to the channel first; controls other than stop/cancel are 409 until it starts', async () => {
    const { one, two } = await pair();
    const heard: Int16Array[] = [];
    two.addFrameListener((frame) => heard.push(Int16Array.from(frame.samples)));
    // The beep plays on the media clock. Held still, it keeps the recording queued for as long as
    // the four controls take: on a loaded machine (CI) they took longer than the 250 ms it plays,
    // and a pause answered 204 (the recording had started), not 409.
    const media = server.mediaOf(one);
    media.stop();
    const requestedAt = Date.now();
    try {
      const body = await record(one.id, 'name=beep1&format=wav&beep=true');
      assert.equal(body.state, 'queued');
      for (const operation of ['pause', 'unpause', 'mute', 'unmute']) {
        await refused('POST', `/recordings/live/beep1/${operation}`, 409, 'Recording not in session');
      }
    } finally {
      media.start();
    }
    await started('beep1');
    assert.ok(Date.now() - requestedAt >= 230, `the recording starts after the beep (${Date.now() - requestedAt} ms)`);
    await sleep(100);
    await ok('POST', '/recordings/live/beep1/stop');
    const beep = new Int16Array(heard.reduce((sum, frame) => sum + frame.length, 0));
    heard.reduce((offset, frame) => (beep.set(frame, offset), offset + frame.length), 0);
    const first = beep.findIndex((sample) => sample !== 0);
    let last = beep.length - 1;
    while (last >= 0 && beep[last] === 0) last--;
    assert.ok(first >= 0 && first < 2, 'the beep comes first');
    assert.ok(last - first >= 1990 && last - first <= 2000, `250 ms of beep (${last - first + 1} samples)`);
    assert.ok(Math.abs(toneAmplitude(beep, 1000, 8000, 0, 1920) - 5000) < 300, 'a 1 kHz beep');
    await hangup(one);
  });

  test('a client disconnecting does not stop a recording', async () => {
    const other = await server.events('app=rec-other');
    await ok('POST', `/channels/disc-1?endpoint=Local/answer@default&app=rec-other&otherChannelId=disc-2`, 200);
    await nextEvent(other, 'StasisStart', (event) => event.channel.id === 'disc-1');
    await record('disc-1', 'name=disc1&format=wav');
    await nextEvent(other, 'RecordingStarted', recordingNamed('disc1'));
    await other.close();
    await sleep(300);
    const live = (await (await ok('GET', '/recordings/live/disc1', 200)).json()) as Json;
    assert.equal(live.state, 'recording');
    await ok('POST', '/recordings/live/disc1/stop');
    assert.ok(parseWav(readFileSync(fileOf('disc1'))).dataSize > 0.25 * 16000);
    server.channel('disc-1')?.hangup();
  });
});

describe('silence detection, limits and termination', () => {
  test('1 s of tone then silence with max_silence_seconds=1: stops by itself with talking 1 s and silence 1 s', unlessCluster('reads server.core.recordings of B; the recording is made on A or C'), async () => {
    const { one, two } = await pair();
    const isRecording = (): boolean => {
      try {
        return server.core.recordings.getLive('silence1').state === 'recording';
      } catch {
        return false;
      }
    };
    const feeder = feed(two).tone(1000, 8000, 50).after(isRecording);
    const body = await record(one.id, 'name=silence1&format=wav&max_silence_seconds=1');
    assert.equal(body.talking_duration, undefined, 'durations are known once recording has begun');
    const start = await started('silence1');
    assert.equal(start.recording.talking_duration, 0);
    assert.equal(start.recording.silence_duration, 0);
    const done = await finished('silence1');
    feeder.stop();
    assert.equal(done.recording.state, 'done');
    assert.equal(done.recording.talking_duration, 1);
    assert.equal(done.recording.silence_duration, 1);
    assert.equal(done.recording.duration, 2);
    assert.equal(done.recording.total_duration, done.recording.duration);
    const wav = parseWav(readFileSync(fileOf('silence1')));
    const ms = (wav.samples.length / 8000) * 1000;
    assert.ok(ms >= 2000 && ms <= 2100, `1 s of tone and 1 s of silence (${ms} ms)`);
    await hangup(one);
  });

  test('maxDurationSeconds stops the recording, done, at exactly that length', async () => {
    const { one, two } = await pair();
    const feeder = feed(two).tone(1000, 8000);
    await record(one.id, 'name=maxdur1&format=wav&maxDurationSeconds=1');
    await started('maxdur1');
    const done = await finished('maxdur1');
    feeder.stop();
    assert.equal(done.recording.state, 'done');
    assert.equal(done.recording.duration, 1);
    assert.equal(parseWav(readFileSync(fileOf('maxdur1'))).dataSize, 16000);
    await hangup(one);
  });

  test("terminateOn '#': other digits do not stop it, '#' does (and is not recorded)", unlessCluster('reads server.core.recordings of B; the recording is made on A or C'), async () => {
    const { one, two } = await pair();
    await record(one.id, `name=dtmf1&format=wav&terminateOn=${encodeURIComponent('#')}`);
    await started('dtmf1');
    await sleep(200);
    two.driver.sendDigit('1', 100);
    two.driver.sendDigit('*', 100);
    await sleep(100);
    assert.equal(server.core.recordings.getLive('dtmf1').state, 'recording');
    two.driver.sendDigit('#', 100);
    const done = await finished('dtmf1');
    assert.equal(done.recording.state, 'done');
    assert.equal(silentFrames(parseWav(readFileSync(fileOf('dtmf1'))).samples, 160).length > 0, true);
    // terminate_on (alias) any: the first digit stops it.
    await record(one.id, 'name=dtmf2&format=wav&terminate_on=any');
    await started('dtmf2');
    two.driver.sendDigit('7', 100);
    assert.equal((await finished('dtmf2')).recording.state, 'done');
    await hangup(one);
  });
});

describe('ifExists and conflicts', () => {
  test('fail (the default) refuses an existing name in any format; overwrite replaces; append grows the file', async () => {
    const { one, two } = await pair();
    const feeder = feed(two).tone(1000, 8000);
    await record(one.id, 'name=exist1&format=wav');
    await started('exist1');
    await sleep(600);
    await ok('POST', '/recordings/live/exist1/stop');
    const first = parseWav(readFileSync(fileOf('exist1')));
    const message = "Recording 'exist1' already exists and can not be overwritten";
    await refused('POST', `/channels/${one.id}/record?name=exist1&format=wav`, 409, message);
    await refused('POST', `/channels/${one.id}/record?name=exist1&format=wav&ifExists=fail`, 409, message);
    await refused('POST', `/channels/${one.id}/record?name=exist1&format=ulaw`, 409, message);

    await record(one.id, 'name=exist1&format=wav&ifExists=overwrite');
    await started('exist1');
    await sleep(200);
    await ok('POST', '/recordings/live/exist1/stop');
    const overwritten = parseWav(readFileSync(fileOf('exist1')));
    assert.ok(overwritten.dataSize < first.dataSize, 'overwritten with a shorter recording');

    feeder.tone(600, 8000);
    // As for tone1: the appended part lasts between these measured wall-clock bounds.
    const appending = await timed(async () => {
      await record(one.id, 'name=exist1&format=wav&if_exists=APPEND');
      await started('exist1');
    });
    await sleep(400);
    const stopped = await timed(() => ok('POST', '/recordings/live/exist1/stop'));
    const appended = parseWav(readFileSync(fileOf('exist1')));
    feeder.stop();
    const addedMs = ((appended.dataSize - overwritten.dataSize) / 16000) * 1000;
    const bounds = spanBounds(appending, stopped);
    const shortest = Math.min(350, bounds.shortest);
    const longest = Math.max(500, bounds.longest);
    assert.ok(addedMs >= shortest && addedMs <= longest, `append added ${addedMs} ms; the wall clock allows ${shortest}–${longest} ms`);
    assert.deepEqual(appended.samples.subarray(0, overwritten.samples.length), overwritten.samples, 'the old audio is kept as it was');
    const tail = appended.samples.subarray(overwritten.samples.length + 320);
    assert.ok(toneAmplitude(tail, 600, 8000) > 7500, 'the appended audio follows it');
    await hangup(one);
  });

  test('409 for a name being recorded and for a bridged channel; 422 unknown format; 400 bad values; 404/409 lookups', async () => {
    const { one } = await pair();
    await record(one.id, 'name=busy1&format=wav');
    await refused('POST', `/channels/${one.id}/record?name=busy1&format=wav&ifExists=overwrite`, 409, "Recording 'busy1' already exists and can not be overwritten");
    await ok('POST', '/recordings/live/busy1/stop');
    await refused('POST', `/channels/${one.id}/record?name=fmt&format=mp3`, 422, 'specified format is unknown on this system');
    await refused('POST', `/channels/${one.id}/record?name=fmt&format=WAV`, 422);
    await refused('POST', `/channels/${one.id}/record?name=fmt&format=wav&maxDurationSeconds=-1`, 400);
    await refused('POST', `/channels/${one.id}/record?name=fmt&format=wav&ifExists=sometimes`, 400);
    await refused('POST', `/channels/${one.id}/record?name=fmt&format=wav&terminateOn=5`, 400);
    await refused('POST', `/channels/${one.id}/record?format=wav`, 400);
    await refused('POST', '/channels/nobody/record?name=x&format=wav', 404);
    // The ;2 half runs the dialplan, not an application.
    await refused('POST', `/channels/${one.peer!.id}/record?name=x&format=wav`, 409);
    const bridge = server.core.bridges.create({});
    bridge.add(one);
    await refused('POST', `/channels/${one.id}/record?name=bridged&format=wav`, 409, 'Channel is in a bridge');
    bridge.destroy();
    assert.equal(existsSync(fileOf('bridged')), false);
    await hangup(one);
  });

  test('names with subdirectories are created under the recordings directory; Location is URI-encoded', async () => {
    const { one } = await pair();
    const response = await ok('POST', `/channels/${one.id}/record?name=${encodeURIComponent('sub/dir/nested 1')}&format=wav`, 201);
    assert.equal(response.headers.get('location'), '/ari/recordings/live/sub%2Fdir%2Fnested%201');
    await started('sub/dir/nested 1');
    await sleep(100);
    await ok('POST', '/recordings/live/sub%2Fdir%2Fnested%201/stop');
    assert.ok(existsSync(join(recordingsDir, 'sub', 'dir', 'nested 1.wav')));
    await hangup(one);
  });
});

describe('the file is valid whenever the recording ends', () => {
  test('the channel hanging up mid-recording ends it as done with a finalised header', async () => {
    const { one, two } = await pair();
    const feeder = feed(two).tone(1000, 8000);
    const begun = await timed(async () => {
      await record(one.id, 'name=hangup1&format=wav');
      await started('hangup1');
    });
    await sleep(500);
    const hungUp = await timed(() => ok('DELETE', `/channels/${one.id}`));
    const done = await finished('hangup1');
    feeder.stop();
    assert.equal(done.recording.state, 'done');
    const wav = parseWav(readFileSync(fileOf('hangup1')));
    // About 500 ms on an idle machine: up to the hang-up, within what the wall clock allows.
    const { shortest, longest } = spanBounds(begun, hungUp);
    const ms = (wav.dataSize / 16000) * 1000;
    assert.ok(ms >= shortest && ms <= longest, `${wav.dataSize} bytes (${ms} ms); the wall clock allows ${shortest}–${longest} ms`);
    assert.equal(server.core.recordings.size, 0);
  });

  test('while it runs, the file on disk is valid and at most about a second behind (crash safety)', async () => {
    const { one, two } = await pair();
    const feeder = feed(two).tone(1000, 8000);
    const begun = await timed(async () => {
      await record(one.id, 'name=flush1&format=wav');
      await started('flush1');
    });
    await sleep(1700);
    const readAt = Date.now();
    const live = parseWav(readFileSync(fileOf('flush1')));
    const ms = (live.dataSize / 16000) * 1000;
    // Never ahead of the wall clock, and at most about a second (50 ticks) behind it: 600–1750 ms
    // after a 1700 ms sleep on an idle machine, measured rather than assumed under load.
    const shortest = readAt - begun.answeredAt - 1100 - 20 * droppedTicksSince(begun);
    const longest = Date.now() - begun.sentAt + 40;
    assert.ok(ms >= shortest && ms <= longest, `flushed ${ms} ms; the wall clock allows ${shortest}–${longest} ms`);
    assert.ok(toneAmplitude(live.samples, 1000, 8000, 320, live.samples.length) > 7500);
    await ok('POST', '/recordings/live/flush1/stop');
    feeder.stop();
    await hangup(one);
  });

  test('a file that appears before the recording can start fails it (RecordingFailed, cause) and is left alone', async () => {
    const { one } = await pair();
    // The beep holds the recording in queued for 250 ms; meanwhile the name gets taken. The media
    // clock is held still until it is, so a loaded machine cannot play the beep out first.
    const media = server.mediaOf(one);
    media.stop();
    try {
      await record(one.id, 'name=racy1&format=wav&beep=true');
      writeFileSync(fileOf('racy1'), 'someone else');
    } finally {
      media.start();
    }
    const failed = await nextEvent(events, 'RecordingFailed', recordingNamed('racy1'));
    assert.equal(failed.recording.state, 'failed');
    assert.equal(failed.recording.cause, 'Recording file already exists');
    assert.equal(readFileSync(fileOf('racy1'), 'utf8'), 'someone else');
    await refused('GET', '/recordings/live/racy1', 404);
    // A name whose directory part is a file is refused up front.
    await refused('POST', `/channels/${one.id}/record?name=racy1.wav/x&format=wav`, 400, 'Recording name invalid');
    await refused('POST', `/channels/${one.id}/record?name=racy1.wav/y/x&format=wav`, 400, 'Recording name invalid');
    await hangup(one);
  });

  test('the far end hanging up ends it too', async () => {
    const { one, two } = await pair();
    await record(one.id, 'name=hangup2&format=sln');
    await started('hangup2');
    await sleep(200);
    two.hangup();
    assert.equal((await finished('hangup2')).recording.state, 'done');
    assert.ok(statSync(fileOf('hangup2', 'sln')).size > 0);
  });
});

describe('recording a bridge', () => {
  test('the whole mix: both parties at their frequencies and levels; destroying the bridge ends it', async () => {
    const a = await pair();
    const b = await pair();
    const bridge = server.core.bridges.create({});
    bridge.add(a.one);
    bridge.add(b.one);
    // The bridge is this server's and mixes on its clock (in cluster mode the parties' channels,
    // held by A and C, are put into it directly in this process): their tones are paced by it too.
    const toneA = feed(a.two, server.core.media).tone(1000, 6000);
    const toneB = feed(b.two, server.core.media).tone(600, 4000);
    const response = await ok('POST', `/bridges/${bridge.id}/record?name=bridge1&format=wav`, 201);
    assert.equal(response.headers.get('location'), '/ari/recordings/live/bridge1');
    const body = (await response.json()) as Json;
    assert.equal(body.target_uri, `bridge:${bridge.id}`);
    await started('bridge1');
    await sleep(800);
    await ok('POST', '/recordings/live/bridge1/stop');
    const wav = parseWav(readFileSync(fileOf('bridge1')));
    const levelA = toneAmplitude(wav.samples, 1000, 8000, 800, wav.samples.length);
    const levelB = toneAmplitude(wav.samples, 600, 8000, 800, wav.samples.length);
    assert.ok(Math.abs(levelA - 6000) < 400, `1 kHz at ${levelA.toFixed(0)}`);
    assert.ok(Math.abs(levelB - 4000) < 300, `600 Hz at ${levelB.toFixed(0)}`);

    // DTMF from any member ends a recording made with terminateOn.
    await ok('POST', `/bridges/${bridge.id}/record?name=bridge-dtmf&format=wav&terminateOn=${encodeURIComponent('#')}`, 201);
    await started('bridge-dtmf');
    b.two.driver.sendDigit('#', 100);
    assert.equal((await finished('bridge-dtmf')).recording.state, 'done');

    await refused('POST', `/bridges/${bridge.id}/record?name=bridge2&format=wav&recorder_format=opus9`, 422);
    await refused('POST', '/bridges/nobridge/record?name=bridge2&format=wav', 404);
    await ok('POST', `/bridges/${bridge.id}/record?name=bridge2&format=wav`, 201);
    await started('bridge2');
    await sleep(200);
    bridge.destroy();
    const done = await finished('bridge2');
    toneA.stop();
    toneB.stop();
    assert.equal(done.recording.state, 'done');
    assert.ok(parseWav(readFileSync(fileOf('bridge2'))).dataSize > 0);
    await hangup(a.one);
    await hangup(b.one);
  });
});

describe('leaks', () => {
  test('no recording, channel or invalid event is left behind', async () => {
    // The last hang-ups finish asynchronously; on a loaded machine that takes more than a tick.
    // Nothing may be left once they have (bounded: a real leak still fails).
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && (server.core.recordings.size > 0 || server.allChannels().length > 0); ) await sleep(50);
    assert.equal(server.core.recordings.size, 0);
    assert.equal(server.allChannels().length, 0);
    assert.deepEqual(events.messages.filter((message) => message.error !== undefined), []);
    assert.equal(server.logLines.filter((line) => line.includes('does not match')).length, 0);
  });
});
