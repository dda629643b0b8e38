// Talk detection as Asterisk's TALK_DETECT does it: a frame is "talking"
// when its average magnitude reaches the energy threshold; talking starts
// after enough consecutive talking frames and ends after a long enough run
// of quiet frames, so breaths and short pauses do not split a sentence.
import { averageMagnitude } from './energy.ts';

/** dsp.conf `silencethreshold` default: average magnitude per sample. */
export const DEFAULT_ENERGY_THRESHOLD = 256;
/** TALK_DETECT `dsp_talking_threshold` default. */
export const DEFAULT_TALKING_THRESHOLD_MS = 160;
/** TALK_DETECT `dsp_silence_threshold` default. */
export const DEFAULT_SILENCE_THRESHOLD_MS = 2500;

export interface TalkDetectorOptions {
  readonly energyThreshold?: number;
  /** Continuous talking needed before talking is reported. */
  readonly talkingThresholdMs?: number;
  /** Continuous silence needed before the end of talking is reported. */
  readonly silenceThresholdMs?: number;
}

export type TalkTransition = 'none' | 'started' | 'finished';

export class TalkDetector {
  readonly energyThreshold: number;
  readonly talkingThresholdMs: number;
  readonly silenceThresholdMs: number;
  private elapsedMs = 0;
  private loudRunMs = 0;
  private quietRunMs = 0;
  private talkStartMs = 0;
  private isTalking = false;
  private finishedDurationMs = 0;

  constructor(options: TalkDetectorOptions = {}) {
    this.energyThreshold = options.energyThreshold ?? DEFAULT_ENERGY_THRESHOLD;
    this.talkingThresholdMs = options.talkingThresholdMs ?? DEFAULT_TALKING_THRESHOLD_MS;
    this.silenceThresholdMs = options.silenceThresholdMs ?? DEFAULT_SILENCE_THRESHOLD_MS;
  }

  get talking(): boolean {
    return this.isTalking;
  }

  /**
   * Talking time of the last finished talk spurt, from its first loud frame
   * to its last, the trailing silence excluded (ChannelTalkingFinished's
   * `duration`).
   */
  get lastTalkDurationMs(): number {
    return this.finishedDurationMs;
  }

  /** Feeds one frame; returns the transition it caused, if any. */
  process(samples: Int16Array, rate: number): TalkTransition {
    const frameMs = (samples.length * 1000) / rate;
    const loud = averageMagnitude(samples) >= this.energyThreshold;
    this.elapsedMs += frameMs;
    if (!this.isTalking) {
      this.loudRunMs = loud ? this.loudRunMs + frameMs : 0;
      if (this.loudRunMs < this.talkingThresholdMs) return 'none';
      this.isTalking = true;
      this.talkStartMs = this.elapsedMs - this.loudRunMs;
      this.quietRunMs = 0;
      return 'started';
    }
    this.quietRunMs = loud ? 0 : this.quietRunMs + frameMs;
    if (this.quietRunMs < this.silenceThresholdMs) return 'none';
    this.isTalking = false;
    this.finishedDurationMs = this.elapsedMs - this.quietRunMs - this.talkStartMs;
    this.loudRunMs = 0;
    return 'finished';
  }

  reset(): void {
    this.elapsedMs = 0;
    this.loudRunMs = 0;
    this.quietRunMs = 0;
    this.talkStartMs = 0;
    this.isTalking = false;
    this.finishedDurationMs = 0;
  }
}
