// The playbacks of one target (a channel or a bridge), played one at a time in the order they were
// asked for. The first plays; the others wait `enqueued`. The queue is attached to the media path
// (a channel generator or a bridge source) only while it holds a playback.
import type { SampleRate } from '../../media/frame.ts';
import type { Playback } from './playback.ts';

export interface QueueOutput {
  /** Starts feeding the queue's audio to the target. */
  attach(queue: PlaybackQueue): void;
  /** Stops feeding it (the queue ran empty or the target went away). */
  detach(queue: PlaybackQueue): void;
}

export class PlaybackQueue {
  private current: Playback | undefined;
  private readonly waiting: Playback[] = [];
  private attached = false;

  constructor(
    private readonly output: QueueOutput,
    /** Called when the queue has become empty, so its owner can forget it. */
    private readonly emptied: (queue: PlaybackQueue) => void,
  ) {}

  get playing(): Playback | undefined {
    return this.current;
  }

  get size(): number {
    return (this.current ? 1 : 0) + this.waiting.length;
  }

  /** Plays `playback` now if nothing is playing, else after the others. */
  enqueue(playback: Playback): void {
    if (this.current) {
      this.waiting.push(playback);
      return;
    }
    this.current = playback;
    if (!this.attached) {
      this.attached = true;
      this.output.attach(this);
    }
    playback.start();
  }

  /**
   * One 20 ms frame of the playing playback; moves on through the queue as playbacks end. False
   * when the queue has run empty (the queue has detached itself by then).
   */
  fill(dst: Int16Array, rate?: SampleRate): boolean {
    while (this.current) {
      if (this.current.fill(dst, rate)) return true;
      const ended = this.current;
      this.current = undefined;
      ended.finish(ended.endState);
      this.startNext();
    }
    return false;
  }

  /** Stops one playback: the playing one (the next starts) or a waiting one (it leaves the queue). */
  stop(playback: Playback): void {
    if (playback === this.current) {
      this.current = undefined;
      playback.finish('complete');
      this.startNext();
      return;
    }
    const index = this.waiting.indexOf(playback);
    if (index < 0) return;
    this.waiting.splice(index, 1);
    playback.finish('complete');
  }

  /** The target went away: every playback ends (complete) and the queue empties. */
  stopAll(): void {
    const all = [...(this.current ? [this.current] : []), ...this.waiting.splice(0)];
    this.current = undefined;
    for (const playback of all) playback.finish('complete');
    this.settle();
  }

  private startNext(): void {
    // A playback may end at once (all its media missing ends at its first frame, not here), so
    // starting is enough; fill() moves on when it reports the end.
    this.current = this.waiting.shift();
    if (this.current) this.current.start();
    else this.settle();
  }

  private settle(): void {
    if (this.current || this.waiting.length > 0) return;
    if (this.attached) {
      this.attached = false;
      this.output.detach(this);
    }
    this.emptied(this);
  }
}
