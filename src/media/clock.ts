// The one clock that paces all media. Ticks are scheduled against absolute
// deadlines on the monotonic high-resolution clock rather than by chaining
// 20 ms timeouts, so timer lateness never accumulates into drift: a late
// wake-up runs the overdue ticks back to back and the schedule stays put.
// Those catch-up ticks run after the loop has read the sockets (see onTimer).
import { FRAME_MS } from './frame.ts';

export type TickListener = (tick: number) => void;

export interface MediaClockOptions {
  readonly periodMs?: number;
  /** No timer: the owner (a test) calls `tick()` itself. */
  readonly manual?: boolean;
  /**
   * Most overdue ticks run in one burst. After a longer stall (debugger,
   * suspended VM) the missing ticks are dropped instead, because a burst of
   * seconds of audio is worse for listeners than a gap.
   */
  readonly maxCatchUpTicks?: number;
  /** Where a throwing listener's error goes; the other listeners still run. */
  readonly onListenerError?: (error: unknown) => void;
}

interface ListenerEntry {
  readonly listener: TickListener;
  active: boolean;
}

const NS_PER_MS = 1_000_000n;
// Node's timers have millisecond granularity and may fire a fraction of a
// millisecond early; running a tick that is due within this margin avoids a
// pointless extra 1 ms timeout.
const EARLY_MARGIN_NS = 1n * NS_PER_MS;
/** Ticks a late wake-up runs back to back at most; a consumer of their frames must hold this many (stream-memory.ts). */
export const DEFAULT_MAX_CATCH_UP_TICKS = 10;

function reportToConsole(error: unknown): void {
  console.error('media clock listener failed:', error);
}

export class MediaClock {
  readonly periodMs: number;
  readonly manual: boolean;
  private readonly periodNs: bigint;
  private readonly maxCatchUpTicks: number;
  private readonly onListenerError: (error: unknown) => void;
  // Replaced, never mutated, on add/remove: a tick iterates a stable
  // snapshot while listeners add or remove others.
  private entries: readonly ListenerEntry[] = [];
  private tickCount = 0;
  /** Told, at each wake-up, how late (in seconds) the timer fired for the due tick (metrics). */
  onLateness: ((seconds: number) => void) | undefined;
  private droppedTicks = 0;
  private inCatchUp = false;
  private isRunning = false;
  private timer: NodeJS.Timeout | undefined;
  /** A late wake-up's catch-up, waiting for the loop to read the sockets (see onTimer). */
  private catchUp: NodeJS.Immediate | undefined;
  private nextDueNs = 0n;
  /** A wake-up this late has more than one tick due: the process stalled. */
  private readonly catchUpLatenessNs: bigint;

  constructor(options: MediaClockOptions = {}) {
    this.periodMs = options.periodMs ?? FRAME_MS;
    this.manual = options.manual ?? false;
    this.periodNs = BigInt(Math.round(this.periodMs * 1e6));
    this.catchUpLatenessNs = this.periodNs - EARLY_MARGIN_NS;
    this.maxCatchUpTicks = options.maxCatchUpTicks ?? DEFAULT_MAX_CATCH_UP_TICKS;
    this.onListenerError = options.onListenerError ?? reportToConsole;
  }

  get running(): boolean {
    return this.isRunning;
  }

  /** Ticks delivered so far. */
  get ticks(): number {
    return this.tickCount;
  }

  /**
   * True while the ticks of a late wake-up run back to back (the catch-up after a stall): a reader
   * of frames that waited meanwhile takes them one a tick now, rather than cutting them as a backlog.
   */
  get catchingUp(): boolean {
    return this.inCatchUp;
  }

  /** Ticks skipped after stalls longer than the catch-up limit. */
  get skippedTicks(): number {
    return this.droppedTicks;
  }

  get listenerCount(): number {
    return this.entries.length;
  }

  /** Listeners run in the order they were added; adding one twice is a no-op. */
  add(listener: TickListener): void {
    if (this.entries.some((entry) => entry.listener === listener)) return;
    this.entries = [...this.entries, { listener, active: true }];
  }

  /** Takes effect at once, even in the middle of a tick. */
  remove(listener: TickListener): void {
    const entry = this.entries.find((candidate) => candidate.listener === listener);
    if (entry === undefined) return;
    entry.active = false;
    this.entries = this.entries.filter((candidate) => candidate !== entry);
  }

  start(): void {
    if (this.isRunning) return;
    this.isRunning = true;
    if (this.manual) return;
    this.nextDueNs = process.hrtime.bigint() + this.periodNs;
    this.schedule();
  }

  stop(): void {
    this.isRunning = false;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.catchUp !== undefined) {
      clearImmediate(this.catchUp);
      this.catchUp = undefined;
    }
  }

  /** Delivers one tick to every listener now. */
  tick(): void {
    const index = this.tickCount++;
    const entries = this.entries;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      if (!entry.active) continue;
      try {
        entry.listener(index);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }

  private schedule(): void {
    // A listener may have stopped and restarted the clock mid-tick, which
    // already scheduled a timer; never run two.
    if (this.timer !== undefined) clearTimeout(this.timer);
    const remainingMs = Number(this.nextDueNs - process.hrtime.bigint()) / 1e6;
    this.timer = setTimeout(this.onTimer, Math.max(1, Math.round(remainingMs)));
    // The clock alone should not keep the process alive on shutdown.
    this.timer.unref();
  }

  /**
   * A wake-up with one tick due runs it at once. A later one means this process stalled (a loaded
   * machine, a long GC pause), and the packets that came meanwhile still wait unread: Node runs due
   * timers before it polls the sockets. Ticks run now would mix and play without them (and a jitter
   * buffer would then find them late), so the catch-up waits for setImmediate, which runs once the
   * loop has read them. Only late wake-ups pay for it; an on-time tick allocates nothing more.
   */
  private readonly onTimer = (): void => {
    this.timer = undefined;
    if (!this.isRunning) return;
    const now = process.hrtime.bigint();
    if (now >= this.nextDueNs) {
      const latenessNs = now - this.nextDueNs;
      if (this.onLateness) this.onLateness(Number(latenessNs) / 1e9);
      if (latenessNs >= this.catchUpLatenessNs) {
        this.catchUp = setImmediate(this.onCatchUp);
        return;
      }
    }
    // Written here rather than shared with onCatchUp: handing `now` to another function makes V8
    // allocate it, 16 bytes a wake-up (bench/clock-wakeup-cost.ts).
    while (this.isRunning && now + EARLY_MARGIN_NS >= this.nextDueNs) {
      this.tick();
      this.nextDueNs += this.periodNs;
    }
    if (this.isRunning) this.schedule();
  };

  /** A late wake-up's ticks, once the sockets were read: at most maxCatchUpTicks back to back, the rest dropped. */
  private readonly onCatchUp = (): void => {
    this.catchUp = undefined;
    if (!this.isRunning) return;
    const now = process.hrtime.bigint();
    if (now >= this.nextDueNs) {
      const due = (now - this.nextDueNs) / this.periodNs + 1n;
      const excess = due - BigInt(this.maxCatchUpTicks);
      if (excess > 0n) {
        this.droppedTicks += Number(excess);
        this.nextDueNs += excess * this.periodNs;
      }
    }
    this.inCatchUp = true;
    try {
      while (this.isRunning && now + EARLY_MARGIN_NS >= this.nextDueNs) {
        this.tick();
        this.nextDueNs += this.periodNs;
      }
    } finally {
      this.inCatchUp = false;
    }
    if (this.isRunning) this.schedule();
  };
}
