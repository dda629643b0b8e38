// Reads the Prometheus text a benchmark scraped from GET /metrics: one number per series, looked up
// by its name and labels as printed (`name` or `name{le="0.02"}`). Comments and malformed lines are
// skipped: a benchmark wants the figures it knows, not a validator.
export class MetricsSnapshot {
  readonly #series = new Map<string, number>();
  /** performance.now() midway through the scrape (the figures were read about then). */
  readonly at: number;
  /** How long the scrape took, in ms: how far `at` may be off. */
  readonly took: number;

  constructor(text: string, at: number, took: number) {
    this.at = at;
    this.took = took;
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      const space = line.lastIndexOf(' ');
      if (space <= 0) continue;
      const value = Number(line.slice(space + 1));
      if (Number.isFinite(value)) this.#series.set(line.slice(0, space), value);
    }
  }

  /** The series' value, or 0 when the server does not report it. */
  value(series: string): number {
    return this.#series.get(series) ?? 0;
  }

  has(series: string): boolean {
    return this.#series.has(series);
  }

  /** The sum over every label set of metric `name` (`name{…}` series), or undefined when it has none. */
  sum(name: string): number | undefined {
    let total: number | undefined;
    for (const [series, value] of this.#series) {
      if (series === name || series.startsWith(`${name}{`)) total = (total ?? 0) + value;
    }
    return total;
  }
}

/** Scrapes `${base}/metrics` once. */
export async function scrapeMetrics(base: string, timeoutMs = 10_000): Promise<MetricsSnapshot> {
  const sent = performance.now();
  const response = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}: ${text.slice(0, 200)}`);
  const received = performance.now();
  return new MetricsSnapshot(text, (sent + received) / 2, received - sent);
}
