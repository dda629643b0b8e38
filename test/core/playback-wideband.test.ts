// Playback at the rate of its target: a 16 kHz prompt played to a 16 kHz channel keeps what lies
// above 4 kHz (it never passes through 8 kHz), the sound file chosen is the one closest to the
// channel's rate as Asterisk chooses it (its own rate, else the nearest lower, else the nearest
// higher), and a channel generator writes at the channel's native rate.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openAudioFileWriter } from '../../src/media/audio-file.ts';
import { getFileFormat } from '../../src/media/codecs.ts';
import { samplesPerFrame, type SampleRate } from '../../src/media/frame.ts';
import { goertzelPower, powerToAmplitude } from '../../src/media/goertzel.ts';
import { ChannelGenerators } from '../../src/core/channel-generators.ts';
import { MediaEngine } from '../../src/core/media-engine.ts';
import { openMedia, type MediaContext } from '../../src/core/playback/media.ts';
import { Playback } from '../../src/core/playback/playback.ts';
import { PlaybackQueue } from '../../src/core/playback/queue.ts';
import { Sounds } from '../../src/core/sounds.ts';
import { kernel, RecordingDriver } from './kernel-helpers.ts';

let root: string;
let context: MediaContext;

/** A file of `seconds` of 1 kHz + 6 kHz (the 6 kHz only where the rate carries it). */
function writeTone(path: string, format: string, seconds = 1): void {
  mkdirSync(join(path, '..'), { recursive: true });
  const fileFormat = getFileFormat(format)!;
  const rate = fileFormat.codec.rate;
  const samples = new Int16Array(rate * seconds);
  for (let i = 0; i < samples.length; i++) {
    const high = rate > 12000 ? 6000 * Math.sin((2 * Math.PI * 6000 * i) / rate) : 0;
    samples[i] = Math.round(6000 * Math.sin((2 * Math.PI * 1000 * i) / rate) + high);
  }
  const writer = openAudioFileWriter(path, fileFormat);
  writer.write(samples);
  writer.finalize();
}

before(() => {
  root = mkdtempSync(join(tmpdir(), 'patchbay-wideband-'));
  const sounds = join(root, 'sounds');
  writeTone(join(sounds, 'en', 'wide.wav16'), 'wav16');
  writeTone(join(sounds, 'en', 'wide.ulaw'), 'ulaw');
  writeTone(join(sounds, 'en', 'full.sln48'), 'sln48');
  writeTone(join(sounds, 'en', 'full.sln'), 'sln');
  writeTone(join(sounds, 'en', 'super.sln24'), 'sln24');
  writeTone(join(sounds, 'en', 'super.sln16'), 'sln16');
  writeTone(join(sounds, 'en', 'super.sln48'), 'sln48');
  context = { sounds: new Sounds([sounds]), findRecording: () => undefined };
});

after(() => rmSync(root, { recursive: true, force: true }));

function amplitudeAt(samples: Int16Array, frequency: number, rate: number): number {
  return powerToAmplitude(goertzelPower(samples, frequency, rate, rate / 20, samples.length));
}

describe('sound files chosen for the channel rate', () => {
  test('the format of the channel rate first, else the nearest lower, else the nearest higher', () => {
    const pick = (id: string, rate: SampleRate): string | undefined => context.sounds.resolve(id, 'en', rate)?.split('.').pop();
    assert.equal(pick('wide', 8000), 'ulaw');
    assert.equal(pick('wide', 16000), 'wav16');
    assert.equal(pick('wide', 48000), 'wav16');
    assert.equal(pick('full', 8000), 'sln');
    assert.equal(pick('full', 16000), 'sln', 'upsampling 8 kHz is preferred over downsampling 48 kHz, as in Asterisk');
    assert.equal(pick('full', 48000), 'sln48');
    assert.equal(pick('super', 24000), 'sln24');
    assert.equal(pick('super', 8000), 'sln16', 'the nearest higher when there is nothing lower');
    assert.equal(pick('super', 48000), 'sln48');
  });
});

describe('playback at the target rate', () => {
  test('a 16 kHz prompt opened for a 16 kHz channel keeps its 6 kHz; for an 8 kHz one it is the 8 kHz file', () => {
    const wide = openMedia('sound:wide', 'en', 0, context, 16000);
    assert.ok('source' in wide);
    assert.equal(wide.source.rate, 16000);
    const samples = new Int16Array(16000);
    assert.equal(wide.source.read(samples, 0), 16000);
    assert.ok(amplitudeAt(samples, 6000, 16000) > 5900, 'energy at 6 kHz');
    assert.ok(amplitudeAt(samples, 1000, 16000) > 5900);

    const narrow = openMedia('sound:wide', 'en', 0, context, 8000);
    assert.ok('source' in narrow);
    assert.equal(narrow.source.rate, 8000);
  });

  test('a 16 kHz channel playing a wideband prompt is written 16 kHz frames with the energy above 4 kHz', () => {
    const k = kernel();
    const driver = new (class extends RecordingDriver {
      nativeFormat(): string {
        return 'slin16';
      }
    })();
    const channel = k.channels.create({ name: 'Unit/wide', technology: 'Unit', direction: 'inbound', state: 'Up' }, () => driver);
    const media = new MediaEngine({ manualClock: true });
    const generators = new ChannelGenerators(media);
    const playback = new Playback(
      { open: (uri, language, offsetMs, rate) => openMedia(uri, language, offsetMs, context, rate), raise: () => {}, failedItem: () => {}, stop: () => {} },
      { id: 'pb-wide', media: ['sound:wide'], target: { kind: 'channel', id: channel.id }, language: 'en', rate: 16000 },
    );
    const queue = new PlaybackQueue(
      {
        attach: () => generators.set(channel, 'playback', { fill: (dst, rate) => queue.fill(dst, rate) }),
        detach: () => generators.set(channel, 'playback', undefined),
      },
      () => {},
    );
    queue.enqueue(playback);
    for (let tick = 0; tick < 60; tick++) media.clock.tick();
    assert.equal(playback.state, 'complete');
    const frames = driver.frames;
    assert.ok(frames.length >= 50, `${frames.length} frames`);
    assert.ok(frames.every((frame) => frame.rate === 16000 && frame.samples.length === samplesPerFrame(16000)));
    const heard = new Int16Array(frames.slice(0, 50).flatMap((frame) => [...frame.samples]));
    assert.ok(amplitudeAt(heard, 6000, 16000) > 5900, `6 kHz at ${amplitudeAt(heard, 6000, 16000).toFixed(0)}`);
  });

  test('an item at another rate than the target is converted on the way (a bridge whose rate changed)', () => {
    const playback = new Playback(
      { open: (uri, language, offsetMs) => openMedia(uri, language, offsetMs, context, 16000), raise: () => {}, failedItem: () => {}, stop: () => {} },
      { id: 'pb-moved', media: ['sound:wide'], target: { kind: 'bridge', id: 'b' }, language: 'en', rate: 16000 },
    );
    playback.start();
    const out = new Int16Array(samplesPerFrame(48000) * 40);
    const frame = new Int16Array(samplesPerFrame(48000));
    for (let i = 0; i < 40; i++) {
      assert.equal(playback.fill(frame, 48000), true);
      out.set(frame, i * frame.length);
    }
    assert.ok(amplitudeAt(out, 6000, 48000) > 5800, `6 kHz at 48 kHz: ${amplitudeAt(out, 6000, 48000).toFixed(0)}`);
    assert.ok(amplitudeAt(out, 1000, 48000) > 5800);
  });
});
