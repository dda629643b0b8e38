// A sound's decoded samples in shared memory, so that a media worker can play it by itself: the
// main thread copies a prompt's PCM into a SharedArrayBuffer once and every worker reads that same
// memory (postMessage shares a SharedArrayBuffer, it does not copy it). Sounds are kept in a small
// LRU bounded by bytes, keyed by the decoded array the PCM cache hands out (one per file and rate),
// so a prompt played to a thousand calls is copied once. A sound larger than MAX_SHARED_SOUND_BYTES
// is never shared: its playback stays on the main thread.
import type { SampleRate } from './frame.ts';

/** The largest sound a worker plays by itself (about 8.7 minutes at 8 kHz, 1.5 at 48 kHz). */
export const MAX_SHARED_SOUND_BYTES = 8 * 1024 * 1024;
/** All shared sounds kept together (the oldest unused ones are forgotten first). */
export const SHARED_SOUNDS_MAX_BYTES = 64 * 1024 * 1024;

export class SharedSound {
  readonly buffer: SharedArrayBuffer;
  readonly samples: Int16Array;

  constructor(
    source: Int16Array,
    readonly rate: SampleRate,
  ) {
    this.buffer = new SharedArrayBuffer(source.length * 2);
    this.samples = new Int16Array(this.buffer);
    this.samples.set(source);
  }

  get length(): number {
    return this.samples.length;
  }

  get bytes(): number {
    return this.buffer.byteLength;
  }
}

/**
 * A sound being played where the packets are handled (a media worker), as its owner controls it.
 * Positions are in samples of the sound's rate.
 */
export interface SoundPlayback {
  /** Where the player is now (at most one 20 ms frame behind what has been sent). */
  readonly position: number;
  pause(paused: boolean): void;
  /** Moves the player to `position` (clamped to the sound) before its next frame. */
  seek(position: number): void;
  /** Stops the player before its next frame; returns where it got to. Idempotent. */
  stop(): number;
}

/** The decoded sounds shared with media workers, least recently used first. */
export class SharedSoundCache {
  readonly #byArray = new Map<Int16Array, SharedSound>();
  #bytes = 0;

  constructor(
    readonly maxBytes = SHARED_SOUNDS_MAX_BYTES,
    readonly maxSoundBytes = MAX_SHARED_SOUND_BYTES,
  ) {}

  /** Bytes held now. */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#byArray.size;
  }

  /** The shared copy of `samples` (made on first use); undefined when it is too large to share. */
  of(samples: Int16Array, rate: SampleRate): SharedSound | undefined {
    const bytes = samples.length * 2;
    if (bytes === 0 || bytes > this.maxSoundBytes || bytes > this.maxBytes) return undefined;
    const known = this.#byArray.get(samples);
    if (known && known.rate === rate) {
      // Most recently used last.
      this.#byArray.delete(samples);
      this.#byArray.set(samples, known);
      return known;
    }
    if (known) this.#forget(samples, known);
    const sound = new SharedSound(samples, rate);
    this.#byArray.set(samples, sound);
    this.#bytes += sound.bytes;
    // A worker still playing an evicted sound keeps its memory alive until it is done with it.
    for (const [oldest, entry] of this.#byArray) {
      if (this.#bytes <= this.maxBytes) break;
      this.#forget(oldest, entry);
    }
    return sound;
  }

  #forget(samples: Int16Array, sound: SharedSound): void {
    this.#byArray.delete(samples);
    this.#bytes -= sound.bytes;
  }
}
