// One bridge member's audio path: what it says, brought from its native rate to the bridge's mix
// rate, and what it hears, brought from the mix rate back to its native rate, each direction with
// the member's own resampler (a resampler carries its stream's history, so it can serve only one).
// A bridge mixes at the highest native rate of its members (Asterisk's softmix with
// internal_sample_rate "auto"): when one joins or leaves, or a member's format changes, the path
// is retuned, and each new resampler is primed with the audio just before the change so the
// stream goes on without the dip of a filter starting from silence. The new path's delay differs
// from the old one's (each conversion adds about 3 ms), so the waveform would jump at the change:
// the first frame after it is spliced onto the last sample heard with a short ramp, no click.
import { samplesPerFrame, saturateToInt16, type Frame, type SampleRate } from '../../media/frame.ts';
import { FrameSlot } from '../../media/frame-slot.ts';
import { createResampler, resampleAll, type Resampler } from '../../media/resample.ts';

/** How long the splice after a retune takes to bring the old waveform onto the new one. */
const SPLICE_MS = 2;

export class MemberAudio {
  #mixRate: SampleRate;
  #nativeRate: SampleRate;
  /** What the member said this tick, at the mix rate. */
  private slot: FrameSlot;
  /** What the member hears, at the mix rate (the bridge writes its mix-minus here). */
  output: Int16Array;
  /** Mix rate → native rate, when they differ. */
  private toNative: Resampler | undefined;
  private readonly heard: { rate: SampleRate; samples: Int16Array };
  /** What the member hears at its native rate (when that is not the mix rate). */
  private nativeBuffer = new Int16Array(0);
  /** The last sample the member was given (when a retune happens), and whether the next frame must be spliced onto it. */
  private lastSample = 0;
  private splicePending = false;
  /** At the mix rate with no splice to do: frames are handed on as they are. */
  private passThrough: boolean;

  constructor(nativeRate: SampleRate, mixRate: SampleRate) {
    this.#nativeRate = nativeRate;
    this.#mixRate = mixRate;
    this.slot = new FrameSlot(mixRate);
    this.output = new Int16Array(samplesPerFrame(mixRate));
    this.heard = { rate: mixRate, samples: this.output };
    this.passThrough = nativeRate === mixRate;
    if (nativeRate !== mixRate) {
      this.toNative = createResampler(mixRate, nativeRate);
      this.nativeBuffer = new Int16Array(samplesPerFrame(nativeRate));
    }
  }

  /** The rate the bridge mixes at, as this path was last tuned to. */
  get mixRate(): SampleRate {
    return this.#mixRate;
  }

  /** The member's native rate, as this path was last tuned to. */
  get nativeRate(): SampleRate {
    return this.#nativeRate;
  }

  /** A frame the member said (any rate): kept at the mix rate until the bridge takes it. */
  put(frame: Frame): void {
    this.slot.put(frame);
  }

  /** What the member said since the last tick, at the mix rate; undefined when nothing came. */
  take(): Int16Array | undefined {
    return this.slot.take();
  }

  /** Silence at the mix rate in the member's own output buffer. */
  silentOutput(): Int16Array {
    this.output.fill(0);
    return this.output;
  }

  /**
   * Silence to write to the member, at its native rate, without passing through its resampler:
   * a tick the other party of a two-party bridge sent nothing is a gap in what this member hears,
   * and its audio resumes from the resampler's state before the gap, as it did when frames were
   * converted on their way in (no filtered edges smeared into the frames around the gap).
   */
  silentFrame(): Frame {
    if (!this.toNative) return this.heardFrame(this.silentOutput());
    this.nativeBuffer.fill(0);
    this.heard.rate = this.#nativeRate;
    this.heard.samples = this.nativeBuffer;
    return this.heard;
  }

  /**
   * The frame to write to the member for `samples` (20 ms at the mix rate): converted to its
   * native rate into a buffer of its own when the rates differ. Valid until the next call.
   */
  heardFrame(samples: Int16Array): Frame {
    const heard = this.heard;
    // The steady narrowband case (every member at the mix rate) is one store.
    if (this.passThrough) {
      heard.samples = samples;
      return heard;
    }
    if (!this.toNative) {
      heard.rate = this.#mixRate;
      heard.samples = samples;
    } else {
      heard.rate = this.#nativeRate;
      heard.samples = this.nativeBuffer;
      this.toNative.process(samples, this.nativeBuffer);
    }
    if (this.splicePending) this.splice(heard);
    this.passThrough = !this.toNative && !this.splicePending;
    return heard;
  }

  /** Ramps the frame's start from the last sample heard onto the new path's waveform. */
  private splice(heard: { rate: SampleRate; samples: Int16Array }): void {
    this.splicePending = false;
    // `samples` may be another member's frame: the splice works on this member's own copy.
    if (heard.samples !== this.nativeBuffer && heard.samples !== this.output) {
      this.output.set(heard.samples);
      heard.samples = this.output;
    }
    const samples = heard.samples;
    const length = Math.min(samples.length, (heard.rate * SPLICE_MS) / 1000);
    const step = this.lastSample - samples[0];
    for (let i = 0; i < length; i++) samples[i] = saturateToInt16(Math.round(samples[i] + (step * (length - i)) / length));
  }

  /** Whether the path is tuned to these rates. */
  tunedTo(mixRate: SampleRate, nativeRate: SampleRate): boolean {
    return this.#mixRate === mixRate && this.#nativeRate === nativeRate;
  }

  /** Re-targets the path to new rates (allocates: only when a rate changes, never per tick). */
  retune(mixRate: SampleRate, nativeRate: SampleRate): void {
    if (this.tunedTo(mixRate, nativeRate)) return;
    // The bridge retunes right after a tick's delivery: `heard` still holds what the member was given.
    const lastHeard = this.heard.samples;
    const lastHeardRate = this.heard.rate;
    this.lastSample = lastHeard.length > 0 ? lastHeard[lastHeard.length - 1] : 0;
    if (mixRate !== this.#mixRate) {
      const slot = new FrameSlot(mixRate);
      slot.continueFrom(this.slot);
      this.slot = slot;
      this.output = new Int16Array(samplesPerFrame(mixRate));
    }
    this.#mixRate = mixRate;
    this.#nativeRate = nativeRate;
    this.toNative = undefined;
    this.splicePending = true;
    this.passThrough = false;
    if (mixRate !== nativeRate) {
      this.toNative = createResampler(mixRate, nativeRate);
      this.nativeBuffer = new Int16Array(samplesPerFrame(nativeRate));
      // Primed with what the member heard last, brought to the new mix rate.
      if (lastHeard.length === samplesPerFrame(lastHeardRate)) this.toNative.process(resampleAll(lastHeard, lastHeardRate, mixRate), this.nativeBuffer);
      this.nativeBuffer.fill(0);
    }
  }
}
