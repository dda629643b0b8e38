// Where a tone is in recorded audio and how strong: Goertzel power in 10 Hz wide bins (100 ms
// blocks), so a tone a resampler or a jitter-buffer gap nudged by a few hertz still counts in full.
import { goertzelPower } from '../../src/media/goertzel.ts';

/**
 * The power at `frequency` averaged over 100 ms blocks: a 10 Hz wide bin, so a tone a resampler or
 * a jitter-buffer gap nudged by a few hertz still counts in full.
 */
export function tonePower(samples: Int16Array, frequency: number, rate: number): number {
  const block = rate / 10;
  let sum = 0;
  let blocks = 0;
  for (let start = 0; start + block <= samples.length; start += block, blocks++) sum += goertzelPower(samples.subarray(start, start + block), frequency, rate);
  return blocks === 0 ? 0 : sum / blocks;
}

/** The strongest frequency from `from` Hz to just under Nyquist, in 25 Hz steps. */
export function peakAbove(samples: Int16Array, rate: number, from: number): { frequency: number; power: number } {
  let best = { frequency: 0, power: -1 };
  for (let frequency = from; frequency < rate / 2 - 100; frequency += 25) {
    const power = tonePower(samples, frequency, rate);
    if (power > best.power) best = { frequency, power };
  }
  return best;
}
