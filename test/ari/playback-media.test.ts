// The media behind playback URIs: the say-back builders (digits:, number:, characters:) as
// Asterisk's say.c builds them for English, media resolution against a real sounds index in a
// temporary directory (say-back concatenation, 16 kHz files, absolute paths), stored recordings
// confined to their directory, and `recording:` played end to end through the server.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { getFileFormat } from '../../src/media/codecs.ts';
import { openAudioFileWriter } from '../../src/media/audio-file.ts';
import { PcmSource, PromptSequenceSource, ToneSource } from '../../src/core/playback/media-source.ts';
import { DEFAULT_TONE_AMPLITUDE, ToneGenerator } from '../../src/media/tone-generator.ts';
import { loadPcm8k, openMedia, type MediaContext } from '../../src/core/playback/media.ts';
import {
  MAX_MEDIA_ITEMS,
  MAX_MEDIA_URI_LENGTH,
  MAX_NUMBER_TEXT,
  MAX_SAY_CHARACTERS,
  MAX_TONE_PARTS,
  mediaListProblem,
  mediaUriProblem,
} from '../../src/core/playback/media-limits.ts';
import { RecordingsDirectory } from '../../src/core/recordings/directory.ts';
import { RecordingStore } from '../../src/core/recordings/store.ts';
import { parseSayNumber, sayCharacters, sayDigits, sayNumber } from '../../src/core/playback/say.ts';
import { Sounds } from '../../src/core/sounds.ts';
import { parseToneList } from '../../src/media/tones.ts';
import { cpuMs } from '../helpers/cpu-time.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { pair, play, playbackEvent, toneAmplitude } from './playback-helpers.ts';

const d = (...names: (string | number)[]): string[] => names.map((name) => `digits/${name}`);

describe('say-back builders', () => {
  test('number: English as say.c: units, teens, tens, hundreds, thousands, millions, billions, minus', () => {
    assert.deepEqual(sayNumber(0), d(0));
    assert.deepEqual(sayNumber(7), d(7));
    assert.deepEqual(sayNumber(13), d(13));
    assert.deepEqual(sayNumber(20), d(20));
    assert.deepEqual(sayNumber(42), d(40, 2));
    assert.deepEqual(sayNumber(100), d(1, 'hundred'));
    assert.deepEqual(sayNumber(115), d(1, 'hundred', 15));
    assert.deepEqual(sayNumber(999), d(9, 'hundred', 90, 9));
    assert.deepEqual(sayNumber(1000), d(1, 'thousand'));
    assert.deepEqual(sayNumber(1234), d(1, 'thousand', 2, 'hundred', 30, 4));
    assert.deepEqual(sayNumber(20_005), d(20, 'thousand', 5));
    assert.deepEqual(sayNumber(512_000), d(5, 'hundred', 12, 'thousand'));
    assert.deepEqual(sayNumber(1_000_001), d(1, 'million', 1));
    assert.deepEqual(sayNumber(2_500_000_000 - 500_000_000), d(2, 'billion'));
    assert.deepEqual(sayNumber(-45), d('minus', 40, 5));
  });

  test('number: the URI is read like sscanf %d', () => {
    assert.equal(parseSayNumber('1234'), 1234);
    assert.equal(parseSayNumber(' -7'), -7);
    assert.equal(parseSayNumber('+12abc'), 12);
    assert.equal(parseSayNumber('abc'), undefined);
    assert.equal(parseSayNumber(''), undefined);
    assert.equal(parseSayNumber('99999999999'), undefined);
  });

  test('digits: each digit, star, pound and minus; other characters and missing prompts skipped', () => {
    assert.deepEqual(sayDigits('123'), d(1, 2, 3));
    assert.deepEqual(sayDigits('0*#-9'), d(0, 'star', 'pound', 'minus', 9));
    assert.deepEqual(sayDigits('1a2 3'), d(1, 2, 3));
    assert.deepEqual(sayDigits('12', (id) => id !== 'digits/2'), d(1));
  });

  test('characters: letters (lower-cased), digits, named symbols, ascii<code> fallback when it exists', () => {
    assert.deepEqual(sayCharacters('aB3'), ['letters/a', 'letters/b', 'digits/3']);
    assert.deepEqual(sayCharacters('@.-/ !=+$*#'), [
      'letters/at',
      'letters/dot',
      'letters/dash',
      'letters/slash',
      'letters/space',
      'letters/exclaimation-point',
      'letters/equals',
      'letters/plus',
      'letters/dollar',
      'digits/star',
      'digits/pound',
    ]);
    const exists = (id: string): boolean => id !== 'letters/?';
    assert.deepEqual(sayCharacters('?', exists), ['letters/ascii63']);
    assert.deepEqual(
      sayCharacters('?x', (id) => id === 'letters/x'),
      ['letters/x'],
      'a character with no prompt at all is skipped',
    );
  });
});

