// patchbay_http_request_duration_seconds: one observation per ARI request, so it is counted in
// place. prom-client's labelled observe() built a labels wrapper and a hash string per call and
// looked the series up by that string (≈ 0.5 µs, 3 % of a ping's CPU); here a request finds its
// series through three small maps (operation, method, status) and adds to a bucket array. The
// exposition is prom-client's own: this class only says what the series hold when scraped.
import { Histogram } from 'prom-client';

type Label = 'operation' | 'method' | 'status';

/**
 * A value as prom-client's histogram exports it: its own label (`le`, none for _sum and _count), the
 * series' labels as shared labels (get() merges the two for JSON).
 */
interface ExportedValue {
  readonly labels: { readonly le?: number | '+Inf' };
  readonly sharedLabels: Readonly<Record<Label, string>>;
  readonly value: number;
  readonly metricName: string;
  readonly exemplar: null;
}

/** What prom-client's registry reads of a metric (its typings give `type` as a numeric enum; the code writes the name). */
interface ExportedHistogram {
  readonly name: string;
  readonly help: string;
  readonly type: 'histogram';
  readonly aggregator: 'sum';
  readonly values: ExportedValue[];
}

/** One labelled series: observations per bucket (not cumulative), their sum and count. */
interface Series {
  readonly labels: Readonly<Record<Label, string>>;
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

export class RequestHistogram extends Histogram<Label> {
  /** Set after the base constructor, which calls reset() before any field of this class exists. */
  private byOperation: Map<string, Map<string, Map<number, Series>>> | undefined;
  private readonly bounds: readonly number[];
  private readonly metricName: string;
  private readonly helpText: string;
  /**
   * The series of the last request, with its labels: clients repeat one operation (a poller's ping, a
   * burst of the same call), and its operation and method are the same string objects each time (the
   * route's name, Node.js's method constants), so the three map probes become three comparisons.
   */
  private lastOperation = '';
  private lastMethod = '';
  private lastStatus = 0;
  private lastSeries: Series | undefined;

  constructor(name: string, help: string, buckets: readonly number[], registers: NonNullable<ConstructorParameters<typeof Histogram>[0]['registers']>) {
    super({ name, help, labelNames: ['operation', 'method', 'status'], buckets: [...buckets], registers });
    this.metricName = name;
    this.helpText = help;
    this.bounds = [...buckets].sort((a, b) => a - b);
    this.byOperation = new Map();
  }

  /**
   * One request answered. The series are bounded by what can be asked: operations are declared,
   * Node.js parses only the methods it knows, and the statuses are the server's.
   */
  observeRequest(operation: string, method: string, status: number, seconds: number): void {
    if (!Number.isFinite(seconds)) return;
    const last = this.lastSeries;
    const series = last !== undefined && this.lastOperation === operation && this.lastMethod === method && this.lastStatus === status ? last : this.seriesOf(operation, method, status);
    const bounds = this.bounds;
    let bucket = 0;
    while (bucket < bounds.length && seconds > bounds[bucket]!) bucket++;
    // Past the last bound: counted in +Inf only (the count), as prom-client does.
    if (bucket < bounds.length) series.counts[bucket]! += 1;
    series.sum += seconds;
    series.count += 1;
  }

  private seriesOf(operation: string, method: string, status: number): Series {
    const byOperation = (this.byOperation ??= new Map());
    let byMethod = byOperation.get(operation);
    if (!byMethod) byOperation.set(operation, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      series = { labels: { operation, method, status: String(status) }, counts: new Float64Array(this.bounds.length), sum: 0, count: 0 };
      byStatus.set(status, series);
    }
    // Fields, not an object: alternating operations would make one per request.
    this.lastOperation = operation;
    this.lastMethod = method;
    this.lastStatus = status;
    this.lastSeries = series;
    return series;
  }

  override reset(): void {
    super.reset();
    this.byOperation?.clear();
    // Its series is no longer counted (the constructor's reset() runs before this field exists).
    if (this.byOperation !== undefined) this.lastSeries = undefined;
  }

  /** What the registry renders (and get() reshapes for JSON): the series counted here, as prom-client lays them out. */
  async getForPromString(): Promise<ExportedHistogram> {
    const values: ExportedValue[] = [];
    const bucketName = `${this.metricName}_bucket`;
    for (const byMethod of this.byOperation?.values() ?? []) {
      for (const byStatus of byMethod.values()) {
        for (const series of byStatus.values()) {
          let cumulative = 0;
          for (let i = 0; i < this.bounds.length; i++) {
            cumulative += series.counts[i]!;
            values.push({ labels: { le: this.bounds[i]! }, sharedLabels: series.labels, value: cumulative, metricName: bucketName, exemplar: null });
          }
          values.push({ labels: { le: '+Inf' }, sharedLabels: series.labels, value: series.count, metricName: bucketName, exemplar: null });
          values.push({ labels: {}, sharedLabels: series.labels, value: series.sum, metricName: `${this.metricName}_sum`, exemplar: null });
          values.push({ labels: {}, sharedLabels: series.labels, value: series.count, metricName: `${this.metricName}_count`, exemplar: null });
        }
      }
    }
    return { name: this.metricName, help: this.helpText, type: 'histogram', values, aggregator: 'sum' };
  }
}
