// Rate conversion between the engine rates (8, 16, 24, 48 kHz). Each stream owns its own
// resampler because the FIR needs the previous frame's tail: filtering each
// frame in isolation would put a click at every 20 ms boundary. 8 ↔ 16 kHz, the
// commonest pair, has its own converters using the filter's symmetry; every other
// pair is a PolyphaseResampler built to the same quality.
import { saturateToInt16, type SampleRate } from './frame.ts';
import { assertCapacity, designLowPass, MirroredHistory } from './fir.ts';
import { PolyphaseResampler } from './polyphase-resampler.ts';

export interface Resampler {
  readonly fromRate: SampleRate;
  readonly toRate: SampleRate;
  /** Output samples that `inputLength` more input samples will produce. */
  outputLength(inputLength: number): number;
  /** Converts all of `src` into the start of `dst`; returns samples written. */
  process(src: Int16Array, dst: Int16Array): number;
  /** Forgets history, e.g. when the stream restarts after a gap. */
  reset(): void;
}

// One low-pass filter, run at 16 kHz, serves both directions: it must keep
// the telephone band (to ~3.4 kHz) flat and remove everything that would fold
// back across 4 kHz. 96 taps with a 3.55 kHz cutoff and a Kaiser window
// (beta 5.5) gives < 0.1 dB ripple below 3.3 kHz and > 58 dB rejection from
// 3.85 kHz up, at 3 ms of delay.
const FILTER_TAPS = 96;
const FILTER_CUTOFF_HZ = 3550;
const FILTER_RATE_HZ = 16000;
const KAISER_BETA = 5.5;

const lowPass = designLowPass(FILTER_TAPS, FILTER_CUTOFF_HZ, FILTER_RATE_HZ, KAISER_BETA);

/** 16 kHz → 8 kHz: low-pass, then keep every second sample. */
export class Downsampler16kTo8k implements Resampler {
  readonly fromRate = 16000;
  readonly toRate = 8000;
  private readonly history = new MirroredHistory(FILTER_TAPS);
  // The filter is symmetric (h[k] = h[N-1-k]), so pairs of samples equally
  // far from the centre share one multiply: half the multiplies per output.
  private readonly halfWeights = lowPass.slice(0, FILTER_TAPS / 2);
  private pendingInputs = 0;

  outputLength(inputLength: number): number {
    return (this.pendingInputs + inputLength) >> 1;
  }

  process(src: Int16Array, dst: Int16Array): number {
    assertCapacity(this.outputLength(src.length), dst.length);
    const history = this.history;
    const buffer = history.samples;
    const halfWeights = this.halfWeights;
    const lastTap = FILTER_TAPS - 1;
    let written = 0;
    for (let i = 0; i < src.length; i++) {
      history.push(src[i]);
      if (++this.pendingInputs < 2) continue;
      this.pendingInputs = 0;
      let accumulator = 0;
      const base = history.start;
      for (let tap = 0; tap < FILTER_TAPS / 2; tap++) {
        accumulator += halfWeights[tap] * (buffer[base + tap] + buffer[base + lastTap - tap]);
      }
      dst[written++] = saturateToInt16(Math.round(accumulator));
    }
    return written;
  }

  reset(): void {
    this.history.clear();
    this.pendingInputs = 0;
  }
}

/** 8 kHz → 16 kHz: zero-stuff and low-pass, done as two polyphase branches. */
export class Upsampler8kTo16k implements Resampler {
  readonly fromRate = 8000;
  readonly toRate = 16000;
  private static readonly BRANCH_TAPS = FILTER_TAPS / 2;
  private readonly history = new MirroredHistory(Upsampler8kTo16k.BRANCH_TAPS);
  // Even and odd filter taps, oldest-to-newest, doubled to make up for the
  // energy lost to the inserted zeros.
  private readonly evenBranch = new Float64Array(Upsampler8kTo16k.BRANCH_TAPS);
  private readonly oddBranch = new Float64Array(Upsampler8kTo16k.BRANCH_TAPS);

  constructor() {
    const branchTaps = Upsampler8kTo16k.BRANCH_TAPS;
    for (let position = 0; position < branchTaps; position++) {
      const age = branchTaps - 1 - position;
      this.evenBranch[position] = 2 * lowPass[2 * age];
      this.oddBranch[position] = 2 * lowPass[2 * age + 1];
    }
  }

  outputLength(inputLength: number): number {
    return inputLength * 2;
  }

  process(src: Int16Array, dst: Int16Array): number {
    assertCapacity(src.length * 2, dst.length);
    const history = this.history;
    const buffer = history.samples;
    const evenBranch = this.evenBranch;
    const oddBranch = this.oddBranch;
    const branchTaps = Upsampler8kTo16k.BRANCH_TAPS;
    let written = 0;
    for (let i = 0; i < src.length; i++) {
      history.push(src[i]);
      const base = history.start;
      let even = 0;
      let odd = 0;
      for (let tap = 0; tap < branchTaps; tap++) {
        const sample = buffer[base + tap];
        even += evenBranch[tap] * sample;
        odd += oddBranch[tap] * sample;
      }
      dst[written++] = saturateToInt16(Math.round(even));
      dst[written++] = saturateToInt16(Math.round(odd));
    }
    return written;
  }

  reset(): void {
    this.history.clear();
  }
}

class PassThrough implements Resampler {
  constructor(
    readonly fromRate: SampleRate,
    readonly toRate: SampleRate,
  ) {}

  outputLength(inputLength: number): number {
    return inputLength;
  }

  process(src: Int16Array, dst: Int16Array): number {
    assertCapacity(src.length, dst.length);
    dst.set(src);
    return src.length;
  }

  reset(): void {}
}

export function createResampler(fromRate: SampleRate, toRate: SampleRate): Resampler {
  if (fromRate === toRate) return new PassThrough(fromRate, toRate);
  if (fromRate === 8000 && toRate === 16000) return new Upsampler8kTo16k();
  if (fromRate === 16000 && toRate === 8000) return new Downsampler16kTo8k();
  return new PolyphaseResampler(fromRate, toRate);
}

/**
 * A whole buffer converted at once (a file decoded for playback): allocates its result, so
 * never on the media path.
 */
export function resampleAll(samples: Int16Array, fromRate: SampleRate, toRate: SampleRate): Int16Array {
  if (fromRate === toRate) return samples;
  const resampler = createResampler(fromRate, toRate);
  const out = new Int16Array(resampler.outputLength(samples.length));
  resampler.process(samples, out);
  return out;
}
