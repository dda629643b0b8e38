// Stored recordings over ARI (list, get, copy into a subdirectory, delete, binary download) and
// the confinement of every recording name to the recordings directory: each way out — `..`,
// its percent-encoded form, absolute paths, `a/../../x`, a symbolic link inside pointing outside,
// NUL — is refused on record, copy (source and destination), get, file and delete, and the
// filesystem outside is checked to be untouched.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildPcm16MonoHeader } from '../../src/media/wav.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { nextEvent, parseWav, recordingNamed, sleep, type Json } from './recordings-helpers.ts';

const APP = 'stored-app';

let server: TestServer;
let events: EventSocket;
let recordings: string;
let outside: string;

/** A small valid WAV file with a recognisable sample pattern. */
function wavBytes(seed: number, samples = 800): Buffer {
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(((i * 37 + seed * 1000) % 4000) - 2000, i * 2);
  return Buffer.concat([buildPcm16MonoHeader(8000, data.length), data]);
}

function put(relative: string, bytes: Buffer): void {
  const file = join(recordings, relative);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, bytes);
}

/** Everything outside the recordings directory that an escape could reach, with its bytes. */
function outsideState(): Record<string, string> {
  const state: Record<string, string> = {};
  const walk = (dir: string, prefix: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      // The server's own moving parts (log, database) are not what an escape would touch.
      if (full === recordings || entry.name === 'logs' || entry.name.startsWith('patchbay.sqlite')) continue;
      if (entry.isDirectory()) walk(full, `${prefix}${entry.name}/`);
      else state[`${prefix}${entry.name}`] = entry.isFile() ? readFileSync(full).toString('base64') : 'link';
    }
  };
  walk(outside, 'outside/');
  walk(server.dataDir, 'data/');
  state['/etc/passwd.wav'] = String(existsSync('/etc/passwd.wav'));
  state['/etc/passwd'] = readFileSync('/etc/passwd').toString('base64');
  return state;
}

before(async () => {
  server = await startTestServer();
  recordings = server.config.dirs.recordings;
  events = await server.events(`app=${APP}`);
  outside = mkdtempSync(join(tmpdir(), 'patchbay-outside-'));
  writeFileSync(join(outside, 'secret.wav'), wavBytes(9));
  writeFileSync(join(outside, 'x.wav'), wavBytes(8));
  // What `../x` would name, right next to the recordings directory.
  writeFileSync(join(dirname(recordings), 'x.wav'), wavBytes(7));
  put('tone.wav', wavBytes(1));
  put('voice.ulaw', Buffer.alloc(1600, 0x7f));
  put('sub/deeper/msg.wav', wavBytes(2));
  put('notes.txt', Buffer.from('not a recording'));
  put('noext', Buffer.from('not a recording'));
  symlinkSync(outside, join(recordings, 'link'));
  symlinkSync(join(outside, 'secret.wav'), join(recordings, 'linkfile.wav'));
  symlinkSync(join(recordings, 'tone.wav'), join(recordings, 'alias.wav'));
});

after(async () => {
  await events?.close();
  await server?.stop();
  rmSync(outside, { recursive: true, force: true });
});

async function answer(method: string, path: string): Promise<{ status: number; body: Json | undefined; response: Response }> {
  const response = await server.ari(path, { method });
  const text = await response.clone().text();
  return { status: response.status, body: text && response.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as Json) : undefined, response };
}

