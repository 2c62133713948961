/**
 * The declared schemas of the Redis stores' options (src/option-schema.ts), as the server's are
 * declared (src/server/option-declarations.ts): for every option what it accepts, its default
 * and its description, in one place. A store reads its options with them (a refused value throws
 * `InvalidOptionError` naming the option) and `npm run docs:options` writes the reference from
 * them. To add an option, declare it here (CONTRIBUTING.md, "Adding an option").
 */
import type { Cluster, Redis } from "ioredis";
import { z } from "zod";

import { DEFAULT_MAX_ROWS, DEFAULT_MAX_ROWS_PER_SCOPE } from "../cancellation/index.js";
import { InvalidOptionError } from "../errors.js";
import {
  customOption,
  integerBetween,
  MAX_TIMER_MS,
  OPTION,
  option,
  readOptions,
} from "../option-schema.js";
import {
  DEFAULT_MAX_TASK_BYTES,
  DEFAULT_MAX_TASK_BYTES_PER_SCOPE,
  DEFAULT_MAX_TASK_RESULT_BYTES,
  DEFAULT_MAX_TASKS,
  DEFAULT_MAX_TASKS_PER_SCOPE,
} from "../tasks/index.js";
import { readNodeId } from "./connection/node-id.js";
import { readPrefix } from "./key-layout.js";

/** The outage logger every store defaults to. */
const warn = (message: string): void => console.warn(message);

/**
 * `redis`: checked when the store opens its connection (RedisConnection), which refuses anything
 * but a URL or an ioredis client.
 */
const redis = (description: string) =>
  customOption<Redis | Cluster | string>({
    accepts: "a Redis URL, or an ioredis Redis or Cluster",
    default: "none (required)",
    description,
    read: (value) => value,
  });

const prefix = (description: string) =>
  customOption<string>({
    accepts: "1 to 128 characters without { or }",
    default: '"conduit-mcp"',
    description,
    read: (value, name) => readPrefix(value, name),
  });

const commandTimeoutMs = (fallback: number, description: string) =>
  option(OPTION.timerMs, { default: fallback, description });

const logger = (description: string) =>
  option(OPTION.logger, { default: warn, shown: "`console.warn`", description });

const leaseMs = (description: string) =>
  option(integerBetween(3, MAX_TIMER_MS), { default: 15_000, description });

/** What `new RedisReplyBus({ … })` declares. */
export const REPLY_BUS_OPTIONS = {
  redis: redis(
    "A Redis URL (the bus then owns its connections), or an ioredis client you own (the bus duplicates it for its subscriber and closes only that one).",
  ),
  prefix: prefix("Channel prefix."),
  commandTimeoutMs: commandTimeoutMs(
    1_000,
    "Upper bound on one PUBLISH before the answer is dropped.",
  ),
  maxMessageBytes: option(OPTION.positiveInteger, {
    default: 2_097_152,
    description: "Largest message sent or accepted, in characters of JSON.",
  }),
  logger: logger("Receives the one line per outage."),
};

/** What `new RedisChangeFeed({ … })` declares. */
export const CHANGE_FEED_OPTIONS = {
  redis: redis(
    "A Redis URL (owned, fail-fast connection) or an ioredis client you own (one created with `lazyConnect` is connected by the feed). A second connection is made for SUBSCRIBE either way.",
  ),
  prefix: prefix("Channel prefix, inside the hash tag."),
  commandTimeoutMs: commandTimeoutMs(1_000, "Upper bound on one PUBLISH."),
  logger: logger("Receives the one line per outage."),
};

/** What `new RedisRateLimitStore({ … })` declares. */
export const RATE_LIMIT_STORE_OPTIONS = {
  redis: redis(
    "A Redis URL (owned, fail-fast connection) or an ioredis client you own (one created with `lazyConnect` is connected by the store).",
  ),
  prefix: prefix("Key prefix."),
  commandTimeoutMs: commandTimeoutMs(
    250,
    "Upper bound on one check; beyond it this node decides alone.",
  ),
  maxBuckets: option(OPTION.positiveInteger, {
    default: 100_000,
    description: "Most buckets the local fallback keeps during an outage.",
  }),
  logger: logger("Receives the one line per outage."),
};

