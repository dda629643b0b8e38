// GET /sounds and /sounds/{soundId}: the built-in prompts Patchbay generates at first start, the
// Debian sound package when installed, the lang/format filters, and Asterisk's 404s; the generated
// prompts only fill in for names the sound directories lack.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildPcm16MonoHeader } from '../../src/media/wav.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { Capture, pair, playbackEvent } from './playback-helpers.ts';

type Sound = { id: string; text?: string; formats: { language: string; format: string }[] };

const SYSTEM_SOUNDS = '/usr/share/asterisk/sounds/en';
const systemSounds = existsSync(`${SYSTEM_SOUNDS}/hello-world.wav`);

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(() => server.stop());

async function getJson(path: string): Promise<{ status: number; body: any }> {
  const response = await server.ari(path);
  return { status: response.status, body: await response.json() };
}

describe('sounds', () => {
  test('the built-in prompts are listed with language en and format wav', async () => {
    const { status, body } = await getJson('/sounds');
    assert.equal(status, 200);
    const sounds = body as Sound[];
    const ids = sounds.map((sound) => sound.id);
    for (const id of ['beep', 'silence/1', 'silence/10', 'tones/dial', 'tones/ring', 'tones/busy', 'tones/congestion']) {
      assert.ok(ids.includes(id), id);
      const sound = sounds.find((entry) => entry.id === id)!;
      assert.ok(
        sound.formats.some((pair) => pair.language === 'en' && pair.format === 'wav'),
        `${id}: ${JSON.stringify(sound.formats)}`,
      );
    }
    assert.deepEqual([...ids].sort((a, b) => a.localeCompare(b)), ids, 'sorted by id');
  });

  test('GET /sounds/{id}: one sound, ids with slashes URL-encoded; unknown → 404', async () => {
    const beep = await getJson('/sounds/beep');
    assert.equal(beep.status, 200);
    assert.equal(beep.body.id, 'beep');
    assert.ok(beep.body.formats.some((pair: Sound['formats'][number]) => pair.language === 'en' && pair.format === 'wav'));
    const silence = await getJson(`/sounds/${encodeURIComponent('silence/3')}`);
    assert.equal(silence.status, 200);
    assert.equal(silence.body.id, 'silence/3');
    const missing = await getJson('/sounds/no-such-sound');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { message: 'Sound not found' });
  });

  test('lang and format filter the list and the formats shown; a filter matching nothing is 404', async () => {
    const en = await getJson('/sounds?lang=en');
    assert.equal(en.status, 200);
    for (const sound of en.body as Sound[]) assert.ok(sound.formats.every((pair) => pair.language === 'en'), sound.id);
    const wav = await getJson('/sounds?format=wav&lang=en');
    assert.equal(wav.status, 200);
    assert.ok((wav.body as Sound[]).some((sound) => sound.id === 'beep'));
    for (const sound of wav.body as Sound[]) assert.ok(sound.formats.every((pair) => pair.format === 'wav' && pair.language === 'en'));

    for (const query of ['lang=xx', 'format=nosuchformat', 'lang=en&format=nosuchformat']) {
      const none = await getJson(`/sounds?${query}`);
      assert.equal(none.status, 404, query);
      assert.deepEqual(none.body, { message: 'No sounds found that matched the query' });
    }
  });

  test('the Debian sound package is indexed when installed (hello-world, digits/1 in en/wav)', { skip: !systemSounds && `${SYSTEM_SOUNDS} not installed` }, async () => {
    for (const id of ['hello-world', 'digits/1', 'letters/a']) {
      const { status, body } = await getJson(`/sounds/${encodeURIComponent(id)}`);
      assert.equal(status, 200, id);
      assert.ok(
        (body as Sound).formats.some((pair) => pair.language === 'en' && pair.format === 'wav'),
        `${id}: ${JSON.stringify(body)}`,
      );
    }
    const listed = await getJson('/sounds?lang=en&format=wav');
    const ids = (listed.body as Sound[]).map((sound) => sound.id);
    assert.ok(ids.includes('hello-world') && ids.includes('digits/1'));
  });
});

