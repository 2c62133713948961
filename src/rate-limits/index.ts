/**
 * Per-tenant rate limits: token buckets per principal or IP bucket, per method and per tool
 * (docs/limits.md, "Rate limits").
 */
export {
  MemoryRateLimitStore,
  type MemoryRateLimitStoreOptions,
} from "./memory-rate-limit-store.js";
export { type RateLimitOptions, RateLimitPlan } from "./rate-limit-plan.js";
export { fullAfterMs, tokensAt, waitFor } from "./token-bucket.js";
export type { AppliedRate, Rate, RateLimitStore, RateRule } from "./types.js";
