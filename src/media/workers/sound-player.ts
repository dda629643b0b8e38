// A sound played by a media worker by itself (the playback fast path): the main thread hands the
// worker a SharedSound and a few shared control words, and the worker sends one 20 ms frame of it
// per tick until it ends, is stopped, or the stream closes — the main thread does nothing per frame.
// Control crosses through the words, not messages, so it is in effect at the worker's next tick:
//   POSITION  where the player is (the worker writes it after each frame; the main thread reads it)
//   SEEK      a position asked for, plus one (0: none); the worker takes it and clears it
//   PAUSED    1 while paused (the worker sends silence, as a paused playback does)
//   STOP      1 once the main thread took the sound back; the worker drops the player
// The end of the sound is the one message (`sound-ended`). A stop that races with the worker's
// tick may repeat one frame at the hand-over; never more.
import type { Frame } from '../frame.ts';
import { samplesPerFrame, isSampleRate } from '../frame.ts';
import type { SoundPlayback } from '../shared-sound.ts';
import type { FrameCache } from './frame-ring.ts';

const POSITION = 0;
const SEEK = 1;
const PAUSED = 2;
const STOP = 3;
export const SOUND_CONTROL_WORDS = 4;

/** What the main thread sends to start a sound on a stream (its buffers are shared, not copied). */
export interface SoundStart {
  /** Names this play among the stream's plays: an old play's end is not taken for a new one's. */
  readonly play: number;
  readonly sound: SharedArrayBuffer;
  readonly rate: number;
  readonly control: SharedArrayBuffer;
}

/** The worker's side: one per stream at most. */
export class WorkerSoundPlayer {
  readonly play: number;
  readonly #samples: Int16Array;
  readonly #control: Int32Array;
  readonly #rate: number;
  readonly #frameLength: number;
  #position: number;

  /** Throws on memory that does not fit what it claims to be (shared memory is trusted no more than a socket). */
  constructor(start: SoundStart) {
    if (!isSampleRate(start.rate)) throw new RangeError(`not an engine rate: ${start.rate}`);
    if (start.control.byteLength !== SOUND_CONTROL_WORDS * 4 || start.sound.byteLength % 2 !== 0) throw new RangeError('sound memory of the wrong size');
    this.play = start.play;
    this.#samples = new Int16Array(start.sound);
    this.#control = new Int32Array(start.control);
    this.#rate = start.rate;
    this.#frameLength = samplesPerFrame(start.rate);
    this.#position = Math.max(0, Math.min(this.#samples.length, Atomics.load(this.#control, POSITION)));
  }

  /** The main thread took the sound back. */
  get stopped(): boolean {
    return Atomics.load(this.#control, STOP) === 1;
  }

  /**
   * The next frame, filled into `frames`' reusable frame of the sound's rate; undefined once the
   * sound has ended (the frame before carried its last samples, padded with silence).
   */
  next(frames: FrameCache): Frame | undefined {
    const control = this.#control;
    const samples = this.#samples;
    const seek = Atomics.exchange(control, SEEK, 0);
    if (seek > 0) this.#position = Math.min(samples.length, seek - 1);
    if (this.#position >= samples.length) return undefined;
    const frame = frames.frame(this.#rate, this.#frameLength);
    if (!frame) return undefined;
    const out = frame.samples;
    if (Atomics.load(control, PAUSED) === 1) {
      out.fill(0);
      return frame;
    }
    const from = this.#position;
    const count = Math.min(out.length, samples.length - from);
    for (let i = 0; i < count; i++) out[i] = samples[from + i];
    if (count < out.length) out.fill(0, count);
    this.#position = from + count;
    Atomics.store(control, POSITION, this.#position);
    return frame;
  }
}

/** The main thread's side of a play, as its owner controls it. */
export class RemoteSoundPlay implements SoundPlayback {
  readonly control = new SharedArrayBuffer(SOUND_CONTROL_WORDS * 4);
  readonly #words = new Int32Array(this.control);
  #over = false;

  constructor(
    readonly play: number,
    readonly length: number,
    from: number,
    paused: boolean,
    /** Called once when the worker played the sound to its end (not after stop()). */
    private readonly onEnded: () => void,
    /** Called once when the play is over in any way (the stream forgets it). */
    private readonly onOver: (play: RemoteSoundPlay) => void,
  ) {
    this.#words[POSITION] = Math.max(0, Math.min(length, Math.floor(from)));
    this.#words[PAUSED] = paused ? 1 : 0;
  }

  get position(): number {
    const seek = Atomics.load(this.#words, SEEK);
    // A seek not yet taken is where the player will be.
    return seek > 0 ? seek - 1 : Atomics.load(this.#words, POSITION);
  }

  get over(): boolean {
    return this.#over;
  }

  pause(paused: boolean): void {
    Atomics.store(this.#words, PAUSED, paused ? 1 : 0);
  }

  seek(position: number): void {
    Atomics.store(this.#words, SEEK, Math.max(0, Math.min(this.length, Math.floor(position))) + 1);
  }

  stop(): number {
    Atomics.store(this.#words, STOP, 1);
    const position = this.position;
    this.#finish();
    return position;
  }

  /** The worker said the sound ended. */
  ended(): void {
    if (this.#over) return;
    this.#finish();
    this.onEnded();
  }

  /** The stream went away (closed, or lost with its worker): nothing more will be heard of the play. */
  abandon(): void {
    Atomics.store(this.#words, STOP, 1);
    this.#finish();
  }

  #finish(): void {
    if (this.#over) return;
    this.#over = true;
    this.onOver(this);
  }
}
