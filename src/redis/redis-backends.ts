/**
 * One call for a multi-node server: every shared store on one Redis (cancellation, sessions, the
 * reply bus, the change feed, tasks) under one node name and one lease, a registry whose janitor
 * sweeps dead nodes' entries once per lease, the options to hand to `createMcpServer`, and one
 * `close()`. What `conduit-mcp serve --redis` runs; docs/redis.md.
 */
import type { Cluster, Redis } from "ioredis";

import { CancellationRegistry, type CancellationRegistryOptions } from "../cancellation/index.js";
import {
  RedisCancellationStore,
  type RedisCancellationStoreOptions,
} from "./cancellation/redis-cancellation-store.js";
import { RedisChangeFeed, type RedisChangeFeedOptions } from "./redis-change-feed.js";
import { readBackendsOptions } from "./redis-option-declarations.js";
import { RedisReplyBus, type RedisReplyBusOptions } from "./redis-reply-bus.js";
import {
  RedisSessionStore,
  type RedisSessionStoreOptions,
} from "./sessions/redis-session-store.js";
import { RedisTaskStore, type RedisTaskStoreOptions } from "./tasks/redis-task-store.js";

/** The options every store takes from {@link RedisBackendsOptions} itself, not from its own. */
export type RedisBackendsSharedOption =
  | "redis"
  | "prefix"
  | "nodeId"
  | "leaseMs"
  | "commandTimeoutMs"
  | "logger";

/** Options of {@link createRedisBackends}; every one has a default. */
export interface RedisBackendsOptions {
  /** This node's name in both leases (cancellation, tasks). Default `<host>-<pid>-<random>`. */
  readonly nodeId?: string;
  /** Part of every key's hash tag and of every channel name; no braces. Default `"conduit-mcp"`. */
  readonly prefix?: string;
  /**
   * This node's lease (cancellation and tasks), renewed every third of it; also how often the
   * registry's janitor and the task sweep run, so a dead node's entries and running tasks are
   * dealt with within about two leases. Default 15 000 ms.
   */
  readonly leaseMs?: number;
  /** Longest wait for one Redis call before it counts as an outage. Default 1 000 ms. */
  readonly commandTimeoutMs?: number;
  /** Receives the one line per outage of each store. Default `console.warn`. */
  readonly logger?: (message: string) => void;
  /** The cancellation store's own options (`maxRows`, `maxRowsPerScope`, `shareAfterMs`, …). */
  readonly cancellation?: Omit<RedisCancellationStoreOptions, RedisBackendsSharedOption>;
  /** The registry's options (`ttlMs`, …); its janitor runs at least once per lease. */
  readonly registry?: Omit<CancellationRegistryOptions, "store">;
  /**
   * The session store's options, or `false` for no session store (a stateless server, the
   * library's default). Default: a session store with its defaults.
   */
  readonly sessions?: Omit<RedisSessionStoreOptions, RedisBackendsSharedOption> | false;
  /** The reply bus's options (`maxMessageBytes`). */
  readonly replies?: Omit<RedisReplyBusOptions, RedisBackendsSharedOption>;
  /** The change feed's options. */
  readonly changes?: Omit<RedisChangeFeedOptions, RedisBackendsSharedOption>;
  /** The task store's options (`maxTasks`, `maxTasksPerScope`, `maxResultBytes`, …). */
  readonly tasks?: Omit<RedisTaskStoreOptions, RedisBackendsSharedOption>;
}

/**
 * The `createMcpServer` options that put a server on the shared stores:
 * `createMcpServer({ tools, ...backends.serverOptions })`.
 */
export interface RedisServerOptions {
  /** The registry on the shared cancellation store. */
  readonly registry: CancellationRegistry;
  /** The shared session store; absent with `sessions: false`. */
  readonly sessions?: { readonly store: RedisSessionStore };
  /** The reply bus: a client's answer reaching another node goes to the node that asked. */
  readonly serverRequests: { readonly bus: RedisReplyBus };
  /** Carries list changes and resource updates to every node's listeners. */
  readonly changeFeed: RedisChangeFeed;
  /** The shared task store, swept once per lease. */
  readonly tasks: { readonly store: RedisTaskStore; readonly sweepIntervalMs: number };
}

