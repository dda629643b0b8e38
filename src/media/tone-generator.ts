// Renders a tone list into frames. Oscillator phases carry over between
// frames and between parts, so cadence boundaries and frame boundaries never
// produce the discontinuities that are heard as clicks.
import { saturateToInt16 } from './frame.ts';
import { MAX_TONE_FREQUENCIES, type ToneList } from './tones.ts';

/** Peak per frequency; 5000 is about -13 dBm0, the usual level of call-progress tones. */
export const DEFAULT_TONE_AMPLITUDE = 5000;

// Depth of `a*b` modulation; below 1 so the carrier never fully vanishes.
const MODULATION_DEPTH = 0.9;
const TWO_PI = 2 * Math.PI;

export interface ToneGeneratorOptions {
  readonly rate: number;
  readonly amplitude?: number;
}

export class ToneGenerator {
  readonly rate: number;
  readonly amplitude: number;
  private readonly repeatFrom: number;
  private readonly partCount: number;
  // Parts flattened into typed arrays so rendering touches no objects.
  private readonly partSamples: Float64Array;
  private readonly partComponents: Uint8Array;
  private readonly partModulate: Uint8Array;
  private readonly partIncrements: Float64Array;
  private readonly phases = new Float64Array(MAX_TONE_FREQUENCIES);
  private partIndex = 0;
  private samplesIntoPart = 0;
  private done = false;

  constructor(tones: ToneList, options: ToneGeneratorOptions) {
    this.rate = options.rate;
    this.amplitude = options.amplitude ?? DEFAULT_TONE_AMPLITUDE;
    this.repeatFrom = tones.repeatFrom;
    this.partCount = tones.parts.length;
    this.partSamples = new Float64Array(this.partCount);
    this.partComponents = new Uint8Array(this.partCount);
    this.partModulate = new Uint8Array(this.partCount);
    this.partIncrements = new Float64Array(this.partCount * MAX_TONE_FREQUENCIES);
    tones.parts.forEach((part, index) => {
      // 0 stays 0: an endless part.
      this.partSamples[index] = Math.round((part.durationMs * this.rate) / 1000);
      this.partModulate[index] = part.modulate ? 1 : 0;
      const audible = part.frequencies.filter((frequency) => frequency > 0);
      // A modulator alone is inaudible, so a silent carrier silences the part.
      const components = part.modulate && !(part.frequencies[0] > 0) ? [] : audible;
      this.partComponents[index] = Math.min(components.length, MAX_TONE_FREQUENCIES);
      components.slice(0, MAX_TONE_FREQUENCIES).forEach((frequency, slot) => {
        // Reduced to one turn: a frequency above the sample rate aliases (as in Asterisk) and the
        // phase, which wraps by one turn per sample at most, stays in [0, 2π).
        this.partIncrements[index * MAX_TONE_FREQUENCIES + slot] = (TWO_PI * (frequency % this.rate)) / this.rate;
      });
    });
    this.done = this.partCount === 0;
  }

  /** True once a non-repeating list has played to its end. */
  get finished(): boolean {
    return this.done;
  }

  /**
   * Fills `dst` from `offset` with the next samples. Returns how many are tone; after the end the
   * rest of `dst` is silence. Allocates nothing: this runs on every media tick.
   */
  fill(dst: Int16Array, offset = 0): number {
    let position = offset;
    while (position < dst.length && !this.done) {
      const part = this.partIndex;
      const total = this.partSamples[part];
      const remainingInPart = total === 0 ? Infinity : total - this.samplesIntoPart;
      const run = Math.min(dst.length - position, remainingInPart);
      this.render(part, dst, position, position + run);
      position += run;
      this.samplesIntoPart += run;
      if (total !== 0 && this.samplesIntoPart >= total) this.advance();
    }
    if (position < dst.length) dst.fill(0, position);
    return position - offset;
  }

  /** Back to the first part, as for a restart. */
  reset(): void {
    this.partIndex = 0;
    this.samplesIntoPart = 0;
    this.phases.fill(0);
    this.done = this.partCount === 0;
  }

  private advance(): void {
    this.samplesIntoPart = 0;
    if (this.partIndex + 1 < this.partCount) {
      this.partIndex++;
    } else if (this.repeatFrom >= 0) {
      this.partIndex = this.repeatFrom;
    } else {
      this.done = true;
    }
  }

  private render(part: number, dst: Int16Array, start: number, end: number): void {
    const components = this.partComponents[part];
    if (components === 0) {
      dst.fill(0, start, end);
      return;
    }
    const phases = this.phases;
    const increments = this.partIncrements;
    const base = part * MAX_TONE_FREQUENCIES;
    const amplitude = this.amplitude;
    if (this.partModulate[part] === 1 && components === 2) {
      const carrierStep = increments[base];
      const modulatorStep = increments[base + 1];
      const scale = amplitude / (1 + MODULATION_DEPTH);
      let carrier = phases[0];
      let modulator = phases[1];
      for (let i = start; i < end; i++) {
        dst[i] = saturateToInt16(Math.round(scale * Math.sin(carrier) * (1 + MODULATION_DEPTH * Math.sin(modulator))));
        carrier += carrierStep;
        modulator += modulatorStep;
        if (carrier >= TWO_PI) carrier -= TWO_PI;
        if (modulator >= TWO_PI) modulator -= TWO_PI;
      }
      phases[0] = carrier;
      phases[1] = modulator;
      return;
    }
    for (let i = start; i < end; i++) {
      let value = 0;
      for (let slot = 0; slot < components; slot++) {
        const phase = phases[slot];
        value += Math.sin(phase);
        const next = phase + increments[base + slot];
        phases[slot] = next >= TWO_PI ? next - TWO_PI : next;
      }
      dst[i] = saturateToInt16(Math.round(value * amplitude));
    }
  }
}