/** Default of `shareAfterMs`: calls finishing within tens of ms need no cross-node sharing. */
export const DEFAULT_SHARE_AFTER_MS = 50;

/**
 * What both node stores (cancellation, tasks) declare alike, after their own options (so those
 * are checked first, before a connection is made). Read by connection/node-store-setup.ts.
 */
const NODE_STORE_OPTIONS = {
  redis: redis(
    "A Redis URL (the store then owns its connection, configured to fail fast), or an ioredis client you own (prefer `enableOfflineQueue: false`; one created with `lazyConnect` is connected by the store).",
  ),
  prefix: prefix("Key prefix, part of every hash tag."),
  leaseMs: leaseMs(
    "This node's lease, renewed every `leaseMs / 3`; once it lapses, other nodes deal with what this node left (its in-flight entries, its running tasks).",
  ),
  commandTimeoutMs: commandTimeoutMs(
    1_000,
    "Upper bound on one Redis call before it counts as an outage.",
  ),
  clock: option(OPTION.clock, {
    default: undefined,
    shown: "Redis's `TIME`",
    description:
      "For tests only: a time source in ms that replaces Redis's `TIME` in every script (one clock for all nodes otherwise).",
  }),
  logger: logger("Receives the one line per outage (and script faults)."),
  nodeId: customOption<string>({
    accepts: "1 to 128 printable ASCII characters, no spaces",
    default: "`<host>-<pid>-<random>`",
    description: "This node's id in its lease (and the `owner` of the tasks it creates).",
    read: (value) => readNodeId(value),
  }),
  shards: option(integerBetween(1, 1_024), {
    default: undefined,
    shown: "1 on a single Redis, 16 on a Cluster",
    description:
      "Key-space shards, each under its own hash tag; a scope lives in one. With more than one shard, the global caps are enforced per shard as `floor(cap / shards)`.",
  }),
};

/** What `new RedisCancellationStore({ … })` declares. */
export const CANCELLATION_STORE_OPTIONS = {
  maxRows: option(OPTION.positiveLimit, {
    default: DEFAULT_MAX_ROWS,
    description: "Global cap on cancellation rows (`Infinity` disables).",
  }),
  maxRowsPerScope: option(OPTION.positiveLimit, {
    default: DEFAULT_MAX_ROWS_PER_SCOPE,
    description: "Rows one scope may hold (`Infinity` disables).",
  }),
  catchUpLength: option(OPTION.positiveInteger, {
    default: 1_000,
    description:
      "Cross-node cancels kept per shard for a node whose subscriber reconnects (approximate, Redis `MAXLEN ~`).",
  }),
  shareAfterMs: option(integerBetween(0, 60_000), {
    default: DEFAULT_SHARE_AFTER_MS,
    description:
      "How long a call runs on this node before its in-flight entry is written to Redis, in ms; a call that ends sooner costs no Redis round trip. 0 writes every entry at once (docs/redis.md).",
  }),
  ...NODE_STORE_OPTIONS,
};

/** What `new RedisTaskStore({ … })` declares. */
export const TASK_STORE_OPTIONS = {
  maxTasksPerScope: option(OPTION.positiveLimit, {
    default: DEFAULT_MAX_TASKS_PER_SCOPE,
    description: "Tasks one bucket may hold (`Infinity` disables).",
  }),
  maxTasks: option(OPTION.positiveLimit, {
    default: DEFAULT_MAX_TASKS,
    description: "Global cap on tasks (`Infinity` disables), enforced per shard.",
  }),
  maxResultBytes: option(OPTION.positiveInteger, {
    default: DEFAULT_MAX_TASK_RESULT_BYTES,
    description: "Largest result or error, in UTF-8 bytes of its JSON text.",
  }),
  maxTaskBytesPerScope: option(OPTION.positiveLimit, {
    default: DEFAULT_MAX_TASK_BYTES_PER_SCOPE,
    description:
      "Bytes of results, errors, input requests and status messages one bucket's tasks may hold (`Infinity` disables); per shard with more than one.",
  }),
  maxTaskBytes: option(OPTION.positiveLimit, {
    default: DEFAULT_MAX_TASK_BYTES,
    description: "Bytes of every task together (`Infinity` disables), enforced per shard.",
  }),
  ...NODE_STORE_OPTIONS,
};

