/**
 * The declared schemas of the Redis stores' options (src/option-schema.ts), as the server's are
 * declared (src/server/option-declarations.ts): for every option what it accepts, its default
 * and its description, in one place. A store reads its options with them (a refused value throws
 * `InvalidOptionError` naming the option) and `npm run docs:options` writes the reference from
 * them. To add an option, declare it here (CONTRIBUTING.md, "Adding an option").
 */
import type { Cluster, Redis } from "ioredis";
import { z } from "zod";

import { customOption, OPTION, option, readOptions } from "../option-schema.js";
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

const logger = option(OPTION.logger, {
  default: warn,
  shown: "`console.warn`",
  description: "Receives the one line per outage.",
});

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
  logger,
};

/** What `new RedisChangeFeed({ … })` declares. */
export const CHANGE_FEED_OPTIONS = {
  redis: redis(
    "A Redis URL (owned, fail-fast connection) or an ioredis client you own (one created with `lazyConnect` is connected by the feed). A second connection is made for SUBSCRIBE either way.",
  ),
  prefix: prefix("Channel prefix, inside the hash tag."),
  commandTimeoutMs: commandTimeoutMs(1_000, "Upper bound on one PUBLISH."),
  logger,
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
  logger,
};

/** The options every store above reads the same way, as read. */
export interface StoreSettings {
  readonly redis: Redis | Cluster | string;
  readonly prefix: string;
  readonly commandTimeoutMs: number;
  readonly logger: (message: string) => void;
}

const REPLY_BUS = z.object(REPLY_BUS_OPTIONS);
const CHANGE_FEED = z.object(CHANGE_FEED_OPTIONS);
const RATE_LIMIT_STORE = z.object(RATE_LIMIT_STORE_OPTIONS);

/**
 * A `RedisReplyBus`'s options, checked and defaulted.
 *
 * @throws InvalidOptionError naming the first refused option.
 */
export function readReplyBusOptions(
  options: unknown,
): StoreSettings & { readonly maxMessageBytes: number } {
  return readOptions(REPLY_BUS, options) as unknown as StoreSettings & {
    readonly maxMessageBytes: number;
  };
}

/**
 * A `RedisChangeFeed`'s options, checked and defaulted.
 *
 * @throws InvalidOptionError naming the first refused option.
 */
export function readChangeFeedOptions(options: unknown): StoreSettings {
  return readOptions(CHANGE_FEED, options) as unknown as StoreSettings;
}

/**
 * A `RedisRateLimitStore`'s options, checked and defaulted.
 *
 * @throws InvalidOptionError naming the first refused option.
 */
export function readRateLimitStoreOptions(
  options: unknown,
): StoreSettings & { readonly maxBuckets: number } {
  return readOptions(RATE_LIMIT_STORE, options) as unknown as StoreSettings & {
    readonly maxBuckets: number;
  };
}
