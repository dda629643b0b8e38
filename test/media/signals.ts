// Test signal helpers shared by the media tests.

export function sine(frequency: number, rate: number, count: number, amplitude: number, phase = 0): Int16Array {
  const samples = new Int16Array(count);
  for (let i = 0; i < count; i++) {
    samples[i] = Math.round(amplitude * Math.sin(phase + (2 * Math.PI * frequency * i) / rate));
  }
  return samples;
}

/** Deterministic pseudo-random noise (xorshift), so failures reproduce. */
export function noise(count: number, amplitude: number, seed = 12345): Int16Array {
  const samples = new Int16Array(count);
  let state = seed;
  for (let i = 0; i < count; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    samples[i] = Math.round(((state >>> 0) / 0xffffffff - 0.5) * 2 * amplitude);
  }
  return samples;
}

export function toDb(ratio: number): number {
  return 10 * Math.log10(ratio);
}

/** Splits `samples` into consecutive views of `size` (the last may be shorter). */
export function* chunks(samples: Int16Array, size: number): Generator<Int16Array> {
  for (let start = 0; start < samples.length; start += size) yield samples.subarray(start, start + size);
}