/** The options `createRedisBackends` hands every store itself; a group does not repeat them. */
const SHARED_BY_BACKENDS = ["redis", "prefix", "nodeId", "leaseMs", "commandTimeoutMs", "logger"];

/**
 * A group of one store's own options in `createRedisBackends`: checked with that store's
 * declaration, an error naming the option under the group (`tasks.maxTasks`), then handed to the
 * store as given.
 */
function storeGroup(shape: z.ZodRawShape, description: string) {
  const own = z.object(
    Object.fromEntries(Object.entries(shape).filter(([key]) => !SHARED_BY_BACKENDS.includes(key))),
  );
  return customOption<object>({
    accepts: "an object",
    default: "the store's defaults",
    description,
    read: (value, name) => {
      if (value !== undefined) readOptions(own, value, { prefix: `${name}.` });
      return value;
    },
  });
}

/** What `createRedisBackends(redis, { … })` declares. */
export const BACKENDS_OPTIONS = {
  nodeId: NODE_STORE_OPTIONS.nodeId,
  prefix: prefix("Part of every key's hash tag and of every channel name."),
  leaseMs: leaseMs(
    "This node's lease (cancellation and tasks), renewed every third of it; also how often the registry's janitor and the task sweep run, so a dead node's entries and running tasks are dealt with within about two leases.",
  ),
  commandTimeoutMs: commandTimeoutMs(
    1_000,
    "Longest wait for one Redis call before it counts as an outage.",
  ),
  logger: logger("Receives the one line per outage of each store."),
  cancellation: storeGroup(
    CANCELLATION_STORE_OPTIONS,
    "The cancellation store's own options (`maxRows`, `maxRowsPerScope`, `shareAfterMs`, …; see `RedisCancellationStore`).",
  ),
  registry: customOption<object>({
    accepts: "an object",
    default: "the registry's defaults",
    description:
      "The registry's options (`ttlMs`, …), checked by `CancellationRegistry`; its janitor runs at least once per lease.",
    read: (value, name) => objectOrAbsent(value, name),
  }),
  sessions: customOption<object | false>({
    accepts: "an object, or false",
    default: "a session store with its defaults",
    description:
      "The session store's options (checked by `RedisSessionStore`), or `false` for no session store (a stateless server).",
    read: (value, name) => (value === false ? false : objectOrAbsent(value, name)),
  }),
  replies: storeGroup(REPLY_BUS_OPTIONS, "The reply bus's options (`maxMessageBytes`)."),
  changes: storeGroup(CHANGE_FEED_OPTIONS, "The change feed's options."),
  tasks: storeGroup(
    TASK_STORE_OPTIONS,
    "The task store's options (`maxTasks`, `maxTasksPerScope`, `maxResultBytes`, …; see `RedisTaskStore`).",
  ),
};

/** An options object of a store checked elsewhere: an object, or absent. */
function objectOrAbsent(value: unknown, name: string): unknown {
  if (
    value !== undefined &&
    (typeof value !== "object" || value === null || Array.isArray(value))
  ) {
    throw new InvalidOptionError(name, "an object", value);
  }
  return value;
}

/** The options every store above reads the same way, as read. */
export interface StoreSettings {
  readonly redis: Redis | Cluster | string;
  readonly prefix: string;
  readonly commandTimeoutMs: number;
  readonly logger: (message: string) => void;
}

