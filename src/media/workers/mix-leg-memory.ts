// The memory between two media workers for one member of a bridge mixed in a worker (worker-mix.ts)
// whose stream runs on another worker: its decoded audio going to the mixing worker, and what it
// hears (the mix minus itself) coming back. The main thread makes it when the mix starts and hands
// it to both workers; afterwards no message crosses per frame, and nothing is allocated per frame.
import { FrameRing } from './frame-ring.ts';

/**
 * Frames either ring may hold. The two workers run clocks of their own, so one may wake a tick or
 * two after the other; the reader cuts a longer backlog (MIX_LEG_BACKLOG) to bound the delay.
 */
export const MIX_LEG_SLOTS = 8;
/** Frames a reader lets wait before it drops the oldest (60 ms), as the main thread's streams do. */
export const MIX_LEG_BACKLOG = 3;

export class MixLegMemory {
  readonly buffer: SharedArrayBuffer;
  /** The member's decoded audio: its stream's worker writes, the mixing worker reads. */
  readonly toMix: FrameRing;
  /** What the member hears: the mixing worker writes, its stream's worker reads and sends. */
  readonly fromMix: FrameRing;

  static bytes(): number {
    return 2 * FrameRing.bytes(MIX_LEG_SLOTS);
  }

  /** A new, zeroed memory (the main thread makes it and hands it to both workers). */
  static create(): MixLegMemory {
    return new MixLegMemory(new SharedArrayBuffer(MixLegMemory.bytes()));
  }

  constructor(buffer: SharedArrayBuffer) {
    if (buffer.byteLength !== MixLegMemory.bytes()) throw new RangeError('mix leg memory of the wrong size');
    this.buffer = buffer;
    this.toMix = new FrameRing(buffer, 0, MIX_LEG_SLOTS);
    this.fromMix = new FrameRing(buffer, FrameRing.bytes(MIX_LEG_SLOTS), MIX_LEG_SLOTS);
  }
}
