// Rational rate conversion between any two engine rates (8, 16, 24, 48 kHz), done as a polyphase
// FIR: conceptually the input is zero-stuffed up by L, low-pass filtered at L × the input rate,
// and every M-th sample kept; the polyphase form computes only the outputs kept and skips the
// multiplies by the stuffed zeros, so each output costs taps / L multiplies.
//
// The prototype filter scales with the pair so every pair has the quality of the 8 ↔ 16 kHz
// converter: cutoff at 88.75 % of the lower rate's Nyquist frequency, 48 taps per lower-rate
// sample period (about 3 ms of delay whatever the pair), Kaiser window β 5.5, which keeps the
// passband flat to < 0.1 dB up to 82 % of that Nyquist and rejects by > 58 dB from 96 % of it.
//
// The history and the phase carry across calls, so a stream converted frame by frame gives
// exactly the output of converting it whole; process() allocates nothing.
import { saturateToInt16, type SampleRate } from './frame.ts';
import { assertCapacity, designLowPass, MirroredHistory } from './fir.ts';

const CUTOFF_FRACTION_OF_NYQUIST = 0.8875;
const TAPS_PER_LOW_RATE_SAMPLE = 48;
const KAISER_BETA = 5.5;

function greatestCommonDivisor(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** Filter banks are the same for every stream of a pair: designed once, shared read-only. */
const banks = new Map<string, { readonly up: number; readonly down: number; readonly tapsPerPhase: number; readonly phases: Float64Array }>();

function filterBank(fromRate: SampleRate, toRate: SampleRate): { up: number; down: number; tapsPerPhase: number; phases: Float64Array } {
  const key = `${fromRate}>${toRate}`;
  const known = banks.get(key);
  if (known) return known;
  const divisor = greatestCommonDivisor(fromRate, toRate);
  const up = toRate / divisor;
  const down = fromRate / divisor;
  const filterRate = fromRate * up;
  const lowerRate = Math.min(fromRate, toRate);
  const tapsPerPhase = Math.ceil((TAPS_PER_LOW_RATE_SAMPLE * filterRate) / lowerRate / up);
  const taps = tapsPerPhase * up;
  const prototype = designLowPass(taps, (CUTOFF_FRACTION_OF_NYQUIST * lowerRate) / 2, filterRate, KAISER_BETA);
  // Phase p, tap k weighs the input k samples old: h[p + k·L], ×L for the energy of the stuffed
  // zeros. Stored oldest-first to walk the history in its own order.
  const phases = new Float64Array(taps);
  for (let phase = 0; phase < up; phase++) {
    for (let age = 0; age < tapsPerPhase; age++) {
      phases[phase * tapsPerPhase + (tapsPerPhase - 1 - age)] = up * prototype[phase + age * up];
    }
  }
  const bank = { up, down, tapsPerPhase, phases };
  banks.set(key, bank);
  return bank;
}

export class PolyphaseResampler {
  readonly fromRate: SampleRate;
  readonly toRate: SampleRate;
  private readonly up: number;
  private readonly down: number;
  private readonly tapsPerPhase: number;
  private readonly phases: Float64Array;
  private readonly history: MirroredHistory;
  /** Where the next output falls, in filter-rate samples from the start of the next input sample. */
  private nextOutput = 0;

  constructor(fromRate: SampleRate, toRate: SampleRate) {
    if (fromRate === toRate) throw new RangeError('a resampler converts between two different rates');
    this.fromRate = fromRate;
    this.toRate = toRate;
    const bank = filterBank(fromRate, toRate);
    this.up = bank.up;
    this.down = bank.down;
    this.tapsPerPhase = bank.tapsPerPhase;
    this.phases = bank.phases;
    this.history = new MirroredHistory(bank.tapsPerPhase);
  }

  outputLength(inputLength: number): number {
    return Math.max(0, Math.ceil((inputLength * this.up - this.nextOutput) / this.down));
  }

  process(src: Int16Array, dst: Int16Array): number {
    assertCapacity(this.outputLength(src.length), dst.length);
    const history = this.history;
    const buffer = history.samples;
    const phases = this.phases;
    const up = this.up;
    const down = this.down;
    const tapsPerPhase = this.tapsPerPhase;
    let nextOutput = this.nextOutput;
    let written = 0;
    for (let i = 0; i < src.length; i++) {
      history.push(src[i]);
      const base = history.start;
      for (; nextOutput < up; nextOutput += down) {
        const offset = nextOutput * tapsPerPhase;
        let accumulator = 0;
        for (let tap = 0; tap < tapsPerPhase; tap++) accumulator += phases[offset + tap] * buffer[base + tap];
        dst[written++] = saturateToInt16(Math.round(accumulator));
      }
      nextOutput -= up;
    }
    this.nextOutput = nextOutput;
    return written;
  }

  reset(): void {
    this.history.clear();
    this.nextOutput = 0;
  }
}
