// Rate conversion between the two engine rates. Each stream owns its own
// resampler because the FIR needs the previous frame's tail: filtering each
// frame in isolation would put a click at every 20 ms boundary.
import { saturateToInt16, type SampleRate } from './frame.ts';

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

function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const quarterSquare = (x * x) / 4;
  for (let k = 1; k < 50; k++) {
    term *= quarterSquare / (k * k);
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}

function designLowPass(taps: number, cutoffHz: number, rateHz: number, beta: number): Float64Array {
  const coefficients = new Float64Array(taps);
  const normalisedCutoff = (2 * cutoffHz) / rateHz;
  const centre = (taps - 1) / 2;
  const windowScale = besselI0(beta);
  let total = 0;
  for (let i = 0; i < taps; i++) {
    const offset = i - centre;
    const sincArgument = Math.PI * normalisedCutoff * offset;
    const ideal = offset === 0 ? normalisedCutoff : (normalisedCutoff * Math.sin(sincArgument)) / sincArgument;
    const windowPosition = offset / centre;
    const window = besselI0(beta * Math.sqrt(1 - windowPosition * windowPosition)) / windowScale;
    coefficients[i] = ideal * window;
    total += coefficients[i];
  }
  // Unity gain at DC so silence stays silence and levels are preserved.
  for (let i = 0; i < taps; i++) coefficients[i] /= total;
  return coefficients;
}

const lowPass = designLowPass(FILTER_TAPS, FILTER_CUTOFF_HZ, FILTER_RATE_HZ, KAISER_BETA);

// The history lives twice in a buffer of double length, so the newest
// `length` samples are always one contiguous run and the inner loop needs no
// wrap-around test.
class MirroredHistory {
  readonly samples: Float64Array;
  /** Index where the contiguous run of the newest `length` samples starts. */
  start = 0;

  constructor(readonly length: number) {
    this.samples = new Float64Array(length * 2);
  }

  push(sample: number): void {
    this.samples[this.start] = sample;
    this.samples[this.start + this.length] = sample;
    this.start = this.start + 1 === this.length ? 0 : this.start + 1;
  }

  clear(): void {
    this.samples.fill(0);
    this.start = 0;
  }
}

function assertCapacity(needed: number, available: number): void {
  if (available < needed) {
    throw new RangeError(`output buffer holds ${available}, needs ${needed}`);
  }
}

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
  return fromRate === 8000 ? new Upsampler8kTo16k() : new Downsampler16kTo8k();
}
