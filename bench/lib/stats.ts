/** Nearest-rank percentile of an ascending array (NaN when empty). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** n, p50, p90, p99 and max of `values` (rounded to 0.1). */
export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const r = (v: number) => Math.round(v * 10) / 10;
  return {
    n: sorted.length,
    p50: r(percentile(sorted, 50)),
    p90: r(percentile(sorted, 90)),
    p99: r(percentile(sorted, 99)),
    max: r(sorted[sorted.length - 1] ?? Number.NaN),
  };
}

/** Rounds to `digits` decimals. */
export const round = (value: number, digits = 1): number => Math.round(value * 10 ** digits) / 10 ** digits;