describe('stored recordings', () => {
  test('list walks the directory: known formats only, names with subdirectories, no way out through links', async () => {
    const { status, body } = await answer('GET', '/recordings/stored');
    assert.equal(status, 200);
    assert.deepEqual(body, [
      { name: 'alias', format: 'wav' },
      { name: 'sub/deeper/msg', format: 'wav' },
      { name: 'tone', format: 'wav' },
      { name: 'voice', format: 'ulaw' },
    ]);
  });

  test('get by name, with a subdirectory; unknown names and names with an extension are 404', async () => {
    assert.deepEqual((await answer('GET', '/recordings/stored/tone')).body, { name: 'tone', format: 'wav' });
    assert.deepEqual((await answer('GET', '/recordings/stored/sub%2Fdeeper%2Fmsg')).body, { name: 'sub/deeper/msg', format: 'wav' });
    assert.deepEqual((await answer('GET', '/recordings/stored/voice')).body, { name: 'voice', format: 'ulaw' });
    for (const name of ['missing', 'tone.wav', 'notes', 'noext', 'sub', 'sub%2Fdeeper']) {
      const { status, body } = await answer('GET', `/recordings/stored/${name}`);
      assert.equal(status, 404, name);
      assert.deepEqual(body, { message: 'Recording not found' });
    }
  });

  test('file: the bytes on disk with Content-Type audio/<format>', async () => {
    const wav = await answer('GET', '/recordings/stored/tone/file');
    assert.equal(wav.status, 200);
    assert.equal(wav.response.headers.get('content-type'), 'audio/wav');
    const bytes = Buffer.from(await wav.response.arrayBuffer());
    assert.deepEqual(bytes, readFileSync(join(recordings, 'tone.wav')));
    assert.equal(wav.response.headers.get('content-length'), String(bytes.length));
    const ulaw = await answer('GET', '/recordings/stored/voice/file');
    assert.equal(ulaw.response.headers.get('content-type'), 'audio/ulaw');
    assert.deepEqual(Buffer.from(await ulaw.response.arrayBuffer()), readFileSync(join(recordings, 'voice.ulaw')));
    const nested = await answer('GET', '/recordings/stored/sub%2Fdeeper%2Fmsg/file');
    assert.deepEqual(Buffer.from(await nested.response.arrayBuffer()), readFileSync(join(recordings, 'sub/deeper/msg.wav')));
    assert.equal((await answer('GET', '/recordings/stored/missing/file')).status, 404);
  });

  test('file over REST-over-WebSocket is 406 (binary cannot travel there)', async () => {
    events.send({ type: 'RESTRequest', request_id: 'r1', method: 'GET', uri: 'recordings/stored/tone/file' });
    const reply = await nextEvent(events, 'RESTResponse', (event) => event.request_id === 'r1');
    assert.equal(reply.status_code, 406);
    // As Asterisk 22 answers a file response over the socket (ari_websocket_requests.c): its own reason, no body.
    assert.equal(reply.reason_phrase, 'Not Acceptable.  Use HTTP GET');
    assert.equal(reply.message_body, undefined);
  });

  test('copy into a new subdirectory (extension dropped), in the same directory; 409 when taken, 404 when missing', async () => {
    const { status, body } = await answer('POST', '/recordings/stored/tone/copy?destinationRecordingName=copies/nested/tone-copy.wav');
    assert.equal(status, 200);
    assert.deepEqual(body, { name: 'copies/nested/tone-copy', format: 'wav' });
    assert.deepEqual(readFileSync(join(recordings, 'copies/nested/tone-copy.wav')), readFileSync(join(recordings, 'tone.wav')));
    assert.deepEqual((await answer('GET', '/recordings/stored/copies%2Fnested%2Ftone-copy')).body, body);
    const same = await answer('POST', '/recordings/stored/voice/copy?destinationRecordingName=voice2');
    assert.deepEqual(same.body, { name: 'voice2', format: 'ulaw' });
    const taken = await answer('POST', '/recordings/stored/tone/copy?destinationRecordingName=copies/nested/tone-copy');
    assert.equal(taken.status, 409);
    assert.deepEqual(taken.body, { message: 'A recording with the same name already exists on the system' });
    // A name taken in another format is taken.
    assert.equal((await answer('POST', '/recordings/stored/tone/copy?destinationRecordingName=voice')).status, 409);
    assert.equal((await answer('POST', '/recordings/stored/missing/copy?destinationRecordingName=fresh')).status, 404);
    assert.equal(existsSync(join(recordings, 'fresh.wav')), false);
    assert.equal((await answer('POST', '/recordings/stored/tone/copy')).status, 400, 'destinationRecordingName is required');
  });

  test('delete removes the file (a link inside: only the link); then 404', async () => {
    assert.equal((await answer('DELETE', '/recordings/stored/copies%2Fnested%2Ftone-copy')).status, 204);
    assert.equal(existsSync(join(recordings, 'copies/nested/tone-copy.wav')), false);
    assert.equal((await answer('DELETE', '/recordings/stored/copies%2Fnested%2Ftone-copy')).status, 404);
    assert.equal((await answer('DELETE', '/recordings/stored/alias')).status, 204);
    assert.equal(existsSync(join(recordings, 'alias.wav')), false);
    assert.ok(existsSync(join(recordings, 'tone.wav')), 'the file the link named stays');
    assert.equal((await answer('DELETE', '/recordings/stored/voice2')).status, 204);
  });
});

