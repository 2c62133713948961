/**
 * The one way options are checked: every option kind is a zod schema with the phrase that says
 * what it expects, and {@link readOption} turns a refused value into an {@link InvalidOptionError}
 * at construction, so a misconfiguration fails at start-up and never mid-request.
 *
 * Timers: Node.js stores a delay in a signed 32-bit integer; a larger one is replaced by 1 ms with
 * a TimeoutOverflowWarning (https://nodejs.org/docs/latest-v20.x/api/timers.html#settimeoutcallback-delay-args).
 * A huge interval would then fire every millisecond, so every option that becomes a timer delay is
 * refused above {@link MAX_TIMER_MS}.
 */
import { z } from "zod";

import { InvalidOptionError } from "./errors.js";

/** The largest delay a Node.js timer honours: 2^31 − 1 ms (about 24.8 days). */
export const MAX_TIMER_MS = 2_147_483_647;

/** A schema and the phrase an error message uses for it ("option x must be <expected>"). */
export interface OptionKind<T> {
  readonly schema: z.ZodType<T>;
  readonly expected: string;
}

/**
 * An option kind from a schema and the phrase that describes it.
 *
 * @example
 * ```ts
 * const port = optionKind(z.number().int().min(0).max(65_535), "a port number");
 * ```
 */
export function optionKind<T>(schema: z.ZodType<T>, expected: string): OptionKind<T> {
  return { schema, expected };
}

const kind = optionKind;

const safeInteger = z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);
const infinity = z.literal(Number.POSITIVE_INFINITY);

/** The option kinds used across the package. */
export const OPTION = Object.freeze({
  positiveInteger: kind(safeInteger.min(1), "a positive integer"),
  nonNegativeInteger: kind(safeInteger.min(0), "a non-negative integer"),
  /** A bound that `Infinity` switches off. */
  positiveLimit: kind(z.union([safeInteger.min(1), infinity]), "a positive integer or Infinity"),
  nonNegativeLimit: kind(
    z.union([safeInteger.min(0), infinity]),
    "a non-negative integer or Infinity",
  ),
  /** A timer delay that must be on. */
  timerMs: kind(safeInteger.min(1).max(MAX_TIMER_MS), `an integer from 1 to ${MAX_TIMER_MS} (ms)`),
  /** A timer delay where 0 switches the timer off. */
  timerOrZeroMs: kind(
    safeInteger.min(0).max(MAX_TIMER_MS),
    `an integer from 0 to ${MAX_TIMER_MS} (ms)`,
  ),
  /** A timer delay; fractions allowed, as setTimeout takes them. */
  intervalMs: kind(
    z.number().gt(0).max(MAX_TIMER_MS),
    `a positive number of milliseconds up to ${MAX_TIMER_MS}`,
  ),
  /** A duration compared with a clock, never handed to a timer (so no timer limit). */
  durationMs: kind(z.number().gt(0).finite(), "a positive finite number of milliseconds"),
  boolean: kind(z.boolean(), "a boolean"),
  /** A short display string such as `serverInfo.name`. */
  label: kind(z.string().min(1).max(200), "a string of 1-200 characters"),
  logger: kind(
    z.custom<(message: string) => void>((value) => typeof value === "function"),
    "a function",
  ),
  clock: kind(
    z.custom<() => number>((value) => typeof value === "function"),
    "a function returning milliseconds",
  ),
});

/**
 * Integers from `min` to `max`; give `max` = {@link MAX_TIMER_MS} for a timer delay.
 *
 * @example
 * ```ts
 * readOption(integerBetween(1, 1_024), "shards", options.shards, 1);
 * ```
 */
export function integerBetween(min: number, max = Number.MAX_SAFE_INTEGER): OptionKind<number> {
  const expected =
    max === Number.MAX_SAFE_INTEGER ? `an integer ≥ ${min}` : `an integer from ${min} to ${max}`;
  return kind(safeInteger.min(min).max(max), expected);
}

/**
 * `value` checked against `option`'s kind, or `fallback` when it is `undefined`.
 *
 * @throws InvalidOptionError naming `name` when the value is refused.
 * @example
 * ```ts
 * readOption(OPTION.timerMs, "keepAliveTimeoutMs", options.keepAliveTimeoutMs, 65_000);
 * ```
 */
export function readOption<T, F = T>(
  option: OptionKind<T>,
  name: string,
  value: unknown,
  fallback: F,
): T | F {
  if (value === undefined) return fallback;
  const parsed = option.schema.safeParse(value);
  if (!parsed.success) throw new InvalidOptionError(name, option.expected, value);
  return parsed.data;
}
