/**
 * Small statistics helpers for the benchmarks.
 *
 * @example
 * ```ts
 * median([3, 1, 2]); // 2
 * ```
 */

/**
 * The median of a non-empty list (mean of the two middle values for an even count). Rounds of a
 * benchmark disagree through noise; the median resists one outlier round, the mean does not.
 *
 * @example
 * ```ts
 * median([10, 40, 20, 30]); // 25
 * ```
 */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError("median of an empty list");
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const upper = sorted[middle] as number;
  return sorted.length % 2 === 1 ? upper : ((sorted[middle - 1] as number) + upper) / 2;
}

/**
 * The median of the finite values of a list (undefined, NaN and infinities left out: a round that
 * measured nothing), or NaN when none is.
 *
 * @example
 * ```ts
 * finiteMedian([0.5, Number.NaN, 0.7, undefined]); // 0.6
 * finiteMedian([]); // NaN
 * ```
 */
export function finiteMedian(values: readonly (number | undefined)[]): number {
  const finite = values.filter((value): value is number => Number.isFinite(value));
  return finite.length === 0 ? Number.NaN : median(finite);
}

/**
 * The nearest-rank percentile `p` (0–100] of a non-empty list.
 *
 * @example
 * ```ts
 * percentile([1, 2, 3, 4], 50); // 2
 * ```
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new RangeError("percentile of an empty list");
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[
    Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  ] as number;
}
