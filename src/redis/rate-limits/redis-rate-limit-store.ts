/**
 * Rate limits shared by every node on one Redis (docs/limits.md, "Across nodes"): each rule of a
 * bucket is one Redis hash (`t` tokens, `a` when they were counted), read and written by one Lua
 * script, so the check and the take of every rate of a request are atomic across nodes. The clock
 * is Redis' own (`TIME`), so nodes whose clocks disagree still share one budget. A key expires
 * once its bucket would be full again (`PEXPIRE`): an idle tenant costs Redis nothing.
 *
 * Keys: `<prefix>:rl:{<digest>}:<rule>`, where `<digest>` is 132 bits of SHA-256 over the bucket
 * (a principal id may hold any character and be long; the hash tag keeps every rule of a bucket in
 * one Redis Cluster slot) and `<rule>` is `*`, `m:<method>` or `t:<tool>`, names from the options.
 *
 * Fail-open, like the cancellation store: while Redis cannot answer within `commandTimeoutMs`,
 * this node decides alone with its own memory buckets (each node then allows up to the full rate
 * by itself), and the outage is reported once.
 */
import { createHash } from "node:crypto";

import type { Cluster, Redis } from "ioredis";

import {
  type AppliedRate,
  fullAfterMs,
  MemoryRateLimitStore,
  type RateLimitStore,
} from "../../rate-limits/index.js";
import type { Reachability } from "../../reachability.js";
import { bounded } from "../connection/bounded.js";
import { type RedisClient, RedisConnection } from "../connection/connection.js";
import { OutageMonitor } from "../connection/outage-monitor.js";
import { readRateLimitStoreOptions } from "../redis-option-declarations.js";
import { defineRateLimitScript, type RateLimitScript } from "./rate-limit-script.js";

/** Options of {@link RedisRateLimitStore}. */
export interface RedisRateLimitStoreOptions {
  /**
   * A Redis URL (owned, fail-fast connection) or an ioredis `Redis` / `Cluster` you own (one
   * created with `lazyConnect` is connected by the store).
   */
  readonly redis: Redis | Cluster | string;
  /** Key prefix; no braces. Default `"conduit-mcp"`. */
  readonly prefix?: string;
  /** Upper bound on one check; beyond it this node decides alone. Default 250 ms. */
  readonly commandTimeoutMs?: number;
  /** Most buckets the local fallback keeps during an outage. Default 100 000. */
  readonly maxBuckets?: number;
  /** Receives one line per outage. Default `console.warn`. */
  readonly logger?: (message: string) => void;
}

/**
 * Token buckets in Redis, one budget for every node.
 *
 * @example
 * ```ts
 * import { RedisRateLimitStore } from "conduit-mcp/redis";
 * const store = new RedisRateLimitStore({ redis: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
 * const server = createMcpServer({ rateLimits: { perScope: { capacity: 60, refillPerSecond: 1 }, store } });
 * ```
 */
export class RedisRateLimitStore implements RateLimitStore {
  /** Whether Redis is reachable, from the command connection's events (`GET /ready`). */
  readonly reachability: Reachability;
  private readonly connection: RedisConnection;
  private readonly client: RedisClient & RateLimitScript;
  private readonly prefix: string;
  private readonly timeoutMs: number;
  private readonly monitor: OutageMonitor;
  private readonly local: MemoryRateLimitStore;
  private closed = false;

  constructor(options: RedisRateLimitStoreOptions) {
    const read = readRateLimitStoreOptions(options);
    this.prefix = read.prefix;
    this.timeoutMs = read.commandTimeoutMs;
    this.local = new MemoryRateLimitStore({ maxBuckets: read.maxBuckets });
    this.monitor = new OutageMonitor(read.logger, "rates");
    this.connection = new RedisConnection({
      redis: read.redis,
      timeoutMs: this.timeoutMs,
      monitor: this.monitor,
    });
    this.client = this.connection.client as RedisClient & RateLimitScript;
    this.reachability = this.connection.reachability;
    defineRateLimitScript(this.client);
    this.connection.on("ready", () => this.monitor.up());
    this.connection.connect();
  }

  take(bucket: string, rates: readonly AppliedRate[]): number | Promise<number> {
    if (this.closed || this.client.status !== "ready") return this.local.take(bucket, rates);
    const tag = createHash("sha256").update(bucket).digest("base64url").slice(0, 22);
    const args: (string | number)[] = [rates.length];
    for (const rate of rates) args.push(`${this.prefix}:rl:{${tag}}:${rate.key}`);
    for (const rate of rates) {
      // Expires a little after the bucket would be full again: nothing is lost by forgetting it.
      args.push(rate.capacity, rate.refillPerSecond, fullAfterMs(rate) + 1_000);
    }
    return bounded(this.client.conduitMcpRateTakeV1(...args), this.timeoutMs).then(
      (wait) => Number(wait),
      (error: unknown) => {
        this.monitor.down(error);
        return this.local.take(bucket, rates);
      },
    );
  }

  /** Resolves true once the connection is ready; false after `timeoutMs`. */
  async ready(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.client.status !== "ready" && !this.closed && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.client.status === "ready" && !this.closed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.local.close();
    await this.connection.close();
  }
}
