/**
 * `conduit-mcp/redis`: the Redis-backed stores. A separate entry so the root package
 * never loads ioredis, an optional peer dependency.
 *
 * @example
 * ```ts
 * import { RedisCancellationStore } from "conduit-mcp/redis";
 * const store = new RedisCancellationStore({ redis: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
 * ```
 */
export { KeyLayout, pairMember, ShardKeys } from "./key-layout.js";
export { OutageMonitor, type StoreOutageMessage } from "./outage-monitor.js";
export {
  RedisCancellationStore,
  type RedisCancellationStoreOptions,
} from "./redis-cancellation-store.js";
export { RedisSessionStore, type RedisSessionStoreOptions } from "./redis-session-store.js";
export { decodeRemoteMessage, encodeRemoteMessage, type RemoteMessage } from "./remote-message.js";
