/**
 * Contracts of per-tenant rate limits (docs/limits.md, "Rate limits"): token buckets kept per
 * bucket (a principal, else a client's IP bucket; never a session) by a {@link RateLimitStore}:
 * the memory store by default, or the Redis store (`conduit-mcp/redis`) shared across nodes.
 */

/**
 * A token bucket: it holds at most `capacity` tokens and gains `refillPerSecond` per second; a
 * request takes one, and is refused while the bucket is empty.
 */
export interface Rate {
  /** Most requests in a burst (the full bucket): an integer from 1 to 1 000 000. */
  readonly capacity: number;
  /** Tokens regained per second: a number > 0, at most 1 000 000 (0.5 = one every 2 s). */
  readonly refillPerSecond: number;
}

/**
 * A rate for every bucket, or one per scope kind: `principal` for authenticated callers, `ip` for
 * anonymous ones (one bucket per IPv4 address or IPv6 /64). A kind left out (or `false`) is not
 * limited by the rule.
 */
export type RateRule =
  | Rate
  | { readonly principal?: Rate | false | undefined; readonly ip?: Rate | false | undefined };

/** One bucket's rule as the store applies it: a key of its own and its rate. */
export interface AppliedRate {
  /** The rule's key within the bucket (`*`, `m:<method>` or `t:<tool>`), from the options. */
  readonly key: string;
  readonly capacity: number;
  readonly refillPerSecond: number;
}

/**
 * Where token buckets live. `take` applies every rate of one request at once: when each has a
 * token, one is taken from each and it answers 0; otherwise nothing is taken and it answers the
 * ms until every bucket that refused holds a token again (> 0). Implementations bound what they
 * keep per bucket (its rules, fixed by the options) and globally, and never reject: a store that
 * cannot answer decides locally.
 *
 * @example
 * ```ts
 * const wait = await store.take("ip:203.0.113.7", [{ key: "*", capacity: 10, refillPerSecond: 1 }]);
 * if (wait > 0) refuse(Math.ceil(wait / 1000));
 * ```
 */
export interface RateLimitStore {
  take(bucket: string, rates: readonly AppliedRate[]): number | Promise<number>;
  /** Releases timers and connections. Idempotent. */
  close(): Promise<void>;
}
