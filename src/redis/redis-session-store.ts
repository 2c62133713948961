/**
 * `RedisSessionStore`: 2025-era sessions (`Mcp-Session-Id`) shared by every node on one Redis, so a
 * client's next POST may land on any node (issue 5, "Legacy sessions shared across nodes").
 *
 * Key layout, under the same single hash tag as the cancellation store:
 * `{p}:sess:<id>` HASH (the record's fields) and `{p}:sessions` ZSET (id → lastSeenAt: the bound,
 * the size and the idle-TTL sweep without a scan).
 */
import { Cluster, Redis } from "ioredis";

import { InvalidOptionError, StoreClosedError } from "../errors.js";
import type {
  SessionCreateOutcome,
  SessionRecord,
  SessionStore,
} from "../sessions/session-store.js";
import { bounded } from "./bounded.js";
import { OutageMonitor } from "./outage-monitor.js";

/** Options of {@link RedisSessionStore}. */
export interface RedisSessionStoreOptions {
  /** A Redis URL (owned, fail-fast connection) or an ioredis `Redis` / `Cluster` you own. */
  readonly redis: Redis | Cluster | string;
  /** Key prefix, used as the hash tag `{prefix}`; no braces. Default `"conduit-mcp"`. */
  readonly prefix?: string;
  /** Maximum sessions across all nodes (0 refuses all, Infinity disables). Default 100 000. */
  readonly maxSessions?: number;
  /** Clock for `lastSeenAt`. Default `Date.now`. */
  readonly clock?: () => number;
  /** Upper bound on one Redis call. Default 1 000. */
  readonly commandTimeoutMs?: number;
  /** Receives one line per outage. Default `console.warn`. */
  readonly logger?: (message: string) => void;
}

const CREATE = `
if tonumber(ARGV[2]) >= 0 and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2])
  and redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 'id', ARGV[1], 'principalId', ARGV[3], 'protocolVersion', ARGV[4],
  'createdAt', ARGV[5], 'lastSeenAt', ARGV[6], 'logLevel', ARGV[7], 'creatorScope', ARGV[8])
redis.call('ZADD', KEYS[1], ARGV[6], ARGV[1])
return 1
`;
const GET = `
if redis.call('EXISTS', KEYS[2]) == 0 then return false end
redis.call('HSET', KEYS[2], 'lastSeenAt', ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return redis.call('HGETALL', KEYS[2])
`;
const SET_LEVEL = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'logLevel', ARGV[1])
return 1
`;
const DELETE = `
redis.call('ZREM', KEYS[1], ARGV[1])
return redis.call('DEL', KEYS[2])
`;
const EXPIRE = `
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
  redis.call('DEL', ARGV[1] .. ':sess:' .. id)
  redis.call('ZREM', KEYS[1], id)
