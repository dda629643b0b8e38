// ITU-T G.722 at 64 kbit/s (mode 1), written from the Recommendation: a 24-tap quadrature mirror
// filter pair splits 16 kHz audio into two 8 kHz sub-bands; the lower one is coded with 6-bit
// ADPCM, the upper one with 2-bit ADPCM, so every pair of input samples becomes one byte (upper
// band in the two high bits). Both sides keep a pole-zero predictor per band whose state must
// follow the other end's exactly, which is why a coder belongs to one stream and is never shared.
// The arithmetic is the Recommendation's fixed point: 16-bit saturating additions and products
// shifted right by 15, so an encoder here and any conforming decoder stay in step.
import { INT16_MAX, INT16_MIN } from './frame.ts';

/** The QMF coefficients h0..h23 (Table 11/G.722), scaled by 2^13; the filter is symmetric. */
const QMF = [3, -11, -11, 53, 12, -156, 32, 362, -210, -805, 951, 3876, 3876, 951, -805, -210, 362, 32, -156, 12, 53, -11, -11, 3];

/** Lower band: decision levels of the 6-bit quantizer (Table 6), scaled by 2^12 relative to the scale factor. */
const Q6 = [0, 35, 72, 110, 150, 190, 233, 276, 323, 370, 422, 473, 530, 587, 650, 714, 786, 858, 940, 1023, 1121, 1219, 1339, 1458, 1612, 1765, 1980, 2195, 2557, 2919];
/** Lower band: the codeword of quantizer interval `i` for a negative and a positive difference. */
const ILN = [0, 63, 62, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 0];
const ILP = [0, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 0];
/** Lower band: the 4-bit inverse quantizer that drives prediction and adaptation (the codeword's four high bits). */
const QM4 = [0, -20456, -12896, -8968, -6288, -4240, -2584, -1200, 20456, 12896, 8968, 6288, 4240, 2584, 1200, 0];
/** Lower band: the 6-bit inverse quantizer for the decoder's output (64 kbit/s mode). */
const QM6 = [
  -136, -136, -136, -136, -24808, -21904, -19008, -16704, -14984, -13512, -12280, -11192, -10232, -9360, -8576, -7856, -7192, -6576, -6000, -5456, -4944, -4464,
  -4008, -3576, -3168, -2776, -2400, -2032, -1688, -1360, -1040, -728, 24808, 21904, 19008, 16704, 14984, 13512, 12280, 11192, 10232, 9360, 8576, 7856, 7192,
  6576, 6000, 5456, 4944, 4464, 4008, 3576, 3168, 2776, 2400, 2032, 1688, 1360, 1040, 728, 432, 136, -432, -136,
];
/** Lower band: magnitude class of a 4-bit codeword, and the log scale factor step for each class. */
const RL42 = [0, 7, 6, 5, 4, 3, 2, 1, 7, 6, 5, 4, 3, 2, 1, 0];
const WL = [-60, -30, 58, 172, 334, 538, 1198, 3042];
/** Upper band: 2-bit inverse quantizer, codewords by sign, magnitude class and log scale factor steps. */
const QM2 = [-7408, -1616, 7408, 1616];
const IHN = [0, 1, 0];
const IHP = [0, 3, 2];
const RH2 = [2, 1, 2, 1];
const WH = [0, -214, 798];
/** The antilog table of the scale factor (Table 14): 2^(i/32) scaled by 2^11. */
const ILB = [
  2048, 2093, 2139, 2186, 2233, 2282, 2332, 2383, 2435, 2489, 2543, 2599, 2656, 2714, 2774, 2834, 2896, 2960, 3025, 3091, 3158, 3228, 3298, 3371, 3444, 3520, 3597,
  3676, 3756, 3838, 3922, 4008,
];

/** Bounds of the log scale factors (lower, upper band) and the scale factors' reset values. */
const NBL_MAX = 18432;
const NBH_MAX = 22528;
const DETL_RESET = 32;
const DETH_RESET = 8;
/** The pole predictor's stability bounds. */
const A2_LIMIT = 12288;
const A1_MARGIN = 15360;

