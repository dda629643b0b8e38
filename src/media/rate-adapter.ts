// Audio made at one rate (a sound file, music on hold) heard at whatever rate its listener works
// at now: a channel's native rate, a bridge's mix rate, which changes as members come and go.
// The adapter owns the scratch frame and the resampler of its stream, re-made only when a rate
// changes, so steady playback allocates nothing.
import { samplesPerFrame, type SampleRate } from './frame.ts';
import { createResampler, type Resampler } from './resample.ts';

export class RateAdapter {
  private scratch = new Int16Array(0);
  private resampler: Resampler | undefined;

  /**
   * One 20 ms frame at `rate` into `dst` from `produce`, which fills a buffer of one frame at
   * `sourceRate` (false when it has nothing more). False (nothing written) when it had nothing.
   */
  fill(dst: Int16Array, rate: SampleRate, sourceRate: SampleRate, produce: (buffer: Int16Array) => boolean): boolean {
    if (sourceRate === rate) return produce(dst);
    const frame = samplesPerFrame(sourceRate);
    if (this.scratch.length !== frame) this.scratch = new Int16Array(frame);
    if (!produce(this.scratch)) return false;
    if (this.resampler?.fromRate !== sourceRate || this.resampler.toRate !== rate) this.resampler = createResampler(sourceRate, rate);
    const written = this.resampler.process(this.scratch, dst);
    if (written < dst.length) dst.fill(0, written);
    return true;
  }
}
