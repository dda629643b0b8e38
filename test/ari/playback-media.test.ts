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
import { PcmSource, ToneSource } from '../../src/core/playback/media-source.ts';
import { openMedia, type MediaContext } from '../../src/core/playback/media.ts';
import { RecordingsDirectory } from '../../src/core/recordings/directory.ts';
import { RecordingStore } from '../../src/core/recordings/store.ts';
import { parseSayNumber, sayCharacters, sayDigits, sayNumber } from '../../src/core/playback/say.ts';
import { Sounds } from '../../src/core/sounds.ts';
import { parseToneList } from '../../src/media/tones.ts';
import { startTestServer, type EventSocket, type TestServer } from '../helpers/server.ts';
import { pair, play, playbackEvent } from './playback-helpers.ts';

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
