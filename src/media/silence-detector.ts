// Silence accounting for recordings started with `max_silence_seconds`:
// totals for RecordingFinished's talking_duration / silence_duration, and
// the signal to stop once the caller has been quiet for too long.
import { averageMagnitude } from './energy.ts';
import { DEFAULT_ENERGY_THRESHOLD } from './talk-detector.ts';

/** The detector's totals, handed between threads when a recording moves (recording-writer.ts). */
export interface SilenceState {
  readonly talkingMs: number;
  readonly silenceMs: number;
  readonly quietRunMs: number;
}

export interface SilenceDetectorOptions {
  /** Continuous silence that ends the recording; 0 never ends it. */
  readonly maxSilenceMs: number;
  readonly energyThreshold?: number;
}

export class SilenceDetector {
  readonly maxSilenceMs: number;
  readonly energyThreshold: number;
  private talkingTotalMs = 0;
  private silenceTotalMs = 0;
  private quietRunMs = 0;

  constructor(options: SilenceDetectorOptions) {
    this.maxSilenceMs = options.maxSilenceMs;
    this.energyThreshold = options.energyThreshold ?? DEFAULT_ENERGY_THRESHOLD;
  }

  get talkingMs(): number {
    return this.talkingTotalMs;
  }

  get silenceMs(): number {
    return this.silenceTotalMs;
  }

  /** Length of the silence the recording currently ends with. */
  get continuousSilenceMs(): number {
    return this.quietRunMs;
  }

  get limitReached(): boolean {
    return this.maxSilenceMs > 0 && this.quietRunMs >= this.maxSilenceMs;
  }

  /** Feeds one frame; true once the continuous silence has reached the limit. */
  process(samples: Int16Array, rate: number): boolean {
    const frameMs = (samples.length * 1000) / rate;
    if (averageMagnitude(samples) >= this.energyThreshold) {
      this.talkingTotalMs += frameMs;
      this.quietRunMs = 0;
    } else {
      this.silenceTotalMs += frameMs;
      this.quietRunMs += frameMs;
    }
    return this.limitReached;
  }

  /** The totals so far, to be continued elsewhere (restore()). */
  get state(): SilenceState {
    return { talkingMs: this.talkingTotalMs, silenceMs: this.silenceTotalMs, quietRunMs: this.quietRunMs };
  }

  /** Continues from totals another detector (another thread's) reached. */
  restore(state: SilenceState): void {
    this.talkingTotalMs = state.talkingMs;
    this.silenceTotalMs = state.silenceMs;
    this.quietRunMs = state.quietRunMs;
  }

  reset(): void {
    this.talkingTotalMs = 0;
    this.silenceTotalMs = 0;
    this.quietRunMs = 0;
  }
}
