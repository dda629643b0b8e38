// Frequency response of the resampler between every pair of engine rates: flat passband, the
// band above the lower rate's Nyquist frequency removed (no aliasing when going down, no images
// when going up), continuity across 20 ms frames.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SAMPLE_RATES, samplesPerFrame, type SampleRate } from '../../src/media/frame.ts';
import { createResampler, resampleAll, type Resampler } from '../../src/media/resample.ts';
import { goertzelPower, powerToAmplitude } from '../../src/media/goertzel.ts';
import { chunks, sine, toDb } from './signals.ts';

const AMPLITUDE = 10000;

function inFrames(resampler: Resampler, input: Int16Array): Int16Array {
  const frameIn = samplesPerFrame(resampler.fromRate);
  const output = new Int16Array(resampler.outputLength(input.length));
  const scratch = new Int16Array(samplesPerFrame(resampler.toRate));
  let written = 0;
  for (const frame of chunks(input, frameIn)) {
    const produced = resampler.process(frame, scratch);
    output.set(scratch.subarray(0, produced), written);
    written += produced;
  }
  assert.equal(written, output.length);
  return output;
}

/** Level of `frequency` in dB relative to AMPLITUDE, measured once the filter has settled. */
function levelDb(samples: Int16Array, frequency: number, rate: number): number {
  const amplitude = powerToAmplitude(goertzelPower(samples, frequency, rate, rate / 50, samples.length));
  return toDb((amplitude / AMPLITUDE) ** 2);
}

const pairs: [SampleRate, SampleRate][] = SAMPLE_RATES.flatMap((from) => SAMPLE_RATES.filter((to) => to !== from).map((to): [SampleRate, SampleRate] => [from, to]));

describe('resampling between every pair of engine rates', () => {
  for (const [from, to] of pairs) {
    const lowerNyquist = Math.min(from, to) / 2;
    describe(`${from / 1000} kHz → ${to / 1000} kHz`, () => {
      it('gives one output frame per input frame and keeps 1 kHz and 0.8 × Nyquist flat', () => {
        for (const frequency of [1000, 0.8 * lowerNyquist]) {
          const output = inFrames(createResampler(from, to), sine(frequency, from, from / 2, AMPLITUDE));
          assert.equal(output.length, to / 2);
          const level = levelDb(output, frequency, to);
          assert.ok(Math.abs(level) < 0.2, `${frequency} Hz at ${level.toFixed(2)} dB`);
        }
      });

      if (to < from) {
        it('removes what would fold back below the new Nyquist frequency', () => {
          // A tone above the output's Nyquist frequency would alias to `rate - f`.
          for (const fraction of [1.05, 1.3, 1.7]) {
            const frequency = fraction * lowerNyquist;
            if (frequency >= from / 2) continue;
            const output = inFrames(createResampler(from, to), sine(frequency, from, from / 2, AMPLITUDE));
            const alias = to - frequency;
            const level = levelDb(output, alias, to);
            assert.ok(level < -55, `${frequency} Hz leaks at ${alias} Hz, ${level.toFixed(1)} dB`);
          }
        });
      } else {
        it('suppresses the images above the input Nyquist frequency', () => {
          const frequency = 0.5 * lowerNyquist;
          const output = inFrames(createResampler(from, to), sine(frequency, from, from / 2, AMPLITUDE));
          for (let image = from - frequency; image < to / 2; image += from) {
            const level = levelDb(output, image, to);
            assert.ok(level < -55, `image at ${image} Hz, ${level.toFixed(1)} dB`);
          }
          // The image of the other side of each multiple of the input rate.
          for (let image = from + frequency; image < to / 2; image += from) {
            const level = levelDb(output, image, to);
            assert.ok(level < -55, `image at ${image} Hz, ${level.toFixed(1)} dB`);
          }
        });
      }

      it('gives the same output whatever the chunking, with no step at frame boundaries', () => {
        const input = sine(700, from, from / 5, AMPLITUDE);
        const framed = inFrames(createResampler(from, to), input);
        const resampler = createResampler(from, to);
        const odd = new Int16Array(resampler.outputLength(input.length));
        const scratch = new Int16Array(odd.length);
        let written = 0;
        for (const piece of chunks(input, 37)) {
          const produced = resampler.process(piece, scratch);
          odd.set(scratch.subarray(0, produced), written);
          written += produced;
        }
        assert.deepEqual(odd.subarray(0, written), framed.subarray(0, written));
        assert.equal(written, framed.length);
        // A 700 Hz sine of peak 10000 moves at most 2π·700/rate·10000 per sample.
        const limit = ((2 * Math.PI * 700) / to) * AMPLITUDE * 1.05;
        let largestStep = 0;
        for (let i = to / 100; i < framed.length; i++) largestStep = Math.max(largestStep, Math.abs(framed[i] - framed[i - 1]));
        assert.ok(largestStep < limit, `step ${largestStep} over ${limit.toFixed(0)}`);
      });

      it('resets to silence and refuses a too small output buffer', () => {
        const resampler = createResampler(from, to);
        const out = new Int16Array(samplesPerFrame(to));
        resampler.process(sine(500, from, samplesPerFrame(from), 20000), out);
        resampler.reset();
        resampler.process(new Int16Array(samplesPerFrame(from)), out);
        assert.ok(out.every((sample) => sample === 0));
        assert.throws(() => resampler.process(new Int16Array(samplesPerFrame(from)), new Int16Array(10)), RangeError);
      });
    });
  }

  it('converts a whole buffer at once as it does frame by frame', () => {
    const input = sine(1500, 16000, 16000, AMPLITUDE);
    assert.deepEqual(resampleAll(input, 16000, 48000), inFrames(createResampler(16000, 48000), input));
    assert.equal(resampleAll(input, 16000, 16000), input);
  });
});
