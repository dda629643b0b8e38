// Cross-correlation through the FFT: a caller recognises a prompt by sliding the sound file along
// what it heard, which is O(n·m) done directly and O(n log n) here. Plain radix-2, in place.

/** The smallest power of two at least `n`. */
export function nextPowerOfTwo(n: number): number {
  let size = 1;
  while (size < n) size <<= 1;
  return size;
}

/** In-place complex FFT of `re`/`im` (length a power of two); `inverse` without the 1/n scaling. */
function fft(re: Float64Array, im: Float64Array, inverse = false): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      const tr = re[i]!;
      re[i] = re[j]!;
      re[j] = tr;
      const ti = im[i]!;
      im[i] = im[j]!;
      im[j] = ti;
    }
  }
  for (let size = 2; size <= n; size <<= 1) {
    const angle = ((inverse ? 2 : -2) * Math.PI) / size;
    const stepRe = Math.cos(angle);
    const stepIm = Math.sin(angle);
    const half = size >> 1;
    for (let start = 0; start < n; start += size) {
      let wRe = 1;
      let wIm = 0;
      for (let k = 0; k < half; k++) {
        const a = start + k;
        const b = a + half;
        const xRe = re[b]! * wRe - im[b]! * wIm;
        const xIm = re[b]! * wIm + im[b]! * wRe;
        re[b] = re[a]! - xRe;
        im[b] = im[a]! - xIm;
        re[a] = re[a]! + xRe;
        im[a] = im[a]! + xIm;
        const nextRe = wRe * stepRe - wIm * stepIm;
        wIm = wRe * stepIm + wIm * stepRe;
        wRe = nextRe;
      }
    }
  }
}

/** The spectrum of `signal` zero-padded to `size` (kept to correlate against many windows). */
export function spectrumOf(signal: Float32Array, size: number): { re: Float64Array; im: Float64Array } {
  const re = new Float64Array(size);
  const im = new Float64Array(size);
  re.set(signal.subarray(0, Math.min(signal.length, size)));
  fft(re, im);
  return { re, im };
}

/**
 * `out[lag] = Σ_k reference[k] · signal[lag + k]` for every lag where the reference fits in the
 * signal, given the reference's spectrum at the same `size` (≥ the signal's length: the circular
 * correlation wraps only at lags where the reference would run past the signal's end).
 */
export function crossCorrelate(signal: Float32Array, reference: { re: Float64Array; im: Float64Array }, referenceLength: number): Float64Array {
  const size = reference.re.length;
  const { re, im } = spectrumOf(signal, size);
  // signal ⋆ reference = IFFT(S · conj(R))
  for (let i = 0; i < size; i++) {
    const sRe = re[i]!;
    const sIm = im[i]!;
    const rRe = reference.re[i]!;
    const rIm = reference.im[i]!;
    re[i] = sRe * rRe + sIm * rIm;
    im[i] = sIm * rRe - sRe * rIm;
  }
  fft(re, im, true);
  const lags = Math.max(0, signal.length - referenceLength + 1);
  const out = new Float64Array(lags);
  for (let lag = 0; lag < lags; lag++) out[lag] = re[lag]! / size;
  return out;
}
