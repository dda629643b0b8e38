// The latest 20 ms of audio a consumer received, normalised to the consumer's rate, for
// clock-driven consumers (bridges, recordings) that take one frame per tick. Preallocated: putting
// and taking never allocate.
//
// The slot also keeps the frame before the latest one, so a slot made to replace it at another
// rate (a bridge whose mix rate changed) can prime its resampler with real history instead of
// starting from silence. Two buffers used in turn keep that frame at no cost: nothing is copied
// that would not be copied anyway.
import { samplesPerFrame, type Frame, type SampleRate } from './frame.ts';
import { createResampler, type Resampler } from './resample.ts';

/** One received frame as it came, at its own rate. */
interface Received {
  rate: SampleRate;
  samples: Int16Array;
}

export class FrameSlot {
  readonly rate: SampleRate;
  private fresh = false;
  private resampler: Resampler | undefined;
  /** The newest frame received and the one before it, as they came (undefined until received). */
  private latest: Received | undefined;
  private prior: Received | undefined;
  /** What take() hands out: `latest` itself when it is at the slot's rate, else its conversion. */
  private converted: Int16Array;

  constructor(rate: SampleRate = 8000) {
    this.rate = rate;
    this.converted = new Int16Array(samplesPerFrame(rate));
  }

  /** The newest frame at the slot's rate (a buffer owned by the slot; copy to keep). */
  get samples(): Int16Array {
    return this.latest?.rate === this.rate ? this.latest.samples : this.converted;
  }

  /** Copies (and resamples if needed) a frame in; a newer frame replaces one not yet taken. */
  put(frame: Frame): void {
    const atRate = frame.rate === this.rate;
    // A frame at the slot's rate is handed out as it is, so it is kept at exactly 20 ms.
    const received = this.recycle(frame.rate, atRate ? this.converted.length : frame.samples.length);
    const count = Math.min(received.samples.length, frame.samples.length);
    received.samples.set(count === frame.samples.length ? frame.samples : frame.samples.subarray(0, count));
    if (count < received.samples.length) received.samples.fill(0, count);
    if (!atRate) {
      if (!this.resampler || this.resampler.fromRate !== frame.rate) this.resampler = createResampler(frame.rate, this.rate);
      this.resampler.process(frame.samples, this.converted);
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
   * Takes over from the slot this one replaces (the consumer's rate changed): the frames it
   * received prime this slot's resampler, so the stream goes on without the dip of a filter
   * starting from silence. A frame the previous slot held untaken is offered here, at this rate.
   */
  continueFrom(previous: FrameSlot): void {
    const { latest, prior } = previous;
    if (!latest) return;
    this.prior = prior;
    this.latest = latest;
    if (latest.rate !== this.rate) {
      this.resampler = createResampler(latest.rate, this.rate);
      if (prior?.rate === latest.rate && prior.samples.length === latest.samples.length) this.resampler.process(prior.samples, this.converted);
      this.resampler.process(latest.samples, this.converted);
    }
    this.fresh = previous.fresh;
  }

  /** The buffer for a new frame: the older of the two, whose frame is forgotten now. */
  private recycle(rate: SampleRate, length: number): Received {
    let next = this.prior;
    if (!next || next.samples.length !== length) next = { rate, samples: new Int16Array(length) };
    next.rate = rate;
    this.prior = this.latest;
    this.latest = next;
    return next;
  }
}
