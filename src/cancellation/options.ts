/**
 * Option checks shared by the store and the registry: a bad value fails at construction with an
 * {@link InvalidOptionError}, never mid-request (issue 2: "a bad option value is a clear error at
 * construction").
 */
import { InvalidOptionError } from "../errors.js";

/**
 * A row bound: a positive integer, or `Infinity` to disable it (the seed's `:infinity`).
 * `undefined` yields the default.
 *
 * @example
 * ```ts
 * rowLimit("maxRows", options.maxRows, 10_000);
 * ```
 */
export function rowLimit(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (value === Number.POSITIVE_INFINITY) return value;
  if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) return value;
  throw new InvalidOptionError(option, "a positive integer or Infinity", value);
}

/**
 * A duration in milliseconds: positive and finite. `undefined` yields the default.
 *
 * @example
 * ```ts
 * duration("ttlMs", options.ttlMs, 300_000);
 * ```
 */
export function duration(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return value;
  throw new InvalidOptionError(option, "a positive finite number of milliseconds", value);
}

/**
 * A clock: a function returning ms since the epoch. `undefined` yields `Date.now`.
 *
 * @example
 * ```ts
 * const now = clockOption("clock", options.clock);
 * ```
 */
export function clockOption(option: string, value: unknown): () => number {
  if (value === undefined) return Date.now;
  if (typeof value === "function") return value as () => number;
  throw new InvalidOptionError(option, "a function returning milliseconds", value);
}
