// ITU-T G.711 μ-law and A-law. Both directions go through tables built once
// at load, because per-sample bit twiddling in the media loop costs far more
// than one indexed load. Encode tables are indexed by the 16-bit sample
// reinterpreted as unsigned (sample & 0xffff), which keeps encoding exact
// for every input instead of truncating to 13/14 bits first.

const ULAW_BIAS = 0x84;
const ULAW_CLIP = 32635;

const ulawToLinearTable = new Int16Array(256);
const alawToLinearTable = new Int16Array(256);
const linearToUlawTable = new Uint8Array(65536);
const linearToAlawTable = new Uint8Array(65536);

function computeUlawDecode(code: number): number {
  const inverted = ~code & 0xff;
  const exponent = (inverted >> 4) & 0x07;
  const mantissa = inverted & 0x0f;
  const magnitude = (((mantissa << 3) + ULAW_BIAS) << exponent) - ULAW_BIAS;
  return inverted & 0x80 ? -magnitude : magnitude;
}

function computeUlawEncode(sample: number): number {
  const signBit = sample < 0 ? 0x80 : 0;
  let magnitude = sample < 0 ? -sample : sample;
  if (magnitude > ULAW_CLIP) magnitude = ULAW_CLIP;
  magnitude += ULAW_BIAS;
  // The biased magnitude is at least 2^7, so the segment is log2 - 7.
  const exponent = 31 - Math.clz32(magnitude) - 7;
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f;
  return ~(signBit | (exponent << 4) | mantissa) & 0xff;
}

function computeAlawDecode(code: number): number {
  const toggled = code ^ 0x55;
  const exponent = (toggled >> 4) & 0x07;
  const mantissa = toggled & 0x0f;
  const magnitude =
    exponent === 0 ? (mantissa << 4) + 8 : ((mantissa << 4) + 0x108) << (exponent - 1);
  // In A-law a set sign bit means positive.
  return toggled & 0x80 ? magnitude : -magnitude;
}

function computeAlawEncode(sample: number): number {
  // Negative values are offset by one so that -1 lands in the same step as 0,
  // mirroring the symmetric quantiser of the standard.
  const evenBitMask = sample >= 0 ? 0xd5 : 0x55;
  const magnitude = sample >= 0 ? sample : -sample - 1;
  let code: number;
  if (magnitude < 256) {
    code = magnitude >> 4;
  } else {
    const exponent = 31 - Math.clz32(magnitude) - 7;
    code = (exponent << 4) | ((magnitude >> (exponent + 3)) & 0x0f);
  }
  return code ^ evenBitMask;
}

for (let code = 0; code < 256; code++) {
  ulawToLinearTable[code] = computeUlawDecode(code);
  alawToLinearTable[code] = computeAlawDecode(code);
}
for (let sample = -32768; sample < 32768; sample++) {
  linearToUlawTable[sample & 0xffff] = computeUlawEncode(sample);
  linearToAlawTable[sample & 0xffff] = computeAlawEncode(sample);
}

export function ulawToLinear(code: number): number {
  return ulawToLinearTable[code & 0xff];
}

export function linearToUlaw(sample: number): number {
  return linearToUlawTable[sample & 0xffff];
}

export function alawToLinear(code: number): number {
  return alawToLinearTable[code & 0xff];
}

export function linearToAlaw(sample: number): number {
  return linearToAlawTable[sample & 0xffff];
}

function assertCapacity(needed: number, available: number): void {
  if (available < needed) {
    throw new RangeError(`output buffer holds ${available}, needs ${needed}`);
  }
}

/** Decodes all of `src` into the start of `dst`; returns the sample count. */
export function ulawDecode(src: Uint8Array, dst: Int16Array): number {
  const count = src.length;
  assertCapacity(count, dst.length);
  for (let i = 0; i < count; i++) dst[i] = ulawToLinearTable[src[i]];
  return count;
}

/** Encodes all of `src` into the start of `dst`; returns the byte count. */
export function ulawEncode(src: Int16Array, dst: Uint8Array): number {
  const count = src.length;
  assertCapacity(count, dst.length);
  for (let i = 0; i < count; i++) dst[i] = linearToUlawTable[src[i] & 0xffff];
  return count;
}

export function alawDecode(src: Uint8Array, dst: Int16Array): number {
  const count = src.length;
  assertCapacity(count, dst.length);
  for (let i = 0; i < count; i++) dst[i] = alawToLinearTable[src[i]];
  return count;
}

export function alawEncode(src: Int16Array, dst: Uint8Array): number {
  const count = src.length;
  assertCapacity(count, dst.length);
  for (let i = 0; i < count; i++) dst[i] = linearToAlawTable[src[i] & 0xffff];
  return count;
}

// Ranged forms for the coders of a stream's payload (rtp/payload.ts, stream-coder.ts), which code in
// place in packet buffers: the caller has checked that the ranges fit.

/** Encodes `src[0, count)` into `dst` from `offset` as μ-law; returns the byte count. */
export function ulawEncodeAt(src: Int16Array, count: number, dst: Uint8Array, offset: number): number {
  for (let i = 0; i < count; i++) dst[offset + i] = linearToUlawTable[src[i] & 0xffff];
  return count;
}

/** Encodes `src[0, count)` into `dst` from `offset` as A-law; returns the byte count. */
export function alawEncodeAt(src: Int16Array, count: number, dst: Uint8Array, offset: number): number {
  for (let i = 0; i < count; i++) dst[offset + i] = linearToAlawTable[src[i] & 0xffff];
  return count;
}

/** Decodes `count` μ-law bytes of `src` from `start` into the start of `dst`; returns the sample count. */
export function ulawDecodeFrom(src: Uint8Array, start: number, count: number, dst: Int16Array): number {
  for (let i = 0; i < count; i++) dst[i] = ulawToLinearTable[src[start + i]];
  return count;
}

/** Decodes `count` A-law bytes of `src` from `start` into the start of `dst`; returns the sample count. */
export function alawDecodeFrom(src: Uint8Array, start: number, count: number, dst: Int16Array): number {
  for (let i = 0; i < count; i++) dst[i] = alawToLinearTable[src[start + i]];
  return count;
}
