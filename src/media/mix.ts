// Bridge mixing. Every participant hears the sum of all others: the bridge
// adds all contributions once into a 32-bit sum (which cannot overflow for
// any realistic party count) and then each participant's output is that sum
// minus what it contributed, so the work is O(parties), not O(parties²).
// Saturation happens only at the very end, so loud talkers clip only what
// each listener actually hears rather than corrupting the shared sum.
import { INT16_MAX, INT16_MIN } from './frame.ts';

/** Gain of 1, i.e. the samples pass unchanged. */
import type { OffloadedRecording, OffloadEnded, RecordingHandover } from './recording-writer.ts';

export const UNITY_GAIN = 1;

export function clearSum(sum: Int32Array): void {
  sum.fill(0);
}

/** Adds `contribution` to `sum` sample by sample. */
export function accumulate(sum: Int32Array, contribution: Int16Array): void {
  const count = Math.min(sum.length, contribution.length);
  for (let i = 0; i < count; i++) sum[i] += contribution[i];
}

/**
 * Writes "everyone but me" into `dst`. `own` must be exactly what this
 * participant added to the sum (after its gain), or undefined when it added
 * nothing (muted or silent).
 */
export function mixMinus(sum: Int32Array, own: Int16Array | undefined, dst: Int16Array): void {
  if (own === undefined) {
    saturateSum(sum, dst);
    return;
  }
  const count = Math.min(sum.length, own.length, dst.length);
  for (let i = 0; i < count; i++) {
    const value = sum[i] - own[i];
    dst[i] = value > INT16_MAX ? INT16_MAX : value < INT16_MIN ? INT16_MIN : value;
  }
}

/** The whole mix, clipped to 16 bits, e.g. for a bridge recording or snoop. */
export function saturateSum(sum: Int32Array, dst: Int16Array): void {
  const count = Math.min(sum.length, dst.length);
  for (let i = 0; i < count; i++) {
    const value = sum[i];
    dst[i] = value > INT16_MAX ? INT16_MAX : value < INT16_MIN ? INT16_MIN : value;
  }
}

/** Linear factor for a level change in decibels (+6 dB ≈ ×2). */
export function dbToGain(db: number): number {
  return Math.pow(10, db / 20);
}

/**
 * Scales `src` into `dst` (which may be the same array) with saturation.
 * A unity gain is a plain copy and a zero gain is silence, both cheaper than
 * the multiply loop.
 */
export function applyGain(src: Int16Array, gain: number, dst: Int16Array = src): void {
  const count = Math.min(src.length, dst.length);
  if (gain === UNITY_GAIN) {
    if (src !== dst) dst.set(src.subarray(0, count));
    return;
  }
  if (gain === 0) {
    dst.fill(0, 0, count);
    return;
  }
  for (let i = 0; i < count; i++) {
    const value = Math.round(src[i] * gain);
    dst[i] = value > INT16_MAX ? INT16_MAX : value < INT16_MIN ? INT16_MIN : value;
  }
}

/** Replaces the frame with silence, which is how mute keeps timing intact. */
export function silence(dst: Int16Array): void {
  dst.fill(0);
}

/**
 * A bridge's mix done where the members' media is handled (a media worker) instead of by the
 * bridge: the same sum and mix-minus as above, each member hearing the others. stop() gives the
 * audio back to the channels (the bridge mixes again from its next tick).
 */
export interface MixHandle {
  stop(): void;
  /**
   * Writes a recording of the mix (everyone, clipped to 16 bits, at the mix rate) where it is made;
   * `ended` when it comes back (the mix stopped: taken back). Undefined when it cannot.
   */
  record?(handover: RecordingHandover, ended: OffloadEnded): OffloadedRecording | undefined;
}
