/**
 * `conduit-mcp/redis`: the Redis-backed stores. A separate entry so the root package
 * never loads ioredis, an optional peer dependency.
 *
 * @example
 * ```ts
 * import { createRedisBackends } from "conduit-mcp/redis";
 * const redis = createRedisBackends(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
 * const server = createMcpServer({ tools, ...redis.serverOptions });
 * ```
 */

// The store contracts these classes implement, and the registry createRedisBackends builds, so
// that `conduit-mcp/redis` alone types them.
export type {
  CancellationRegistry,
  CancellationRegistryOptions,
  CancellationRow,
  CancellationStore,
  CancelResult,
  CleanupResult,
  HandleLifetime,
  RecordOutcome,
  RemoteCancellation,
  RequestHandle,
  TrackOptions,
} from "../cancellation/index.js";
export type { ChangedList, ChangeEvent, ChangeFeed } from "../changes/index.js";
export type {
  CancellationSource,
  ConduitError,
  ConduitErrorCode,
  RequestCancelledError,
} from "../errors.js";
export type { AppliedRate, RateLimitStore } from "../rate-limits/index.js";
export type { Reachability } from "../reachability.js";
export type { ClientReply, ServerReplyBus } from "../replies/index.js";
export type { SessionCreateOutcome, SessionRecord, SessionStore } from "../sessions/index.js";
export type {
  CancelTaskOutcome,
  CreateTaskOutcome,
  EvictedTask,
  FinishTaskOutcome,
  ListTasksOptions,
  NewTask,
  TaskChange,
  TaskOutcome,
  TaskPage,
  TaskRecord,
  TaskStatus,
  TaskStore,
  TaskSweepResult,
  TaskUpdate,
  TerminalTaskStatus,
} from "../tasks/index.js";
export {
  RedisCancellationStore,
  type RedisCancellationStoreOptions,
} from "./cancellation/redis-cancellation-store.js";
export type { OutagePart, StoreOutageMessage } from "./connection/outage-monitor.js";
export {
  RedisRateLimitStore,
  type RedisRateLimitStoreOptions,
} from "./rate-limits/redis-rate-limit-store.js";
export {
  createRedisBackends,
  type RedisBackends,
  type RedisBackendsOptions,
  type RedisBackendsSharedOption,
  type RedisServerOptions,
} from "./redis-backends.js";
export { RedisChangeFeed, type RedisChangeFeedOptions } from "./redis-change-feed.js";
export { RedisReplyBus, type RedisReplyBusOptions } from "./redis-reply-bus.js";
export {
  RedisSessionStore,
  type RedisSessionStoreOptions,
} from "./sessions/redis-session-store.js";
export { RedisTaskStore, type RedisTaskStoreOptions } from "./tasks/redis-task-store.js";
