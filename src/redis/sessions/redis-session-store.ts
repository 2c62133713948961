/**
 * `RedisSessionStore`: 2025-era sessions (`Mcp-Session-Id`) shared by every node on one Redis, so a
 * client's next POST may land on any node.
 *
 * Key layout, under one hash tag `{t}` = `{prefix}` (one Redis Cluster slot, so that the
 * per-creator quota and the eviction of the largest creator stay atomic): `{t}:sess:<id>` HASH
 * (the record's fields), `{t}:sessions` ZSET (id → the end of its refresh window: the global bound, the size and the
 * idle-TTL sweep without a scan), `{t}:sc:<creator>` ZSET (one creating scope's sessions by
 * the same score), `{t}:creators` ZSET (creator → count and order of reaching it), `{t}:cseq`,
 * `{t}:cbytes` ZSET (creator → bytes of its records: the per-creator byte budget and the global
 * one's largest creator), `{t}:sbytes` (bytes of every record), `{t}:epoch` (a token set by the
 * first node to connect: a node that finds it gone or changed knows Redis lost its data).
 * Times (`lastSeenAt`, the TTL cutoff) are Redis's own `TIME`, one clock for every node.
 *
 * While Redis is away the store keeps working from a bounded local copy (see the class comment),
 * so an outage never locks clients out of their sessions. The parts, in this folder: the scripts
 * (session-scripts.ts), the hash fields (session-fields.ts), the local copy (local-copy.ts), the
 * epoch token that tells Redis restarted empty (epoch-watch.ts) and the ended channel
 * (ended-feed.ts).
 */
import type { Reachability } from "../../reachability.js";
import {
  type SessionCreateOutcome,
  type SessionRecord,
  type SessionStore,
  sessionRecordBytes,
} from "../../sessions/session-store.js";
import { RedisConnection } from "../connection/connection.js";
import { OutageMonitor } from "../connection/outage-monitor.js";
import { StoreCalls } from "../connection/store-calls.js";
import { KeyLayout, type ShardKeys } from "../key-layout.js";
import { EndedFeed } from "./ended-feed.js";
import { EpochWatch } from "./epoch-watch.js";
import { LocalCopy } from "./local-copy.js";
import { RedisTime, refreshDue } from "./redis-time.js";
import { encode, recordFromFields } from "./session-fields.js";
import { type RedisSessionStoreOptions, readSessionStoreOptions } from "./session-options.js";
import { defineSessionScripts, type SessionScripts } from "./session-scripts.js";

const PAGE = 1_000;
/** A call that did not reach Redis (outage, timeout, not connected). */
const UNAVAILABLE: unique symbol = Symbol("unavailable");

/** A limit as a script argument: -1 when off (Infinity). */
function limitArg(limit: number): string {
  return Number.isFinite(limit) ? String(limit) : "-1";
}

/** The longest a refresh holds, whatever the TTL. */
const MAX_REFRESH_WINDOW_MS = 60_000;

/**
 * The refresh window for a TTL: a 32nd of it, at most {@link MAX_REFRESH_WINDOW_MS}. A session is
 * removed after at least the TTL idle, and at most this much later (besides the janitor's period).
 */
export function refreshWindowFor(ttlMs: number): number {
  if (!(ttlMs >= 0)) return 0;
  return Math.min(Math.floor(ttlMs / 32), MAX_REFRESH_WINDOW_MS);
}

