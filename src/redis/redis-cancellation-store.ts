/**
 * `RedisCancellationStore`: the cancellation rows and in-flight entries of every process and node,
 * in one Redis (or Redis Cluster), with the memory store's semantics. Quota, cap eviction, refresh
 * and clear run as Lua scripts, so the row rules hold under any concurrency; a cancel that another
 * node can act on (a notification or a library cancel, or every handle of a scope) is published
 * on a channel so the node running the request aborts it at once, and kept in a bounded catch-up
 * stream so a node whose subscriber was away still hears it; each node holds a lease so a crashed
 * node's in-flight entries are swept by the others. Redis being away never fails a request: the
 * store fails open.
 */

import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { Cluster, type Redis } from "ioredis";
import { DEFAULT_MAX_ROWS, DEFAULT_MAX_ROWS_PER_SCOPE } from "../cancellation/memory-store.js";
import type {
  CancellationRow,
  CancellationStore,
  CleanupResult,
  RecordOutcome,
  RemoteCancellation,
} from "../cancellation/types.js";
import { type CancellationSource, InvalidOptionError, StoreClosedError } from "../errors.js";
import { integerBetween, MAX_TIMER_MS, OPTION, readOption } from "../option-schema.js";
import type { Reachability } from "../reachability.js";
import { bounded, readyWithin } from "./bounded.js";
import { type RedisClient, RedisConnection } from "./connection.js";
import {
  KeyLayout,
  pairMember,
  readPrefix,
  type ShardKeys,
  type Wire,
  wire,
} from "./key-layout.js";
import { describeError, OutageMonitor } from "./outage-monitor.js";
import {
  decodeRemoteFrame,
  decodeRemoteMessage,
  encodeRemoteMessage,
  type RemoteMessage,
  streamIdAfter,
} from "./remote-message.js";
import {
  ANNOUNCE_SCRIPT,
  CLEAR_SCRIPT,
  EXPIRE_SCRIPT,
  REAP_NODES_SCRIPT,
  RECORD_SCRIPT,
  REMOVE_IN_FLIGHT_SCRIPT,
  RENEW_LEASE_SCRIPT,
  RESYNC_SCRIPT,
  RETIRE_NODE_SCRIPT,
  SHARE_IN_FLIGHT_SCRIPT,
} from "./scripts.js";

/** Options of {@link RedisCancellationStore}. */
export interface RedisCancellationStoreOptions {
  /**
   * A Redis URL (the store then owns its connection, configured to fail fast), or an ioredis
   * `Redis` / `Cluster` you own. For your own client, prefer `enableOfflineQueue: false`; the store
   * never sends while the client is not ready and bounds every call anyway. A client created with
   * `lazyConnect` is connected by the store.
   */
  readonly redis: Redis | Cluster | string;
  /** Key prefix, part of every hash tag; no braces. Default `"conduit-mcp"`. */
  readonly prefix?: string;
  /**
   * Number of key-space shards (1..1024), each under its own hash tag; a scope lives in one.
   * Default 1 on a single Redis, 16 on a `Cluster` (so the tenants spread over its masters).
   * With more than one shard, `maxRows` is enforced per shard as `floor(maxRows / shards)`.
   */
  readonly shards?: number;
  /** Global row cap (`Infinity` disables). Default 10 000. */
  readonly maxRows?: number;
  /** Per-scope quota (`Infinity` disables). Default 256. */
  readonly maxRowsPerScope?: number;
  /**
   * For tests only: a time source in ms that replaces Redis's `TIME` in every script. Unset (the
   * default), stamps and TTL cutoffs come from Redis's clock, one clock for all nodes.
   */
  readonly clock?: () => number;
  /** Lease of this node, renewed every `leaseMs / 3`. Default 15 000. */
  readonly leaseMs?: number;
  /** This node's id: printable ASCII without spaces, ≤ 128 chars. Default `<host>-<pid>-<random>`. */
  readonly nodeId?: string;
  /** Upper bound on one Redis call before it counts as an outage. Default 1 000. */
  readonly commandTimeoutMs?: number;
  /**
   * Cross-node cancels kept per shard for a node whose subscriber reconnects (approximate, Redis
   * `MAXLEN ~`). Default 1 000.
   */
  readonly catchUpLength?: number;
  /** Receives the one line per outage (and script faults). Default `console.warn`. */
  readonly logger?: (message: string) => void;
  /**
   * How long a call runs on this node before its in-flight entry is written to Redis, in ms
   * (0..60 000). Default 50. A call that ends sooner costs no Redis round trip at all; until its
   * entry is written, `isInFlight` on other nodes answers false, and a `notifications/cancelled`
   * reaching another node is announced to every node (no row), so the call is still aborted. 0
   * writes every entry at once (`track` waits for it). See the README, "Redis".
   */
  readonly shareAfterMs?: number;
}

