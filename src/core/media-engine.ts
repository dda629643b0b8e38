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

  constructor(options: MediaEngineOptions = {}) {
    this.clock = new MediaClock({ manual: options.manualClock, onListenerError: options.onError });
  }

  start(): void {
    this.clock.start();
  }

  stop(): void {
    this.clock.stop();
  }

  onTick(listener: TickListener): void {
    this.clock.add(listener);
  }

  offTick(listener: TickListener): void {
    this.clock.remove(listener);
  }
}