export type { RedisSessionStoreOptions };

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
  /** Whether Redis is reachable, from the command connection's events (`GET /ready`). */
  readonly reachability: Reachability;
  private readonly connection: RedisConnection;
  private readonly calls: StoreCalls<SessionScripts>;
  private readonly keys: ShardKeys;
  private readonly maxSessions: number;
  private readonly maxPerScope: number;
  /** The bounds as the create script takes them: count, per scope, bytes per scope, bytes. */
  private readonly limitArgs: readonly [string, string, string, string];
  /** Receives the line told when Redis lost the records. */
  private readonly log: (message: string) => void;
  private readonly clock: (() => number) | null;
  private readonly timeoutMs: number;
  private readonly local: LocalCopy;
  private readonly epoch: EpochWatch;
  private readonly endedFeed: EndedFeed;
  /**
   * How long a refresh holds (ms): a get refreshes a session only once the window of its last
   * refresh has passed (session-scripts.ts REFRESH). A 32nd of the TTL the janitor sweeps with (at
   * most a minute), told by `idleTtl` (or the first `cleanup`); until then every get refreshes.
   */
  private refreshWindowMs = 0;
  /** Redis's clock as this node knows it, from the refreshes (redis-time.ts). */
  private readonly redisTime = new RedisTime();
  private flushing = false;
  private flushAgain = false;
  private closed = false;

  constructor(options: RedisSessionStoreOptions) {
    const settings = readSessionStoreOptions(options);
    const { timeoutMs, log } = settings;
    this.timeoutMs = timeoutMs;
    this.clock = settings.clock;
    this.log = log;
    this.maxSessions = settings.maxSessions;
    this.maxPerScope = settings.maxSessionsPerScope;
    this.limitArgs = [
      limitArg(settings.maxSessions),
      limitArg(settings.maxSessionsPerScope),
      limitArg(settings.maxSessionBytesPerScope),
      limitArg(settings.maxSessionBytes),
    ];
    this.local = new LocalCopy(settings.localCopySize);
    const monitor = new OutageMonitor(log, "sessions");
    this.connection = new RedisConnection({ redis: options.redis, timeoutMs, monitor });
    const client = this.connection.client;
    this.reachability = this.connection.reachability;
    this.keys = new KeyLayout(settings.prefix, this.connection.keyPrefix, 1).all[0] as ShardKeys;
    defineSessionScripts(client);
    this.calls = new StoreCalls<SessionScripts>({
      client,
      timeoutMs,
      monitor,
      logger: log,
      faultLine: (text) => `conduit-mcp: Redis session store call failed (${text})`,
      isClosed: () => this.closed,
      onBack: () => void this.flush(),
    });
    this.epoch = new EpochWatch({
      read: async (token) => {
        const seen = await this.calls.run(
          (c) => c.conduitMcpSessionEpochV1(`${this.keys.tag}:epoch`, token),
          null,
        );
        return typeof seen === "string" ? seen : null;
      },
      canSend: () => client.status === "ready",
      lost: () => this.writeBackAll(),
    });
    this.endedFeed = new EndedFeed({
      connection: this.connection,
      // Channels are not key-prefixed by ioredis: the base carries the client's prefix already.
      channel: `${this.keys.luaBase}:ended`,
      isClosed: () => this.closed,
      heard: (id) => this.local.forget(id),
      catchUp: () => this.catchUpEnded(),
    });
    this.connection.on("close", () => {
      this.epoch.connectionLost();
      this.redisTime.forget();
    });
    this.connection.on("ready", () => {
      monitor.up();
      // Redis may have come back empty: that is checked before the write-back.
      void this.epoch.check().then(() => this.flush());
    });
    this.connection.connect();
  }

  /** Resolves true once connected; false after `timeoutMs`. */
  async ready(timeoutMs = 5_000): Promise<boolean> {
    const client = this.connection.client;
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && client.status !== "ready" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return !this.closed && client.status === "ready";
  }

  async create(record: SessionRecord): Promise<SessionCreateOutcome> {
    const outcome = await this.write(record, false);
    if (outcome === UNAVAILABLE) {
      // Redis is away: the session lives in the local copy (bounded per creator first) and is
      // written back when Redis is back.
      if (this.maxSessions === 0) return "full";
      const held =
        this.local.get(record.id)?.pending === true
          ? 0
          : this.local.pendingHeldBy(record.creatorScope);
      if (held >= this.maxPerScope) return "scope-full";
      this.local.remember(record, true);
      return "created";
    }
    if (outcome === 0) return "full";
    if (outcome === 3) return "scope-full";
    this.local.remember(record, false);
    return "created";
  }

  /**
   * The session, or undefined. Its `lastSeenAt` is Redis's time of its latest refresh: within a
   * refresh window of that (see {@link RedisSessionStore.cleanup}) a get writes nothing.
   */
  async get(id: string): Promise<SessionRecord | undefined> {
    return this.read(id, true);
  }

  /** `get`, with one more read of Redis when an epoch check may have written the record back. */
  private async read(id: string, again: boolean): Promise<SessionRecord | undefined> {
    const fields = await this.calls.run((c) => c.hgetall(this.sessionKey(id)), UNAVAILABLE);
    if (fields === UNAVAILABLE) return this.local.touch(id);
    let found = Object.keys(fields).length > 0;
    if (found) {
      let record = recordFromFields(id, fields);
      const until = Object.hasOwn(fields, "until") ? fields.until : undefined;
      const seen = Object.hasOwn(fields, "lastSeenAt") ? fields.lastSeenAt : undefined;
      if (refreshDue(until, this.clockBounds(), this.refreshWindowMs, seen)) {
        const at = await this.refresh(id);
        // Ended since it was read: as after a miss. Redis away: the record as read.
        if (at === null) found = false;
        else if (at !== UNAVAILABLE) record = { ...record, lastSeenAt: at };
      }
      if (found) {
        this.local.remember(record, false);
        return record;
      }
    }
    // Unknown to Redis: only a session kept during an outage and not yet written back survives.
    let kept = this.local.get(id);
    if (kept?.pending === true) return this.local.touch(id);
    if (kept !== undefined) {
      // Redis may have lost every record (restarted empty): then what this node holds is
      // written back, this session included. A miss right after a reconnect may come before
      // the reconnect's check has even started: it waits for that check (bounded).
      await this.epoch.known(this.timeoutMs * 2);
      kept = this.local.get(id);
      if (kept?.pending === true) return this.local.touch(id);
      await this.epoch.latest();
      if (!this.closed) await this.epoch.check();
      kept = this.local.get(id);
      if (kept?.pending === true) return this.local.touch(id);
      // The check may have found the loss and finished the write-back while this read
      // waited: the record is in Redis again, so read it once more before calling it gone.
      if (kept !== undefined && again && !this.closed) return this.read(id, false);
    }
    // Held here but gone from Redis: ended elsewhere, perhaps while this node was not listening.
    if (this.local.forget(id)) this.endedFeed.tell(id);
    return undefined;
  }

  async setLogLevel(id: string, level: string): Promise<boolean> {
    const ok = await this.calls.run(
      (c) => c.conduitMcpSessionSetLevelV1(this.sessionKey(id), encode(level)),
      UNAVAILABLE,
    );
    const kept = this.local.get(id);
    if (kept !== undefined) kept.record = { ...kept.record, logLevel: level };
    if (ok !== UNAVAILABLE) return ok === 1;
    if (kept === undefined) return false;
    this.local.markPending(kept);
    return true;
  }

  async delete(id: string): Promise<boolean> {
    // Forgotten before Redis is asked: a write-back of the outage copy (flush) running while the
    // delete waits for Redis must not find the session still there and write it again.
    const kept = this.local.forget(id);
    const n = await this.calls.run(
      (c) => c.conduitMcpSessionDeleteV4(this.sessionKey(id), id, this.keys.luaBase),
      UNAVAILABLE,
    );
    if (n !== UNAVAILABLE) return n === 1;
    this.local.queueDelete(id);
    // Redis is away: this node's listeners hear it now, the others when the delete is replayed.
    if (kept) this.endedFeed.tell(id);
    return kept;
  }

  /**
   * Removes sessions idle strictly longer than `ttlMs` by Redis's clock (`now`, this node's
   * clock, is not used: a node whose clock is ahead must not wipe sessions it did not age; with a
   * test `clock`, `now` is used as the memory store uses it). Idle time counts from the end of a
   * session's last refresh window (the first call also sets that window, {@link refreshWindowFor}:
   * a session is never removed sooner than `ttlMs` after its last use, at most a window later).
   */
  async cleanup(ttlMs: number, now: number): Promise<number> {
    if (!Number.isFinite(ttlMs)) return 0;
    const ttl = String(Math.max(0, Math.floor(ttlMs)));
    this.idleTtl(ttlMs);
    const at = this.clock === null ? "" : String(now);
    let removed = 0;
    for (let page = 0; page < 10_000; page++) {
      const n = await this.calls.run(
        (c) =>
          c.conduitMcpSessionExpireV5(this.keys.sessions, this.keys.luaBase, ttl, String(PAGE), at),
        0,
      );
      removed += n;
      if (n < PAGE) break;
    }
    // The local copy ages by this node's monotonic clock (it never compares with other nodes).
    this.local.dropIdle(performance.now() - ttlMs);
    return removed;
  }

  /**
   * The idle TTL the janitor sweeps with: from now on a get refreshes a session at most once per
   * {@link refreshWindowFor} of it (the first `cleanup` tells it too).
   */
  idleTtl(ttlMs: number): void {
    this.refreshWindowMs = refreshWindowFor(ttlMs);
  }

  async size(): Promise<number> {
    return this.calls.run((c) => c.zcard(this.keys.sessions), 0);
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
    return this.endedFeed.listen(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.epoch.settle();
    this.local.clear();
    this.endedFeed.clear();
    await this.connection.close();
  }

  /**
   * The ended channel was away: asks Redis which sessions of the local copy still exist and tells
   * the listeners about the others (their end was published while nobody here listened). The
   * channel's gap may have been Redis restarting empty, which only the epoch tells (then those
   * sessions are written back, not ended): the epoch is read again first.
   */
  private async catchUpEnded(): Promise<void> {
    this.epoch.doubtIt();
    await this.epoch.known(Number.POSITIVE_INFINITY);
    const ids = this.local.settledIds();
    for (let at = 0; at < ids.length && !this.closed; at += PAGE) {
      const page = ids.slice(at, at + PAGE);
      const scores = await this.calls.run(
        (c) => c.zmscore(this.keys.sessions, ...page),
        UNAVAILABLE,
      );
      if (scores === UNAVAILABLE) return;
      page.forEach((id, i) => {
        const kept = this.local.get(id);
        if (scores[i] === null && kept !== undefined && !kept.pending) {
          this.local.forget(id);
          this.endedFeed.tell(id);
        }
      });
    }
  }

  /** Writes a record; `restore` only if Redis does not hold it already. */
  private write(record: SessionRecord, restore: boolean): Promise<number | typeof UNAVAILABLE> {
    const keys = this.keys;
    const [max, maxPerScope, maxBytesPerScope, maxBytes] = this.limitArgs;
    return this.calls.run(
      (c) =>
        c.conduitMcpSessionCreateV5(
          keys.sessions,
          this.sessionKey(record.id),
          `${keys.tag}:sc:${record.creatorScope}`,
          record.id,
          max,
          encode(record.principalId),
          record.protocolVersion,
          String(record.createdAt),
          this.now(),
          encode(record.logLevel),
          restore ? "1" : "0",
          maxPerScope,
          record.creatorScope,
          keys.luaBase,
          encode(record.clientCapabilities ?? null),
          String(sessionRecordBytes(record)),
          maxBytesPerScope,
          maxBytes,
        ),
      UNAVAILABLE,
    );
  }

  /**
   * Redis lost its data (restarted without persistence, or flushed): every session of the local
   * copy is marked for the write-back (at once, before any waiting miss goes on), which recreates
   * those Redis lacks (each under its creator's quotas, as an `initialize` would be), and one line
   * says so.
   */
  private writeBackAll(): Promise<void> {
    const marked = this.local.markAllPending();
    this.log(
      `conduit-mcp: Redis came back without the session records (restarted without persistence, or flushed): writing back the ${marked} session(s) this node holds; sessions known only to other nodes are gone (their clients get 404 and initialise again). Keep sessions across Redis restarts with Redis persistence (appendonly yes): docs/tenancy.md.`,
    );
    return this.flush();
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
      for (const [id, kept] of this.local.entries()) {
        // Read again from the live copy, not the list taken before the first await: a session
        // deleted (or refreshed) on this node since then must not be written back from it. The
        // write below is sent before any other code runs, so a delete after this check reaches
        // Redis after the write and removes the session.
        if (!kept.pending || this.local.get(id) !== kept) continue;
        const outcome = await this.write(kept.record, true);
        if (outcome === UNAVAILABLE) return;
        if (outcome === 2 && kept.record.logLevel !== null) {
          await this.calls.run(
            (c) => c.conduitMcpSessionSetLevelV1(this.sessionKey(id), encode(kept.record.logLevel)),
            0,
          );
        }
        // Written back: no longer pending (unless deleted or replaced meanwhile, which counted it).
        this.local.writtenBack(id, kept);
        // Refused (the creator's quota is taken, or the store refuses all): the client will
        // initialise again.
        if (outcome === 0 || outcome === 3) this.local.forget(id);
      }
      for (const id of this.local.queuedDeletes()) {
        const n = await this.calls.run(
          (c) => c.conduitMcpSessionDeleteV4(this.sessionKey(id), id, this.keys.luaBase),
          UNAVAILABLE,
        );
        if (n === UNAVAILABLE) return;
        this.local.deleteReplayed(id);
      }
    } finally {
      this.flushing = false;
      if (this.flushAgain) void this.flush();
    }
  }

  /**
   * Writes a session's refresh (session-scripts.ts REFRESH); resolves the time written, null when
   * the session is gone, UNAVAILABLE when Redis is away. Learns Redis's clock from the answer.
   */
  private async refresh(id: string): Promise<number | null | typeof UNAVAILABLE> {
    const keys = this.keys;
    const sent = performance.now();
    const at = await this.calls.run(
      (c) =>
        c.conduitMcpSessionRefreshV1(
          keys.sessions,
          this.sessionKey(id),
          id,
          this.now(),
          keys.luaBase,
          String(this.refreshWindowMs),
        ),
      UNAVAILABLE,
    );
    if (at === UNAVAILABLE || at === null) return at;
    const now = Number(at);
    if (this.clock === null) this.redisTime.learn(now, sent, performance.now());
    return now;
  }

  /** Redis's clock now, as an interval: the test clock exactly, else the estimate (or null). */
  private clockBounds(): readonly [number, number] | null {
    if (this.clock === null) return this.redisTime.bounds();
    const now = this.clock();
    return [now, now];
  }

  private sessionKey(id: string): string {
    return `${this.keys.tag}:sess:${id}`;
  }

  private now(): string {
    return this.clock === null ? "" : String(this.clock());
  }
}