type Client = RedisClient;

/** The scripts, as ioredis `defineCommand` adds them (EVALSHA, falling back to EVAL on NOSCRIPT). */
interface ScriptedClient {
  conduitMcpRecordV2(...args: Wire[]): Promise<[number, number]>;
  conduitMcpAnnounceV1(...args: Wire[]): Promise<number>;
  conduitMcpClearV1(...args: Wire[]): Promise<number>;
  conduitMcpExpireV2(...args: Wire[]): Promise<number>;
  conduitMcpShareInFlightV1(...args: Wire[]): Promise<number>;
  conduitMcpRemoveInFlightV1(...args: Wire[]): Promise<number>;
  conduitMcpRenewLeaseV1(...args: Wire[]): Promise<number>;
  conduitMcpResyncV1(...args: Wire[]): Promise<number>;
  conduitMcpReapNodesV1(...args: Wire[]): Promise<number>;
  conduitMcpRetireNodeV1(...args: Wire[]): Promise<number>;
}

const SCRIPTS: ReadonlyArray<readonly [keyof ScriptedClient, string, number]> = [
  ["conduitMcpRecordV2", RECORD_SCRIPT, 5],
  ["conduitMcpAnnounceV1", ANNOUNCE_SCRIPT, 1],
  ["conduitMcpClearV1", CLEAR_SCRIPT, 2],
  ["conduitMcpExpireV2", EXPIRE_SCRIPT, 2],
  ["conduitMcpShareInFlightV1", SHARE_IN_FLIGHT_SCRIPT, 2],
  ["conduitMcpRemoveInFlightV1", REMOVE_IN_FLIGHT_SCRIPT, 2],
  ["conduitMcpRenewLeaseV1", RENEW_LEASE_SCRIPT, 2],
  ["conduitMcpResyncV1", RESYNC_SCRIPT, 3],
  ["conduitMcpReapNodesV1", REAP_NODES_SCRIPT, 1],
  ["conduitMcpRetireNodeV1", RETIRE_NODE_SCRIPT, 3],
];

/**
 * Sources whose cancel another node can act on: they target a `(scope, id)` key, so a namesake
 * running elsewhere must abort. A disconnect or shutdown concerns one handle on the node
 * that saw it: its row is written, nothing is published.
 */
const ANNOUNCED_SOURCES: ReadonlySet<CancellationSource> = new Set(["notification", "library"]);
/** Rows removed per EXPIRE call: one script never holds Redis for long. */
const EXPIRE_PAGE = 1_000;
/** Upper bound on EXPIRE pages per cleanup (10 M rows); a bounded loop. */
const EXPIRE_MAX_PAGES = 10_000;
/** Reply errors that mean "Redis cannot serve now" (an outage), not "this call is wrong". */
const OUTAGE_REPLY =
  /^(LOADING|READONLY|CLUSTERDOWN|MASTERDOWN|BUSY|TRYAGAIN|NOREPLICAS|MOVED|ASK)\b/;
const NODE_ID = /^[\x21-\x7e]{1,128}$/;
/** Default of `shareAfterMs`: calls finishing within tens of ms need no cross-node sharing. */
export const DEFAULT_SHARE_AFTER_MS = 50;
/** Entries per share script: one script never holds Redis for long. */
const SHARE_BATCH = 500;
/**
 * Keys this node recorded or heard a cancel for (so a row may exist), kept to decide whether the
 * clear at a call's end needs Redis. Global FIFO bound: a key pushed out only means a stale row of
 * it lives until its TTL instead of being cleared early; no check depends on it.
 */
const MAX_ROW_HINTS = 10_000;
/** Recently ended calls whose key has no row known here; consumed by the clear that follows. */
const MAX_QUIET = 10_000;
const RESOLVED_VOID: Promise<void> = Promise.resolve();
const RESOLVED_FALSE: Promise<boolean> = Promise.resolve(false);

