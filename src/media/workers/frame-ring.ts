// A single-producer, single-consumer ring of audio frames in shared memory: how 20 ms frames cross
// between the main thread and a media worker without a message (and its structured clone) per
// frame. Fixed-size slots (a rate and up to `maxSamples` samples each) are written in place; two
// Atomics counters say how far each side got. The counters run on past 2³¹ and wrap (Int32), so
// `slots` is a power of two and a slot is `counter & (slots − 1)`. A full ring drops the frame
// being pushed and counts it: the producer never waits for the consumer, nor overwrites what the
// consumer may be reading. Nothing is allocated once the ring exists.
import type { Frame, SampleRate } from '../frame.ts';
import { samplesPerFrame } from '../frame.ts';

/** Int32 words before the slots: written, read, dropped. */
const CONTROL_WORDS = 4;
const WRITTEN = 0;
const READ = 1;
const DROPPED = 2;
/** Int32 words of a slot's header: its rate and sample count. */
const SLOT_HEADER_WORDS = 2;

/** Samples in a 20 ms frame at 48 kHz: the largest frame the engine makes. */
export const MAX_FRAME_SAMPLES = samplesPerFrame(48000);
/** Every engine frame's length is a multiple of an 8 kHz frame's: the views of a slot are indexed by length / FRAME_UNIT. */
const FRAME_UNIT = samplesPerFrame(8000);
const FRAME_LENGTHS: readonly number[] = [samplesPerFrame(8000), samplesPerFrame(16000), samplesPerFrame(24000), samplesPerFrame(48000)];
const FRAME_VIEWS = MAX_FRAME_SAMPLES / FRAME_UNIT + 1;

export class FrameRing {
  readonly slots: number;
  readonly maxSamples: number;
  readonly #control: Int32Array;
  readonly #headers: Int32Array;
  /** One view per slot, made once. */
  readonly #samples: Int16Array[] = [];
  /**
   * Per slot, a view of each engine frame's length (160, 320, 480, 960 samples) that fits it, at
   * `slot * FRAME_VIEWS + length / FRAME_UNIT`, made once: pop copies with set() (a memory copy,
   * several times faster than a loop) without a subarray per frame.
   */
  readonly #framed: Array<Int16Array | undefined> = [];
  readonly #mask: number;

  /** Bytes a ring of `slots` slots of `maxSamples` takes (a multiple of 8, so rings can follow each other). */
  static bytes(slots: number, maxSamples = MAX_FRAME_SAMPLES): number {
    const raw = (CONTROL_WORDS + slots * SLOT_HEADER_WORDS) * 4 + slots * maxSamples * 2;
    return Math.ceil(raw / 8) * 8;
  }

  constructor(buffer: SharedArrayBuffer, byteOffset: number, slots: number, maxSamples = MAX_FRAME_SAMPLES) {
    if (!Number.isInteger(slots) || slots < 2 || (slots & (slots - 1)) !== 0) throw new RangeError(`ring slots must be a power of two ≥ 2, got ${slots}`);
    this.slots = slots;
    this.maxSamples = maxSamples;
    this.#mask = slots - 1;
    this.#control = new Int32Array(buffer, byteOffset, CONTROL_WORDS);
    this.#headers = new Int32Array(buffer, byteOffset + CONTROL_WORDS * 4, slots * SLOT_HEADER_WORDS);
    const samplesAt = byteOffset + (CONTROL_WORDS + slots * SLOT_HEADER_WORDS) * 4;
    for (let i = 0; i < slots; i++) {
      const at = samplesAt + i * maxSamples * 2;
      this.#samples.push(new Int16Array(buffer, at, maxSamples));
      for (let unit = 0; unit < FRAME_VIEWS; unit++) {
        const length = unit * FRAME_UNIT;
        this.#framed.push(unit > 0 && length <= maxSamples && FRAME_LENGTHS.includes(length) ? new Int16Array(buffer, at, length) : undefined);
      }
    }
  }

  /** Frames waiting to be read. */
  get size(): number {
    return (Atomics.load(this.#control, WRITTEN) - Atomics.load(this.#control, READ)) | 0;
  }

  /** Frames dropped because the ring was full (or too large for a slot), since it was made. */
  get dropped(): number {
    return Atomics.load(this.#control, DROPPED);
  }

  /** Producer side: copies the frame into the next slot; false (and counted) when the ring is full. */
  push(rate: number, samples: Int16Array): boolean {
    const control = this.#control;
    const written = Atomics.load(control, WRITTEN);
    const length = samples.length;
    if (((written - Atomics.load(control, READ)) | 0) >= this.slots || length > this.maxSamples) {
      Atomics.add(control, DROPPED, 1);
      return false;
    }
    const slot = written & this.#mask;
    this.#samples[slot].set(samples);
    this.#headers[slot * SLOT_HEADER_WORDS] = rate;
    this.#headers[slot * SLOT_HEADER_WORDS + 1] = length;
    // The store publishes the slot: the consumer reads it only after seeing the new count.
    Atomics.store(control, WRITTEN, (written + 1) | 0);
    return true;
  }

  /**
   * Consumer side: the oldest frame copied into `frames`' reusable frame of its rate (valid until
   * the next pop with the same cache), or undefined when the ring is empty.
   */
  pop(frames: FrameCache): Frame | undefined {
    const control = this.#control;
    const read = Atomics.load(control, READ);
    if (((Atomics.load(control, WRITTEN) - read) | 0) <= 0) return undefined;
    const slot = read & this.#mask;
    const rate = this.#headers[slot * SLOT_HEADER_WORDS];
    const length = this.#headers[slot * SLOT_HEADER_WORDS + 1];
    let frame = frames.frame(rate, length);
    if (frame) {
      // A frame's length is a multiple of FRAME_UNIT (the cache checked it); one longer than a
      // slot (a header not written by push) has no view and is dropped.
      const from = this.#framed[slot * FRAME_VIEWS + length / FRAME_UNIT];
      if (from) frame.samples.set(from);
      else frame = undefined;
    }
    Atomics.store(control, READ, (read + 1) | 0);
    return frame;
  }

  /** Consumer side: drops the oldest frame unread; false when there was none. */
  skip(): boolean {
    const control = this.#control;
    const read = Atomics.load(control, READ);
    if (((Atomics.load(control, WRITTEN) - read) | 0) <= 0) return false;
    Atomics.store(control, READ, (read + 1) | 0);
    return true;
  }
}

/**
 * The frames a consumer reuses, one per rate: a popped frame is copied into the one of its rate.
 * A frame whose rate or length is not an engine frame's yields nothing (shared memory is trusted
 * no more than a socket).
 */
export class FrameCache {
  readonly #frames: Array<Frame | undefined> = [undefined, undefined, undefined, undefined];

  frame(rate: number, length: number): Frame | undefined {
    const index = rate === 8000 ? 0 : rate === 16000 ? 1 : rate === 24000 ? 2 : rate === 48000 ? 3 : -1;
    if (index < 0 || length !== samplesPerFrame(rate)) return undefined;
    let frame = this.#frames[index];
    if (!frame) {
      frame = { rate: rate as SampleRate, samples: new Int16Array(length) };
      this.#frames[index] = frame;
    }
    return frame;
  }
}
