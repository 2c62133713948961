/**
 * `RedisSessionStore`: 2025-era sessions (`Mcp-Session-Id`) shared by every node on one Redis, so a
 * client's next POST may land on any node.
 *
 * Key layout, under one hash tag `{t}` = `{prefix}` (one Redis Cluster slot, so that the
 * per-creator quota and the eviction of the largest creator stay atomic): `{t}:sess:<id>` HASH
 * (the record's fields), `{t}:sessions` ZSET (id → lastSeenAt: the global bound, the size and the
 * idle-TTL sweep without a scan), `{t}:sc:<creator>` ZSET (one creating scope's sessions by
 * lastSeenAt), `{t}:creators` ZSET (creator → count and order of reaching it), `{t}:cseq`,
 * `{t}:cbytes` ZSET (creator → bytes of its records: the per-creator byte budget and the global
 * one's largest creator), `{t}:sbytes` (bytes of every record), `{t}:epoch` (a token set by the
 * first node to connect: a node that finds it gone or changed knows Redis lost its data).
 * Times (`lastSeenAt`, the TTL cutoff) are Redis's own `TIME`, one clock for every node.
 *
 * While Redis is away the store keeps working from a bounded local copy (see the class comment),
 * so an outage never locks clients out of their sessions.
 */
import { randomBytes } from "node:crypto";
import type { Cluster, Redis } from "ioredis";

import { StoreClosedError } from "../errors.js";
import { OPTION, readOption } from "../option-schema.js";
import type { Reachability } from "../reachability.js";
import {
  DEFAULT_MAX_SESSION_BYTES,
  DEFAULT_MAX_SESSION_BYTES_PER_SCOPE,
  DEFAULT_MAX_SESSIONS_PER_SCOPE,
} from "../sessions/memory-session-store.js";
import {
  type SessionCreateOutcome,
  type SessionRecord,
  type SessionStore,
  sessionRecordBytes,
} from "../sessions/session-store.js";
import { bounded } from "./connection/bounded.js";
import { type RedisClient, RedisConnection } from "./connection/connection.js";
import { OutageMonitor } from "./connection/outage-monitor.js";
import { KeyLayout, readPrefix, type ShardKeys } from "./key-layout.js";

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

/** Redis's now in ms, unless the test clock was passed (`''` = TIME); and the shared helpers. */
const COMMON = `
local function nowMs(given)
  if given ~= '' then return given end
  local t = redis.call('TIME')
  return tostring(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
end

-- A creator's entry in the creators ZSET: its session count, then the order in which it reached
-- that count (a per-store sequence), so ZREVRANGE 0 0 is the largest creator, among equals the
-- one that reached the count last.
local function setCount(base, creator)
  local n = redis.call('ZCARD', base .. ':sc:' .. creator)
  if n == 0 then
    redis.call('ZREM', base .. ':creators', creator)
  else
    local seq = redis.call('INCR', base .. ':cseq') % 4294967296
    redis.call('ZADD', base .. ':creators', n * 4294967296 + seq, creator)
  end
end

-- Every node hears that the session ended (its GET stream and subscriptions end with it). A
-- channel is not a key, so publishing from a script stays within one Cluster slot.
local function removeSession(base, id)
  local key = base .. ':sess:' .. id
  local creator = redis.call('HGET', key, 'creatorScope')
  local bytes = tonumber(redis.call('HGET', key, 'bytes') or '0') or 0
  redis.call('DEL', key)
  redis.call('ZREM', base .. ':sessions', id)
  if creator then
    redis.call('ZREM', base .. ':sc:' .. creator, id)
    setCount(base, creator)
    if bytes > 0 then
      local left = tonumber(redis.call('ZINCRBY', base .. ':cbytes', -bytes, creator))
      if left <= 0 or redis.call('ZCARD', base .. ':sc:' .. creator) == 0 then
        redis.call('ZREM', base .. ':cbytes', creator)
      end
    end
  end
  if bytes > 0 then redis.call('DECRBY', base .. ':sbytes', bytes) end
  redis.call('PUBLISH', base .. ':ended', id)
end
`;
/**
 * KEYS 1 sessions, 2 sess:<id>, 3 sc:<creator>. ARGV 1 id, 2 max (-1 off), 3 principal,
 * 4 version, 5 createdAt, 6 now, 7 level, 8 restore (1 = only if absent), 9 maxPerScope (-1 off),
 * 10 creator, 11 base, 12 the client's askable capabilities (`n` unknown, `s<flag list>`),
 * 13 the record's bytes, 14 maxBytesPerScope (-1 off), 15 maxBytes (-1 off).
 * Returns 1 created, 0 full (a bound of 0), 3 scope-full, 2 already there (restore only).
 * The per-creator quotas (count, bytes) are the only refusal; at a global bound the least
 * recently used sessions of the largest creator (by count, then by bytes) are evicted.
 */