describe('media sources', () => {
  test('PcmSource reads, skips (clamped), restarts and honours an offset', () => {
    const samples = Int16Array.from({ length: 8000 }, (_, i) => i % 100);
    const source = new PcmSource(samples, 500);
    const frame = new Int16Array(160);
    assert.equal(source.read(frame, 0), 160);
    assert.equal(frame[0], 4000 % 100);
    source.skip(-10_000);
    source.read(frame, 0);
    assert.equal(frame[1], 1);
    source.skip(10_000);
    assert.equal(source.read(frame, 0), 0);
    source.restart();
    assert.equal(source.read(frame, 100), 60);
  });

  test('ToneSource: an endless tone never ends; a list of once-parts ends', () => {
    const endless = new ToneSource(parseToneList('440')!);
    const frame = new Int16Array(160);
    for (let i = 0; i < 500; i++) assert.equal(endless.read(frame, 0), 160);
    const once = new ToneSource(parseToneList('!440/100')!);
    assert.equal(once.read(frame, 40), 120);
    let total = 120;
    for (let read = 160; read === 160; total += read) read = once.read(frame, 0);
    assert.equal(total, 800, '100 ms at 8 kHz, then the end');
    once.restart();
    assert.equal(once.read(frame, 0), 160);
  });

  test('PromptSequenceSource reads, skips, rewinds, restarts and offsets exactly as the concatenated prompts', () => {
    // Prompts of awkward lengths (one empty), a sequence that repeats and revisits them.
    const prompts = [300, 0, 1001, 160, 7].map((length, p) => Int16Array.from({ length }, (_, i) => p * 1000 + (i % 997)));
    const order = [0, 2, 1, 0, 4, 3, 2, 2, 1, 4, 0];
    const concatenated = new Int16Array(order.reduce((total, p) => total + prompts[p].length, 0));
    let at = 0;
    for (const p of order) {
      concatenated.set(prompts[p], at);
      at += prompts[p].length;
    }
    for (const offsetMs of [0, 20, 37, 300, 100_000]) {
      const lazy = new PromptSequenceSource(prompts, Uint16Array.from(order), offsetMs);
      const reference = new PcmSource(concatenated, offsetMs);
      // A deterministic walk of reads at odd offsets, skips both ways (past both ends) and restarts.
      let state = 7 + offsetMs;
      const random = (n: number): number => {
        state = (state * 1103515245 + 12345) % 2 ** 31;
        return state % n;
      };
      for (let step = 0; step < 400; step++) {
        const choice = random(10);
        if (choice < 6) {
          const offset = random(160);
          const a = new Int16Array(160).fill(-1);
          const b = new Int16Array(160).fill(-1);
          assert.equal(lazy.read(a, offset), reference.read(b, offset), `count at step ${step}`);
          assert.deepEqual(a, b, `samples at step ${step}`);
        } else if (choice < 9) {
          const ms = (random(2) === 0 ? -1 : 1) * random(300);
          lazy.skip(ms);
          reference.skip(ms);
        } else {
          lazy.restart();
          reference.restart();
        }
      }
    }
  });

  test('ToneSource from an offset renders the very samples of the tone generator, at its level and frequency', () => {
    const spec = '697+1209/100,0/50,440/70';
    const reference = new ToneGenerator(parseToneList(spec)!, { rate: 8000 });
    const expected = new Int16Array(8000);
    for (let i = 0; i < 50; i++) reference.fill(expected.subarray(i * 160, (i + 1) * 160));
    const source = new ToneSource(parseToneList(spec)!);
    const got = new Int16Array(8000);
    let position = 0;
    for (const offset of [0, 37, 159, 1, 80]) {
      for (let i = 0; i < 10; i++) {
        const frame = new Int16Array(160);
        const count = source.read(frame, offset);
        got.set(frame.subarray(offset, offset + count), position);
        position += count;
      }
    }
    assert.deepEqual(got.subarray(0, position), expected.subarray(0, position));
    // 100 ms of DTMF 1 at the default level, then silence, then 440 Hz.
    assert.ok(Math.abs(toneAmplitude(got.subarray(0, 800), 697) - DEFAULT_TONE_AMPLITUDE) < 250);
    assert.ok(Math.abs(toneAmplitude(got.subarray(0, 800), 1209) - DEFAULT_TONE_AMPLITUDE) < 250);
    assert.equal(toneAmplitude(got.subarray(800, 1200), 697), 0);
    assert.ok(Math.abs(toneAmplitude(got.subarray(1200, 1760), 440) - DEFAULT_TONE_AMPLITUDE) < 250);
  });
});

