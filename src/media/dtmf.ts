// DTMF (Q.23 keypad tones) detection frame by frame. Analysis runs on
// blocks of 12.75 ms (102 samples at 8 kHz), short enough to resolve the
// 40 ms minimum tone/pause of Q.24 and long enough to separate neighbouring
// DTMF frequencies; blocks span frame boundaries, so the frame size does not
// matter.
import { goertzelCoefficient, goertzelPowerFromState } from './goertzel.ts';

export const DTMF_ROW_FREQUENCIES: readonly number[] = [697, 770, 852, 941];
export const DTMF_COLUMN_FREQUENCIES: readonly number[] = [1209, 1336, 1477, 1633];
/** Keypad layout, row by row, indexed as row * 4 + column. */
export const DTMF_KEYPAD = '123A456B789C*0#D';

const BLOCK_MS = 12.75;
// A louder high group is tolerated less than a louder low group, because
// lines attenuate high frequencies: the usual asymmetric twist limits.
const MAX_COLUMN_OVER_ROW = Math.pow(10, 4 / 10);
const MAX_ROW_OVER_COLUMN = Math.pow(10, 8 / 10);
// The strongest row (column) must stand out from the other rows (columns).
const MIN_PEAK_OVER_NEIGHBOURS = Math.pow(10, 8 / 10);
// The two tones must carry most of the block's energy, which rejects speech.
const MIN_SHARE_OF_TOTAL = 0.5;
/** Default quietest tone accepted, as peak amplitude per frequency (about -30 dBm0). */
export const DEFAULT_DTMF_MIN_AMPLITUDE = 700;
// Blocks needed to accept a digit, and silent blocks to end it: both about
// 25 ms, which survives a block straddling an edge of a 40 ms tone or pause.
const BLOCKS_TO_START = 2;
const BLOCKS_TO_END = 2;

export function dtmfFrequencies(digit: string): readonly [number, number] | undefined {
  const index = DTMF_KEYPAD.indexOf(digit.toUpperCase());
  if (digit.length !== 1 || index < 0) return undefined;
  return [DTMF_ROW_FREQUENCIES[index >> 2], DTMF_COLUMN_FREQUENCIES[index & 3]];
}

/** A tone list (see tones.ts) that plays one digit once, then `gapMs` of silence. */
export function dtmfToneList(digit: string, durationMs: number, gapMs = 0): string | undefined {
  const frequencies = dtmfFrequencies(digit);
  if (frequencies === undefined) return undefined;
  const tone = `!${frequencies[0]}+${frequencies[1]}/${durationMs}`;
  return gapMs > 0 ? `${tone},!0/${gapMs}` : tone;
}

export interface DtmfDetectorOptions {
  readonly rate: number;
  readonly minAmplitude?: number;
  onDigitStart?(digit: string): void;
  onDigitEnd?(digit: string, durationMs: number): void;
}

const NO_DIGIT = -1;

export class DtmfDetector {
  readonly rate: number;
  private readonly blockSize: number;
  private readonly blockMs: number;
  private readonly minPower: number;
  private readonly onDigitStart: ((digit: string) => void) | undefined;
  private readonly onDigitEnd: ((digit: string, durationMs: number) => void) | undefined;
  // Rows then columns, one Goertzel filter each.
  private readonly coefficients = new Float64Array(8);
  private readonly previous = new Float64Array(8);
  private readonly beforePrevious = new Float64Array(8);
  private readonly powers = new Float64Array(8);
  private blockFill = 0;
  private blockEnergy = 0;
  private candidate = NO_DIGIT;
  private candidateBlocks = 0;
  private activeDigit = NO_DIGIT;
  private activeBlocks = 0;
  private missedBlocks = 0;

  constructor(options: DtmfDetectorOptions) {
    this.rate = options.rate;
    this.blockSize = Math.round((options.rate * BLOCK_MS) / 1000);
    this.blockMs = (this.blockSize * 1000) / options.rate;
    const minAmplitude = options.minAmplitude ?? DEFAULT_DTMF_MIN_AMPLITUDE;
    this.minPower = (minAmplitude * minAmplitude) / 2;
    this.onDigitStart = options.onDigitStart;
    this.onDigitEnd = options.onDigitEnd;
    const frequencies = [...DTMF_ROW_FREQUENCIES, ...DTMF_COLUMN_FREQUENCIES];
    frequencies.forEach((frequency, index) => {
      this.coefficients[index] = goertzelCoefficient(frequency, options.rate);
    });
  }

