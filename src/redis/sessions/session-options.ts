/**
 * The options of `RedisSessionStore`, and their reading: each checked against the option schemas
 * (a wrong one throws at construction, naming it) and defaulted as the memory store is.
 */
import type { Cluster, Redis } from "ioredis";

import { OPTION, readOption } from "../../option-schema.js";
import {
  DEFAULT_MAX_SESSION_BYTES,
  DEFAULT_MAX_SESSION_BYTES_PER_SCOPE,
  DEFAULT_MAX_SESSIONS_PER_SCOPE,
} from "../../sessions/memory-session-store.js";
import { readPrefix } from "../key-layout.js";

/** Options of {@link RedisSessionStore}. */
export interface RedisSessionStoreOptions {
  /**
   * A Redis URL (owned, fail-fast connection) or an ioredis `Redis` / `Cluster` you own (one
   * created with `lazyConnect` is connected by the store).
   */
  readonly redis: Redis | Cluster | string;
  /** Key prefix, part of every hash tag; no braces. Default `"conduit-mcp"`. */
  readonly prefix?: string;
  /**
   * Maximum sessions across all nodes (0 refuses all, Infinity disables); at the bound a new
   * session evicts the least recently used session of the largest creating scope. Default 100 000.
   */
  readonly maxSessions?: number;
  /** Maximum sessions one creating scope holds; beyond, `create` is refused. Default 64. */
  readonly maxSessionsPerScope?: number;
  /**
   * Most bytes of records one creating scope holds across all nodes (sessionRecordBytes: its
   * texts plus 512); beyond, `create` is refused. Default 256 KiB.
   */
  readonly maxSessionBytesPerScope?: number;
  /**
   * Most bytes of records across all nodes; at the bound the least recently used sessions of the
   * creator holding the most bytes are evicted. Default 64 MiB.
   */
  readonly maxSessionBytes?: number;
  /**
   * Sessions this node keeps in its local copy, for Redis outages (created or seen here; least
   * recently used dropped first). Default 10 000.
   */
  readonly localCopySize?: number;
  /**
   * For tests only: a time source in ms that replaces Redis's `TIME`. Unset (the default),
   * `lastSeenAt` and the idle-TTL cutoff come from Redis's clock.
   */
  readonly clock?: () => number;
  /** Upper bound on one Redis call. Default 1 000. */
  readonly commandTimeoutMs?: number;
  /** Receives one line per outage. Default `console.warn`. */
  readonly logger?: (message: string) => void;
}

/** The options read, checked and defaulted. */
export interface SessionStoreSettings {
  readonly prefix: string;
  readonly maxSessions: number;
  readonly maxSessionsPerScope: number;
  readonly maxSessionBytesPerScope: number;
  readonly maxSessionBytes: number;
  readonly localCopySize: number;
  readonly clock: (() => number) | null;
  readonly timeoutMs: number;
  readonly log: (message: string) => void;
}

/** Reads the options of a `RedisSessionStore` (the connection itself is checked when opened). */
export function readSessionStoreOptions(options: RedisSessionStoreOptions): SessionStoreSettings {
  const limit = (name: keyof RedisSessionStoreOptions, fallback: number): number =>
    readOption(OPTION.nonNegativeLimit, name, options[name], fallback);
  readOption(OPTION.logger, "logger", options.logger, undefined);
  return {
    prefix: readPrefix(options.prefix),
    maxSessions: limit("maxSessions", 100_000),
    maxSessionsPerScope: limit("maxSessionsPerScope", DEFAULT_MAX_SESSIONS_PER_SCOPE),
    maxSessionBytesPerScope: limit("maxSessionBytesPerScope", DEFAULT_MAX_SESSION_BYTES_PER_SCOPE),
    maxSessionBytes: limit("maxSessionBytes", DEFAULT_MAX_SESSION_BYTES),
    localCopySize: readOption(
      OPTION.nonNegativeInteger,
      "localCopySize",
      options.localCopySize,
      10_000,
    ),
    clock: readOption(OPTION.clock, "clock", options.clock, null),
    timeoutMs: readOption(OPTION.timerMs, "commandTimeoutMs", options.commandTimeoutMs, 1_000),
    log: options.logger ?? ((message: string) => console.warn(message)),
  };
}
