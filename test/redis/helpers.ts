/**
 * Shared pieces of the Redis tests: a unique prefix per test, stores that are closed afterwards,
 * and a raw client for looking at the key space.
 */
import { randomUUID } from "node:crypto";

import { Redis } from "ioredis";

import {
  RedisCancellationStore,
  type RedisCancellationStoreOptions,
} from "../../src/redis/index.js";

/** Calls per command since the server started, from `INFO commandstats`. */
export async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  const text = await redis.info("commandstats");
  const calls = new Map<string, number>();
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    calls.set(m[1] as string, Number(m[2]));
  }
  return calls;
}

/** Commands run between two {@link commandCalls} snapshots, by name (the INFO calls left out). */
export function commandsBetween(
  a: Map<string, number>,
  b: Map<string, number>,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of b) {
    const d = v - (a.get(k) ?? 0);
    if (d > 0 && k !== "info") out.set(k, d);
  }
  return out;
}

/** A prefix no other test uses. */
export function freshPrefix(label = "t"): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

/** Creates stores and raw clients, and closes all of them at the end of a test. */
export class Fixture {
  readonly stores: RedisCancellationStore[] = [];
  readonly clients: Redis[] = [];

  constructor(readonly url: string) {}

  /** A store on this server (fresh prefix unless given), ready before it is returned. */
  async store(
    options: Partial<RedisCancellationStoreOptions> = {},
    waitReady = true,
  ): Promise<RedisCancellationStore> {
    const store = new RedisCancellationStore({
      redis: this.url,
      prefix: freshPrefix(),
      logger: () => {},
      ...options,
    });
    this.stores.push(store);
    if (waitReady && !(await store.ready(5_000))) throw new Error("store not ready within 5 s");
    return store;
  }

  /** A raw ioredis client (fails fast, so a test never hangs on a stopped server). */
  client(): Redis {
    const client = new Redis(this.url, { maxRetriesPerRequest: 1, enableOfflineQueue: true });
    client.on("error", () => {});
    this.clients.push(client);
    return client;
  }

  async close(): Promise<void> {
    await Promise.all(this.stores.map((store) => store.close()));
    for (const client of this.clients) client.disconnect();
  }
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