describe('recording names are confined to the recordings directory', () => {
  /** Escapes as path segments (each decodes to one name). */
  const PATH_ESCAPES = [
    '..%2Fx',
    '%2e%2e%2fx',
    '%2E%2E%2Fx',
    '%2Fetc%2Fpasswd',
    'a%2F..%2F..%2Fx',
    'sub%2F..%2F..%2Fx',
    'link%2Fsecret',
    'link%2Fx',
    'linkfile',
    'x%00y',
    '..',
    'a%2F%2Fb',
  ];

  test('get, file and delete: 404 for every escape, and nothing outside is read or removed', async () => {
    const absolute = encodeURIComponent(join(outside, 'secret'));
    const before = outsideState();
    for (const segment of [...PATH_ESCAPES, absolute]) {
      for (const [method, suffix] of [
        ['GET', ''],
        ['GET', '/file'],
        ['DELETE', ''],
      ] as const) {
        const { status, body } = await answer(method, `/recordings/stored/${segment}${suffix}`);
        assert.equal(status, 404, `${method} ${segment}${suffix}: ${JSON.stringify(body)}`);
      }
    }
    assert.deepEqual(outsideState(), before);
    assert.ok(existsSync(join(recordings, 'linkfile.wav')), 'the link itself was not deleted either');
  });

  test('copy: an escaping source is 404; an escaping destination 403 (malformed 400); nothing is written', async () => {
    const before = outsideState();
    for (const segment of [...PATH_ESCAPES, encodeURIComponent(join(outside, 'secret'))]) {
      const { status } = await answer('POST', `/recordings/stored/${segment}/copy?destinationRecordingName=fine`);
      assert.equal(status, 404, segment);
    }
    const forbidden = ['..%2Fx2', '%2e%2e%2fx2', '%2Fetc%2Fpasswd', encodeURIComponent(join(outside, 'x2')), 'a%2F..%2F..%2Fx2', 'link%2Fx2', 'link%2Fnewsub%2Fx2', '..'];
    for (const destination of forbidden) {
      const { status, body } = await answer('POST', `/recordings/stored/tone/copy?destinationRecordingName=${destination}`);
      assert.equal(status, 403, `${destination}: ${JSON.stringify(body)}`);
      assert.deepEqual(body, { message: 'Destination file path is forbidden' });
    }
    for (const destination of ['x%00y', 'a%2F%2Fb', '.%2Fx2', 'a%2F.%2Fb']) {
      const { status, body } = await answer('POST', `/recordings/stored/tone/copy?destinationRecordingName=${destination}`);
      assert.equal(status, 400, `${destination}: ${JSON.stringify(body)}`);
      assert.deepEqual(body, { message: 'Invalid destination recording name' });
    }
    assert.deepEqual(outsideState(), before);
    assert.equal(existsSync(join(outside, 'newsub')), false, 'no directory is created through the link');
    assert.equal(existsSync(join(recordings, 'a')), false);
    assert.equal(existsSync(join(recordings, 'fine.wav')), false);
  });

  test('record (channel and bridge): 400 "Recording name invalid" for every escape, and nothing is written', async () => {
    const id = 'escape-1';
    const started = await answer('POST', `/channels/${id}?endpoint=Local/answer@default&app=${APP}&otherChannelId=${id}-2`);
    assert.equal(started.status, 200);
    await nextEvent(events, 'StasisStart', (event) => event.channel.id === id);
    const bridge = server.core.bridges.create({});
    const before = outsideState();
    const names = [
      '..%2Fx',
      '%2e%2e%2fx',
      '..',
      '%2Fetc%2Fpasswd',
      encodeURIComponent(join(outside, 'x')),
      'a%2F..%2F..%2Fx',
      'sub%2F..%2F..%2Fx',
      'link%2Fx',
      'link%2Fnewsub%2Fx',
      'linkfile',
      'x%00y',
      'a%2F%2Fb',
      '.%2Fx',
    ];
    for (const name of names) {
      for (const target of [`/channels/${id}`, `/bridges/${bridge.id}`]) {
        for (const ifExists of ['fail', 'overwrite', 'append']) {
          const { status, body } = await answer('POST', `${target}/record?name=${name}&format=wav&ifExists=${ifExists}`);
          assert.equal(status, 400, `${target} ${name} ${ifExists}: ${JSON.stringify(body)}`);
          assert.deepEqual(body, { message: 'Recording name invalid' });
        }
      }
    }
    assert.equal((await answer('POST', `/channels/${id}/record?name=&format=wav`)).status, 400, 'an empty name');
    await sleep(100);
    assert.equal(server.core.recordings.size, 0);
    assert.deepEqual(outsideState(), before);
    assert.equal(existsSync(join(outside, 'newsub')), false);
    assert.equal(existsSync(join(recordings, 'a')), false);
    bridge.destroy();
    assert.equal((await answer('DELETE', `/channels/${id}`)).status, 204);
  });

  test('a name inside a subdirectory reached through a link that stays inside is fine', async () => {
    symlinkSync(join(recordings, 'sub'), join(recordings, 'inside-link'));
    assert.deepEqual((await answer('GET', '/recordings/stored/inside-link%2Fdeeper%2Fmsg')).body, { name: 'inside-link/deeper/msg', format: 'wav' });
    rmSync(join(recordings, 'inside-link'));
  });
});

describe('shutdown', () => {
  test('stopping the server mid-recording leaves a WAV file with a valid header', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'patchbay-stop-'));
    try {
      const second = await startTestServer({}, { dataDir });
      const socket = await second.events('app=stop-app');
      const created = await second.ari('/channels/stop-1?endpoint=Local/answer@default&app=stop-app&otherChannelId=stop-2', { method: 'POST' });
      assert.equal(created.status, 200);
      await nextEvent(socket, 'StasisStart', (event) => event.channel.id === 'stop-1');
      const recorded = await second.ari('/channels/stop-1/record?name=sub/stopped&format=wav', { method: 'POST' });
      assert.equal(recorded.status, 201);
      await nextEvent(socket, 'RecordingStarted', recordingNamed('sub/stopped'));
      await sleep(1300);
      const file = join(second.config.dirs.recordings, 'sub', 'stopped.wav');
      await socket.close();
      await second.stop();
      const wav = parseWav(readFileSync(file));
      const ms = (wav.dataSize / 16000) * 1000;
      assert.ok(ms >= 1200 && ms <= 1600, `the whole recording is described by the header (${ms} ms)`);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
