// The receive queue: audio from the far end, whatever the size of its packets or messages,
// re-framed into one 20 ms frame per media clock tick, with a bound on latency and drift control.
// Preallocated: pushing and taking frames allocate nothing.
import { samplesPerFrame, type Frame, type SampleRate } from '../frame.ts';

/** The most audio waiting to be delivered. */
const MAX_QUEUED_FRAMES = 50;
/** A queue that stays at least this deep for DRIFT_WINDOW_TICKS loses one frame. */
const DRIFT_MIN_FRAMES = 3;
const DRIFT_WINDOW_TICKS = 250;

/**
 * Audio received from the far end, whatever the size of its packets or messages, delivered one
 * 20 ms frame per media clock tick. The queue holds at most a second (the oldest audio goes
 * first); a queue that never drains below three frames for five seconds (a sender whose clock
 * runs fast) loses a frame so latency does not creep up.
 */
export class ReceiveQueue {
  readonly frameSamples: number;
  private readonly queue: Int16Array;
  private read = 0;
  private length = 0;
  private scratchBuffer = new Int16Array(0);
  private readonly frame: Frame;
  private minDepthFrames = Number.POSITIVE_INFINITY;
  private ticksInWindow = 0;

  constructor(readonly rate: SampleRate) {
    this.frameSamples = samplesPerFrame(rate);
    this.queue = new Int16Array(this.frameSamples * MAX_QUEUED_FRAMES);
    this.frame = { rate, samples: new Int16Array(this.frameSamples) };
  }

  /** Samples waiting. */
  get queued(): number {
    return this.length;
  }

  /** A buffer of at least `count` samples to decode into before push(); reused on the next call. */
  scratch(count: number): Int16Array {
    if (this.scratchBuffer.length < count) this.scratchBuffer = new Int16Array(count);
    return this.scratchBuffer;
  }

  /** Queues decoded samples (copied). */
  push(samples: Int16Array): void {
    this.pushFrom(samples, samples.length);
  }

  /** Queues the first `count` samples of `samples` (copied; no view is made). */
  pushFrom(samples: Int16Array, count: number): void {
    if (count <= 0) return;
    const queue = this.queue;
    const capacity = queue.length;
    // Only the newest `capacity` samples can be kept; older queued audio makes room.
    const keep = Math.min(count, capacity);
    const from = count - keep;
    const overflow = this.length + keep - capacity;
    if (overflow > 0) this.discard(overflow);
    let write = (this.read + this.length) % capacity;
    for (let i = from; i < count; i++) {
      queue[write] = samples[i];
      if (++write === capacity) write = 0;
    }
    this.length += keep;
  }

  /**
   * Once per media clock tick: the next frame (owned by the queue, valid until the next call), or
   * undefined when less than a frame waits. Also keeps the latency in check.
   */
  next(): Frame | undefined {
    const size = this.frameSamples;
    let frame: Frame | undefined;
    if (this.length >= size) {
      const queue = this.queue;
      const capacity = queue.length;
      const dst = this.frame.samples;
      let read = this.read;
      for (let i = 0; i < size; i++) {
        dst[i] = queue[read];
        if (++read === capacity) read = 0;
      }
      this.read = read;
      this.length -= size;
      frame = this.frame;
    }
    // Drift: a queue that never ran low during the window holds latency nobody needs.
    const depth = Math.floor(this.length / size);
    if (depth < this.minDepthFrames) this.minDepthFrames = depth;
    if (++this.ticksInWindow >= DRIFT_WINDOW_TICKS) {
      if (this.minDepthFrames >= DRIFT_MIN_FRAMES) this.discard(size);
      this.ticksInWindow = 0;
      this.minDepthFrames = Number.POSITIVE_INFINITY;
    }
    return frame;
  }

  /** Forgets every queued sample and the drift window (audio resumes afresh, as after a gap). */
  clear(): void {
    this.read = 0;
    this.length = 0;
    this.ticksInWindow = 0;
    this.minDepthFrames = Number.POSITIVE_INFINITY;
  }

  private discard(samples: number): void {
    const dropped = Math.min(samples, this.length);
    this.read = (this.read + dropped) % this.queue.length;
    this.length -= dropped;
  }
}