describe('media resolution', () => {
  let root: string;
  let context: MediaContext;

  function writeSound(path: string, samples: number, value: number, format = 'wav'): void {
    mkdirSync(join(path, '..'), { recursive: true });
    const fileFormat = getFileFormat(format)!;
    const writer = openAudioFileWriter(path, fileFormat);
    writer.write(new Int16Array(samples).fill(value));
    writer.finalize();
  }

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'patchbay-media-'));
    const sounds = join(root, 'sounds');
    for (let n = 0; n <= 9; n++) writeSound(join(sounds, 'en', 'digits', `${n}.wav`), 800 + n, n * 100);
    writeSound(join(sounds, 'en', 'digits', 'thousand.wav'), 1000, 1);
    writeSound(join(sounds, 'en', 'digits', '20.wav'), 500, 2);
    writeSound(join(sounds, 'en', 'letters', 'a.wav'), 300, 3);
    writeSound(join(sounds, 'fr', 'digits', '1.wav'), 1234, 4);
    writeSound(join(sounds, 'en', 'wide.wav16'), 16000, 1000, 'wav16');
    writeSound(join(root, 'elsewhere', 'secret.wav'), 100, 5);
    const recordings = join(root, 'recordings');
    writeSound(join(recordings, 'greeting.wav'), 4000, 6);
    writeSound(join(recordings, 'calls', 'call-1.ulaw'), 800, 7, 'ulaw');
    symlinkSync(join(root, 'elsewhere', 'secret.wav'), join(recordings, 'escape.wav'));
    const store = new RecordingStore(new RecordingsDirectory(recordings));
    context = { sounds: new Sounds([sounds]), findRecording: (name) => store.find(name)?.real };
  });

  after(() => rmSync(root, { recursive: true, force: true }));

  function length(uri: string, language = 'en'): number | string {
    const result = openMedia(uri, language, 0, context);
    if ('failure' in result) return result.failure;
    const out = new Int16Array(100_000);
    return result.source.read(out, 0);
  }

  test('digits:, number: and characters: concatenate their prompts in the playback language', () => {
    assert.equal(length('digits:102'), 801 + 800 + 802);
    assert.equal(length('digits:1x'), 801, 'unknown characters are skipped');
    assert.equal(length('number:1020'), 801 + 1000 + 500);
    assert.equal(length('characters:a1'), 300 + 801);
    assert.equal(length('digits:1', 'fr'), 1234, 'the French prompt');
    assert.equal(length('digits:2', 'fr'), 802, 'English when the language has none');
    assert.match(String(length('number:100')), /Sound not found: digits\/hundred/, 'number: fails when a prompt is missing');
    assert.match(String(length('number:x')), /Invalid number/);
  });

  /** Everything a media URI plays, read 20 ms at a time. */
  function render(uri: string, offsetMs = 0): Int16Array {
    const result = openMedia(uri, 'en', offsetMs, context);
    assert.ok('source' in result, uri);
    const frames: Int16Array[] = [];
    for (;;) {
      const frame = new Int16Array(160);
      const count = result.source.read(frame, 0);
      frames.push(frame.subarray(0, count));
      if (count < 160) break;
    }
    return concatenate(frames);
  }

  function concatenate(parts: readonly Int16Array[]): Int16Array {
    const out = new Int16Array(parts.reduce((total, part) => total + part.length, 0));
    let at = 0;
    for (const part of parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }

  test('digits:, number: and characters: play the very samples of their prompts one after the other', () => {
    const prompt = (id: string): Int16Array => loadPcm8k(context.sounds.resolve(id, 'en')!)!;
    assert.deepEqual(render('digits:1021'), concatenate(d(1, 0, 2, 1).map(prompt)));
    assert.deepEqual(render('number:1020'), concatenate(d(1, 'thousand', 20).map(prompt)));
    assert.deepEqual(render('characters:a1a'), concatenate(['letters/a', 'digits/1', 'letters/a'].map(prompt)));
    // offsetms lands inside the second prompt (digits/0 is 800 samples, 100 ms).
    assert.deepEqual(render('digits:01', 150), concatenate(d(0, 1).map(prompt)).subarray(1200));
  });

  test('digits: of 10,000 digits opens at once and holds no rendering of its audio', () => {
    const digits = '0123456789'.repeat(1000);
    const before = process.memoryUsage().arrayBuffers;
    let result: ReturnType<typeof openMedia> | undefined;
    const took = cpuMs(() => (result = openMedia(`digits:${digits}`, 'en', 0, context)));
    const grown = process.memoryUsage().arrayBuffers - before;
    assert.ok(result && 'source' in result);
    // Concatenated, these 10,000 prompts of ~800 samples were 16 MB of samples.
    assert.ok(grown < 1024 * 1024, `opening grew array buffers by ${grown} bytes`);
    // A guard against rendering the whole text again (seconds of CPU), not a speed figure: CPU
    // time, which other processes loading the machine do not inflate.
    assert.ok(took < 3000, `opening took ${took} ms of CPU`);
    const frame = new Int16Array(160);
    let total = 0;
    for (let count = 160; count === 160; total += count) count = result.source.read(frame, 0);
    assert.equal(total, 1000 * (800 + 801 + 802 + 803 + 804 + 805 + 806 + 807 + 808 + 809), 'every digit is said');
  });

  test('size bounds: digits:/characters: text, number: text, tone: parts, URI length', () => {
    assert.equal(mediaUriProblem(`digits:${'1'.repeat(MAX_SAY_CHARACTERS)}`), undefined);
    assert.match(String(mediaUriProblem(`digits:${'1'.repeat(MAX_SAY_CHARACTERS + 1)}`)), /^digits: too long/);
    assert.match(String(mediaUriProblem(`characters:${'a'.repeat(MAX_SAY_CHARACTERS + 1)}`)), /^characters: too long/);
    assert.equal(mediaUriProblem(`number:${' '.repeat(MAX_NUMBER_TEXT - 2)}42`), undefined);
    assert.match(String(mediaUriProblem(`number:${'9'.repeat(MAX_NUMBER_TEXT + 1)}`)), /^number: too long/);
    const parts = (n: number): string => Array(n).fill('440/10').join(',');
    assert.equal(mediaUriProblem(`tone:${parts(MAX_TONE_PARTS)};tonezone=fr`), undefined);
    assert.match(String(mediaUriProblem(`tone:${parts(MAX_TONE_PARTS + 1)}`)), /^tone: too many parts: 65/);
    assert.equal(mediaUriProblem(`sound:${'a'.repeat(MAX_MEDIA_URI_LENGTH - 6)}`), undefined);
    assert.match(String(mediaUriProblem(`sound:${'a'.repeat(MAX_MEDIA_URI_LENGTH)}`)), /^Media URI too long/);
    assert.match(String(mediaListProblem(Array(MAX_MEDIA_ITEMS + 1).fill('tone:440'))), /^Too many media URIs/);
    // Past the bounds, openMedia fails the item rather than building it (callers other than ARI).
    assert.match(String(length(`digits:${'1'.repeat(MAX_SAY_CHARACTERS + 1)}`)), /too long/);
  });

  test('sound: by id (16 kHz files resampled to 8 kHz) or by absolute path with or without extension', () => {
    assert.equal(length('sound:wide'), 8000);
    assert.equal(length(`sound:${join(root, 'sounds', 'en', 'digits', '5')}`), 805);
    assert.equal(length(`sound:${join(root, 'sounds', 'en', 'digits', '5.wav')}`), 805);
    assert.match(String(length('sound:nothing')), /Sound not found/);
    assert.match(String(length('ftp:file')), /Unsupported media URI scheme/);
  });

  test('recording: any format, in subdirectories, confined to the recordings directory', () => {
    assert.equal(length('recording:greeting'), 4000);
    assert.equal(length('recording:calls/call-1'), 800);
    for (const name of ['../elsewhere/secret', '/etc/passwd', 'calls/../../elsewhere/secret', 'escape', '', 'calls']) {
      assert.equal(context.findRecording(name), undefined, name);
      assert.match(String(length(`recording:${name}`)), /Recording not found/, name);
    }
  });
});

