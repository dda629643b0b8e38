// What one media item of a playback produces: samples at the item's own rate on demand (a 16 kHz
// prompt stays 16 kHz; the playback converts for its target only where the rates differ), with
// the position controls (skip, restart) a playback applies to the item playing now.
import type { SampleRate } from '../../media/frame.ts';
import { ToneGenerator } from '../../media/tone-generator.ts';
import type { ToneList } from '../../media/tones.ts';

/** The rate of a playback whose target says nothing of its own. */
export const PLAYBACK_RATE: SampleRate = 8000;

export interface MediaSource {
  /** The rate of the samples read. */
  readonly rate: SampleRate;
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

/** Audio already decoded: a sound file or a stored recording. */
export class PcmSource implements MediaSource {
  private position = 0;

  constructor(
    private readonly samples: Int16Array,
    offsetMs = 0,
    readonly rate: SampleRate = PLAYBACK_RATE,
  ) {
    this.skip(offsetMs);
  }

  get length(): number {
    return this.samples.length;
  }

  /** The decoded audio (shared with the PCM cache: never written). */
  get audio(): Int16Array {
    return this.samples;
  }

  /** The next sample read() gives. */
  get at(): number {
    return this.position;
  }

  /** Moves to sample `position` (clamped to the item): where a player elsewhere got to. */
  seekTo(position: number): void {
    this.position = Math.max(0, Math.min(this.samples.length, Math.floor(position)));
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
    const target = this.position + Math.round((ms * this.rate) / 1000);
    this.position = Math.max(0, Math.min(this.samples.length, target));
  }

  restart(): void {
    this.position = 0;
  }
}

/**
 * A say-back (`digits:`, `number:`, `characters:`): a sequence of prompts played one after the
 * other, as if concatenated, without ever building the concatenation. The state is the item
 * playing and the position in it; the prompts are shared (each distinct one decoded once), so a
 * long sequence costs two bytes per item, and reading allocates nothing.
 */
export class PromptSequenceSource implements MediaSource {
  private item = 0;
  private position = 0;

  /**
   * @param prompts the distinct prompts, decoded to `rate`
   * @param sequence what to play, as indices into `prompts`
   */
  constructor(
    private readonly prompts: readonly Int16Array[],
    private readonly sequence: Uint16Array,
    offsetMs = 0,
    readonly rate: SampleRate = PLAYBACK_RATE,
  ) {
    for (const index of sequence) {
      if (index >= prompts.length) throw new RangeError(`prompt index ${index} out of range`);
    }
    this.skip(offsetMs);
  }

  read(dst: Int16Array, offset: number): number {
    let at = offset;
    const sequence = this.sequence;
    while (at < dst.length && this.item < sequence.length) {
      const samples = this.prompts[sequence[this.item]];
      const count = Math.min(dst.length - at, samples.length - this.position);
      const from = this.position;
      for (let i = 0; i < count; i++) dst[at + i] = samples[from + i];
      at += count;
      this.position += count;
      if (this.position >= samples.length) {
        this.item++;
        this.position = 0;
      }
    }
    return at - offset;
  }

  skip(ms: number): void {
    const delta = Math.round((ms * this.rate) / 1000);
    const sequence = this.sequence;
    if (delta > 0) {
      let ahead = delta;
      while (ahead > 0 && this.item < sequence.length) {
        const remaining = this.prompts[sequence[this.item]].length - this.position;
        if (ahead < remaining) {
          this.position += ahead;
          return;
        }
        ahead -= remaining;
        this.item++;
        this.position = 0;
      }
      return;
    }
    let back = -delta;
    while (back > 0) {
      if (back <= this.position) {
        this.position -= back;
        return;
      }
      back -= this.position;
      if (this.item === 0) {
        this.position = 0;
        return;
      }
      this.item--;
      this.position = this.prompts[sequence[this.item]].length;
    }
  }

  restart(): void {
    this.item = 0;
    this.position = 0;
  }
}

/**
 * A tone list, rendered on demand 20 ms at a time; one with no end plays until the playback is
 * stopped. Skipping does nothing.
 */
export class ToneSource implements MediaSource {
  private readonly generator: ToneGenerator;

  constructor(
    tones: ToneList,
    readonly rate: SampleRate = PLAYBACK_RATE,
  ) {
    this.generator = new ToneGenerator(tones, { rate });
  }

  read(dst: Int16Array, offset: number): number {
    return this.generator.fill(dst, offset);
  }

  skip(): void {}

  restart(): void {
    this.generator.reset();
  }
}
