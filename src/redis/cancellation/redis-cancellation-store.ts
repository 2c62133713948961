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

import type { Cluster, Redis } from "ioredis";

import type {
  CancellationRow,
  CancellationStore,
  CleanupResult,
  RecordOutcome,
  RemoteCancellation,
} from "../../cancellation/types.js";
import { type CancellationSource, StoreClosedError } from "../../errors.js";
import type { Reachability } from "../../reachability.js";
import { readyWithin } from "../connection/bounded.js";
import type { RedisClient, RedisConnection } from "../connection/connection.js";
import { openNodeStore } from "../connection/node-store-setup.js";
import type { OutageMonitor } from "../connection/outage-monitor.js";
import { execAll, StoreCalls } from "../connection/store-calls.js";
import { cat, KeyLayout, type Wire, wire } from "../key-layout.js";
import { readCancellationStoreOptions } from "../redis-option-declarations.js";
import { type CancellationScripts, defineCancellationScripts } from "./cancellation-scripts.js";
import { InFlightShare } from "./in-flight-share.js";
import { RemoteCancels } from "./remote-cancels.js";
import { encodeRemoteMessage } from "./remote-message.js";
import { RowHints } from "./row-hints.js";

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
   * writes every entry at once (`track` waits for it). See docs/redis.md.
   */
  readonly shareAfterMs?: number;
}

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
const RESOLVED_VOID: Promise<void> = Promise.resolve();
const RESOLVED_FALSE: Promise<boolean> = Promise.resolve(false);

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
  /** Whether Redis is reachable, from the command connection's events (`GET /ready`). */
  readonly reachability: Reachability;
  private readonly client: RedisClient;
  private readonly connection: RedisConnection;
  private readonly calls: StoreCalls<CancellationScripts>;
  private readonly keys: KeyLayout;
  private readonly maxRowsArg: string;
  private readonly maxPerScopeArg: string;
  private readonly batchArg: string;
  private readonly streamLengthArg: string;
  /** `""` (Redis's TIME) unless a test clock was given. */
  private readonly clock: (() => number) | null;
  private readonly leaseMs: number;
  private readonly monitor: OutageMonitor;
  /** This node's in-flight entries and when each is written to Redis. */
  private readonly inFlight: InFlightShare;
  /** Whether the clear at a call's end needs Redis. */
  private readonly hints = new RowHints();
  /** The cancels other nodes announce. */
  private readonly remote: RemoteCancels;
  private readonly leaseTimer: NodeJS.Timeout;
  private leaseAsserted = false;
  private closed = false;

  constructor(options: RedisCancellationStoreOptions) {
    const read = readCancellationStoreOptions(options);
    const { maxRows, catchUpLength: streamLength, shareAfterMs } = read;
    const maxPerScope = read.maxRowsPerScope;
    const setup = openNodeStore(read, "cancellation");
    const { connection, nodeId, shards } = setup;
    this.nodeId = nodeId;
    this.leaseMs = setup.leaseMs;
    this.clock = setup.clock;
    this.monitor = setup.monitor;
    this.connection = connection;
    this.client = connection.client;
    this.reachability = connection.reachability;
    // The cap per shard: the whole table never holds more than maxRows.
    const shardCap = Number.isFinite(maxRows) ? Math.max(1, Math.floor(maxRows / shards)) : -1;
    this.maxRowsArg = String(shardCap);
    this.maxPerScopeArg = Number.isFinite(maxPerScope) ? String(maxPerScope) : "-1";
    // One eviction batch is a twentieth of the cap (at least one row).
    this.batchArg = String(shardCap > 0 ? Math.max(1, Math.floor(shardCap / 20)) : 1);
    this.streamLengthArg = String(streamLength);
    this.keys = new KeyLayout(setup.prefix, connection.keyPrefix, shards);
    defineCancellationScripts(this.client);
    const isClosed = () => this.closed;
    this.calls = new StoreCalls<CancellationScripts>({
      client: this.client,
      timeoutMs: setup.timeoutMs,
      monitor: this.monitor,
      logger: setup.logger,
      faultLine: (text) =>
        `conduit-mcp: Redis cancellation store call failed (${text}); failing open`,
      isClosed,
      onBack: () => void this.resync(),
    });
    this.inFlight = new InFlightShare({
      nodeId,
      keys: this.keys,
      shareAfterMs,
      // Plain commands in one pipeline, no script: the node's membership first, then its list of
      // entries, then each key's entry, so that a pipeline cut short (the node died while
      // sending) never leaves an entry the lease sweep cannot find.
      send: (shard, pairs) =>
        this.calls.run((c) => {
          const p = c
            .pipeline()
            .sadd(shard.nodes, nodeId)
            .hset(shard.nodeEntries(nodeId), ...pairs);
          for (let i = 0; i + 1 < pairs.length; i += 2) {
            p.hset(cat(`${shard.tag}:f:`, pairs[i + 1] as Wire), pairs[i] as Wire, nodeId);
          }
          return execAll(p);
        }, 0),
    });
    connection.on("ready", () => this.onReady());

    // A dedicated connection for SUBSCRIBE (a subscribed connection cannot run other commands).
    // Resubscribing is done there on every `ready`, not by ioredis, so the store can read what it
    // missed and `ready()` can tell when cross-node delivery is live again after an outage.
    this.remote = new RemoteCancels({
      subscriber: connection.subscriber(`conduit-mcp-sub-${nodeId}`),
      calls: this.calls,
      keys: this.keys,
      nodeId,
      catchUpLength: streamLength,
      heardKey: (scope, requestId) => this.hints.hint(scope, requestId),
      logger: setup.logger,
      isClosed,
    });

    this.leaseTimer = setInterval(() => void this.renewLease(), Math.floor(this.leaseMs / 3));
    this.leaseTimer.unref();
    if (this.client.status === "ready") this.onReady();
    connection.connect();
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
      const live = this.client.status === "ready" && this.remote.listening && this.leaseAsserted;
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
    this.hints.hint(scope, requestId);
    const result = await this.calls.run(
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
    await this.announce(scope, { scope, requestId: null, reason, source, node: this.nodeId });
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
    await this.announce(scope, { scope, requestId, reason, source, node: this.nodeId });
  }

  async has(scope: string, requestId: string): Promise<boolean> {
    const score = await this.calls.run(
      (c) => c.zscore(this.keys.scopeRows(wire(scope)), wire(requestId)),
      null,
    );
    return score !== null;
  }

  async reason(scope: string, requestId: string): Promise<string | null | undefined> {
    const s = wire(scope);
    const raw = await this.calls.run(
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
    if (!this.hints.clearNeedsRedis(scope, requestId)) return RESOLVED_FALSE;
    const s = wire(scope);
    const shard = this.keys.shardOf(s);
    return this.calls
      .run(
        (c) =>
          c.conduitMcpClearV1(shard.scopes, shard.scopeRows(s), shard.luaBase, s, wire(requestId)),
        0,
      )
      .then((removed) => removed === 1);
  }

  /**
   * Adds the entry on this node at once; it is written to Redis only once the call has run
   * `shareAfterMs` (the entries due together go in one pipeline per shard), or at once, awaited,
   * when `shareAfterMs` is 0.
   */
  addInFlight(scope: string, requestId: string, handleId: string): Promise<void> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    return this.inFlight.add(scope, requestId, handleId);
  }

  /** Removes the entry; one that was never written to Redis costs no round trip. */
  removeInFlight(scope: string, requestId: string, handleId: string): Promise<void> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    const known = this.inFlight.remove(scope, requestId, handleId);
    if (known !== "unknown") this.hints.ended(scope, requestId);
    if (known === "unshared") return RESOLVED_VOID;
    const s = wire(scope);
    const shard = this.keys.shardOf(s);
    const field = `${this.nodeId} ${handleId}`;
    // Two plain commands in one pipeline: the key's entry, then the node's list (a pipeline cut
    // short leaves at most a listed entry, which the lease sweep and the resync tolerate).
    return this.calls
      .run(
        (c) =>
          execAll(
            c
              .pipeline()
              .hdel(shard.inFlight(s, wire(requestId)), field)
              .hdel(shard.nodeEntries(this.nodeId), field),
          ),
        0,
      )
      .then(noop);
  }

  /** An entry of this node not yet shared answers here; otherwise Redis answers. */
  async isInFlight(scope: string, requestId: string): Promise<boolean> {
    if (this.inFlight.isPending(scope, requestId)) return true;
    const n = await this.calls.run(
      (c) => c.exists(this.keys.inFlight(wire(scope), wire(requestId))),
      0,
    );
    return n === 1;
  }

  /**
   * Removes rows strictly older than `ttlMs` by Redis's clock (`now`, this node's clock, is not
   * used: a node whose clock is ahead must not wipe rows it did not age), then the entries of
   * nodes whose lease lapsed.
   */
  async cleanup(ttlMs: number, _now: number): Promise<CleanupResult> {
    // Row hints older than the TTL name rows this cleanup removes anyway.
    this.hints.prune(performance.now() - ttlMs);
    let removed = 0;
    let inFlightRemoved = 0;
    await Promise.all(
      this.keys.all.map(async (shard) => {
        if (Number.isFinite(ttlMs)) {
          for (let page = 0; page < EXPIRE_MAX_PAGES; page++) {
            const n = await this.calls.run(
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
        inFlightRemoved += await this.calls.run(
          (c) => c.conduitMcpReapNodesV1(shard.nodes, shard.luaBase),
          0,
        );
      }),
    );
    return { removed, inFlightRemoved };
  }

  async size(): Promise<number> {
    const counts = await Promise.all(
      this.keys.all.map((shard) => this.calls.run((c) => c.zcard(shard.time), 0)),
    );
    return counts.reduce((sum, n) => sum + n, 0);
  }

  onRemoteCancellation(listener: (event: RemoteCancellation) => void): () => void {
    return this.remote.listen(listener);
  }

  /**
   * Stops the lease timer, removes this node's lease and in-flight entries (a clean exit leaves
   * nothing for the sweep), closes the subscriber, and quits the connection if the store owns it.
   * Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.leaseTimer);
    this.inFlight.stop();
    if (this.client.status === "ready") {
      await Promise.all(
        this.keys.all.map((shard) =>
          this.calls.run(
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
    this.inFlight.clear();
    this.hints.clear();
    this.remote.clear();
    await this.connection.close();
  }

  /** Publishes a cancel on the channel and appends it to the scope's shard's catch-up stream. */
  private async announce(scope: string, message: Parameters<typeof encodeRemoteMessage>[0]) {
    const shard = this.keys.shardOf(wire(scope));
    const payload = encodeRemoteMessage(message);
    await this.calls.run(
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

  /** The scripts' "now": `""` lets Redis use its own `TIME`. */
  private now(): string {
    return this.clock === null ? "" : String(this.clock());
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
        this.calls.run(
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
    for (const shared of this.inFlight.shared()) {
      byShard[shared.shard.index]?.push(shared.field, shared.member);
    }
    const results = await Promise.all(
      byShard.map((args) => this.calls.run((c) => c.conduitMcpResyncV1(...args), 0)),
    );
    if (results.every((ok) => ok === 1)) this.leaseAsserted = true;
  }
}

function noop(): void {
  // The caller needs no value.
}