/** Every shared store of one node, from {@link createRedisBackends}. */
export interface RedisBackends {
  /** This node's name in both leases. */
  readonly nodeId: string;
  /** A registry on {@link RedisBackends.cancellationStore}; closed by {@link RedisBackends.close}. */
  readonly registry: CancellationRegistry;
  /** Cancellation rows, in-flight entries and cross-node cancels. */
  readonly cancellationStore: RedisCancellationStore;
  /** Sessions of every node; undefined with `sessions: false`. */
  readonly sessionStore: RedisSessionStore | undefined;
  /** Clients' answers to 2025-era asks, carried to the node that asked. */
  readonly replyBus: RedisReplyBus;
  /** List changes and resource updates for every node's listeners. */
  readonly changeFeed: RedisChangeFeed;
  /** Tasks of every node, under this node's task lease. */
  readonly taskStore: RedisTaskStore;
  /** Spread into `createMcpServer` options. */
  readonly serverOptions: RedisServerOptions;
  /**
   * Resolves true once every store has reached Redis, false after `timeoutMs` (default 5 000).
   * Optional: the stores serve meanwhile (fail-open, except tasks, which fail closed).
   */
  ready(timeoutMs?: number): Promise<boolean>;
  /**
   * Closes the registry, then every store (this node's lease and in-flight entries go; a
   * connection made from a URL is quit, an ioredis client passed in stays open). Close the server
   * first, so its calls end and untrack.
   */
  close(): Promise<void>;
}

/** The memory registry's janitor period; the Redis janitor never runs less often. */
const MAX_JANITOR_INTERVAL_MS = 60_000;

/**
 * Builds every shared store of a node on one Redis: `redis` is a URL (each store owns a
 * fail-fast connection) or your ioredis `Redis` / `Cluster` (shared by every store, left open).
 *
 * @example
 * ```ts
 * import { createMcpServer } from "conduit-mcp";
 * import { createRedisBackends } from "conduit-mcp/redis";
 *
 * const redis = createRedisBackends(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
 * const server = createMcpServer({ tools, ...redis.serverOptions, cursorSecret, inputRequired: { keys } });
 * await server.listen({ port: 3000 });
 * process.on("SIGTERM", async () => {
 *   await server.close();
 *   await redis.close();
 * });
 * ```
 */
export function createRedisBackends(
  redis: string | Redis | Cluster,
  options: RedisBackendsOptions = {},
): RedisBackends {
  const read = readBackendsOptions(options);
  const leaseMs = read.leaseMs;
  const common = {
    redis,
    prefix: read.prefix,
    commandTimeoutMs: read.commandTimeoutMs,
    logger: read.logger,
  };
  const cancellationStore = new RedisCancellationStore({
    ...options.cancellation,
    ...common,
    leaseMs,
    nodeId: read.nodeId,
  });
  const built: Array<{ close(): Promise<void> }> = [cancellationStore];
  try {
    const nodeId = cancellationStore.nodeId;
    // The janitor is what removes the entries of nodes whose lease expired (the dead-process
    // sweep across machines), so it runs once per lease, and at least once per row TTL.
    const ttlMs = options.registry?.ttlMs;
    const registry = new CancellationRegistry({
      janitorIntervalMs: Math.min(leaseMs, ttlMs ?? leaseMs, MAX_JANITOR_INTERVAL_MS),
      ...options.registry,
      store: cancellationStore,
    });
    const sessionStore =
      options.sessions === false
        ? undefined
        : new RedisSessionStore({ ...options.sessions, ...common });
    if (sessionStore !== undefined) built.push(sessionStore);
    const replyBus = new RedisReplyBus({ ...options.replies, ...common });
    built.push(replyBus);
    const changeFeed = new RedisChangeFeed({ ...options.changes, ...common });
    built.push(changeFeed);
    const taskStore = new RedisTaskStore({ ...options.tasks, ...common, leaseMs, nodeId });
    built.push(taskStore);
    // A task of a dead node turns `failed` at the first sweep after its lease expired.
    const sweepIntervalMs = Math.min(leaseMs, MAX_JANITOR_INTERVAL_MS);
    return {
      nodeId,
      registry,
      cancellationStore,
      sessionStore,
      replyBus,
      changeFeed,
      taskStore,
      serverOptions: {
        registry,
        ...(sessionStore === undefined ? {} : { sessions: { store: sessionStore } }),
        serverRequests: { bus: replyBus },
        changeFeed,
        tasks: { store: taskStore, sweepIntervalMs },
      },
      async ready(timeoutMs = 5_000) {
        const all = await Promise.all([
          cancellationStore.ready(timeoutMs),
          sessionStore?.ready(timeoutMs) ?? true,
          replyBus.ready(timeoutMs),
          changeFeed.ready(timeoutMs),
          taskStore.ready(timeoutMs),
        ]);
        return all.every(Boolean);
      },
      async close() {
        await registry.close();
        await Promise.all(built.map((store) => store.close()));
      },
    };
  } catch (error) {
    // A store refused its options: the ones already built hold connections and timers.
    void Promise.all(built.map((store) => store.close()));
    throw error;
  }
}