/** A local in-flight entry, kept so the node can share it later and re-assert it after an outage. */
interface LocalEntry {
  readonly scope: string;
  readonly requestId: string;
  readonly handleId: string;
  /** `performance.now()` from which it is due to be written to Redis. */
  readonly due: number;
  /** Set once it is sent to Redis (or about to be): from then on it is shared. */
  shared: SharedEntry | null;
}

/** What an entry is in Redis. */
interface SharedEntry {
  readonly field: string;
  readonly member: Wire;
  readonly shard: ShardKeys;
}

/**
 * A {@link CancellationStore} on Redis (ioredis 5), shared by every process and node that uses the
 * same Redis and prefix.
 *
 * Fail-open: while Redis is unreachable no call throws or waits longer than `commandTimeoutMs`;
 * `record` resolves `"recorded"` without writing (so the registry still aborts this process's own
 * handles — refusing would turn a Redis outage into uncancellable requests), `has` / `isInFlight`
 * resolve false, `reason` undefined, `size` 0, writes are dropped. Each outage logs one line and
 * publishes `conduit-mcp:store:outage` `{ state: "down" }`, then `{ state: "up" }` when Redis is
 * back; the subscriber resubscribes, reads the cancels it missed from the catch-up streams, and
 * the node re-asserts its lease and its live in-flight entries by itself.
 *
 * @example
 * ```ts
 * import { CancellationRegistry } from "conduit-mcp";
 * import { RedisCancellationStore } from "conduit-mcp/redis";
 *
 * const store = new RedisCancellationStore({ redis: "redis://127.0.0.1:6379" });
 * await store.ready(); // optional: wait for the first connection
 * const registry = new CancellationRegistry({ store });
 * ```
 */
export class RedisCancellationStore implements CancellationStore {
  /** This node's id (entries and published events carry it). */
  readonly nodeId: string;
  private readonly client: Client;
  private readonly subscriber: Client;
  private readonly connection: RedisConnection;
  private readonly keys: KeyLayout;
  private readonly maxRowsArg: string;
  private readonly maxPerScopeArg: string;
  private readonly batchArg: string;
  private readonly streamLengthArg: string;
  /** `""` (Redis's TIME) unless a test clock was given. */
  private readonly clock: (() => number) | null;
  private readonly leaseMs: number;
  private readonly timeoutMs: number;
  private readonly logger: (message: string) => void;
  /** Whether Redis is reachable, from the command connection's events (`GET /ready`). */
  readonly reachability: Reachability;
  private readonly monitor: OutageMonitor;
  private readonly listeners = new Set<(event: RemoteCancellation) => void>();
  private readonly local = new Map<string, LocalEntry>();
  /** Entries not yet written to Redis, in order of `due` (insertion order). */
  private readonly pending = new Map<string, LocalEntry>();
  private readonly shareAfterMs: number;
  private shareTimer: NodeJS.Timeout | null = null;
  /** Row hints (see {@link MAX_ROW_HINTS}): key → when last recorded or heard (`performance.now()`). */
  private readonly rowHints = new Map<string, number>();
  /** Keys of calls that ended with no row known here (see {@link MAX_QUIET}). */
  private readonly quiet = new Set<string>();
  private readonly leaseTimer: NodeJS.Timeout;
  private readonly reportedFaults = new Set<string>();
  /** Per shard: the newest catch-up stream id this node has heard of (null before the first). */
  private readonly lastSeen: Array<string | null>;
  private subscribed = false;
  private leaseAsserted = false;
  private closed = false;

