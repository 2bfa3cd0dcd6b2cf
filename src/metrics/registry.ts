/**
 * A tiny Prometheus text-format (0.0.4) registry: counters, gauges and histograms with labels.
 * prom-client is not a dependency; this covers what reelflow exports and nothing more.
 */

/** Label values of one series, by label name. */
export type Labels = Record<string, string>;

/** Content type of the Prometheus text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Escapes a label value as the text format requires (backslash, quote, newline). */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function formatLabels(labels: Labels): string {
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return '';
  return `{${keys.map((k) => `${k}="${escapeLabel(labels[k] ?? '')}"`).join(',')}}`;
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

interface MetricBase {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  render(): string[];
}

/** Validates label names against the declared ones, so a typo cannot create a stray series. */
function keyOf(declared: readonly string[], labels: Labels): string {
  const given = Object.keys(labels);
  for (const name of given) {
    if (!declared.includes(name)) throw new Error(`metric label ${name} is not declared (declared: ${declared.join(', ') || 'none'})`);
  }
  return formatLabels(Object.fromEntries(declared.map((name) => [name, labels[name] ?? ''])));
}

/** A monotonically increasing count. */
export class Counter implements MetricBase {
  readonly type = 'counter' as const;
  private readonly series = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[] = [],
  ) {}

  /** Adds `value` (default 1, never negative) to the series of `labels`. */
  inc(labels: Labels = {}, value = 1): void {
    if (!(value >= 0)) throw new Error(`counter ${this.name}: increment must be >= 0, got ${value}`);
    const key = keyOf(this.labelNames, labels);
    this.series.set(key, (this.series.get(key) ?? 0) + value);
  }

  /** Current value of one series (0 when never incremented). */
  get(labels: Labels = {}): number {
    return this.series.get(keyOf(this.labelNames, labels)) ?? 0;
  }

  render(): string[] {
    return [...this.series].map(([labels, value]) => `${this.name}${labels} ${formatValue(value)}`);
  }
}

/** A value that goes up and down. */
export class Gauge implements MetricBase {
  readonly type = 'gauge' as const;
  private readonly series = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[] = [],
  ) {}

  set(labels: Labels, value: number): void {
    this.series.set(keyOf(this.labelNames, labels), value);
  }

  inc(labels: Labels = {}, value = 1): void {
    const key = keyOf(this.labelNames, labels);
    this.series.set(key, (this.series.get(key) ?? 0) + value);
  }

  dec(labels: Labels = {}, value = 1): void {
    this.inc(labels, -value);
  }

  get(labels: Labels = {}): number {
    return this.series.get(keyOf(this.labelNames, labels)) ?? 0;
  }

  render(): string[] {
    return [...this.series].map(([labels, value]) => `${this.name}${labels} ${formatValue(value)}`);
  }
}

/** Default buckets in seconds: 5 ms to 10 s, for request and signal latencies. */
export const DEFAULT_SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface HistogramSeries {
  labels: Labels;
  counts: number[];
  sum: number;
  count: number;
}

/** Observations counted into cumulative buckets, with `_sum` and `_count`. */
export class Histogram implements MetricBase {
  readonly type = 'histogram' as const;
  private readonly series = new Map<string, HistogramSeries>();
  readonly buckets: readonly number[];
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[] = [],
    buckets: readonly number[] = DEFAULT_SECONDS_BUCKETS,
  ) {
    if (labelNames.includes('le')) throw new Error(`histogram ${name}: 'le' is reserved`);
    this.buckets = [...buckets].sort((a, b) => a - b);
  }

  observe(labels: Labels, value: number): void {
    const key = keyOf(this.labelNames, labels);
    let series = this.series.get(key);
    if (!series) {
      series = { labels: Object.fromEntries(this.labelNames.map((n) => [n, labels[n] ?? ''])), counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, series);
    }
    this.buckets.forEach((bound, i) => {
      if (value <= bound) series.counts[i] = (series.counts[i] ?? 0) + 1;
    });
    series.sum += value;
    series.count += 1;
  }

  /** Number of observations of one series. */
  count(labels: Labels = {}): number {
    return this.series.get(keyOf(this.labelNames, labels))?.count ?? 0;
  }

  render(): string[] {
    const lines: string[] = [];
    for (const [labels, series] of this.series) {
      this.buckets.forEach((bound, i) => {
        lines.push(`${this.name}_bucket${formatLabels({ ...series.labels, le: formatValue(bound) })} ${series.counts[i] ?? 0}`);
      });
      lines.push(`${this.name}_bucket${formatLabels({ ...series.labels, le: '+Inf' })} ${series.count}`);
      lines.push(`${this.name}_sum${labels} ${formatValue(series.sum)}`);
      lines.push(`${this.name}_count${labels} ${series.count}`);
    }
    return lines;
  }
}

/** A set of metrics rendered together on one /metrics endpoint. */
export class Registry {
  private readonly metrics = new Map<string, MetricBase>();

  private add<T extends MetricBase>(metric: T, labelNames: readonly string[]): T {
    if (!NAME.test(metric.name)) throw new Error(`invalid metric name ${metric.name}`);
    for (const label of labelNames) if (!LABEL.test(label) || label.startsWith('__')) throw new Error(`invalid label name ${label} on ${metric.name}`);
    const existing = this.metrics.get(metric.name);
    // Same name twice returns the first, so modules that declare a metric may be loaded more than once.
    if (existing) {
      if (existing.type !== metric.type) throw new Error(`metric ${metric.name} already registered as a ${existing.type}`);
      return existing as T;
    }
    this.metrics.set(metric.name, metric);
    return metric;
  }

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, labelNames), labelNames);
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.add(new Gauge(name, help, labelNames), labelNames);
  }

  histogram(name: string, help: string, labelNames: readonly string[] = [], buckets?: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, labelNames, buckets), labelNames);
  }

  /** The whole registry in the Prometheus text format. */
  render(): string {
    const out: string[] = [];
    for (const metric of this.metrics.values()) {
      out.push(`# HELP ${metric.name} ${metric.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
      out.push(`# TYPE ${metric.name} ${metric.type}`);
      out.push(...metric.render());
    }
    return `${out.join('\n')}\n`;
  }
}
