// Every name or URI that becomes a path stays inside the directories it belongs to: sound ids and
// `sound:` URIs inside the sound directories, recording names and `recording:` URIs inside the
// recordings directory, stored-recording copies too. Planted escapes — `..`, absolute paths,
// symbolic links to files and directories outside, link loops, hard links to files outside — are
// refused or treated as absent, the bytes of everything outside are checked unchanged and no file
// appears there. Names the file system cannot take (too long, not UTF-8) are 400 before anything
// starts.
import assert from 'node:assert/strict';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildPcm16MonoHeader } from '../../src/media/wav.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { Capture, pair, playbackEvent, type Pair } from './playback-helpers.ts';
import { nextEvent, parseWav, recordingNamed, sleep, type Json } from './recordings-helpers.ts';

const APP = 'confine-app';
/** The tone of every file outside: hearing it anywhere means an escape worked. */
const SECRET_HZ = 700;

let root: string;
let outside: string;
let soundsDir: string;
let recordings: string;
let server: TestServer;
let events: EventSocket;

/** A WAV file of `samples` samples of a tone at `frequency` (0: a recognisable ramp). */
function wavBytes(samples: number, frequency = 0, seed = 0): Buffer {
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    const value = frequency > 0 ? Math.round(8000 * Math.sin((2 * Math.PI * frequency * i) / 8000)) : ((i * 37 + seed * 1000) % 4000) - 2000;
    data.writeInt16LE(value, i * 2);
  }
  return Buffer.concat([buildPcm16MonoHeader(8000, data.length), data]);
}

function write(file: string, bytes: Buffer | string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, bytes);
}

/** Every file under a directory with its bytes (links as `link`), skipping `skip`. */
function snapshot(dir: string, skip: (full: string, name: string) => boolean = () => false): Record<string, string> {
  const state: Record<string, string> = {};
  const walk = (current: string, prefix: string): void => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const full = join(current, entry.name);
      if (skip(full, entry.name)) continue;
      if (entry.isDirectory()) walk(full, `${prefix}${entry.name}/`);
      else state[`${prefix}${entry.name}`] = entry.isFile() ? readFileSync(full).toString('base64') : 'link';
    }
  };
  walk(dir, '');
  return state;
}

/** Everything an escape could reach: the directory outside, and the data directory but its recordings. */
function outsideState(): Record<string, string> {
  return {
    ...snapshot(outside, () => false),
    ...Object.fromEntries(
      Object.entries(
        snapshot(server.dataDir, (full, name) => full === recordings || name === 'logs' || name.startsWith('patchbay.sqlite')),
      ).map(([key, value]) => [`data/${key}`, value]),
    ),
  };
}

/** Hidden files a recording writes before renaming them into place. */
function partialFiles(dir: string): string[] {
  return Object.keys(snapshot(dir)).filter((name) => name.split('/').pop()!.startsWith('.'));
}

async function answer(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json | undefined }> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { 'content-type': 'application/json' };
  }
  const response = await server.ari(path, init);
  const text = await response.text();
  return { status: response.status, body: text && response.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as Json) : undefined };
}

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'patchbay-confine-'));
  outside = join(root, 'outside');
  soundsDir = join(root, 'sounds');
  write(join(outside, 'secret.wav'), wavBytes(4000, SECRET_HZ));
  write(join(outside, 'secret.raw'), wavBytes(4000, SECRET_HZ).subarray(44));
  write(join(outside, 'victim.wav'), wavBytes(800, 0, 1));
  write(join(outside, 'victim2.wav'), wavBytes(800, 0, 2));
  write(join(outside, 'victim3.wav'), wavBytes(800, 0, 3));

  write(join(soundsDir, 'en', 'inside.wav'), wavBytes(800, 400));
  write(join(soundsDir, 'en', 'sub', 'deeper.wav'), wavBytes(800, 400));
  symlinkSync(join(soundsDir, 'en', 'inside.wav'), join(soundsDir, 'en', 'alias.wav'));
  symlinkSync(join(outside, 'secret.wav'), join(soundsDir, 'en', 'leak.wav'));
  symlinkSync(outside, join(soundsDir, 'en', 'leakdir'));
  symlinkSync(join(outside, 'missing.wav'), join(soundsDir, 'en', 'dangling.wav'));
  symlinkSync('en', join(soundsDir, 'fr'));
  // Loops: to the language directory, to the root, back up from below, and a link to itself.
  for (const name of ['loop1', 'loop2', 'loop3', 'loop4']) symlinkSync('.', join(soundsDir, 'en', name));
  symlinkSync(soundsDir, join(soundsDir, 'en', 'sub', 'up'));
  symlinkSync('..', join(soundsDir, 'en', 'sub', 'parent'));
  symlinkSync('self', join(soundsDir, 'en', 'self'));
  symlinkSync('.', join(soundsDir, 'rootloop'));

  server = await startTestServer({ dirs: { sounds: [soundsDir] } });
  recordings = server.config.dirs.recordings;
  events = await server.events(`app=${APP}`);
  write(join(recordings, 'tone.wav'), wavBytes(800, 0, 4));
  symlinkSync(outside, join(recordings, 'linkdir'));
  symlinkSync(join(outside, 'secret.wav'), join(recordings, 'linkfile.wav'));
});

