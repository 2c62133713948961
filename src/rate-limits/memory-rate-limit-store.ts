/**
 * Token buckets in this process's memory: the default {@link RateLimitStore}, and the Redis
 * store's fallback while Redis cannot answer. One entry per bucket (principal or IP bucket),
 * holding one state per rule the options define (so a bucket's size is bounded by the options,
 * never by the network); at most `maxBuckets` entries, the least recently used evicted first, and
 * entries idle long enough to be full again dropped as new ones arrive.
 */
import { OPTION, readOption } from "../option-schema.js";
import { fullAfterMs, tokensAt, waitFor } from "./token-bucket.js";
import type { AppliedRate, RateLimitStore } from "./types.js";

/** Options of {@link MemoryRateLimitStore}. */
export interface MemoryRateLimitStoreOptions {
  /** Most buckets (tenants) kept; the least recently used is forgotten beyond. Default 100 000. */
  readonly maxBuckets?: number;
  /** Time source in ms (monotonic). Default `performance.now`. */
  readonly clock?: () => number;
}

/** One rule's state: tokens after the last take, and when. */
interface RuleState {
  tokens: number;
  at: number;
}

/** One bucket: its rules' states and when it was last used. */
interface BucketEntry {
  readonly rules: Map<string, RuleState>;
  usedAt: number;
  /** The longest time any of its rules takes to refill: idle that long, it is full. */
  fullAfter: number;
}

/** Entries looked at for idleness per new bucket: amortised O(1), drains idle ones over time. */
const IDLE_CHECKS = 2;

/**
 * The memory rate-limit store.
 *
 * @example
 * ```ts
 * const store = new MemoryRateLimitStore({ maxBuckets: 10_000 });
 * store.take("ip:203.0.113.7", [{ key: "*", capacity: 2, refillPerSecond: 1 }]); // 0
 * ```
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly buckets = new Map<string, BucketEntry>();
  private readonly maxBuckets: number;
  private readonly clock: () => number;

  constructor(options: MemoryRateLimitStoreOptions = {}) {
    this.maxBuckets = readOption(OPTION.positiveInteger, "maxBuckets", options.maxBuckets, 100_000);
    this.clock = readOption(OPTION.clock, "clock", options.clock, () => performance.now());
  }

  /** Buckets held now. */
  get size(): number {
    return this.buckets.size;
  }

  take(bucket: string, rates: readonly AppliedRate[]): number {
    const now = this.clock();
    let entry = this.buckets.get(bucket);
    if (entry === undefined) {
      this.makeRoom(now);
      entry = { rules: new Map(), usedAt: now, fullAfter: 0 };
    } else {
      // Moved to the end: the map's order is least recently used first.
      this.buckets.delete(bucket);
    }
    this.buckets.set(bucket, entry);
    entry.usedAt = now;
    let wait = 0;
    for (const rate of rates) {
      const state = entry.rules.get(rate.key);
      const tokens = state === undefined ? Number.NaN : state.tokens;
      wait = Math.max(wait, waitFor(rate, tokensAt(rate, tokens, state?.at ?? now, now)));
    }
    if (wait > 0) return wait;
    for (const rate of rates) {
      const state = entry.rules.get(rate.key);
      const tokens = tokensAt(rate, state?.tokens ?? Number.NaN, state?.at ?? now, now) - 1;
      if (state === undefined) {
        entry.rules.set(rate.key, { tokens, at: now });
        entry.fullAfter = Math.max(entry.fullAfter, fullAfterMs(rate));
      } else {
        state.tokens = tokens;
        state.at = now;
      }
    }
    return 0;
  }

  close(): Promise<void> {
    this.buckets.clear();
    return Promise.resolve();
  }

  /** Drops the oldest entries that are idle long enough to be full, then one more at the cap. */
  private makeRoom(now: number): void {
    const { buckets } = this;
    let checked = 0;
    for (const [bucket, entry] of buckets) {
      if (checked++ >= IDLE_CHECKS || now - entry.usedAt < entry.fullAfter) break;
      buckets.delete(bucket);
    }
    if (buckets.size < this.maxBuckets) return;
    // At the cap: the least recently used bucket is forgotten (it starts full if it comes back,
    // so eviction can only ever give a tenant more room, never take it from one).
    const oldest = buckets.keys().next();
    if (oldest.done !== true) buckets.delete(oldest.value);
  }
}
