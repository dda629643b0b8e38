// The pieces every resampler here is built from: a windowed-sinc low-pass design and a history
// buffer whose newest samples are always one contiguous run.

/** Modified Bessel function of the first kind, order 0 (the Kaiser window's shape). */
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

/**
 * A linear-phase low-pass FIR: a sinc cut off at `cutoffHz` under a Kaiser window of `beta`,
 * normalised to unity gain at DC so silence stays silence and levels are preserved.
 */
export function designLowPass(taps: number, cutoffHz: number, rateHz: number, beta: number): Float64Array {
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
  for (let i = 0; i < taps; i++) coefficients[i] /= total;
  return coefficients;
}

// The history lives twice in a buffer of double length, so the newest
// `length` samples are always one contiguous run and the inner loop needs no
// wrap-around test.
export class MirroredHistory {
  readonly samples: Float64Array;
  /** Index where the contiguous run of the newest `length` samples starts (oldest first). */
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

export function assertCapacity(needed: number, available: number): void {
  if (available < needed) {
    throw new RangeError(`output buffer holds ${available}, needs ${needed}`);
  }
}
