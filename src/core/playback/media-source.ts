// What one media item of a playback produces: 8 kHz samples on demand, with the position
// controls (skip, restart) a playback applies to the item playing now.
import { ToneGenerator } from '../../media/tone-generator.ts';
import type { ToneList } from '../../media/tones.ts';

export const PLAYBACK_RATE = 8000;

export interface MediaSource {
  /**
   * Writes up to `dst.length - offset` samples into `dst` from `offset`; returns how many. Fewer
   * than asked means the item has ended.
   */
  read(dst: Int16Array, offset: number): number;
  /** Moves the position by `ms` (negative rewinds), clamped to the item. */
  skip(ms: number): void;
  /** Back to the beginning of the item. */
  restart(): void;
}

/** Audio already decoded to 8 kHz: a sound file, a stored recording or a say-back sequence. */
export class PcmSource implements MediaSource {
  private position = 0;

  constructor(
    private readonly samples: Int16Array,
    offsetMs = 0,
  ) {
    this.skip(offsetMs);
  }

  get length(): number {
    return this.samples.length;
  }

  read(dst: Int16Array, offset: number): number {
    const count = Math.min(dst.length - offset, this.samples.length - this.position);
    if (count <= 0) return 0;
    // A plain copy: this runs on every tick and must not allocate (subarray would).
    const samples = this.samples;
    const from = this.position;
    for (let i = 0; i < count; i++) dst[offset + i] = samples[from + i];
    this.position += count;
    return count;
  }

  skip(ms: number): void {
    const target = this.position + Math.round((ms * PLAYBACK_RATE) / 1000);
    this.position = Math.max(0, Math.min(this.samples.length, target));
  }

  restart(): void {
    this.position = 0;
  }
}

/** A tone list; one with no end plays until the playback is stopped. Skipping does nothing. */
export class ToneSource implements MediaSource {
  private readonly generator: ToneGenerator;
  private readonly scratch = new Int16Array(PLAYBACK_RATE / 50);

  constructor(tones: ToneList) {
    this.generator = new ToneGenerator(tones, { rate: PLAYBACK_RATE });
  }

  read(dst: Int16Array, offset: number): number {
    const wanted = dst.length - offset;
    if (offset === 0) return this.generator.fill(dst);
    let written = 0;
    while (written < wanted) {
      const chunk = this.scratch.subarray(0, Math.min(this.scratch.length, wanted - written));
      const produced = this.generator.fill(chunk);
      dst.set(chunk.subarray(0, produced), offset + written);
      written += produced;
      if (produced < chunk.length) break;
    }
    return written;
  }

  skip(): void {}

  restart(): void {
    this.generator.reset();
  }
}
