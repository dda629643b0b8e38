// Silence accounting for recordings started with `max_silence_seconds`:
// totals for RecordingFinished's talking_duration / silence_duration, and
// the signal to stop once the caller has been quiet for too long.
import { averageMagnitude } from './energy.ts';
import { DEFAULT_ENERGY_THRESHOLD } from './talk-detector.ts';

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

  reset(): void {
    this.talkingTotalMs = 0;
    this.silenceTotalMs = 0;
    this.quietRunMs = 0;
  }
}
