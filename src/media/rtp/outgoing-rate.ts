// Outgoing rate control: frames on their way to the far end brought to the rate its format
// takes, with one resampler per stream and a reused output buffer.
import { createResampler, type Resampler } from '../resample.ts';
import { samplesPerFrame, type Frame, type SampleRate } from '../frame.ts';

/** Frames on their way out, brought to the rate the far end takes (one resampler per stream). */
export class OutgoingRate {
  private resampler: Resampler | undefined;
  private readonly out: Int16Array;

  constructor(readonly rate: SampleRate) {
    this.out = new Int16Array(samplesPerFrame(rate));
  }

  /** The frame's samples at `rate`: its own when already at that rate, else a buffer reused on the next call. */
  samples(frame: Frame): Int16Array {
    if (frame.rate === this.rate) return frame.samples;
    if (!this.resampler || this.resampler.fromRate !== frame.rate) this.resampler = createResampler(frame.rate, this.rate);
    const written = this.resampler.process(frame.samples, this.out);
    return written === this.out.length ? this.out : this.out.subarray(0, written);
  }
}