function sat(value: number): number {
  return value > INT16_MAX ? INT16_MAX : value < INT16_MIN ? INT16_MIN : value;
}

/** The 15-bit limit of reconstructed sub-band signals. */
function limit15(value: number): number {
  return value > 16383 ? 16383 : value < -16384 ? -16384 : value;
}

/** Scale factor from its log (the Recommendation's SCALEL/SCALEH); `shift` is 8 for the lower band, 10 for the upper. */
function scaleFactor(logScale: number, shift: number): number {
  const mantissa = ILB[(logScale >> 6) & 31];
  const exponent = shift - (logScale >> 11);
  return (exponent >= 0 ? mantissa >> exponent : mantissa << -exponent) << 2;
}

/**
 * One sub-band's adaptive predictor (two poles, six zeros) and scale factor: the state both ends
 * update identically from the quantized difference alone. The delay lines are plain fields, not
 * arrays: this runs twice per byte on every G.722 stream, and fields are what V8 keeps in registers.
 */
class SubBand {
  /** Scale factor (DETL/DETH) and its log (NBL/NBH). */
  det: number;
  logScale = 0;
  /** Signal estimate (SL/SH) and its zero-section part (SZL/SZH). */
  estimate = 0;
  #zeroPart = 0;
  /** Pole coefficients a1, a2 and zero coefficients b1..b6. */
  #a1 = 0;
  #a2 = 0;
  #b1 = 0;
  #b2 = 0;
  #b3 = 0;
  #b4 = 0;
  #b5 = 0;
  #b6 = 0;
  /** Past quantized differences d(n-1)..d(n-6), partial reconstructions p(n-1), p(n-2), reconstructions r(n-1), r(n-2). */
  #d1 = 0;
  #d2 = 0;
  #d3 = 0;
  #d4 = 0;
  #d5 = 0;
  #d6 = 0;
  #p1 = 0;
  #p2 = 0;
  #r1 = 0;
  #r2 = 0;

  constructor(private readonly resetDet: number) {
    this.det = resetDet;
  }

  reset(): void {
    this.det = this.resetDet;
    this.logScale = this.estimate = this.#zeroPart = 0;
    this.#a1 = this.#a2 = 0;
    this.#b1 = this.#b2 = this.#b3 = this.#b4 = this.#b5 = this.#b6 = 0;
    this.#d1 = this.#d2 = this.#d3 = this.#d4 = this.#d5 = this.#d6 = 0;
    this.#p1 = this.#p2 = this.#r1 = this.#r2 = 0;
  }

