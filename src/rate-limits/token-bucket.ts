/**
 * The token bucket arithmetic, once for every store (the Redis store's Lua script does the same
 * steps: src/redis/rate-limit-script.ts). A bucket is two numbers: tokens after the last take and
 * when that was.
 */
import type { AppliedRate } from "./types.js";

/**
 * Tokens in a bucket at `now`, given `tokens` at `at` (NaN: never used, so full).
 *
 * @example
 * ```ts
 * tokensAt({ key: "*", capacity: 10, refillPerSecond: 2 }, 4, 0, 1_000); // 6
 * ```
 */
export function tokensAt(rate: AppliedRate, tokens: number, at: number, now: number): number {
  if (Number.isNaN(tokens)) return rate.capacity;
  const elapsed = Math.max(0, now - at);
  return Math.min(rate.capacity, tokens + (elapsed * rate.refillPerSecond) / 1000);
}

/**
 * Ms until a bucket holding `tokens` holds one whole token again (0 when it does).
 *
 * @example
 * ```ts
 * waitFor({ key: "*", capacity: 10, refillPerSecond: 2 }, 0.5); // 250
 * ```
 */
export function waitFor(rate: AppliedRate, tokens: number): number {
  if (tokens >= 1) return 0;
  return Math.max(1, Math.ceil(((1 - tokens) * 1000) / rate.refillPerSecond));
}

/**
 * How long an untouched bucket takes to be full again: after that its state says nothing a
 * fresh bucket would not, so it may be forgotten (the memory store's idle sweep, Redis' TTL).
 *
 * @example
 * ```ts
 * fullAfterMs({ key: "*", capacity: 10, refillPerSecond: 2 }); // 5000
 * ```
 */
export function fullAfterMs(rate: AppliedRate): number {
  return Math.ceil((rate.capacity * 1000) / rate.refillPerSecond);
}
