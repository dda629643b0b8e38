// Goertzel's algorithm: the strength of one frequency in a block of samples
// for the price of one multiply-add per sample, far cheaper than an FFT when
// only a handful of frequencies matter (DTMF, tone checks in tests).

export function goertzelCoefficient(frequency: number, rate: number): number {
  return 2 * Math.cos((2 * Math.PI * frequency) / rate);
}

/** Normalised power from the two final filter states after `count` samples. */
export function goertzelPowerFromState(previous: number, beforePrevious: number, coefficient: number, count: number): number {
  if (count <= 0) return 0;
  const magnitudeSquared = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious;
  return (2 * magnitudeSquared) / (count * count);
}

function runGoertzel(samples: Int16Array, coefficient: number, start: number, end: number): number {
  let previous = 0;
  let beforePrevious = 0;
  for (let i = start; i < end; i++) {
    const current = coefficient * previous - beforePrevious + samples[i];
    beforePrevious = previous;
    previous = current;
  }
  return goertzelPowerFromState(previous, beforePrevious, coefficient, end - start);
}

/**
 * Power of the component at `frequency` in samples[start, end), scaled to
 * the mean square of that sinusoid: a pure tone of peak A gives about A²/2,
 * directly comparable with `meanSquare` of the same block.
 */
export function goertzelPower(samples: Int16Array, frequency: number, rate: number, start = 0, end = samples.length): number {
  return runGoertzel(samples, goertzelCoefficient(frequency, rate), start, end);
}

/** A detector for one frequency, with its coefficient computed once. */
export class Goertzel {
  readonly frequency: number;
  readonly rate: number;
  private readonly coefficient: number;

  constructor(frequency: number, rate: number) {
    this.frequency = frequency;
    this.rate = rate;
    this.coefficient = goertzelCoefficient(frequency, rate);
  }

  /** See `goertzelPower`. */
  power(samples: Int16Array, start = 0, end = samples.length): number {
    return runGoertzel(samples, this.coefficient, start, end);
  }
}

/** Peak amplitude of a sinusoid with the given normalised power. */
export function powerToAmplitude(power: number): number {
  return Math.sqrt(2 * power);
}