  /** The digit currently held down, if any. */
  get currentDigit(): string | undefined {
    return this.activeDigit === NO_DIGIT ? undefined : DTMF_KEYPAD[this.activeDigit];
  }

  process(samples: Int16Array): void {
    const coefficients = this.coefficients;
    const previous = this.previous;
    const beforePrevious = this.beforePrevious;
    for (let i = 0; i < samples.length; i++) {
      const sample = samples[i];
      this.blockEnergy += sample * sample;
      for (let filter = 0; filter < 8; filter++) {
        const current = coefficients[filter] * previous[filter] - beforePrevious[filter] + sample;
        beforePrevious[filter] = previous[filter];
        previous[filter] = current;
      }
      if (++this.blockFill === this.blockSize) this.finishBlock();
    }
  }

  reset(): void {
    this.previous.fill(0);
    this.beforePrevious.fill(0);
    this.blockFill = 0;
    this.blockEnergy = 0;
    this.candidate = NO_DIGIT;
    this.candidateBlocks = 0;
    this.activeDigit = NO_DIGIT;
    this.activeBlocks = 0;
    this.missedBlocks = 0;
  }

  private finishBlock(): void {
    const powers = this.powers;
    for (let filter = 0; filter < 8; filter++) {
      powers[filter] = goertzelPowerFromState(this.previous[filter], this.beforePrevious[filter], this.coefficients[filter], this.blockSize);
    }
    const digit = this.classifyBlock(this.blockEnergy / this.blockSize);
    this.previous.fill(0);
    this.beforePrevious.fill(0);
    this.blockFill = 0;
    this.blockEnergy = 0;
    this.track(digit);
  }

  private classifyBlock(meanSquare: number): number {
    const powers = this.powers;
    const row = strongestOf(powers, 0);
    const column = strongestOf(powers, 4);
    const rowPower = powers[row];
    const columnPower = powers[column];
    if (rowPower < this.minPower || columnPower < this.minPower) return NO_DIGIT;
    if (columnPower > rowPower * MAX_COLUMN_OVER_ROW || rowPower > columnPower * MAX_ROW_OVER_COLUMN) return NO_DIGIT;
    for (let other = 0; other < 4; other++) {
      if (other !== row && powers[other] * MIN_PEAK_OVER_NEIGHBOURS > rowPower) return NO_DIGIT;
      if (other + 4 !== column && powers[other + 4] * MIN_PEAK_OVER_NEIGHBOURS > columnPower) return NO_DIGIT;
    }
    if (rowPower + columnPower < meanSquare * MIN_SHARE_OF_TOTAL) return NO_DIGIT;
    return row * 4 + (column - 4);
  }

  private track(digit: number): void {
    if (this.activeDigit !== NO_DIGIT) {
      if (digit === this.activeDigit) {
        this.activeBlocks += 1 + this.missedBlocks;
        this.missedBlocks = 0;
        return;
      }
      if (++this.missedBlocks < BLOCKS_TO_END && digit === NO_DIGIT) return;
      this.endActiveDigit();
    }
    if (digit === NO_DIGIT) {
      this.candidate = NO_DIGIT;
      this.candidateBlocks = 0;
      return;
    }
    if (digit !== this.candidate) {
      this.candidate = digit;
      this.candidateBlocks = 0;
    }
    if (++this.candidateBlocks >= BLOCKS_TO_START) {
      this.activeDigit = digit;
      this.activeBlocks = this.candidateBlocks;
      this.missedBlocks = 0;
      this.candidate = NO_DIGIT;
      this.candidateBlocks = 0;
      this.onDigitStart?.(DTMF_KEYPAD[digit]);
    }
  }

  private endActiveDigit(): void {
    const digit = DTMF_KEYPAD[this.activeDigit];
    const durationMs = Math.round(this.activeBlocks * this.blockMs);
    this.activeDigit = NO_DIGIT;
    this.activeBlocks = 0;
    this.missedBlocks = 0;
    this.onDigitEnd?.(digit, durationMs);
  }
}

function strongestOf(powers: Float64Array, first: number): number {
  let best = first;
  for (let index = first + 1; index < first + 4; index++) {
    if (powers[index] > powers[best]) best = index;
  }
  return best;
}