describe('generated prompts are fallbacks', () => {
  let dataDir: string;
  let systemDir: string;
  let second: TestServer | undefined;

  /** `ms` of a tone at `frequency`, as Asterisk's prompts come: 8 kHz 16-bit WAV. */
  function toneWav(frequency: number, ms: number): Buffer {
    const samples = (ms * 8000) / 1000;
    const data = Buffer.alloc(samples * 2);
    for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * frequency * i) / 8000)), i * 2);
    return Buffer.concat([buildPcm16MonoHeader(8000, data.length), data]);
  }

  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'patchbay-fallback-'));
    // An installed Asterisk beep: 0.43 s (here at 600 Hz, to tell it from the generated 1 kHz one).
    systemDir = mkdtempSync(join(tmpdir(), 'patchbay-system-sounds-'));
    mkdirSync(join(systemDir, 'en'), { recursive: true });
    writeFileSync(join(systemDir, 'en', 'beep.wav'), toneWav(600, 430));
  });

  after(async () => {
    await second?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(systemDir, { recursive: true, force: true });
  });

  test("an installed beep.wav is the one played and listed, not the generated beep; copies earlier versions left in <data>/sounds go", async () => {
    // A first start generates the prompts; an earlier version left them in <data>/sounds, where
    // they hid the installed ones. Such a copy (byte for byte) is put there, beside a prompt of
    // the user's own that merely has a generated name.
    const first = await startTestServer({}, { dataDir });
    await first.stop();
    const legacy = join(dataDir, 'sounds', 'en');
    mkdirSync(join(legacy, 'silence'), { recursive: true });
    copyFileSync(join(dataDir, 'generated', 'sounds', 'en', 'beep.wav'), join(legacy, 'beep.wav'));
    const own = toneWav(500, 1000);
    writeFileSync(join(legacy, 'silence', '1.wav'), own);

    second = await startTestServer({ dirs: { sounds: [join(dataDir, 'sounds'), systemDir] } }, { dataDir });
    assert.equal(existsSync(join(legacy, 'beep.wav')), false, 'the old generated copy is gone');
    assert.deepEqual(readFileSync(join(legacy, 'silence', '1.wav')), own, "the user's own file stays");

    const beep = await second.ari('/sounds/beep');
    assert.deepEqual(await beep.json(), { id: 'beep', formats: [{ language: 'en', format: 'wav' }] });
    const listed = (await (await second.ari('/sounds')).json()) as Sound[];
    assert.ok(listed.some((sound) => sound.id === 'tones/busy'), 'a generated prompt no directory has is still listed');

    const events = await second.events('app=fallback-app');
    const { one, two } = await pair(second, events, 'fallback-app', 'fb-1');
    const heard = new Capture(two);
    const played = async (uri: string): Promise<number> => {
      const response = await second!.ari(`/channels/${one.id}/play?media=${encodeURIComponent(uri)}`, { method: 'POST' });
      assert.equal(response.status, 201);
      const { id } = (await response.json()) as { id: string };
      const started = await playbackEvent(events, 'PlaybackStarted', id);
      const finished = await playbackEvent(events, 'PlaybackFinished', id);
      assert.equal(finished.playback.state, 'complete', uri);
      return finished.at - started.at;
    };
    const beepMs = await played('sound:beep');
    assert.ok(beepMs >= 380 && beepMs <= 700, `the installed beep's 0.43 s (${beepMs} ms)`);
    const silenceMs = await played('sound:silence/2');
    assert.ok(silenceMs >= 1900 && silenceMs <= 2400, `a generated silence fills in (${silenceMs} ms)`);
    heard.stop();
    assert.ok(heard.toneFrames(600, 4000) >= 15, 'the installed beep was heard');
    assert.equal(heard.toneFrames(1000, 1000), 0, 'the generated beep was not');
    await second.ari(`/channels/${one.id}`, { method: 'DELETE' });
    await events.close();
  });
});