/** What both node stores read alike (connection/node-store-setup.ts opens the store with it). */
export interface NodeStoreSettings extends StoreSettings {
  readonly leaseMs: number;
  readonly clock: (() => number) | undefined;
  readonly nodeId: string;
  /** Undefined: 16 on a Cluster, 1 on a single Redis (known once the connection is made). */
  readonly shards: number | undefined;
}

const REPLY_BUS = z.object(REPLY_BUS_OPTIONS);
const CHANGE_FEED = z.object(CHANGE_FEED_OPTIONS);
const RATE_LIMIT_STORE = z.object(RATE_LIMIT_STORE_OPTIONS);
const CANCELLATION_STORE = z.object(CANCELLATION_STORE_OPTIONS);
const TASK_STORE = z.object(TASK_STORE_OPTIONS);

/** A store's options: an object (absent is refused too: `redis` is required), read as declared. */
function readStoreOptions(schema: z.ZodObject, options: unknown): Record<string, unknown> {
  if (options === undefined) throw new InvalidOptionError("options", "an object", options);
  return readOptions(schema, options);
}

/**
 * A `RedisReplyBus`'s options, checked and defaulted.
 *
 * @throws InvalidOptionError naming the first refused option.
 */
export function readReplyBusOptions(
  options: unknown,
): StoreSettings & { readonly maxMessageBytes: number } {
  return readStoreOptions(REPLY_BUS, options) as unknown as StoreSettings & {
    readonly maxMessageBytes: number;
  };
}

/**
 * A `RedisChangeFeed`'s options, checked and defaulted.
 *
 * @throws InvalidOptionError naming the first refused option.
 */
export function readChangeFeedOptions(options: unknown): StoreSettings {
  return readStoreOptions(CHANGE_FEED, options) as unknown as StoreSettings;
}

/**
 * A `RedisRateLimitStore`'s options, checked and defaulted.
 *
 * @throws InvalidOptionError naming the first refused option.
 */
export function readRateLimitStoreOptions(
  options: unknown,
): StoreSettings & { readonly maxBuckets: number } {
  return readStoreOptions(RATE_LIMIT_STORE, options) as unknown as StoreSettings & {
    readonly maxBuckets: number;
  };
}

/**
 * A `RedisCancellationStore`'s options, checked and defaulted.
 *
 * @throws InvalidOptionError naming the first refused option.
 */
export function readCancellationStoreOptions(options: unknown): NodeStoreSettings & {
  readonly maxRows: number;
  readonly maxRowsPerScope: number;
  readonly catchUpLength: number;
  readonly shareAfterMs: number;
} {
  return readStoreOptions(CANCELLATION_STORE, options) as unknown as NodeStoreSettings & {
    readonly maxRows: number;
    readonly maxRowsPerScope: number;
    readonly catchUpLength: number;
    readonly shareAfterMs: number;
  };
}

/**
 * A `RedisTaskStore`'s options, checked and defaulted.
 *
 * @throws InvalidOptionError naming the first refused option.
 */
export function readTaskStoreOptions(options: unknown): NodeStoreSettings & TaskStoreBounds {
  return readStoreOptions(TASK_STORE, options) as unknown as NodeStoreSettings & TaskStoreBounds;
}

/** A task store's bounds, as read. */
export interface TaskStoreBounds {
  readonly maxTasksPerScope: number;
  readonly maxTasks: number;
  readonly maxResultBytes: number;
  readonly maxTaskBytesPerScope: number;
  readonly maxTaskBytes: number;
}

const BACKENDS = z.object(BACKENDS_OPTIONS);

/** `createRedisBackends`'s own options, as read (each group as given, once checked). */
export interface BackendsSettings {
  readonly nodeId: string;
  readonly prefix: string;
  readonly leaseMs: number;
  readonly commandTimeoutMs: number;
  readonly logger: (message: string) => void;
}

/**
 * `createRedisBackends`'s options, checked (each group's members too, named under the group)
 * and defaulted; absent options are every default.
 *
 * @throws InvalidOptionError naming the first refused option.
 */
export function readBackendsOptions(options: unknown): BackendsSettings {
  return readOptions(BACKENDS, options) as unknown as BackendsSettings;
}