  constructor(options: RedisCancellationStoreOptions) {
    if (typeof options !== "object" || options === null) {
      throw new InvalidOptionError("options", "an object", options);
    }
    const prefix = readPrefix(options.prefix);
    const maxRows = readOption(OPTION.positiveLimit, "maxRows", options.maxRows, DEFAULT_MAX_ROWS);
    const maxPerScope = readOption(
      OPTION.positiveLimit,
      "maxRowsPerScope",
      options.maxRowsPerScope,
      DEFAULT_MAX_ROWS_PER_SCOPE,
    );
    this.leaseMs = readOption(integerBetween(3, MAX_TIMER_MS), "leaseMs", options.leaseMs, 15_000);
    this.timeoutMs = readOption(
      OPTION.timerMs,
      "commandTimeoutMs",
      options.commandTimeoutMs,
      1_000,
    );
    const streamLength = readOption(
      OPTION.positiveInteger,
      "catchUpLength",
      options.catchUpLength,
      1_000,
    );
    this.clock = readOption(OPTION.clock, "clock", options.clock, null);
    this.shareAfterMs = readOption(
      integerBetween(0, 60_000),
      "shareAfterMs",
      options.shareAfterMs,
      DEFAULT_SHARE_AFTER_MS,
    );
    readOption(OPTION.logger, "logger", options.logger, undefined);
    const nodeId = options.nodeId ?? defaultNodeId();
    if (typeof nodeId !== "string" || !NODE_ID.test(nodeId)) {
      throw new InvalidOptionError(
        "nodeId",
        "1 to 128 printable ASCII characters, no spaces",
        nodeId,
      );
    }
    this.nodeId = nodeId;
    this.logger = options.logger ?? ((message) => console.warn(message));
    this.monitor = new OutageMonitor(this.logger, "cancellation");

    this.connection = new RedisConnection({
      redis: options.redis,
      timeoutMs: this.timeoutMs,
      monitor: this.monitor,
    });
    this.client = this.connection.client;
    this.reachability = this.connection.reachability;
    const shards = readOption(
      integerBetween(1, 1_024),
      "shards",
      options.shards,
      this.client instanceof Cluster ? 16 : 1,
    );
    // The cap per shard: the whole table never holds more than maxRows.
    const shardCap = Number.isFinite(maxRows) ? Math.max(1, Math.floor(maxRows / shards)) : -1;
    this.maxRowsArg = String(shardCap);
    this.maxPerScopeArg = Number.isFinite(maxPerScope) ? String(maxPerScope) : "-1";
    // One eviction batch is a twentieth of the cap (at least one row).
    this.batchArg = String(shardCap > 0 ? Math.max(1, Math.floor(shardCap / 20)) : 1);
    this.streamLengthArg = String(streamLength);
    this.lastSeen = new Array<string | null>(shards).fill(null);
    this.keys = new KeyLayout(prefix, this.connection.keyPrefix, shards);
    for (const [name, lua, numberOfKeys] of SCRIPTS) {
      this.client.defineCommand(name, { lua, numberOfKeys });
    }
    this.connection.on("ready", () => this.onReady());

    // A dedicated connection for SUBSCRIBE (a subscribed connection cannot run other commands).
    // Resubscribing is done here on every `ready`, not by ioredis, so the store can read what it
    // missed and `ready()` can tell when cross-node delivery is live again after an outage.
    this.subscriber = this.connection.subscriber(`conduit-mcp-sub-${nodeId}`);
    this.subscriber.on("close", () => {
      this.subscribed = false;
    });
    this.subscriber.on("ready", () => void this.subscribe());
    this.subscriber.on("message", (channel: string, raw: string) => this.onMessage(channel, raw));
    if (this.subscriber.status === "ready") void this.subscribe();

    this.leaseTimer = setInterval(() => void this.renewLease(), Math.floor(this.leaseMs / 3));
    this.leaseTimer.unref();
    if (this.client.status === "ready") this.onReady();
    this.connection.connect();
  }

  /**
   * Resolves true once the command connection is ready, the lease is held and the subscriber
   * listens; false after `timeoutMs`. Optional: before that, calls fail open.
   *
   * @example
   * ```ts
   * if (!(await store.ready(2_000))) console.warn("Redis not reachable yet; failing open");
   * ```
   */
  ready(timeoutMs = 5_000): Promise<boolean> {
    return readyWithin(timeoutMs, () => {
      if (this.closed) return "closed";
      const live = this.client.status === "ready" && this.subscribed && this.leaseAsserted;
      return live ? "ready" : "wait";
    });
  }

  async record(row: CancellationRow, source: CancellationSource): Promise<RecordOutcome> {
    const { scope, requestId, reason } = row;
    const s = wire(scope);
    const id = wire(requestId);
    const shard = this.keys.shardOf(s);
    const payload = ANNOUNCED_SOURCES.has(source)
      ? encodeRemoteMessage({ scope, requestId, reason, source, node: this.nodeId })
      : "";
    this.hintRow(scope, requestId);
    const result = await this.call(
      (c) =>
        c.conduitMcpRecordV2(
          shard.scopes,
          shard.scopeRows(s),
          shard.scopeReasons(s),
          shard.time,
          shard.catchUp,
          shard.luaBase,
          s,
          id,
          this.now(),
          reason === null ? "n" : `s${reason}`,
          this.maxRowsArg,
          this.maxPerScopeArg,
          this.batchArg,
          this.keys.channel,
          payload,
          this.streamLengthArg,
          String(shard.index),
        ),
      null,
    );
    // Fail-open: without Redis the cancel still counts locally (see the class comment).
    if (result === null) return "recorded";
    return result[0] === 1 ? "recorded" : "limit_reached";
  }

