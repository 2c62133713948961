/**
 * A Prometheus histogram with fixed buckets, one series per label value known up front
 * (https://prometheus.io/docs/concepts/metric_types/#histogram). An observation is a bucket
 * search over a dozen numbers and three increments in place: no allocation, no label text built
 * per call. Counts are kept per bucket and made cumulative only when rendered.
 */

/** Upper bounds in seconds: 1 ms to 30 s, enough for a handler and for a long SSE answer. */
export const DURATION_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/** One label value's buckets (the last one is `+Inf`), sum and count. */
interface Series {
  readonly counts: Float64Array;
  /** `name_bucket{label="value",le="` — the text before each bound, built once. */
  readonly prefix: string;
  readonly labels: string;
  sum: number;
  count: number;
}

/**
 * @example
 * ```ts
 * const h = new Histogram("conduit_mcp_handler_duration_seconds", "Handler time.", "method", ["tools/call"]);
 * h.observe("tools/call", 0.012);
 * h.render(lines);
 * ```
 */
export class Histogram {
  private readonly name: string;
  private readonly help: string;
  private readonly series = new Map<string, Series>();

  constructor(name: string, help: string, label: string, values: readonly string[]) {
    this.name = name;
    this.help = help;
    for (const value of values) {
      const labels = `${label}="${escapeLabel(value)}"`;
      this.series.set(value, {
        counts: new Float64Array(DURATION_BUCKETS.length + 1),
        prefix: `${name}_bucket{${labels},le="`,
        labels,
        sum: 0,
        count: 0,
      });
    }
  }

  /** Counts `seconds` under `value`; a value not given to the constructor is ignored. */
  observe(value: string, seconds: number): void {
    const series = this.series.get(value);
    if (series === undefined) return;
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > (DURATION_BUCKETS[i] as number)) i++;
    series.counts[i] = (series.counts[i] as number) + 1;
    series.sum += seconds;
    series.count++;
  }

  /** Appends the HELP, TYPE and every series' lines to `lines`. */
  render(lines: string[]): void {
    lines.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`);
    for (const series of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i < DURATION_BUCKETS.length; i++) {
        cumulative += series.counts[i] as number;
        lines.push(`${series.prefix}${DURATION_BUCKETS[i]}"} ${cumulative}`);
      }
      lines.push(
        `${series.prefix}+Inf"} ${series.count}`,
        `${this.name}_sum{${series.labels}} ${series.sum}`,
        `${this.name}_count{${series.labels}} ${series.count}`,
      );
    }
  }
}

/** Prometheus label escaping: backslash, double quote, newline. */
export function escapeLabel(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`));
}
