// The latest 20 ms of audio a consumer received, normalised to the engine's mixing rate, for
// clock-driven consumers (bridges, recordings) that take one frame per tick. Preallocated: putting
// and taking never allocate.
import { samplesPerFrame, type Frame, type SampleRate } from './frame.ts';
import { createResampler, type Resampler } from './resample.ts';

export class FrameSlot {
  readonly rate: SampleRate;
  readonly samples: Int16Array;
  private fresh = false;
  private resampler: Resampler | undefined;

  constructor(rate: SampleRate = 8000) {
    this.rate = rate;
    this.samples = new Int16Array(samplesPerFrame(rate));
  }

  /** Copies (and resamples if needed) a frame in; a newer frame replaces one not yet taken. */
  put(frame: Frame): void {
    if (frame.rate === this.rate) {
      this.samples.set(frame.samples.length === this.samples.length ? frame.samples : frame.samples.subarray(0, this.samples.length));
    } else {
      if (!this.resampler || this.resampler.fromRate !== frame.rate) this.resampler = createResampler(frame.rate, this.rate);
      this.resampler.process(frame.samples, this.samples);
    }
    this.fresh = true;
  }

  /** The frame received since the last take, or undefined when none arrived. */
  take(): Int16Array | undefined {
    if (!this.fresh) return undefined;
    this.fresh = false;
    return this.samples;
  }
}