end
return #ids
`;

interface SessionScripts {
  conduitMcpSessionCreateV1(...args: string[]): Promise<number>;
  conduitMcpSessionGetV1(...args: string[]): Promise<string[] | null>;
  conduitMcpSessionSetLevelV1(...args: string[]): Promise<number>;
  conduitMcpSessionDeleteV1(...args: string[]): Promise<number>;
  conduitMcpSessionExpireV1(...args: string[]): Promise<number>;
}

const PAGE = 1_000;

/**
 * A {@link SessionStore} on Redis. Fails open like the cancellation store: while Redis is away,
 * `create` resolves `"created"` without storing (the request is served; the client's next request
 * then meets an unknown session and re-initialises, as MCP prescribes for a 404), `get` resolves
 * undefined, writes are dropped; one log line and one `conduit-mcp:store:outage` event per outage.
 *
 * @example
 * ```ts
 * import { RedisSessionStore } from "conduit-mcp/redis";
 * const sessions = new RedisSessionStore({ redis: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
 * ```
 */
export class RedisSessionStore implements SessionStore {
  private readonly client: Redis | Cluster;
  private readonly ownsClient: boolean;
  private readonly tag: string;
  private readonly luaBase: string;
  private readonly maxArg: string;
  private readonly clock: () => number;
  private readonly timeoutMs: number;
  private readonly monitor: OutageMonitor;
  private readonly onError = (error: unknown) => this.monitor.down(error);
  private readonly onReady = () => this.monitor.up();
  private readonly onClose = () => {
    if (!this.closed) this.monitor.down(new Error("connection closed"));
  };
  private closed = false;

  constructor(options: RedisSessionStoreOptions) {
    const prefix = options.prefix ?? "conduit-mcp";
    if (typeof prefix !== "string" || !/^[^{}]{1,128}$/.test(prefix)) {
      throw new InvalidOptionError("prefix", "1 to 128 characters without { or }", prefix);
    }
    const max = options.maxSessions ?? 100_000;
    if (!(max === Number.POSITIVE_INFINITY || (Number.isSafeInteger(max) && max >= 0))) {
      throw new InvalidOptionError("maxSessions", "a non-negative integer or Infinity", max);
    }
    this.maxArg = Number.isFinite(max) ? String(max) : "-1";
    const timeout = options.commandTimeoutMs ?? 1_000;
    if (!Number.isSafeInteger(timeout) || timeout < 1) {
      throw new InvalidOptionError("commandTimeoutMs", "a positive integer", timeout);
    }
    this.timeoutMs = timeout;
    this.clock = options.clock ?? Date.now;
    this.monitor = new OutageMonitor(options.logger ?? ((m) => console.warn(m)));
    if (typeof options.redis === "string" && options.redis.length > 0) {
      this.client = new Redis(options.redis, {
        enableOfflineQueue: false,
        commandTimeout: timeout,
        maxRetriesPerRequest: 1,
        retryStrategy: (times: number) => Math.min(50 * times, 1_000),
      });
      this.ownsClient = true;
    } else if (options.redis instanceof Redis || options.redis instanceof Cluster) {
      this.client = options.redis;
      this.ownsClient = false;
    } else {
      throw new InvalidOptionError(
        "redis",
        "a Redis URL, an ioredis Redis or Cluster",
        options.redis,
      );
    }
    this.tag = `{${prefix}}`;
    this.luaBase = `${(this.client.options as { keyPrefix?: string }).keyPrefix ?? ""}${this.tag}`;
    this.client.defineCommand("conduitMcpSessionCreateV1", { lua: CREATE, numberOfKeys: 2 });
    this.client.defineCommand("conduitMcpSessionGetV1", { lua: GET, numberOfKeys: 2 });
    this.client.defineCommand("conduitMcpSessionSetLevelV1", { lua: SET_LEVEL, numberOfKeys: 1 });
    this.client.defineCommand("conduitMcpSessionDeleteV1", { lua: DELETE, numberOfKeys: 2 });
    this.client.defineCommand("conduitMcpSessionExpireV1", { lua: EXPIRE, numberOfKeys: 1 });
    this.client.on("error", this.onError);
    this.client.on("ready", this.onReady);
    this.client.on("close", this.onClose);
  }

  /** Resolves true once connected; false after `timeoutMs`. */
  async ready(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && this.client.status !== "ready" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return !this.closed && this.client.status === "ready";
  }

  async create(record: SessionRecord): Promise<SessionCreateOutcome> {
    const ok = await this.call(
      (c) =>
        c.conduitMcpSessionCreateV1(
          this.sessionsKey,
          this.sessionKey(record.id),
          record.id,
          this.maxArg,
          encode(record.principalId),
          record.protocolVersion,
          String(record.createdAt),
          String(record.lastSeenAt),
          encode(record.logLevel),
          record.creatorScope,
        ),
      1,
    );
    return ok === 1 ? "created" : "full";
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const now = String(this.clock());
    const flat = await this.call(
      (c) => c.conduitMcpSessionGetV1(this.sessionsKey, this.sessionKey(id), id, now),
      null,
    );
    if (flat === null) return undefined;
    const fields = new Map<string, string>();
    for (let i = 0; i + 1 < flat.length; i += 2)
      fields.set(flat[i] as string, flat[i + 1] as string);
    return {
      id,
      principalId: decode(fields.get("principalId")),
      creatorScope: fields.get("creatorScope") ?? "",
      protocolVersion: fields.get("protocolVersion") ?? "",
      createdAt: Number(fields.get("createdAt")),
      lastSeenAt: Number(fields.get("lastSeenAt")),
      logLevel: decode(fields.get("logLevel")),
    };
  }

  async setLogLevel(id: string, level: string): Promise<boolean> {
    const ok = await this.call(
      (c) => c.conduitMcpSessionSetLevelV1(this.sessionKey(id), encode(level)),
      0,
    );
    return ok === 1;
  }

  async delete(id: string): Promise<boolean> {
    const n = await this.call(
      (c) => c.conduitMcpSessionDeleteV1(this.sessionsKey, this.sessionKey(id), id),
      0,
    );
    return n === 1;
  }

  async cleanup(ttlMs: number, now: number): Promise<number> {
    if (!Number.isFinite(ttlMs) || !Number.isFinite(now)) return 0;
    let removed = 0;
    for (let page = 0; page < 10_000; page++) {
      const n = await this.call(
        (c) =>
          c.conduitMcpSessionExpireV1(
            this.sessionsKey,
            this.luaBase,
            `(${now - ttlMs}`,
            String(PAGE),
          ),
        0,
      );
      removed += n;
      if (n < PAGE) break;
    }
    return removed;
  }

  async size(): Promise<number> {
    return this.call((c) => c.zcard(this.sessionsKey), 0);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.client.off("error", this.onError);
    this.client.off("ready", this.onReady);
    this.client.off("close", this.onClose);
    if (this.ownsClient) {
      if (this.client.status === "ready") {
        await Promise.race([
          this.client.quit().catch(() => {}),
          new Promise((resolve) => setTimeout(resolve, this.timeoutMs).unref()),
        ]);
      }
      this.client.disconnect();
    }
  }

  private get sessionsKey(): string {
    return `${this.tag}:sessions`;
  }

  private sessionKey(id: string): string {
    return `${this.tag}:sess:${id}`;
  }

  /** Not sent unless connected (no buffering), bounded, any failure resolves `fallback`. */
  private async call<T>(
    op: (c: (Redis | Cluster) & SessionScripts) => Promise<T>,
    fallback: T,
  ): Promise<T> {
    if (this.closed) throw new StoreClosedError();
    if (this.client.status !== "ready") return fallback;
    try {
      const result = await bounded(
        op(this.client as (Redis | Cluster) & SessionScripts),
        this.timeoutMs,
      );
      this.monitor.up();
      return result;
    } catch (error) {
      this.monitor.down(error);
      return fallback;
    }
  }
}

function encode(value: string | null): string {
  return value === null ? "n" : `s${value}`;
}

function decode(raw: string | undefined): string | null {
  return raw === undefined || raw === "n" ? null : raw.slice(1);
}
