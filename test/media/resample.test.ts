import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Downsampler16kTo8k, Upsampler8kTo16k, createResampler } from '../../src/media/resample.ts';
import { goertzelPower, powerToAmplitude } from '../../src/media/goertzel.ts';
import { chunks, sine, toDb } from './signals.ts';

function runInFrames(resampler: { process(src: Int16Array, dst: Int16Array): number; outputLength(n: number): number }, input: Int16Array, frameSize: number): Int16Array {
  const output = new Int16Array(resampler.outputLength(input.length));
  const scratch = new Int16Array(frameSize * 2 + 2);
  let written = 0;
  for (const frame of chunks(input, frameSize)) {
    const produced = resampler.process(frame, scratch);
    output.set(scratch.subarray(0, produced), written);
    written += produced;
  }
  assert.equal(written, output.length);
  return output;
}

// Measured after the filter has settled.
function amplitudeAt(samples: Int16Array, frequency: number, rate: number): number {
  const settled = rate / 50;
  return powerToAmplitude(goertzelPower(samples, frequency, rate, settled, samples.length));
}

describe('16 kHz → 8 kHz', () => {
  it('passes 1 kHz unchanged in level', () => {
    const output = runInFrames(new Downsampler16kTo8k(), sine(1000, 16000, 16000, 10000), 320);
    assert.equal(output.length, 8000);
    const amplitude = amplitudeAt(output, 1000, 8000);
    assert.ok(Math.abs(toDb((amplitude / 10000) ** 2)) < 0.1, `amplitude ${amplitude}`);
  });

  it('attenuates 3.9 kHz by more than 40 dB', () => {
    const output = runInFrames(new Downsampler16kTo8k(), sine(3900, 16000, 16000, 10000), 320);
    const amplitude = amplitudeAt(output, 3900, 8000);
    assert.ok(toDb((amplitude / 10000) ** 2) < -40, `amplitude ${amplitude}`);
  });

  it('removes content above 4 kHz instead of folding it back', () => {
    const output = runInFrames(new Downsampler16kTo8k(), sine(6000, 16000, 16000, 10000), 320);
    // 6 kHz would alias to 2 kHz.
    assert.ok(amplitudeAt(output, 2000, 8000) < 30);
  });

  it('gives the same output whatever the chunking', () => {
    const input = sine(1234, 16000, 4000, 12000);
    const whole = runInFrames(new Downsampler16kTo8k(), input, input.length);
    assert.deepEqual(runInFrames(new Downsampler16kTo8k(), input, 320), whole);
    assert.deepEqual(runInFrames(new Downsampler16kTo8k(), input, 37), whole);
  });

  it('refuses a too small output buffer', () => {
    assert.throws(() => new Downsampler16kTo8k().process(new Int16Array(320), new Int16Array(100)), RangeError);
  });
});

describe('8 kHz → 16 kHz', () => {
  it('passes 1 kHz and suppresses the image at 7 kHz', () => {
    const output = runInFrames(new Upsampler8kTo16k(), sine(1000, 8000, 8000, 10000), 160);
    assert.equal(output.length, 16000);
    const amplitude = amplitudeAt(output, 1000, 16000);
    assert.ok(Math.abs(toDb((amplitude / 10000) ** 2)) < 0.1, `amplitude ${amplitude}`);
    assert.ok(amplitudeAt(output, 7000, 16000) < 30);
  });

  it('is continuous across frame boundaries', () => {
    const input = sine(1000, 8000, 1600, 10000);
    const framed = runInFrames(new Upsampler8kTo16k(), input, 160);
    assert.deepEqual(framed, runInFrames(new Upsampler8kTo16k(), input, input.length));
    // A 1 kHz sine of peak 10000 at 16 kHz never moves more than ~3927 per sample.
    let largestStep = 0;
    for (let i = 100; i < framed.length; i++) largestStep = Math.max(largestStep, Math.abs(framed[i] - framed[i - 1]));
    assert.ok(largestStep < 4100, `step ${largestStep}`);
  });

  it('reset forgets history', () => {
    const upsampler = new Upsampler8kTo16k();
    const output = new Int16Array(320);
    upsampler.process(sine(500, 8000, 160, 20000), output);
    upsampler.reset();
    upsampler.process(new Int16Array(160), output);
    assert.ok(output.every((sample) => sample === 0));
  });
});

describe('createResampler', () => {
  it('picks the direction and copies when rates match', () => {
    assert.ok(createResampler(8000, 16000) instanceof Upsampler8kTo16k);
    assert.ok(createResampler(16000, 8000) instanceof Downsampler16kTo8k);
    const same = createResampler(8000, 8000);
    const input = sine(440, 8000, 160, 1000);
    const output = new Int16Array(160);
    assert.equal(same.process(input, output), 160);
    assert.deepEqual(output, input);
  });
});
