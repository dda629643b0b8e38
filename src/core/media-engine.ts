// The one media clock of the server. Bridges, playbacks, recordings and generators register a
// tick listener here; nothing in the media path keeps a timer of its own.
import { MediaClock, type TickListener } from '../media/clock.ts';

export interface MediaEngineOptions {
  /** Tests drive the clock by hand. */
  readonly manualClock?: boolean;
  readonly onError?: (error: unknown) => void;
}

export class MediaEngine {
  readonly clock: MediaClock;
  /** Between start() and stop(): the clock runs whenever something listens. */
  #started = false;

  constructor(options: MediaEngineOptions = {}) {
    this.clock = new MediaClock({ manual: options.manualClock, onListenerError: options.onError });
  }

  start(): void {
    this.#started = true;
    this.#settle();
  }

  stop(): void {
    this.#started = false;
    this.clock.stop();
  }

  onTick(listener: TickListener): void {
    this.clock.add(listener);
    this.#settle();
  }

  offTick(listener: TickListener): void {
    this.clock.remove(listener);
    this.#settle();
  }

  /**
   * The clock's timer runs only while a listener is there: an idle server woke up 50 times a
   * second for nothing (≈ 10 ms of CPU per second with no call). A listener that comes back
   * restarts the schedule from now, which no listener can tell from a steady clock.
   */
  #settle(): void {
    const wanted = this.#started && this.clock.listenerCount > 0;
    if (wanted && !this.clock.running) this.clock.start();
    else if (!wanted && this.clock.running) this.clock.stop();
  }
}