describe('recording: through the server', () => {
  let server: TestServer;
  let events: EventSocket;
  before(async () => {
    server = await startTestServer();
    events = await server.events('app=pb-media');
  });
  after(async () => {
    await events.close();
    await server.stop();
  });

  test('a stored recording plays for its length', async () => {
    const file = join(server.config.dirs.recordings, 'voicemail', 'msg.wav');
    mkdirSync(join(file, '..'), { recursive: true });
    const writer = openAudioFileWriter(file, getFileFormat('wav')!);
    writer.write(new Int16Array(4000).fill(1000)); // 500 ms
    writer.finalize();
    const { one } = await pair(server, events, 'pb-media', 'pm-rec');
    const body = await play(server, `/channels/${one.id}/play?media=recording:voicemail/msg`);
    const started = await playbackEvent(events, 'PlaybackStarted', body.id);
    const finished = await playbackEvent(events, 'PlaybackFinished', body.id);
    assert.equal(finished.playback.state, 'complete');
    const took = finished.at - started.at;
    // Under load the media clock may run up to 10 overdue ticks back to back.
    assert.ok(took >= 280 && took < 1200, `500 ms recording took ${took} ms`);
    const escape = await play(server, `/channels/${one.id}/play?media=${encodeURIComponent('recording:../sounds/en/beep')}`);
    assert.equal((await playbackEvent(events, 'PlaybackFinished', escape.id)).playback.state, 'failed');
    await server.ari(`/channels/${one.id}`, { method: 'DELETE' });
  });
});