const CREATE = `${COMMON}
local base = ARGV[11]
if redis.call('EXISTS', KEYS[2]) == 1 then
  if ARGV[8] == '1' then return 2 end
  removeSession(base, ARGV[1])
end
local max, maxPer = tonumber(ARGV[2]), tonumber(ARGV[9])
local bytes, maxBytesPer, maxBytes = tonumber(ARGV[13]), tonumber(ARGV[14]), tonumber(ARGV[15])
if max == 0 or maxBytes == 0 then return 0 end
if maxPer >= 0 and redis.call('ZCARD', KEYS[3]) >= maxPer then return 3 end
local held = tonumber(redis.call('ZSCORE', base .. ':cbytes', ARGV[10]) or '0') or 0
if maxBytesPer >= 0 and held + bytes > maxBytesPer then return 3 end
if max > 0 and redis.call('ZCARD', KEYS[1]) >= max then
  local top = redis.call('ZREVRANGE', base .. ':creators', 0, 0)
  if #top == 1 then
    local victim = redis.call('ZRANGE', base .. ':sc:' .. top[1], 0, 0)
    if #victim == 1 then removeSession(base, victim[1]) end
  end
end
if maxBytes > 0 then
  -- Bounded: each pass removes one session (or one stale creator entry).
  for _ = 1, 256 do
    if (tonumber(redis.call('GET', base .. ':sbytes') or '0') or 0) + bytes <= maxBytes then break end
    local top = redis.call('ZREVRANGE', base .. ':cbytes', 0, 0)
    if #top == 0 then break end
    local victim = redis.call('ZRANGE', base .. ':sc:' .. top[1], 0, 0)
    if #victim == 1 then removeSession(base, victim[1])
    else redis.call('ZREM', base .. ':cbytes', top[1]) end
  end
end
local now = nowMs(ARGV[6])
redis.call('HSET', KEYS[2], 'id', ARGV[1], 'principalId', ARGV[3], 'protocolVersion', ARGV[4],
  'createdAt', ARGV[5], 'lastSeenAt', now, 'logLevel', ARGV[7], 'creatorScope', ARGV[10],
  'caps', ARGV[12], 'bytes', ARGV[13])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZADD', KEYS[3], now, ARGV[1])
setCount(base, ARGV[10])
redis.call('ZINCRBY', base .. ':cbytes', bytes, ARGV[10])
redis.call('INCRBY', base .. ':sbytes', bytes)
return 1
`;
/** KEYS 1 sessions, 2 sess:<id>. ARGV 1 id, 2 now, 3 base. The record's fields, refreshed, or nil. */
const GET = `${COMMON}
if redis.call('EXISTS', KEYS[2]) == 0 then return false end
local now = nowMs(ARGV[2])
redis.call('HSET', KEYS[2], 'lastSeenAt', now)
redis.call('ZADD', KEYS[1], now, ARGV[1])
local creator = redis.call('HGET', KEYS[2], 'creatorScope')
if creator then redis.call('ZADD', ARGV[3] .. ':sc:' .. creator, 'XX', now, ARGV[1]) end
return redis.call('HGETALL', KEYS[2])
`;
const SET_LEVEL = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'logLevel', ARGV[1])
return 1
`;
/** KEYS 1 sess:<id>. ARGV 1 id, 2 base. Returns 1 when the session existed. */
const DELETE = `${COMMON}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
removeSession(ARGV[2], ARGV[1])
return 1
`;
/** KEYS 1 sessions. ARGV 1 base, 2 ttl ms, 3 limit, 4 now. Removes strictly idle-longer sessions. */
const EXPIRE = `${COMMON}
local cutoff = '(' .. tostring(tonumber(nowMs(ARGV[4])) - tonumber(ARGV[2]))
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoff, 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do removeSession(ARGV[1], id) end
return #ids
`;

/**
 * KEYS 1 epoch. ARGV 1 a fresh token. Sets the token unless one is there; returns the one there.
 * Redis restarted without persistence (or flushed) has none: the first node back sets a new one,
 * and every node that remembered the old one sees it changed.
 */
const EPOCH = `
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])
`;

interface SessionScripts {
  conduitMcpSessionCreateV5(...args: string[]): Promise<number>;
  conduitMcpSessionGetV3(...args: string[]): Promise<string[] | null>;
  conduitMcpSessionSetLevelV1(...args: string[]): Promise<number>;
  conduitMcpSessionDeleteV4(...args: string[]): Promise<number>;
  conduitMcpSessionExpireV5(...args: string[]): Promise<number>;
  conduitMcpSessionEpochV1(...args: string[]): Promise<string | null>;
}

type Client = RedisClient;

const PAGE = 1_000;
/** A session id as published on the ended channel: visible ASCII, as ids are minted. */
const ENDED_ID = /^[\x21-\x7e]{1,256}$/;
/** A call that did not reach Redis (outage, timeout, not connected). */
const UNAVAILABLE: unique symbol = Symbol("unavailable");

/** One session in the local copy. */
interface LocalSession {
  record: SessionRecord;
  /** Created or changed while Redis was away: written to Redis when it is back. */
  pending: boolean;
  /** Local monotonic time of the last use (the local copy's own idle sweep). */
  usedAt: number;
}

/**
 * A {@link SessionStore} on Redis.
 *
 * While Redis is away (not connected, or a call fails or times out) the store answers from a
 * bounded local copy instead of failing: a session created or seen on this node keeps working
 * here; `initialize` still creates a session, kept locally and written to Redis when it is back
 * (unless the store is full then); a `DELETE` is applied locally and replayed. A session known
 * only to another node is unknown here until Redis is back (404: the client initialises again,
 * and that session works). One log line naming the session store and one
 * `conduit-mcp:store:outage` event (`part: "sessions"`) per outage.
 *
 * @example
 * ```ts
 * import { RedisSessionStore } from "conduit-mcp/redis";
 * const sessions = new RedisSessionStore({ redis: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
 * ```
 */
export class RedisSessionStore implements SessionStore {
  private readonly client: Client;
  private readonly connection: RedisConnection;
  private readonly keys: ShardKeys;
  private readonly maxPerScope: number;
  private readonly maxPerScopeArg: string;
  /**
   * Sessions created (or changed) during an outage and not yet written back, per creating scope:
   * the outage path's per-creator bound. Copies of sessions merely seen here are not counted: one
   * ended through another node stays in this node's copy until it is asked for again or idles
   * out, and counting it would refuse a creator that holds no session at all.
   */
  private readonly pendingPerScope = new Map<string, number>();
  private readonly maxArg: string;
  private readonly maxSessionsArg: number;
  private readonly maxBytesPerScopeArg: string;
  private readonly maxBytesArg: string;
  /** The epoch token this node last saw (null: not yet read). */
  private epoch: string | null = null;
  /** The latest check of the epoch (a `get` that finds a kept record gone waits for it). */
  private epochCheck: Promise<boolean> = Promise.resolve(false);
  /** Whether a check of the epoch is waiting for Redis's answer. */
  private epochChecking = false;
  /**
   * Counts the connection's losses: a check answers for the connection it was sent on, so only
   * one sent since the latest loss settles {@link epochUnknown}.
   */
  private connectionGeneration = 0;
  /**
   * Open from a loss of the connection (and from the start) until a check of the epoch sent
   * since then is answered: until then a record missing from Redis may be missing because Redis
   * restarted empty, not because the session ended, so a miss waits for it.
   */
  private epochUnknown: { promise: Promise<void>; settle: () => void } | null = openGate();
  /** Receives the line told when Redis lost the records. */
  private readonly log: (message: string) => void;
  private readonly localMax: number;
  private readonly clock: (() => number) | null;
  private readonly timeoutMs: number;
  /** Whether Redis is reachable, from the command connection's events (`GET /ready`). */
  readonly reachability: Reachability;
  private readonly monitor: OutageMonitor;
  /** The local copy, least recently used first (a Map keeps insertion order). */
  private readonly local = new Map<string, LocalSession>();
  /** Deletes applied while Redis was away, replayed when it is back (bounded like the copy). */
  private readonly pendingDeletes = new Set<string>();
  private flushing = false;
  private flushAgain = false;
  private closed = false;
  /** Listeners of {@link onEnded}. */
  private readonly endedListeners = new Set<(id: string) => void>();
  /**
   * The connection that hears sessions ended on any node (`<base>:ended`), opened by the first
   * {@link onEnded}: a subscribed connection cannot run other commands.
   */
  private subscriber: Client | null = null;
  /** Whether the subscriber listened before: a later subscription must check what it missed. */
  private listenedBefore = false;

  constructor(options: RedisSessionStoreOptions) {
    const prefix = readPrefix(options.prefix);
    const max = readOption(OPTION.nonNegativeLimit, "maxSessions", options.maxSessions, 100_000);
    const perScope = readOption(
      OPTION.nonNegativeLimit,
      "maxSessionsPerScope",
      options.maxSessionsPerScope,
      DEFAULT_MAX_SESSIONS_PER_SCOPE,
    );
    this.maxPerScope = perScope;
    this.maxPerScopeArg = Number.isFinite(perScope) ? String(perScope) : "-1";
    this.localMax = readOption(
      OPTION.nonNegativeInteger,
      "localCopySize",
      options.localCopySize,
      10_000,
    );
    const timeout = readOption(OPTION.timerMs, "commandTimeoutMs", options.commandTimeoutMs, 1_000);
    this.timeoutMs = timeout;
    this.clock = readOption(OPTION.clock, "clock", options.clock, null);
    readOption(OPTION.logger, "logger", options.logger, undefined);
    this.log = options.logger ?? ((m) => console.warn(m));
    this.monitor = new OutageMonitor(this.log, "sessions");
    const bytesPerScope = readOption(
      OPTION.nonNegativeLimit,
      "maxSessionBytesPerScope",
      options.maxSessionBytesPerScope,
      DEFAULT_MAX_SESSION_BYTES_PER_SCOPE,
    );
    const bytes = readOption(
      OPTION.nonNegativeLimit,
      "maxSessionBytes",
      options.maxSessionBytes,
      DEFAULT_MAX_SESSION_BYTES,
    );
    this.maxBytesPerScopeArg = Number.isFinite(bytesPerScope) ? String(bytesPerScope) : "-1";
    this.maxBytesArg = Number.isFinite(bytes) ? String(bytes) : "-1";
    this.connection = new RedisConnection({
      redis: options.redis,
      timeoutMs: timeout,
      monitor: this.monitor,
    });
    this.client = this.connection.client;
    this.reachability = this.connection.reachability;
    this.maxArg = Number.isFinite(max) ? String(max) : "-1";
    this.maxSessionsArg = max;
    this.keys = new KeyLayout(prefix, this.connection.keyPrefix, 1).all[0] as ShardKeys;
    this.client.defineCommand("conduitMcpSessionCreateV5", { lua: CREATE, numberOfKeys: 3 });
    this.client.defineCommand("conduitMcpSessionGetV3", { lua: GET, numberOfKeys: 2 });
    this.client.defineCommand("conduitMcpSessionSetLevelV1", { lua: SET_LEVEL, numberOfKeys: 1 });
    this.client.defineCommand("conduitMcpSessionDeleteV4", { lua: DELETE, numberOfKeys: 1 });
    this.client.defineCommand("conduitMcpSessionExpireV5", { lua: EXPIRE, numberOfKeys: 1 });
    this.client.defineCommand("conduitMcpSessionEpochV1", { lua: EPOCH, numberOfKeys: 1 });
    this.connection.on("close", () => {
      this.connectionGeneration++;
      this.epochUnknown ??= openGate();
    });
    this.connection.on("ready", () => {
      this.monitor.up();
      // Redis may have come back empty: that is checked before the write-back.
      this.epochCheck = this.checkEpoch();
      void this.epochCheck.then(() => this.flush());
    });
    this.connection.connect();
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
    const outcome = await this.write(record, false);
    if (outcome === UNAVAILABLE) {
      // Redis is away: the session lives in the local copy (bounded per creator first) and is
      // written back when Redis is back.
      if (this.maxSessionsArg === 0) return "full";
      const held =
        this.local.get(record.id)?.pending === true
          ? 0
          : (this.pendingPerScope.get(record.creatorScope) ?? 0);
      if (held >= this.maxPerScope) return "scope-full";
      this.remember(record, true);
      return "created";
    }
    if (outcome === 0) return "full";
    if (outcome === 3) return "scope-full";
    this.remember(record, false);
    return "created";
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    return this.read(id, true);
  }

  /** `get`, with one more read of Redis when an epoch check may have written the record back. */
  private async read(id: string, again: boolean): Promise<SessionRecord | undefined> {
    const keys = this.keys;
    const flat = await this.call(
      (c) =>
        c.conduitMcpSessionGetV3(keys.sessions, this.sessionKey(id), id, this.now(), keys.luaBase),
      UNAVAILABLE,
    );
    if (flat === UNAVAILABLE) return this.touchLocal(id);
    if (flat === null) {
      // Unknown to Redis: only a session kept during an outage and not yet written back survives.
      let kept = this.local.get(id);
      if (kept?.pending === true) return this.touchLocal(id);
      if (kept !== undefined) {
        // Redis may have lost every record (restarted empty): then what this node holds is
        // written back, this session included. A miss right after a reconnect may come before
        // the reconnect's check has even started: it waits for that check (bounded).
        await this.epochKnown(this.timeoutMs * 2);
        kept = this.local.get(id);
        if (kept?.pending === true) return this.touchLocal(id);
        await this.epochCheck;
        if (!this.closed) await this.checkEpoch();
        kept = this.local.get(id);
        if (kept?.pending === true) return this.touchLocal(id);
        // The check may have found the loss and finished the write-back while this read
        // waited: the record is in Redis again, so read it once more before calling it gone.
        if (kept !== undefined && again && !this.closed) return this.read(id, false);
      }
      // Held here but gone from Redis: ended elsewhere, perhaps while this node was not listening.
      if (this.forget(id)) this.ended(id);
      return undefined;
    }
    const fields = new Map<string, string>();
    for (let i = 0; i + 1 < flat.length; i += 2) {
      fields.set(flat[i] as string, flat[i + 1] as string);
    }
    let record: SessionRecord = {
      id,
      principalId: decode(fields.get("principalId")),
      creatorScope: fields.get("creatorScope") ?? "",
      protocolVersion: fields.get("protocolVersion") ?? "",
      createdAt: Number(fields.get("createdAt")),
      lastSeenAt: Number(fields.get("lastSeenAt")),
      logLevel: decode(fields.get("logLevel")),
    };
    // The flag list is re-read by the protocol layer, which ignores anything it does not know.
    const flags = capabilityFlags(decode(fields.get("caps")));
    if (flags !== null) record = { ...record, clientCapabilities: flags };
    this.remember(record, false);
    return record;
  }

  async setLogLevel(id: string, level: string): Promise<boolean> {
    const ok = await this.call(
      (c) => c.conduitMcpSessionSetLevelV1(this.sessionKey(id), encode(level)),
      UNAVAILABLE,
    );
    const kept = this.local.get(id);
    if (kept !== undefined) kept.record = { ...kept.record, logLevel: level };
    if (ok !== UNAVAILABLE) return ok === 1;
    if (kept === undefined) return false;
    if (!kept.pending) {
      kept.pending = true;
      this.countPending(kept.record.creatorScope, 1);
    }
    return true;
  }

  async delete(id: string): Promise<boolean> {
    // Forgotten before Redis is asked: a write-back of the outage copy (flush) running while the
    // delete waits for Redis must not find the session still there and write it again.
    const kept = this.forget(id);
    const n = await this.call(
      (c) => c.conduitMcpSessionDeleteV4(this.sessionKey(id), id, this.keys.luaBase),
      UNAVAILABLE,
    );
    if (n !== UNAVAILABLE) return n === 1;
    if (this.pendingDeletes.size < Math.max(1, this.localMax)) this.pendingDeletes.add(id);
    // Redis is away: this node's listeners hear it now, the others when the delete is replayed.
    if (kept) this.ended(id);
    return kept;
  }

  /**
   * Removes sessions idle strictly longer than `ttlMs` by Redis's clock (`now`, this node's
   * clock, is not used: a node whose clock is ahead must not wipe sessions it did not age; with a
   * test `clock`, `now` is used as the memory store uses it).
   */
  async cleanup(ttlMs: number, now: number): Promise<number> {
    if (!Number.isFinite(ttlMs)) return 0;
    const ttl = String(Math.max(0, Math.floor(ttlMs)));
    const at = this.clock === null ? "" : String(now);
    let removed = 0;
    for (let page = 0; page < 10_000; page++) {
      const n = await this.call(
        (c) =>
          c.conduitMcpSessionExpireV5(this.keys.sessions, this.keys.luaBase, ttl, String(PAGE), at),
        0,
      );
      removed += n;
      if (n < PAGE) break;
    }
    // The local copy ages by this node's monotonic clock (it never compares with other nodes).
    const cutoff = performance.now() - ttlMs;
    for (const [id, kept] of this.local) if (kept.usedAt < cutoff) this.forget(id);
    return removed;
  }

  async size(): Promise<number> {
    return this.call((c) => c.zcard(this.keys.sessions), 0);
  }

  /**
   * Calls `listener` with the id of every session ended on any node sharing this Redis (`DELETE`,
   * idle expiry, eviction, a re-created id): the scripts that remove a session publish its id on
   * `<prefix>:ended`, heard by every node, this one included. Also told: a session ended during
   * an outage on this node, one this node held that Redis no longer knows, and, after this node's
   * subscription was away, each session of the local copy that ended meanwhile. A listener may
   * hear an id more than once; what it does must be idempotent.
   */
  onEnded(listener: (id: string) => void): () => void {
    this.endedListeners.add(listener);
    if (this.subscriber === null && !this.closed) this.openSubscriber();
    return () => {
      this.endedListeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.settleEpoch();
    this.local.clear();
    this.pendingPerScope.clear();
    this.pendingDeletes.clear();
    this.endedListeners.clear();
    await this.connection.close();
  }

  /** Tells the {@link onEnded} listeners; a listener's bug never breaks the store. */
  private ended(id: string): void {
    for (const listener of [...this.endedListeners]) {
      try {
        listener(id);
      } catch {
        // The listener's failure is its own.
      }
    }
  }

  private get endedChannel(): string {
    // Channels are not key-prefixed by ioredis: the base carries the client's prefix already.
    return `${this.keys.luaBase}:ended`;
  }

  private openSubscriber(): void {
    const subscriber = this.connection.subscriber();
    this.subscriber = subscriber;
    subscriber.on("ready", () => void this.subscribeEnded(subscriber));
    subscriber.on("message", (channel: string, raw: string) => {
      if (this.closed || channel !== this.endedChannel) return;
      // Hostile until validated: anyone who may PUBLISH on this Redis can send anything.
      if (typeof raw !== "string" || !ENDED_ID.test(raw)) return;
      this.forget(raw);
      this.ended(raw);
    });
    if (subscriber.status === "ready") void this.subscribeEnded(subscriber);
  }

  /**
   * (Re)subscribes; after a gap, asks Redis which sessions of the local copy still exist and
   * tells the listeners about the others (their end was published while nobody here listened).
   */
  private async subscribeEnded(subscriber: Client): Promise<void> {
    if (this.closed) return;
    try {
      await subscriber.subscribe(this.endedChannel);
    } catch {
      return; // Retried on the next `ready`.
    }
    if (!this.listenedBefore) {
      this.listenedBefore = true;
      return;
    }
    // The subscription was away, and so perhaps was Redis: a session missing now may be missing
    // because Redis restarted empty, which only the epoch tells (then it is written back, not
    // ended). Wait until the epoch is known again on this connection.
    this.epochUnknown ??= openGate();
    await this.epochKnown(Number.POSITIVE_INFINITY);
    if (this.closed) return;
    const ids = [...this.local.entries()].filter(([, kept]) => !kept.pending).map(([id]) => id);
    for (let at = 0; at < ids.length; at += PAGE) {
      const page = ids.slice(at, at + PAGE);
      const scores = await this.call((c) => c.zmscore(this.keys.sessions, ...page), UNAVAILABLE);
      if (scores === UNAVAILABLE) return;
      page.forEach((id, i) => {
        const kept = this.local.get(id);
        if (scores[i] === null && kept !== undefined && !kept.pending) {
          this.forget(id);
          this.ended(id);
        }
      });
    }
  }

  /** Writes a record; `restore` only if Redis does not hold it already. */
  private write(record: SessionRecord, restore: boolean): Promise<number | typeof UNAVAILABLE> {
    const keys = this.keys;
    return this.call(
      (c) =>
        c.conduitMcpSessionCreateV5(
          keys.sessions,
          this.sessionKey(record.id),
          `${keys.tag}:sc:${record.creatorScope}`,
          record.id,
          this.maxArg,
          encode(record.principalId),
          record.protocolVersion,
          String(record.createdAt),
          this.now(),
          encode(record.logLevel),
          restore ? "1" : "0",
          this.maxPerScopeArg,
          record.creatorScope,
          keys.luaBase,
          encode(record.clientCapabilities ?? null),
          String(sessionRecordBytes(record)),
          this.maxBytesPerScopeArg,
          this.maxBytesArg,
        ),
      UNAVAILABLE,
    );
  }

  /**
   * Reads the epoch token (setting one when there is none); when it is gone or changed since this
   * node last read it, Redis lost its data (restarted without persistence, or flushed): every
   * session of the local copy is marked for the write-back, which recreates those Redis lacks
   * (each under its creator's quotas, as an `initialize` would be), and one line says so.
   * Resolves whether the loss was seen now.
   */
  private checkEpoch(): Promise<boolean> {
    const generation = this.connectionGeneration;
    const check = (async () => {
      const token = randomBytes(12).toString("base64url");
      this.epochChecking = true;
      const seen = await this.call(
        (c) => c.conduitMcpSessionEpochV1(`${this.keys.tag}:epoch`, token),
        UNAVAILABLE,
      ).finally(() => {
        this.epochChecking = false;
      });
      if (seen === UNAVAILABLE || typeof seen !== "string") return false;
      const before = this.epoch;
      this.epoch = seen;
      let marked = 0;
      if (before !== null && before !== seen) {
        for (const kept of this.local.values()) {
          if (kept.pending) continue;
          kept.pending = true;
          this.countPending(kept.record.creatorScope, 1);
          marked++;
        }
      }
      // Marked before anyone waiting is let go: a miss then finds its session pending, not gone.
      if (generation === this.connectionGeneration) this.settleEpoch();
      if (before === null || before === seen) return false;
      this.log(
        `conduit-mcp: Redis came back without the session records (restarted without persistence, or flushed): writing back the ${marked} session(s) this node holds; sessions known only to other nodes are gone (their clients get 404 and initialise again). Keep sessions across Redis restarts with Redis persistence (appendonly yes): docs/tenancy.md.`,
      );
      await this.flush();
      return true;
    })();
    this.epochCheck = check;
    return check;
  }

  /**
   * Resolves once the epoch is known on the current connection (at once when it is), or after
   * `boundMs`, or at close; starts a check when none is under way and the connection is up (a
   * miss may come before the reconnect's own check has started).
   */
  private async epochKnown(boundMs: number): Promise<void> {
    const gate = this.epochUnknown;
    if (gate === null || this.closed) return;
    if (!this.epochChecking && this.client.status === "ready") void this.checkEpoch();
    if (!Number.isFinite(boundMs)) return gate.promise;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      gate.promise,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, boundMs);
      }),
    ]);
    clearTimeout(timer);
  }

  /** The epoch is known on the current connection: lets every waiting miss go. */
  private settleEpoch(): void {
    const gate = this.epochUnknown;
    this.epochUnknown = null;
    gate?.settle();
  }

  /**
   * Redis is back: write the sessions created while it was away (a session Redis holds already
   * only gets its log level), then replay the deletes.
   */
  private async flush(): Promise<void> {
    if (this.closed) return;
    if (this.flushing) {
      // Sessions marked since this write-back passed them go in the next one.
      this.flushAgain = true;
      return;
    }
    this.flushing = true;
    this.flushAgain = false;
    try {
      for (const [id, kept] of [...this.local]) {
        // Read again from the live copy, not the list taken before the first await: a session
        // deleted (or refreshed) on this node since then must not be written back from it. The
        // write below is sent before any other code runs, so a delete after this check reaches
        // Redis after the write and removes the session.
        if (!kept.pending || this.local.get(id) !== kept) continue;
        const outcome = await this.write(kept.record, true);
        if (outcome === UNAVAILABLE) return;
        if (outcome === 2 && kept.record.logLevel !== null) {
          await this.call(
            (c) => c.conduitMcpSessionSetLevelV1(this.sessionKey(id), encode(kept.record.logLevel)),
            0,
          );
        }
        // Written back: no longer pending (unless deleted or replaced meanwhile, which counted it).
        if (this.local.get(id) === kept && kept.pending) {
          this.countPending(kept.record.creatorScope, -1);
        }
        kept.pending = false;
        // Refused (the creator's quota is taken, or the store refuses all): the client will
        // initialise again.
        if (outcome === 0 || outcome === 3) this.forget(id);
      }
      for (const id of [...this.pendingDeletes]) {
        const n = await this.call(
          (c) => c.conduitMcpSessionDeleteV4(this.sessionKey(id), id, this.keys.luaBase),
          UNAVAILABLE,
        );
        if (n === UNAVAILABLE) return;
        this.pendingDeletes.delete(id);
      }
    } finally {
      this.flushing = false;
      if (this.flushAgain) void this.flush();
    }
  }

  /** Puts a record in the local copy as most recently used, dropping the least recent beyond the bound. */
  private remember(record: SessionRecord, pending: boolean): void {
    if (this.localMax === 0) return;
    const previous = this.local.get(record.id);
    if (previous !== undefined) this.forget(record.id);
    const stillPending = pending || previous?.pending === true;
    this.local.set(record.id, { record, pending: stillPending, usedAt: performance.now() });
    if (stillPending) this.countPending(record.creatorScope, 1);
    this.pendingDeletes.delete(record.id);
    if (this.local.size > this.localMax) this.forget(this.local.keys().next().value as string);
  }

  /** Drops a session from the local copy; resolves whether it was there. */
  private forget(id: string): boolean {
    const kept = this.local.get(id);
    if (kept === undefined) return false;
    this.local.delete(id);
    if (kept.pending) this.countPending(kept.record.creatorScope, -1);
    return true;
  }

  /** Adds `delta` to a creator's count of pending sessions (entries at 0 are removed). */
  private countPending(scope: string, delta: number): void {
    const held = (this.pendingPerScope.get(scope) ?? 0) + delta;
    if (held <= 0) this.pendingPerScope.delete(scope);
    else this.pendingPerScope.set(scope, held);
  }

  /** A local copy's session, refreshed, or undefined. */
  private touchLocal(id: string): SessionRecord | undefined {
    const kept = this.local.get(id);
    if (kept === undefined) return undefined;
    this.local.delete(id);
    kept.usedAt = performance.now();
    kept.record = { ...kept.record, lastSeenAt: Date.now() };
    this.local.set(id, kept);
    return kept.record;
  }

  private sessionKey(id: string): string {
    return `${this.keys.tag}:sess:${id}`;
  }

  private now(): string {
    return this.clock === null ? "" : String(this.clock());
  }

  /** Not sent unless connected (no buffering), bounded, any failure resolves `fallback`. */
  private async call<T, F>(
    op: (c: Client & SessionScripts) => Promise<T>,
    fallback: F,
  ): Promise<T | F> {
    if (this.closed) throw new StoreClosedError();
    if (this.client.status !== "ready") return fallback;
    try {
      const result = await bounded(op(this.client as Client & SessionScripts), this.timeoutMs);
      if (this.monitor.isDown) {
        this.monitor.up();
        void this.flush();
      }
      return result;
    } catch (error) {
      this.monitor.down(error);
      return fallback;
    }
  }
}

/** A promise and the function that resolves it. */
function openGate(): { promise: Promise<void>; settle: () => void } {
  let settle: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    settle = resolve;
  });
  return { promise, settle };
}

function encode(value: string | null): string {
  return value === null ? "n" : `s${value}`;
}

function decode(raw: string | undefined): string | null {
  return raw === undefined || raw === "n" ? null : raw.slice(1);
}

/** A stored capability flag list, if it looks like one (short, flag characters only); else null. */
function capabilityFlags(stored: string | null): string | null {
  return stored !== null && stored.length <= 256 && /^[a-z. ]*$/.test(stored) ? stored : null;
}
