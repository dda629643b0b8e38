import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DTMF_KEYPAD, DtmfDetector, dtmfFrequencies, dtmfToneList } from '../../src/media/dtmf.ts';
import { parseToneList } from '../../src/media/tones.ts';
import { ToneGenerator } from '../../src/media/tone-generator.ts';
import { ulawDecode, ulawEncode } from '../../src/media/g711.ts';
import { chunks, noise, sine } from './signals.ts';

interface Detected {
  digit: string;
  durationMs: number;
}

function detect(samples: Int16Array, rate: number): { ended: Detected[]; started: string[] } {
  const ended: Detected[] = [];
  const started: string[] = [];
  const detector = new DtmfDetector({
    rate,
    onDigitStart: (digit) => started.push(digit),
    onDigitEnd: (digit, durationMs) => ended.push({ digit, durationMs }),
  });
  for (const frame of chunks(samples, rate / 50)) detector.process(frame);
  return { ended, started };
}

function dial(digits: string, rate: number, toneMs: number, gapMs: number, amplitude?: number): Int16Array {
  const frameSize = rate / 50;
  const frames: Int16Array[] = [];
  for (const digit of digits) {
    const generator = new ToneGenerator(parseToneList(dtmfToneList(digit, toneMs, gapMs)!)!, { rate, amplitude });
    while (!generator.finished) {
      const frame = new Int16Array(frameSize);
      generator.fill(frame);
      frames.push(frame);
    }
  }
  frames.push(new Int16Array(frameSize * 10));
  const samples = new Int16Array(frames.reduce((total, frame) => total + frame.length, 0));
  let offset = 0;
  for (const frame of frames) {
    samples.set(frame, offset);
    offset += frame.length;
  }
  return samples;
}

function mixed(rowAmplitude: number, columnAmplitude: number, ms: number): Int16Array {
  const count = (8000 * ms) / 1000;
  const row = sine(697, 8000, count, rowAmplitude);
  const column = sine(1209, 8000, count, columnAmplitude);
  const padded = new Int16Array(count + 1600);
  for (let i = 0; i < count; i++) padded[i] = row[i] + column[i];
  return padded;
}

describe('DTMF', () => {
  it('maps digits to frequencies', () => {
    assert.deepEqual(dtmfFrequencies('5'), [770, 1336]);
    assert.deepEqual(dtmfFrequencies('#'), [941, 1477]);
    assert.deepEqual(dtmfFrequencies('d'), [941, 1633]);
    assert.equal(dtmfFrequencies('x'), undefined);
    assert.equal(dtmfFrequencies('12'), undefined);
    assert.equal(dtmfToneList('1', 100, 50), '!697+1209/100,!0/50');
  });

  for (const rate of [8000, 16000]) {
    it(`detects every digit at ${rate} Hz with its duration`, () => {
      const { ended, started } = detect(dial(DTMF_KEYPAD, rate, 100, 100), rate);
      assert.equal(started.join(''), DTMF_KEYPAD);
      assert.equal(ended.map((event) => event.digit).join(''), DTMF_KEYPAD);
      for (const { durationMs } of ended) assert.ok(durationMs >= 75 && durationMs <= 115, `duration ${durationMs}`);
    });
  }

  it('detects the minimum 40 ms tone and 40 ms pause, also after μ-law', () => {
    const samples = dial('1199', 8000, 40, 40, 2500);
    const coded = new Uint8Array(samples.length);
    ulawEncode(samples, coded);
    ulawDecode(coded, samples);
    assert.equal(detect(samples, 8000).ended.map((event) => event.digit).join(''), '1199');
  });

  it('ignores tones that are too short, lonely, too quiet or twisted', () => {
    assert.equal(detect(dial('5', 8000, 15, 100), 8000).started.length, 0);
    assert.equal(detect(sine(697, 8000, 8000, 5000), 8000).started.length, 0);
    assert.equal(detect(sine(1000, 8000, 8000, 5000), 8000).started.length, 0);
    assert.equal(detect(dial('5', 8000, 200, 100, 300), 8000).started.length, 0);
    // Low group 6 dB louder is normal on real lines; high group 8 dB louder is not.
    assert.deepEqual(detect(mixed(6000, 3000, 200), 8000).started, ['1']);
    assert.equal(detect(mixed(2000, 5000, 200), 8000).started.length, 0);
  });

  it('stays quiet on noise and rejects a digit buried in it', () => {
    assert.equal(detect(noise(16000, 8000), 8000).started.length, 0);
    const digit = dial('7', 8000, 200, 0, 1500);
    const noisy = noise(digit.length, 9000);
    for (let i = 0; i < digit.length; i++) noisy[i] += digit[i];
    assert.equal(detect(noisy, 8000).started.length, 0);
  });
});
