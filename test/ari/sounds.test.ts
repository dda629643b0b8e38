// GET /sounds and /sounds/{soundId}: the built-in prompts Patchbay generates at first start, the
// Debian sound package when installed, the lang/format filters, and Asterisk's 404s.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

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