after(async () => {
  await events?.close();
  await server?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('sounds', () => {
  test('GET /sounds answers at once despite link loops; links leaving the sound directories are absent', async () => {
    const started = Date.now();
    const { status, body } = await answer('GET', '/sounds');
    assert.ok(Date.now() - started < 2000, `answered in ${Date.now() - started} ms`);
    assert.equal(status, 200);
    const ids = (body as { id: string; formats: { language: string }[] }[]).map((sound) => sound.id);
    for (const id of ['inside', 'alias', 'sub/deeper']) assert.ok(ids.includes(id), `${id} in ${ids.join(', ')}`);
    for (const id of ids) {
      assert.doesNotMatch(id, /^(leak|leakdir|dangling|loop\d|self|rootloop)($|\/)|\/(up|parent)\//, id);
      assert.doesNotMatch(id, /secret/, id);
    }
    const inside = (body as { id: string; formats: { language: string }[] }[]).find((sound) => sound.id === 'inside')!;
    assert.deepEqual(inside.formats.map((format) => format.language).sort(), ['en', 'fr'], 'a language linked inside is followed');
    for (const id of ['leak', 'dangling', 'leakdir%2Fsecret']) assert.equal((await answer('GET', `/sounds/${id}`)).status, 404, id);
  });

  test('sound: plays files inside the sound directories only: ids, absolute paths, links', async () => {
    const { one, two } = await pair(server, events, APP, 'cf-sound');
    const heard = new Capture(two);
    const play = async (uri: string): Promise<string> => {
      const response = await server.ari(`/channels/${one.id}/play?media=${encodeURIComponent(uri)}`, { method: 'POST' });
      assert.equal(response.status, 201, `${uri}: ${await response.clone().text()}`);
      const { id } = (await response.json()) as Json;
      return (await playbackEvent(events, 'PlaybackFinished', id)).playback.state;
    };
    const escapes = [
      'sound:leak',
      'sound:leakdir/secret',
      'sound:dangling',
      'sound:../outside/secret',
      'sound:en/../../outside/secret',
      `sound:${join(outside, 'secret')}`,
      `sound:${join(outside, 'secret.wav')}`,
      `sound:${join(outside, 'secret.raw')}`,
      `sound:${soundsDir}/en/../../outside/secret`,
      `sound:${join(soundsDir, 'en', 'leak')}`,
      `sound:${join(soundsDir, 'en', 'leakdir', 'secret')}`,
      'sound:/etc/passwd',
      `recording:${join(outside, 'secret')}`,
      'recording:../../outside/secret',
      'recording:linkfile',
      'recording:linkdir/secret',
    ];
    for (const uri of escapes) assert.equal(await play(uri), 'failed', uri);
    for (const uri of ['sound:inside', 'sound:alias', 'sound:sub/deeper', `sound:${join(soundsDir, 'en', 'inside')}`, `sound:${join(soundsDir, 'en', 'alias.wav')}`]) {
      assert.equal(await play(uri), 'complete', uri);
    }
    heard.stop();
    assert.ok(heard.toneFrames(400, 4000) >= 5 * 4, 'the prompts inside were heard');
    assert.equal(heard.toneFrames(SECRET_HZ, 1000), 0, 'nothing from outside was heard');
    assert.equal((await answer('DELETE', `/channels/${one.id}`)).status, 204);
  });
});

describe('recordings', () => {
  let target: Pair;
  before(async () => {
    target = await pair(server, events, APP, 'cf-rec');
  });
  after(async () => {
    if (!target.one.hangingUp) await answer('DELETE', `/channels/${target.one.id}`);
  });

  async function recordFor(name: string, query: string, ms: number): Promise<void> {
    const started = await answer('POST', `/channels/${target.one.id}/record?name=${encodeURIComponent(name)}&format=wav&${query}`);
    assert.equal(started.status, 201, JSON.stringify(started.body));
    await nextEvent(events, 'RecordingStarted', recordingNamed(name));
    await sleep(ms);
    assert.equal((await answer('POST', `/recordings/live/${encodeURIComponent(name)}/stop`)).status, 204);
    await nextEvent(events, 'RecordingFinished', recordingNamed(name));
  }

  test('live names with .., absolute paths and links leaving the directory are 400; nothing is written', async () => {
    const before = outsideState();
    const names = ['../x', '../../outside/x', join(outside, 'x'), '/etc/passwd', 'linkdir/x', 'linkdir/new/x', 'linkfile', 'a/../../x'];
    for (const name of names) {
      for (const ifExists of ['fail', 'overwrite', 'append']) {
        const { status, body } = await answer('POST', `/channels/${target.one.id}/record?name=${encodeURIComponent(name)}&format=wav&ifExists=${ifExists}`);
        assert.equal(status, 400, `${name} ${ifExists}: ${JSON.stringify(body)}`);
      }
    }
    await sleep(100);
    assert.equal(server.core.recordings.size, 0);
    assert.deepEqual(outsideState(), before);
  });

  test('a hard link in the recordings directory is replaced, never written through (overwrite, append)', async () => {
    linkSync(join(outside, 'victim.wav'), join(recordings, 'hard1.wav'));
    linkSync(join(outside, 'victim2.wav'), join(recordings, 'hard2.wav'));
    const before = outsideState();
    const old = parseWav(readFileSync(join(outside, 'victim2.wav')));

    await recordFor('hard1', 'ifExists=overwrite', 300);
    const overwritten = parseWav(readFileSync(join(recordings, 'hard1.wav')));
    assert.ok(overwritten.dataSize >= 0.2 * 16000, `the new recording is in place (${overwritten.dataSize} bytes)`);
    assert.equal(statSync(join(recordings, 'hard1.wav')).nlink, 1, 'a file of its own');

    await recordFor('hard2', 'ifExists=append', 300);
    const appended = parseWav(readFileSync(join(recordings, 'hard2.wav')));
    assert.deepEqual(appended.samples.subarray(0, old.samples.length), old.samples, 'the old audio first');
    assert.ok(appended.dataSize >= old.dataSize + 0.2 * 16000, `then the new (${appended.dataSize} bytes)`);
    assert.equal(statSync(join(recordings, 'hard2.wav')).nlink, 1);

    assert.deepEqual(outsideState(), before, 'the files the links shared are untouched');
    assert.deepEqual(partialFiles(recordings), [], 'no partial file is left');
  });

  test('cancelling an overwrite or append leaves the old file as it was, and no partial file', async () => {
    linkSync(join(outside, 'victim3.wav'), join(recordings, 'hard3.wav'));
    const before = outsideState();
    const old = readFileSync(join(recordings, 'hard3.wav'));
    for (const ifExists of ['overwrite', 'append']) {
      const started = await answer('POST', `/channels/${target.one.id}/record?name=hard3&format=wav&ifExists=${ifExists}`);
      assert.equal(started.status, 201);
      await nextEvent(events, 'RecordingStarted', recordingNamed('hard3'));
      await sleep(200);
      assert.equal((await answer('DELETE', '/recordings/live/hard3')).status, 204);
      await nextEvent(events, 'RecordingFinished', recordingNamed('hard3'));
      assert.deepEqual(readFileSync(join(recordings, 'hard3.wav')), old, ifExists);
    }
    assert.deepEqual(outsideState(), before);
    assert.deepEqual(partialFiles(recordings), []);
  });

  test('stored copies: escaping destinations and a link as destination write nothing outside', async () => {
    symlinkSync(join(outside, 'planted.wav'), join(recordings, 'dangling.wav'));
    const before = outsideState();
    for (const destination of ['../x', join(outside, 'x'), 'linkdir/x', 'linkdir/new/x', 'dangling', 'linkfile', 'a/../../x']) {
      const { status, body } = await answer('POST', `/recordings/stored/tone/copy?destinationRecordingName=${encodeURIComponent(destination)}`);
      assert.ok(status === 403 || status === 409, `${destination}: ${status} ${JSON.stringify(body)}`);
    }
    assert.equal(existsSync(join(outside, 'planted.wav')), false, 'nothing written through the dangling link');
    assert.deepEqual(outsideState(), before);
  });
});

describe('names the file system cannot take', () => {
  const long = 'a'.repeat(300);
  /** [query value or undefined, JSON body or undefined, what it is] */
  const badNames: [string | undefined, Json | undefined, string][] = [
    [long, undefined, 'a name of 300 bytes'],
    [`dir/${long}`, undefined, 'a last segment of 300 bytes'],
    [`${long}/x`, undefined, 'a directory segment of 300 bytes'],
    [`${'é'.repeat(126)}x`, undefined, '253 bytes: no room for the extension'],
    [Array.from({ length: 6 }, () => 'b'.repeat(200)).join('/'), undefined, 'more than 1024 bytes in all'],
    [undefined, { name: 'x\ud800' }, 'a lone surrogate in JSON'],
    [undefined, { name: '\udc00y' }, 'a lone low surrogate in JSON'],
  ];
  const rawQueries = ['%ED%A0%80', 'x%ED%B0%80', 'x%FFy', 'x%C2%85y'];

  test('record on channels and bridges: 400 before anything starts, nothing left behind', async () => {
    const { one } = await pair(server, events, APP, 'cf-names');
    const bridge = server.core.bridges.create({});
    const before = snapshot(recordings);
    const targets = [`/channels/${one.id}`, `/bridges/${bridge.id}`];
    for (const target of targets) {
      for (const [name, body, what] of badNames) {
        const query = name === undefined ? '' : `name=${encodeURIComponent(name)}&`;
        const { status, body: answered } = await answer('POST', `${target}/record?${query}format=wav&ifExists=overwrite`, body);
        assert.equal(status, 400, `${target} ${what}: ${JSON.stringify(answered)}`);
        // Lone surrogates are refused by the parameter parser, every other bad name by the recorder.
        const expected = /surrogate/.test(what) ? 'name: not valid Unicode text (lone surrogate)' : 'Recording name invalid';
        assert.deepEqual(answered, { message: expected });
      }
      for (const raw of rawQueries) {
        const { status, body } = await answer('POST', `${target}/record?name=${raw}&format=wav`);
        assert.equal(status, 400, `${target} ${raw}: ${JSON.stringify(body)}`);
      }
    }
    await sleep(200);
    assert.equal(server.core.recordings.size, 0, 'no live recording');
    assert.deepEqual(snapshot(recordings), before, 'no file or directory');
    const raised = events.messages.filter((message) => String(message.type).startsWith('Recording'));
    assert.deepEqual(raised, [], 'no recording event');
    bridge.destroy();
    assert.equal((await answer('DELETE', `/channels/${one.id}`)).status, 204);
  });

  test('copy: 400 for a destination the file system cannot take, nothing left behind', async () => {
    const before = snapshot(recordings);
    for (const [name, , what] of badNames) {
      if (name === undefined) continue;
      const { status, body } = await answer('POST', `/recordings/stored/tone/copy?destinationRecordingName=${encodeURIComponent(name)}`);
      assert.equal(status, 400, `${what}: ${JSON.stringify(body)}`);
      assert.deepEqual(body, { message: 'Invalid destination recording name' });
    }
    for (const raw of rawQueries) {
      assert.equal((await answer('POST', `/recordings/stored/tone/copy?destinationRecordingName=${raw}`)).status, 400, raw);
    }
    assert.deepEqual(snapshot(recordings), before);
  });
});

describe('a recordings directory so deep that a valid name is too long for the system', () => {
  let deep: TestServer;
  let deepEvents: EventSocket;
  let deepDir: string;
  before(async () => {
    // About 3,400 bytes of directory: a name of 3 segments of 240 bytes passes every check of its
    // own and still goes past PATH_MAX (4,096) once the directory is in front.
    deepDir = join(root, ...Array.from({ length: 14 }, (_, i) => `${i}`.padEnd(240, 'd')));
    deep = await startTestServer({ dirs: { recordings: deepDir, sounds: [soundsDir] } });
    deepEvents = await deep.events(`app=${APP}`);
    write(join(deepDir, 'tone.wav'), wavBytes(800));
  });
  after(async () => {
    await deepEvents?.close();
    await deep?.stop();
  });

  test('ENAMETOOLONG is a 400 on record and copy, with nothing left behind', async () => {
    const name = ['x', 'y', 'z'].map((letter) => letter.repeat(240)).join('/');
    const response = await deep.ari(`/channels/cf-deep?endpoint=Local/answer@default&app=${APP}&otherChannelId=cf-deep-2`, { method: 'POST' });
    assert.equal(response.status, 200);
    await nextEvent(deepEvents, 'StasisStart', (event) => event.channel.id === 'cf-deep');
    const bridge = deep.core.bridges.create({});
    for (const path of [`/channels/cf-deep/record`, `/bridges/${bridge.id}/record`]) {
      const answered = await deep.ari(`${path}?name=${encodeURIComponent(name)}&format=wav`, { method: 'POST' });
      assert.equal(answered.status, 400, `${path}: ${await answered.clone().text()}`);
      assert.deepEqual(await answered.json(), { message: 'Recording name invalid' });
    }
    const copied = await deep.ari(`/recordings/stored/tone/copy?destinationRecordingName=${encodeURIComponent(name)}`, { method: 'POST' });
    assert.equal(copied.status, 400, await copied.clone().text());
    assert.deepEqual(await copied.json(), { message: 'Invalid destination recording name' });
    await sleep(100);
    assert.equal(deep.core.recordings.size, 0);
    assert.deepEqual(readdirSync(deepDir), ['tone.wav'], 'no directory was made');
    assert.deepEqual(deepEvents.messages.filter((message) => String(message.type).startsWith('Recording')), []);
    bridge.destroy();
    assert.equal((await deep.ari('/channels/cf-deep', { method: 'DELETE' })).status, 204);
  });
});

describe('stopping the server', () => {
  test('mid-way through an overwrite, the new recording is a valid WAV in place and no partial file is left', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-confine-stop-'));
    try {
      const second = await startTestServer({}, { dataDir });
      const socket = await second.events('app=stop-app');
      const file = join(second.config.dirs.recordings, 'kept.wav');
      write(file, wavBytes(800, 0, 5));
      const created = await second.ari('/channels/st-1?endpoint=Local/answer@default&app=stop-app&otherChannelId=st-2', { method: 'POST' });
      assert.equal(created.status, 200);
      await nextEvent(socket, 'StasisStart', (event) => event.channel.id === 'st-1');
      const recorded = await second.ari('/channels/st-1/record?name=kept&format=wav&ifExists=overwrite', { method: 'POST' });
      assert.equal(recorded.status, 201);
      await nextEvent(socket, 'RecordingStarted', recordingNamed('kept'));
      await sleep(700);
      await socket.close();
      await second.stop();
      const wav = parseWav(readFileSync(file));
      const ms = (wav.dataSize / 16000) * 1000;
      assert.ok(ms >= 600 && ms <= 1000, `the whole new recording is described by the header (${ms} ms)`);
      assert.deepEqual(partialFiles(second.config.dirs.recordings), []);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
