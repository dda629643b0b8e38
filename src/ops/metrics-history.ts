// The console's live charts (docs/console.md, "Charts"): the server's own figures sampled every
// few seconds over the last 15 minutes, in memory (a fixed number of samples). Active calls are
// the distinct linkedids of the live channels; calls per second counts the channels that started
// a call (their uniqueid is their linkedid); events per second are the events sent to ARI
// clients; CPU is this process's user+system time over wall time; memory its resident set.
import type { Channel } from '../core/channels/channel.ts';

export interface MetricsSample {
  /** ms since the epoch */
  readonly t: number;
  readonly channels: number;
  readonly calls: number;
  readonly calls_per_second: number;
  readonly events_per_second: number;
  /** percent of one core */
  readonly cpu_percent: number;
  readonly memory_mb: number;
}

export interface MetricsHistoryOptions {
  readonly channels: { list(): Channel[]; onLifecycle(event: 'created', listener: (channel: Channel) => void): () => void };
  /** Events sent to clients so far (a counter). */
  readonly eventsSent: () => number;
  readonly intervalMs?: number;
  readonly spanMs?: number;
}

export const DEFAULT_INTERVAL_MS = 2000;
const DEFAULT_SPAN_MS = 15 * 60_000;

export class MetricsHistory {
  readonly intervalMs: number;
  readonly #samples: MetricsSample[] = [];
  readonly #capacity: number;
  #callsStarted = 0;
  #lastCallsStarted = 0;
  #lastEvents: number;
  #lastCpu = process.cpuUsage();
  #lastAt = Date.now();
  readonly #timer: NodeJS.Timeout;
  readonly #unsubscribe: () => void;

  constructor(private readonly options: MetricsHistoryOptions) {
    this.intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
    this.#capacity = Math.ceil((options.spanMs ?? DEFAULT_SPAN_MS) / this.intervalMs);
    this.#lastEvents = options.eventsSent();
    this.#unsubscribe = options.channels.onLifecycle('created', (channel) => {
      if (channel.linkedId === channel.id) this.#callsStarted += 1;
    });
    this.#timer = setInterval(() => this.sample(), this.intervalMs);
    this.#timer.unref();
  }

  sample(): void {
    const now = Date.now();
    const seconds = Math.max(0.001, (now - this.#lastAt) / 1000);
    const cpu = process.cpuUsage(this.#lastCpu);
    const events = this.options.eventsSent();
    const channels = this.options.channels.list();
    const calls = new Set(channels.map((channel) => channel.linkedId)).size;
    this.#samples.push({
      t: now,
      channels: channels.length,
      calls,
      calls_per_second: round((this.#callsStarted - this.#lastCallsStarted) / seconds),
      events_per_second: round(Math.max(0, events - this.#lastEvents) / seconds),
      cpu_percent: round((cpu.user + cpu.system) / 1000 / (seconds * 10)),
      memory_mb: round(process.memoryUsage.rss() / (1024 * 1024)),
    });
    if (this.#samples.length > this.#capacity) this.#samples.splice(0, this.#samples.length - this.#capacity);
    this.#lastAt = now;
    this.#lastCpu = process.cpuUsage();
    this.#lastEvents = events;
    this.#lastCallsStarted = this.#callsStarted;
  }

  /** Samples since `since` (ms), oldest first. */
  samples(since = 0): MetricsSample[] {
    return since > 0 ? this.#samples.filter((sample) => sample.t > since) : [...this.#samples];
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#unsubscribe();
  }
}

const round = (value: number): number => Math.round(value * 10) / 10;