  /** Takes the quantized difference `d` of this sample: reconstructs, adapts the predictor and predicts the next sample. */
  update(d: number): void {
    const r0 = sat(this.estimate + d);
    const p0 = sat(this.#zeroPart + d);

    // Second pole coefficient: a leak towards zero plus a step on the signs of p(n), p(n-1), p(n-2).
    const s0 = p0 < 0;
    const s1 = this.#p1 < 0;
    const s2 = this.#p2 < 0;
    const a1x4 = sat(this.#a1 * 4);
    let wd = s0 === s1 ? -a1x4 : a1x4;
    if (wd > INT16_MAX) wd = INT16_MAX;
    let a2 = (wd >> 7) + (s0 === s2 ? 128 : -128) + ((this.#a2 * 32512) >> 15);
    a2 = a2 > A2_LIMIT ? A2_LIMIT : a2 < -A2_LIMIT ? -A2_LIMIT : a2;
    // First pole coefficient, kept inside the stability triangle a2 leaves it.
    let a1 = sat((s0 === s1 ? 192 : -192) + ((this.#a1 * 32640) >> 15));
    const a1Bound = sat(A1_MARGIN - a2);
    a1 = a1 > a1Bound ? a1Bound : a1 < -a1Bound ? -a1Bound : a1;
    // Zero coefficients: a leak plus a step on the sign agreement of d(n) with each d(n-i).
    const up = d === 0 ? 0 : 128;
    const down = -up;
    const negative = d < 0;
    const b1 = sat((this.#d1 < 0 === negative ? up : down) + ((this.#b1 * 32640) >> 15));
    const b2 = sat((this.#d2 < 0 === negative ? up : down) + ((this.#b2 * 32640) >> 15));
    const b3 = sat((this.#d3 < 0 === negative ? up : down) + ((this.#b3 * 32640) >> 15));
    const b4 = sat((this.#d4 < 0 === negative ? up : down) + ((this.#b4 * 32640) >> 15));
    const b5 = sat((this.#d5 < 0 === negative ? up : down) + ((this.#b5 * 32640) >> 15));
    const b6 = sat((this.#d6 < 0 === negative ? up : down) + ((this.#b6 * 32640) >> 15));
    // Delay lines.
    const d1 = d;
    const d2 = this.#d1;
    const d3 = this.#d2;
    const d4 = this.#d3;
    const d5 = this.#d4;
    const d6 = this.#d5;
    const r1 = r0;
    const r2 = this.#r1;
    // The next estimate: pole section on past reconstructions, zero section on past differences
    // (each addition saturating, as the Recommendation's adder does).
    const poles = sat(((a1 * sat(r1 + r1)) >> 15) + ((a2 * sat(r2 + r2)) >> 15));
    let zeros = (b6 * sat(d6 + d6)) >> 15;
    zeros = sat(zeros + ((b5 * sat(d5 + d5)) >> 15));
    zeros = sat(zeros + ((b4 * sat(d4 + d4)) >> 15));
    zeros = sat(zeros + ((b3 * sat(d3 + d3)) >> 15));
    zeros = sat(zeros + ((b2 * sat(d2 + d2)) >> 15));
    zeros = sat(zeros + ((b1 * sat(d1 + d1)) >> 15));
    this.#zeroPart = zeros;
    this.estimate = sat(poles + zeros);
    this.#a1 = a1;
    this.#a2 = a2;
    this.#b1 = b1;
    this.#b2 = b2;
    this.#b3 = b3;
    this.#b4 = b4;
    this.#b5 = b5;
    this.#b6 = b6;
    this.#d1 = d1;
    this.#d2 = d2;
    this.#d3 = d3;
    this.#d4 = d4;
    this.#d5 = d5;
    this.#d6 = d6;
    this.#p2 = this.#p1;
    this.#p1 = p0;
    this.#r2 = r2;
    this.#r1 = r1;
  }

  /** Adapts the lower band's scale factor to 4-bit codeword class `ril`. */
  adaptLower(ril: number): void {
    let nb = ((this.logScale * 32512) >> 15) + WL[RL42[ril]];
    nb = nb < 0 ? 0 : nb > NBL_MAX ? NBL_MAX : nb;
    this.logScale = nb;
    this.det = scaleFactor(nb, 8);
  }

  /** Adapts the upper band's scale factor to 2-bit codeword `ih`. */
  adaptUpper(ih: number): void {
    let nb = ((this.logScale * 32512) >> 15) + WH[RH2[ih]];
    nb = nb < 0 ? 0 : nb > NBH_MAX ? NBH_MAX : nb;
    this.logScale = nb;
    this.det = scaleFactor(nb, 10);
  }
}

/** The G.722 encoder of one stream: 16 kHz linear audio in, one byte per two samples out. */
export class G722Encoder {
  readonly #lower = new SubBand(DETL_RESET);
  readonly #upper = new SubBand(DETH_RESET);
  /**
   * The last 24 input samples, newest first from #newest; written twice (at i and i + 24) so the
   * window is always one run and nothing is shifted per sample.
   */
  readonly #history = new Int32Array(48);
  #newest = 0;

  reset(): void {
    this.#lower.reset();
    this.#upper.reset();
    this.#history.fill(0);
    this.#newest = 0;
  }

  /** Encodes `count` samples of `src` (an even number) into `dst` from `offset`; returns bytes written. */
  encode(src: Int16Array, count: number, dst: Uint8Array, offset: number): number {
    const history = this.#history;
    const pairs = count >> 1;
    let newest = this.#newest;
    for (let n = 0, j = 0; n < pairs; n++, j += 2) {
      newest = newest === 0 ? 22 : newest - 2;
      history[newest + 1] = history[newest + 25] = src[j];
      history[newest] = history[newest + 24] = src[j + 1];
      // Transmit QMF: even taps on the newer samples, odd taps on the older ones. With 16-bit
      // input the sums are scaled by 2^14 (the Recommendation's 14-bit input, by 2^12), which
      // keeps the bit stream identical to the usual 16-bit implementations (checked in the tests).
      let even = 0;
      let odd = 0;
      for (let i = 0; i < 24; i += 2) {
        even += QMF[i] * history[newest + i];
        odd += QMF[i + 1] * history[newest + i + 1];
      }
      const xLow = (even + odd) >> 14;
      const xHigh = (even - odd) >> 14;
      dst[offset + n] = (this.#encodeUpper(xHigh) << 6) | this.#encodeLower(xLow);
    }
    this.#newest = newest;
    return pairs;
  }

  #encodeLower(x: number): number {
    const band = this.#lower;
    const el = sat(x - band.estimate);
    const magnitude = el >= 0 ? el : -(el + 1);
    let interval = 1;
    while (interval < 30 && magnitude >= (Q6[interval] * band.det) >> 12) interval++;
    const code = el < 0 ? ILN[interval] : ILP[interval];
    const ril = code >> 2;
    const d = (band.det * QM4[ril]) >> 15;
    band.adaptLower(ril);
    band.update(d);
    return code;
  }

  #encodeUpper(x: number): number {
    const band = this.#upper;
    const eh = sat(x - band.estimate);
    const magnitude = eh >= 0 ? eh : -(eh + 1);
    const level = magnitude >= (564 * band.det) >> 12 ? 2 : 1;
    const code = eh < 0 ? IHN[level] : IHP[level];
    const d = (band.det * QM2[code]) >> 15;
    band.adaptUpper(code);
    band.update(d);
    return code;
  }
}

/** The G.722 decoder of one stream: one byte in, two 16 kHz samples out. */
export class G722Decoder {
  readonly #lower = new SubBand(DETL_RESET);
  readonly #upper = new SubBand(DETH_RESET);
  /** Receive QMF lines: difference and sum of the sub-band signals, the last 12 newest first from #newest (written twice, as the encoder's). */
  readonly #difference = new Int32Array(24);
  readonly #sum = new Int32Array(24);
  #newest = 0;

  reset(): void {
    this.#lower.reset();
    this.#upper.reset();
    this.#difference.fill(0);
    this.#sum.fill(0);
    this.#newest = 0;
  }

  /** Decodes `src[start, end)` into `dst` (room for two samples a byte); returns samples written. */
  decode(src: Uint8Array, start: number, end: number, dst: Int16Array): number {
    const difference = this.#difference;
    const sum = this.#sum;
    let out = 0;
    let newest = this.#newest;
    for (let k = start; k < end; k++) {
      const code = src[k];
      const low = this.#decodeLower(code & 0x3f);
      const high = this.#decodeUpper(code >> 6);
      newest = newest === 0 ? 11 : newest - 1;
      difference[newest] = difference[newest + 12] = low - high;
      sum[newest] = sum[newest + 12] = low + high;
      // Receive QMF: the even taps rebuild the earlier output sample from the difference, the odd taps the later one from the sum.
      let first = 0;
      let second = 0;
      for (let i = 0; i < 12; i++) {
        first += QMF[2 * i] * difference[newest + i];
        second += QMF[2 * i + 1] * sum[newest + i];
      }
      dst[out++] = sat(first >> 11);
      dst[out++] = sat(second >> 11);
    }
    this.#newest = newest;
    return out;
  }

  #decodeLower(code: number): number {
    const band = this.#lower;
    const ril = code >> 2;
    const d = (band.det * QM4[ril]) >> 15;
    const output = limit15(band.estimate + ((band.det * QM6[code]) >> 15));
    band.adaptLower(ril);
    band.update(d);
    return output;
  }

  #decodeUpper(code: number): number {
    const band = this.#upper;
    const d = (band.det * QM2[code]) >> 15;
    const output = limit15(band.estimate + d);
    band.adaptUpper(code);
    band.update(d);
    return output;
  }
}
