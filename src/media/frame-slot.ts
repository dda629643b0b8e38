// The latest 20 ms of audio a consumer received, normalised to the consumer's rate, for
// clock-driven consumers (bridges, recordings) that take one frame per tick. Preallocated: putting
// and taking never allocate.
import { samplesPerFrame, type Frame, type SampleRate } from './frame.ts';
import { createResampler, type Resampler } from './resample.ts';

export class FrameSlot {
  readonly rate: SampleRate;
  readonly samples: Int16Array;
  private fresh = false;
  private resampler: Resampler | undefined;
  /**
   * The last frame put, as it came, when it came at another rate (a copy: the frame is its
   * owner's); a frame at the slot's rate is `samples` itself. Undefined until a frame came.
   */
  private lastInput: { rate: SampleRate; samples: Int16Array } | undefined;

  constructor(rate: SampleRate = 8000) {
    this.rate = rate;
    this.samples = new Int16Array(samplesPerFrame(rate));
  }

  /** Copies (and resamples if needed) a frame in; a newer frame replaces one not yet taken. */
  put(frame: Frame): void {
    if (frame.rate === this.rate) {
      this.samples.set(frame.samples.length === this.samples.length ? frame.samples : frame.samples.subarray(0, this.samples.length));
      this.lastInput = undefined;
    } else {
      if (!this.resampler || this.resampler.fromRate !== frame.rate) this.resampler = createResampler(frame.rate, this.rate);
      this.resampler.process(frame.samples, this.samples);
      this.keepInput(frame);
    }
    this.fresh = true;
  }

  /** The frame received since the last take, or undefined when none arrived. */
  take(): Int16Array | undefined {
    if (!this.fresh) return undefined;
    this.fresh = false;
    return this.samples;
  }

  /**
   * Takes over from the slot this one replaces (the consumer's rate changed), best once its frame
   * has been taken: the last frame it received primes this slot's resampler, so the stream goes
   * on without the dip of a filter starting from silence. An untaken frame is offered here too.
   */
  continueFrom(previous: FrameSlot): void {
    const last = previous.lastInput ?? { rate: previous.rate, samples: previous.samples };
    if (last.rate === this.rate) this.samples.set(last.samples.subarray(0, this.samples.length));
    else {
      this.resampler = createResampler(last.rate, this.rate);
      this.resampler.process(last.samples, this.samples);
      this.keepInput(last);
    }
    this.fresh = previous.fresh;
    if (!this.fresh) this.samples.fill(0);
  }

  private keepInput(frame: Frame): void {
    if (this.lastInput?.rate !== frame.rate || this.lastInput.samples.length !== frame.samples.length) {
      this.lastInput = { rate: frame.rate, samples: new Int16Array(frame.samples.length) };
    }
    this.lastInput.samples.set(frame.samples);
  }
}