  /**
   * Tells every other node that every handle of `scope` must abort (e.g. its session ended); no
   * row is written. Fails open like every call.
   */
  async announceScopeCancel(
    scope: string,
    reason: string | null,
    source: CancellationSource,
  ): Promise<void> {
    const shard = this.keys.shardOf(wire(scope));
    const payload = encodeRemoteMessage({
      scope,
      requestId: null,
      reason,
      source,
      node: this.nodeId,
    });
    await this.call(
      (c) =>
        c.conduitMcpAnnounceV1(
          shard.catchUp,
          this.keys.channel,
          payload,
          this.streamLengthArg,
          String(shard.index),
        ),
      0,
    );
  }

  /**
   * Tells every other node to abort its handles of `(scope, requestId)` that `source` may reach,
   * without writing a row: for a cancel of a key that is in flight nowhere Redis can see, which
   * may be a call another node has not shared yet (see `shareAfterMs`). Fails open like every call.
   */
  async announceCancel(
    scope: string,
    requestId: string,
    reason: string | null,
    source: CancellationSource,
  ): Promise<void> {
    if (!ANNOUNCED_SOURCES.has(source)) return;
    const shard = this.keys.shardOf(wire(scope));
    const payload = encodeRemoteMessage({ scope, requestId, reason, source, node: this.nodeId });
    await this.call(
      (c) =>
        c.conduitMcpAnnounceV1(
          shard.catchUp,
          this.keys.channel,
          payload,
          this.streamLengthArg,
          String(shard.index),
        ),
      0,
    );
  }

  async has(scope: string, requestId: string): Promise<boolean> {
    const score = await this.call(
      (c) => c.zscore(this.keys.scopeRows(wire(scope)), wire(requestId)),
      null,
    );
    return score !== null;
  }

  async reason(scope: string, requestId: string): Promise<string | null | undefined> {
    const s = wire(scope);
    const raw = await this.call(
      (c) => c.hget(this.keys.shardOf(s).scopeReasons(s), wire(requestId)),
      null,
    );
    if (raw === null) return undefined;
    return raw === "n" ? null : raw.slice(1);
  }

