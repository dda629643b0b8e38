// The unit of audio that flows through the media engine: 20 ms of signed
// 16-bit linear PCM, mono, at one of the rates the engine works at (narrowband
// 8 kHz, wideband 16 kHz, super-wideband 24 kHz, fullband 48 kHz).

export const FRAME_MS = 20;

export type SampleRate = 8000 | 16000 | 24000 | 48000;

/** Every engine rate, lowest first. */
export const SAMPLE_RATES: readonly SampleRate[] = [8000, 16000, 24000, 48000];

export function isSampleRate(rate: number): rate is SampleRate {
  return rate === 8000 || rate === 16000 || rate === 24000 || rate === 48000;
}

export const INT16_MAX = 32767;
export const INT16_MIN = -32768;

export const SAMPLES_PER_FRAME_8K = samplesPerFrame(8000);
export const SAMPLES_PER_FRAME_16K = samplesPerFrame(16000);

export interface Frame {
  readonly rate: SampleRate;
  /** Exactly `samplesPerFrame(rate)` samples; reused by its owner, so copy to keep. */
  readonly samples: Int16Array;
}

/** Samples in one 20 ms frame; other rates are accepted for file-level work. */
export function samplesPerFrame(rate: number): number {
  return (rate * FRAME_MS) / 1000;
}

export function createFrame(rate: SampleRate): Frame {
  return { rate, samples: new Int16Array(samplesPerFrame(rate)) };
}

export function saturateToInt16(value: number): number {
  return value > INT16_MAX ? INT16_MAX : value < INT16_MIN ? INT16_MIN : value;
}