  /**
   * Removes the row, reading before it writes. The clear that follows the end of a call whose key
   * has no row known here (none recorded by this node or heard from another since it was last
   * cleared) answers false without Redis: that is every call nobody cancelled.
   */
  clear(scope: string, requestId: string): Promise<boolean> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    const key = hintKey(scope, requestId);
    if (this.quiet.delete(key) && !this.rowHints.has(key)) return RESOLVED_FALSE;
    this.rowHints.delete(key);
    const s = wire(scope);
    const shard = this.keys.shardOf(s);
    return this.call(
      (c) =>
        c.conduitMcpClearV1(shard.scopes, shard.scopeRows(s), shard.luaBase, s, wire(requestId)),
      0,
    ).then((removed) => removed === 1);
  }

  /**
   * Adds the entry on this node at once; it is written to Redis only once the call has run
   * `shareAfterMs` (the entries due together go in one script per shard), or at once, awaited,
   * when `shareAfterMs` is 0.
   */
  addInFlight(scope: string, requestId: string, handleId: string): Promise<void> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    const entry: LocalEntry = {
      scope,
      requestId,
      handleId,
      due: performance.now() + this.shareAfterMs,
      shared: null,
    };
    this.local.set(handleId, entry);
    if (this.shareAfterMs === 0) return this.share([entry]);
    this.pending.set(handleId, entry);
    if (this.shareTimer === null) this.armShareTimer(Math.ceil(this.shareAfterMs * 1.1));
    return RESOLVED_VOID;
  }

  /** Removes the entry; one that was never written to Redis costs no round trip. */
  removeInFlight(scope: string, requestId: string, handleId: string): Promise<void> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    const entry = this.local.get(handleId);
    if (entry !== undefined && entry.scope === scope && entry.requestId === requestId) {
      this.local.delete(handleId);
      const key = hintKey(scope, requestId);
      if (!this.rowHints.has(key)) {
        if (this.quiet.size >= MAX_QUIET) this.quiet.delete(this.quiet.values().next().value ?? "");
        this.quiet.add(key);
      }
      if (entry.shared === null) {
        this.pending.delete(handleId);
        return RESOLVED_VOID;
      }
    }
    const s = wire(scope);
    const shard = this.keys.shardOf(s);
    return this.call(
      (c) =>
        c.conduitMcpRemoveInFlightV1(
          shard.inFlight(s, wire(requestId)),
          shard.nodeEntries(this.nodeId),
          `${this.nodeId} ${handleId}`,
        ),
      0,
    ).then(noop);
  }

  /** An entry of this node not yet shared answers here; otherwise Redis answers. */
  async isInFlight(scope: string, requestId: string): Promise<boolean> {
    for (const entry of this.pending.values()) {
      if (entry.requestId === requestId && entry.scope === scope) return true;
    }
    const n = await this.call((c) => c.exists(this.keys.inFlight(wire(scope), wire(requestId))), 0);
    return n === 1;
  }

  /**
   * Removes rows strictly older than `ttlMs` by Redis's clock (`now`, this node's clock, is not
   * used: a node whose clock is ahead must not wipe rows it did not age), then the entries of
   * nodes whose lease lapsed.
   */
  async cleanup(ttlMs: number, _now: number): Promise<CleanupResult> {
    // Row hints older than the TTL name rows this cleanup removes anyway.
    const cutoff = performance.now() - ttlMs;
    for (const [key, at] of this.rowHints) {
      if (at >= cutoff) break;
      this.rowHints.delete(key);
    }
    let removed = 0;
    let inFlightRemoved = 0;
    await Promise.all(
      this.keys.all.map(async (shard) => {
        if (Number.isFinite(ttlMs)) {
          for (let page = 0; page < EXPIRE_MAX_PAGES; page++) {
            const n = await this.call(
              (c) =>
                c.conduitMcpExpireV2(
                  shard.scopes,
                  shard.time,
                  shard.luaBase,
                  String(Math.max(0, Math.floor(ttlMs))),
                  String(EXPIRE_PAGE),
                  this.now(),
                ),
              0,
            );
            removed += n;
            if (n < EXPIRE_PAGE) break;
          }
        }
        inFlightRemoved += await this.call(
          (c) => c.conduitMcpReapNodesV1(shard.nodes, shard.luaBase),
          0,
        );
      }),
    );
    return { removed, inFlightRemoved };
  }

  async size(): Promise<number> {
    const counts = await Promise.all(
      this.keys.all.map((shard) => this.call((c) => c.zcard(shard.time), 0)),
    );
    return counts.reduce((sum, n) => sum + n, 0);
  }

  onRemoteCancellation(listener: (event: RemoteCancellation) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Stops the lease timer, removes this node's lease and in-flight entries (a clean exit leaves
   * nothing for the sweep), closes the subscriber, and quits the connection if the store owns it.
   * Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.leaseTimer);
    if (this.shareTimer !== null) clearTimeout(this.shareTimer);
    this.shareTimer = null;
    this.pending.clear();
    if (this.client.status === "ready") {
      await Promise.all(
        this.keys.all.map((shard) =>
          this.call(
            (c) =>
              c.conduitMcpRetireNodeV1(
                shard.nodeEntries(this.nodeId),
                shard.nodes,
                shard.lease(this.nodeId),
                shard.luaBase,
                this.nodeId,
              ),
            0,
          ),
        ),
      );
    }
    this.closed = true;
    this.local.clear();
    this.rowHints.clear();
    this.quiet.clear();
    this.listeners.clear();
    await this.connection.close();
  }

  /** Notes that a row of the key may exist (recorded here or announced by another node). */
  private hintRow(scope: string, requestId: string): void {
    const key = hintKey(scope, requestId);
    // Re-inserted so the map stays in time order (the cleanup prunes from the front).
    this.rowHints.delete(key);
    if (this.rowHints.size >= MAX_ROW_HINTS) {
      this.rowHints.delete(this.rowHints.keys().next().value ?? "");
    }
    this.rowHints.set(key, performance.now());
  }

  /**
   * One timer for all pending entries. It fires a little after the oldest is due (a tenth of
   * `shareAfterMs` later), so the entries that came due meanwhile go to Redis together, and never
   * before an entry is due.
   */
  private armShareTimer(delayMs: number): void {
    this.shareTimer = setTimeout(this.onShareTimer, delayMs);
    this.shareTimer.unref();
  }

  private readonly onShareTimer = (): void => {
    this.shareTimer = null;
    if (this.closed) return;
    const now = performance.now();
    const due: LocalEntry[] = [];
    for (const entry of this.pending.values()) {
      if (entry.due > now) break;
      due.push(entry);
    }
    for (const entry of due) this.pending.delete(entry.handleId);
    if (due.length > 0) void this.share(due);
    const head = this.pending.values().next().value;
    if (head !== undefined) {
      this.armShareTimer(Math.ceil(head.due - now + this.shareAfterMs / 10));
    }
  };

  /**
   * Writes entries to Redis, one script per shard and batch. An entry counts as shared from here
   * on, even if Redis is away: the resync after the outage writes it then.
   */
  private async share(entries: readonly LocalEntry[]): Promise<void> {
    const byShard = new Map<ShardKeys, Wire[]>();
    for (const entry of entries) {
      const s = wire(entry.scope);
      const shard = this.keys.shardOf(s);
      const shared: SharedEntry = {
        field: `${this.nodeId} ${entry.handleId}`,
        member: pairMember(s, wire(entry.requestId)),
        shard,
      };
      entry.shared = shared;
      let args = byShard.get(shard);
      if (args === undefined) {
        args = [];
        byShard.set(shard, args);
      }
      args.push(shared.field, shared.member);
    }
    const sends: Promise<number>[] = [];
    for (const [shard, pairs] of byShard) {
      for (let at = 0; at < pairs.length; at += 2 * SHARE_BATCH) {
        const batch = pairs.slice(at, at + 2 * SHARE_BATCH);
        sends.push(
          this.call(
            (c) =>
              c.conduitMcpShareInFlightV1(
                shard.nodeEntries(this.nodeId),
                shard.nodes,
                shard.luaBase,
                this.nodeId,
                ...batch,
              ),
            0,
          ),
        );
      }
    }
    await Promise.all(sends);
  }

  /** The scripts' "now": `""` lets Redis use its own `TIME`. */
  private now(): string {
    return this.clock === null ? "" : String(this.clock());
  }

  /**
   * Runs one Redis call with the fail-open policy: not sent while the connection is not ready (no
   * buffering), bounded by `commandTimeoutMs`, and any failure resolves `fallback`.
   */
  private async call<T>(
    op: (client: Client & ScriptedClient) => Promise<T>,
    fallback: T,
  ): Promise<T> {
    if (this.closed) throw new StoreClosedError();
    if (this.client.status !== "ready") return fallback;
    try {
      const result = await bounded(op(this.client as Client & ScriptedClient), this.timeoutMs);
      if (this.monitor.isDown) {
        // Redis answered again on a connection that never dropped (e.g. after a stall).
        this.monitor.up();
        void this.resync();
      }
      return result;
    } catch (error) {
      this.fault(error);
      return fallback;
    }
  }

  /** An outage (reported once), or a reply error that no retry will fix (reported once per text). */
  private fault(error: unknown): void {
    const name = error instanceof Error ? error.name : "";
    const message = error instanceof Error ? error.message : "";
    if (name === "ReplyError" && !OUTAGE_REPLY.test(message)) {
      const text = describeError(error);
      if (this.reportedFaults.has(text) || this.reportedFaults.size >= 20) return;
      this.reportedFaults.add(text);
      try {
        this.logger(`conduit-mcp: Redis cancellation store call failed (${text}); failing open`);
      } catch {
        // A broken logger must not break request handling.
      }
      return;
    }
    this.monitor.down(error);
  }

  /** A (re)connection: the outage is over; re-assert the lease and this node's live entries. */
  private onReady(): void {
    if (this.closed) return;
    this.monitor.up();
    void this.resync();
  }

  /** Renews the lease in every shard; a lapsed one means our entries may be swept: resync. */
  private async renewLease(): Promise<void> {
    if (this.closed || this.client.status !== "ready") return;
    const held = await Promise.all(
      this.keys.all.map((shard) =>
        this.call(
          (c) =>
            c.conduitMcpRenewLeaseV1(
              shard.lease(this.nodeId),
              shard.nodes,
              this.nodeId,
              String(this.leaseMs),
            ),
          1,
        ),
      ),
    );
    if (held.includes(0)) await this.resync();
  }

  /** Makes Redis hold exactly this node's live in-flight entries, and the lease, in every shard. */
  private async resync(): Promise<void> {
    if (this.closed || this.client.status !== "ready") return;
    const byShard = this.keys.all.map((shard): Wire[] => [
      shard.nodeEntries(this.nodeId),
      shard.nodes,
      shard.lease(this.nodeId),
      shard.luaBase,
      this.nodeId,
      String(this.leaseMs),
    ]);
    for (const entry of this.local.values()) {
      const shared = entry.shared;
      if (shared !== null) byShard[shared.shard.index]?.push(shared.field, shared.member);
    }
    const results = await Promise.all(
      byShard.map((args) => this.call((c) => c.conduitMcpResyncV1(...args), 0)),
    );
    if (results.every((ok) => ok === 1)) this.leaseAsserted = true;
  }

  /**
   * Subscribes, then reads from each shard's catch-up stream what was announced while this node
   * was not listening (nothing on the very first subscription: only the position is taken).
   */
  private async subscribe(): Promise<void> {
    if (this.closed) return;
    try {
      await this.subscriber.subscribe(this.keys.channel);
    } catch {
      return; // Retried on the next `ready`.
    }
    await Promise.all(this.keys.all.map((shard) => this.catchUp(shard)));
    if (!this.closed && this.subscriber.status === "ready") this.subscribed = true;
  }

  /** One shard's catch-up: deliver what is newer than the last id heard, or take the position. */
  private async catchUp(shard: ShardKeys): Promise<void> {
    const since = this.lastSeen[shard.index] ?? null;
    if (since === null) {
      const latest = await this.call((c) => c.xrevrange(shard.catchUp, "+", "-", "COUNT", 1), []);
      const id = latest[0]?.[0];
      if (this.lastSeen[shard.index] === null) this.lastSeen[shard.index] = id ?? "0-0";
      return;
    }
    const missed = await this.call(
      (c) => c.xrange(shard.catchUp, `(${since}`, "+", "COUNT", Number(this.streamLengthArg)),
      [],
    );
    for (const [streamId, fields] of missed) {
      this.heard(shard.index, streamId);
      const message = fields[0] === "m" ? decodeRemoteMessage(fields[1]) : null;
      if (message !== null) this.deliver(message);
    }
  }

  /** Advances a shard's position to `streamId` if it is newer. */
  private heard(shard: number, streamId: string): void {
    const seen = this.lastSeen[shard];
    if (seen === null || seen === undefined || streamIdAfter(streamId, seen)) {
      this.lastSeen[shard] = streamId;
    }
  }

  /** A channel frame: hostile until validated; our own events are not remote. */
  private onMessage(channel: string, raw: string): void {
    if (this.closed || channel !== this.keys.channel) return;
    const frame = decodeRemoteFrame(raw, this.keys.shards);
    if (frame === null) return;
    this.heard(frame.shard, frame.streamId);
    this.deliver(frame.message);
  }

  private deliver(message: RemoteMessage): void {
    if (message.node === this.nodeId) return;
    if (message.requestId !== null) this.hintRow(message.scope, message.requestId);
    const event: RemoteCancellation = {
      scope: message.scope,
      requestId: message.requestId,
      reason: message.reason,
      source: message.source,
    };
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (error) {
        try {
          this.logger(`conduit-mcp: a remote cancellation listener threw: ${describeError(error)}`);
        } catch {
          // Ignore a broken logger.
        }
      }
    }
  }
}

/** A node id unique to this process: `<host>-<pid>-<random>`. */
export function defaultNodeId(): string {
  const host =
    hostname()
      .replace(/[^\x21-\x7e]/g, "")
      .slice(0, 64) || "node";
  return `${host}-${process.pid}-${randomUUID().slice(0, 8)}`;
}

/** A key of the local hint sets: unambiguous (the scope's length first). */
function hintKey(scope: string, requestId: string): string {
  return `${scope.length}:${scope}${requestId}`;
}

function noop(): void {
  // The caller needs no value.
}
