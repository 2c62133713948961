/**
 * `RedisCancellationStore`: the cancellation rows and in-flight entries of every process and node,
 * in one Redis, with the memory store's semantics (issue 5). Quota, cap eviction, refresh and clear
 * run as Lua scripts, so the seed's rules hold under any concurrency; a recorded cancel is
 * published on a channel so the node running the request aborts it at once; each node holds a
 * lease so a crashed node's in-flight entries are swept by the others (the seed's dead-process
 * sweep, across machines). Redis being away never fails a request: the store fails open.
 */

import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { RedisOptions } from "ioredis";
import { Cluster, Redis } from "ioredis";
import { DEFAULT_MAX_ROWS, DEFAULT_MAX_ROWS_PER_SCOPE } from "../cancellation/memory-store.js";
import { clockOption, rowLimit } from "../cancellation/options.js";
import type {
  CancellationRow,
  CancellationStore,
  CleanupResult,
  RecordOutcome,
  RemoteCancellation,
} from "../cancellation/types.js";
import { type CancellationSource, InvalidOptionError, StoreClosedError } from "../errors.js";
import { bounded } from "./bounded.js";
import { KeyLayout, pairMember, type Wire, wire } from "./key-layout.js";
import { describeError, OutageMonitor } from "./outage-monitor.js";
import { decodeRemoteMessage, encodeRemoteMessage } from "./remote-message.js";
import {
  ADD_IN_FLIGHT_SCRIPT,
  CLEAR_SCRIPT,
  EXPIRE_SCRIPT,
  REAP_NODES_SCRIPT,
  RECORD_SCRIPT,
  REMOVE_IN_FLIGHT_SCRIPT,
  RENEW_LEASE_SCRIPT,
  RESYNC_SCRIPT,
  RETIRE_NODE_SCRIPT,
} from "./scripts.js";

/** Options of {@link RedisCancellationStore}. */
export interface RedisCancellationStoreOptions {
  /**
   * A Redis URL (the store then owns its connection, configured to fail fast), or an ioredis
   * `Redis` / `Cluster` you own. For your own client, prefer `enableOfflineQueue: false`; the store
   * never sends while the client is not ready and bounds every call anyway.
   */
  readonly redis: Redis | Cluster | string;
  /** Key prefix, used as the hash tag `{prefix}`; no braces. Default `"conduit-mcp"`. */
  readonly prefix?: string;
  /** Global row cap (`Infinity` disables). Default 10 000. */
  readonly maxRows?: number;
  /** Per-scope quota (`Infinity` disables). Default 256. */
  readonly maxRowsPerScope?: number;
  /**
   * Stamps rows, in ms since the epoch, clamped in Redis so stamps never decrease across all
   * nodes (as the memory store does; the row's own `cancelledAt` is not used). Default `Date.now`.
   */
  readonly clock?: () => number;
  /** Lease of this node, renewed every `leaseMs / 3`. Default 15 000. */
  readonly leaseMs?: number;
  /** This node's id: printable ASCII without spaces, ≤ 128 chars. Default `<host>-<pid>-<random>`. */
  readonly nodeId?: string;
  /** Upper bound on one Redis call before it counts as an outage. Default 1 000. */
  readonly commandTimeoutMs?: number;
  /** Receives the one line per outage (and script faults). Default `console.warn`. */
  readonly logger?: (message: string) => void;
}

type Client = Redis | Cluster;

/** The scripts, as ioredis `defineCommand` adds them (EVALSHA, falling back to EVAL on NOSCRIPT). */
interface ScriptedClient {
  conduitMcpRecordV1(...args: Wire[]): Promise<[number, number]>;
  conduitMcpClearV1(...args: Wire[]): Promise<number>;
  conduitMcpExpireV1(...args: Wire[]): Promise<number>;
  conduitMcpAddInFlightV1(...args: Wire[]): Promise<number>;
  conduitMcpRemoveInFlightV1(...args: Wire[]): Promise<number>;
  conduitMcpRenewLeaseV1(...args: Wire[]): Promise<number>;
  conduitMcpResyncV1(...args: Wire[]): Promise<number>;
  conduitMcpReapNodesV1(...args: Wire[]): Promise<number>;
  conduitMcpRetireNodeV1(...args: Wire[]): Promise<number>;
}

const SCRIPTS: ReadonlyArray<readonly [keyof ScriptedClient, string, number]> = [
  ["conduitMcpRecordV1", RECORD_SCRIPT, 4],
  ["conduitMcpClearV1", CLEAR_SCRIPT, 2],
  ["conduitMcpExpireV1", EXPIRE_SCRIPT, 2],
  ["conduitMcpAddInFlightV1", ADD_IN_FLIGHT_SCRIPT, 3],
  ["conduitMcpRemoveInFlightV1", REMOVE_IN_FLIGHT_SCRIPT, 2],
  ["conduitMcpRenewLeaseV1", RENEW_LEASE_SCRIPT, 2],
  ["conduitMcpResyncV1", RESYNC_SCRIPT, 3],
  ["conduitMcpReapNodesV1", REAP_NODES_SCRIPT, 1],
  ["conduitMcpRetireNodeV1", RETIRE_NODE_SCRIPT, 3],
];

/** Rows removed per EXPIRE call: one script never holds Redis for long. */
const EXPIRE_PAGE = 1_000;
/** Upper bound on EXPIRE pages per cleanup (10 M rows); a bounded loop. */
const EXPIRE_MAX_PAGES = 10_000;
/** Reply errors that mean "Redis cannot serve now" (an outage), not "this call is wrong". */
const OUTAGE_REPLY = /^(LOADING|READONLY|CLUSTERDOWN|MASTERDOWN|BUSY|TRYAGAIN|NOREPLICAS)\b/;
const NODE_ID = /^[\x21-\x7e]{1,128}$/;
const PREFIX = /^[^{}]{1,128}$/;

/** A local in-flight entry, kept so the node can re-assert its entries after an outage. */
interface LocalEntry {
  readonly scope: string;
  readonly requestId: string;
  readonly field: string;
  readonly member: Wire;
  readonly key: Wire;
}

/**
 * A {@link CancellationStore} on Redis (ioredis 5), shared by every process and node that uses the
 * same Redis and prefix.
 *
 * Fail-open (issue 5, "Faults"): while Redis is unreachable no call throws or waits longer than
 * `commandTimeoutMs`; `record` resolves `"recorded"` without writing (so the registry still aborts
 * this process's own handles — refusing would turn a Redis outage into uncancellable requests),
 * `has` / `isInFlight` resolve false, `reason` undefined, `size` 0, writes are dropped. Each outage
 * logs one line and publishes `conduit-mcp:store:outage` `{ state: "down" }`, then `{ state: "up" }`
 * when Redis is back; the subscriber resubscribes and the node re-asserts its lease and its live
 * in-flight entries by itself.
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
  private readonly ownsClient: boolean;
  private readonly keys: KeyLayout;
  private readonly maxRowsArg: string;
  private readonly maxPerScopeArg: string;
  private readonly batchArg: string;
  private readonly clock: () => number;
  private readonly leaseMs: number;
  private readonly timeoutMs: number;
  private readonly logger: (message: string) => void;
  private readonly monitor: OutageMonitor;
  private readonly listeners = new Set<(event: RemoteCancellation) => void>();
  private readonly local = new Map<string, LocalEntry>();
  private readonly leaseTimer: NodeJS.Timeout;
  private readonly reportedFaults = new Set<string>();
  private readonly detach: Array<() => void> = [];
  private subscribed = false;
  private leaseAsserted = false;
  private closed = false;

  constructor(options: RedisCancellationStoreOptions) {
    if (typeof options !== "object" || options === null) {
      throw new InvalidOptionError("options", "an object", options);
    }
    const prefix = options.prefix ?? "conduit-mcp";
    if (typeof prefix !== "string" || !PREFIX.test(prefix)) {
      throw new InvalidOptionError("prefix", "1 to 128 characters without { or }", prefix);
    }
    const maxRows = rowLimit("maxRows", options.maxRows, DEFAULT_MAX_ROWS);
    const maxPerScope = rowLimit(
      "maxRowsPerScope",
      options.maxRowsPerScope,
      DEFAULT_MAX_ROWS_PER_SCOPE,
    );
    this.leaseMs = positiveInteger("leaseMs", options.leaseMs, 15_000, 3);
    this.timeoutMs = positiveInteger("commandTimeoutMs", options.commandTimeoutMs, 1_000, 1);
    this.clock = clockOption("clock", options.clock);
    if (options.logger !== undefined && typeof options.logger !== "function") {
      throw new InvalidOptionError("logger", "a function", options.logger);
    }
    const nodeId = options.nodeId ?? defaultNodeId();
    if (typeof nodeId !== "string" || !NODE_ID.test(nodeId)) {
      throw new InvalidOptionError(
        "nodeId",
        "1 to 128 printable ASCII characters, no spaces",
        nodeId,
      );
    }
    this.nodeId = nodeId;
    this.maxRowsArg = Number.isFinite(maxRows) ? String(maxRows) : "-1";
    this.maxPerScopeArg = Number.isFinite(maxPerScope) ? String(maxPerScope) : "-1";
    // The seed's batch: max(1, div(max_rows, 20)) (conduit-behavior.md §1.5).
    this.batchArg = String(Number.isFinite(maxRows) ? Math.max(1, Math.floor(maxRows / 20)) : 1);
    this.logger = options.logger ?? ((message) => console.warn(message));
    this.monitor = new OutageMonitor(this.logger);

    const redis = options.redis;
    if (typeof redis === "string") {
      if (redis.length === 0) throw new InvalidOptionError("redis", "a Redis URL or client", redis);
      this.client = new Redis(redis, ownClientOptions(this.timeoutMs));
      this.ownsClient = true;
    } else if (redis instanceof Redis || redis instanceof Cluster) {
      this.client = redis;
      this.ownsClient = false;
    } else {
      throw new InvalidOptionError("redis", "a Redis URL, an ioredis Redis or Cluster", redis);
    }
    const clientKeyPrefix = (this.client.options as { keyPrefix?: string }).keyPrefix ?? "";
    this.keys = new KeyLayout(prefix, clientKeyPrefix);
    for (const [name, lua, numberOfKeys] of SCRIPTS) {
      this.client.defineCommand(name, { lua, numberOfKeys });
    }

    this.listen(this.client, "error", (error: unknown) => this.monitor.down(error));
    this.listen(this.client, "close", () => {
      if (!this.closed) this.monitor.down(new Error("connection closed"));
    });
    this.listen(this.client, "ready", () => this.onReady());

    // A dedicated connection for SUBSCRIBE (a subscribed connection cannot run other commands).
    // Resubscribing is done here on every `ready`, not by ioredis, so `ready()` can tell when
    // cross-node delivery is live again after an outage.
    this.subscriber =
      this.client instanceof Cluster
        ? this.client.duplicate()
        : this.client.duplicate({
            enableOfflineQueue: false,
            autoResubscribe: false,
            maxRetriesPerRequest: 1,
            lazyConnect: false,
          });
    this.subscriber.on("error", () => {
      // Outages are reported once, from the command connection.
    });
    this.subscriber.on("close", () => {
      this.subscribed = false;
    });
    this.subscriber.on("ready", () => this.subscribe());
    this.subscriber.on("message", (channel: string, raw: string) => this.onMessage(channel, raw));
    if (this.subscriber.status === "ready") this.subscribe();

    this.leaseTimer = setInterval(() => void this.renewLease(), Math.floor(this.leaseMs / 3));
    this.leaseTimer.unref();
    if (this.client.status === "ready") this.onReady();
    else if (this.ownsClient && this.client.status === "wait")
      void this.client.connect().catch(() => {});
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
  async ready(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.closed) return false;
      if (this.client.status === "ready" && this.subscribed && this.leaseAsserted) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async record(row: CancellationRow, source: CancellationSource): Promise<RecordOutcome> {
    const { scope, requestId, reason } = row;
    const payload = encodeRemoteMessage({ scope, requestId, reason, source, node: this.nodeId });
    const s = wire(scope);
    const id = wire(requestId);
    const result = await this.call(
      (c) =>
        c.conduitMcpRecordV1(
          this.keys.scopes,
          this.keys.scopeRows(s),
          this.keys.scopeReasons(s),
          this.keys.time,
          this.keys.luaBase,
          s,
          id,
          String(this.clock()),
          reason === null ? "n" : `s${reason}`,
          this.maxRowsArg,
          this.maxPerScopeArg,
          this.batchArg,
          this.keys.channel,
          payload,
        ),
      null,
    );
    // Fail-open: without Redis the cancel still counts locally (see the class comment).
    if (result === null) return "recorded";
    return result[0] === 1 ? "recorded" : "limit_reached";
  }

  async has(scope: string, requestId: string): Promise<boolean> {
    const score = await this.call(
      (c) => c.zscore(this.keys.scopeRows(wire(scope)), wire(requestId)),
      null,
    );
    return score !== null;
  }

  async reason(scope: string, requestId: string): Promise<string | null | undefined> {
    const raw = await this.call(
      (c) => c.hget(this.keys.scopeReasons(wire(scope)), wire(requestId)),
      null,
    );
    if (raw === null) return undefined;
    return raw === "n" ? null : raw.slice(1);
  }

  async clear(scope: string, requestId: string): Promise<boolean> {
    const s = wire(scope);
    const removed = await this.call(
      (c) =>
        c.conduitMcpClearV1(
          this.keys.scopes,
          this.keys.scopeRows(s),
          this.keys.luaBase,
          s,
          wire(requestId),
        ),
      0,
    );
    return removed === 1;
  }

  async addInFlight(scope: string, requestId: string, handleId: string): Promise<void> {
    const s = wire(scope);
    const id = wire(requestId);
    const member = pairMember(s, id);
    // Field = node + space + handle: unique across nodes even if handle ids are only unique locally.
    const entry: LocalEntry = {
      scope,
      requestId,
      field: `${this.nodeId} ${handleId}`,
      member,
      key: this.keys.inFlight(s, id),
    };
    this.local.set(handleId, entry);
    await this.call(
      (c) =>
        c.conduitMcpAddInFlightV1(
          entry.key,
          this.keys.nodeEntries(this.nodeId),
          this.keys.nodes,
          this.nodeId,
          entry.field,
          member,
        ),
      0,
    );
  }

  async removeInFlight(scope: string, requestId: string, handleId: string): Promise<void> {
    const entry = this.local.get(handleId);
    if (entry !== undefined && entry.scope === scope && entry.requestId === requestId) {
      this.local.delete(handleId);
    }
    await this.call(
      (c) =>
        c.conduitMcpRemoveInFlightV1(
          this.keys.inFlight(wire(scope), wire(requestId)),
          this.keys.nodeEntries(this.nodeId),
          `${this.nodeId} ${handleId}`,
        ),
      0,
    );
  }

  async isInFlight(scope: string, requestId: string): Promise<boolean> {
    const n = await this.call((c) => c.exists(this.keys.inFlight(wire(scope), wire(requestId))), 0);
    return n === 1;
  }

  async cleanup(ttlMs: number, now: number): Promise<CleanupResult> {
    let removed = 0;
    // Strictly older than the TTL (conduit-behavior.md §1.4 cleanup): cancelledAt < now - ttl.
    if (Number.isFinite(ttlMs) && Number.isFinite(now)) {
      const cutoff = `(${now - ttlMs}`;
      for (let page = 0; page < EXPIRE_MAX_PAGES; page++) {
        const n = await this.call(
          (c) =>
            c.conduitMcpExpireV1(
              this.keys.scopes,
              this.keys.time,
              this.keys.luaBase,
              cutoff,
              String(EXPIRE_PAGE),
            ),
          0,
        );
        removed += n;
        if (n < EXPIRE_PAGE) break;
      }
    }
    const inFlightRemoved = await this.call(
      (c) => c.conduitMcpReapNodesV1(this.keys.nodes, this.keys.luaBase),
      0,
    );
    return { removed, inFlightRemoved };
  }

  async size(): Promise<number> {
    return this.call((c) => c.zcard(this.keys.time), 0);
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
    if (this.client.status === "ready") {
      await this.call(
        (c) =>
          c.conduitMcpRetireNodeV1(
            this.keys.nodeEntries(this.nodeId),
            this.keys.nodes,
            this.keys.lease(this.nodeId),
            this.keys.luaBase,
            this.nodeId,
          ),
        0,
      );
    }
    this.closed = true;
    this.local.clear();
    this.listeners.clear();
    for (const undo of this.detach) undo();
    await quit(this.subscriber, this.timeoutMs);
    if (this.ownsClient) await quit(this.client, this.timeoutMs);
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

  /** Renews the lease; a lapsed lease means another node may have swept our entries: resync. */
  private async renewLease(): Promise<void> {
    if (this.closed || this.client.status !== "ready") return;
    const had = await this.call(
      (c) =>
        c.conduitMcpRenewLeaseV1(
          this.keys.lease(this.nodeId),
          this.keys.nodes,
          this.nodeId,
          String(this.leaseMs),
        ),
      1,
    );
    if (had === 0) await this.resync();
  }

  /** Makes Redis hold exactly this node's live in-flight entries, and the lease. */
  private async resync(): Promise<void> {
    if (this.closed || this.client.status !== "ready") return;
    const args: Wire[] = [
      this.keys.nodeEntries(this.nodeId),
      this.keys.nodes,
      this.keys.lease(this.nodeId),
      this.keys.luaBase,
      this.nodeId,
      String(this.leaseMs),
    ];
    for (const entry of this.local.values()) args.push(entry.field, entry.member);
    const ok = await this.call((c) => c.conduitMcpResyncV1(...args), 0);
    if (ok === 1) this.leaseAsserted = true;
  }

  private subscribe(): void {
    if (this.closed) return;
    this.subscriber.subscribe(this.keys.channel).then(
      () => {
        this.subscribed = true;
      },
      () => {
        // Retried on the next `ready`.
      },
    );
  }

  /** A channel message: hostile until validated; our own events are not remote. */
  private onMessage(channel: string, raw: string): void {
    if (this.closed || channel !== this.keys.channel) return;
    const message = decodeRemoteMessage(raw);
    if (message === null || message.node === this.nodeId) return;
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

  /** Adds a listener to a client we may not own, remembering how to remove it on close. */
  // biome-ignore lint/suspicious/noExplicitAny: EventEmitter listeners take any arguments.
  private listen(client: Client, event: string, handler: (...args: any[]) => void): void {
    client.on(event, handler);
    this.detach.push(() => client.off(event, handler));
  }
}

/** ioredis options for a connection the store owns: fail fast, never buffer, retry forever. */
function ownClientOptions(timeoutMs: number): RedisOptions {
  return {
    enableOfflineQueue: false,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 1,
    connectTimeout: Math.max(timeoutMs, 2_000),
    retryStrategy: (times: number) => Math.min(50 * times, 1_000),
    lazyConnect: false,
  };
}

/** Quits a connection within a bound, then drops it regardless. */
async function quit(client: Client, timeoutMs: number): Promise<void> {
  if (client.status === "ready") {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      client.quit().catch(() => {}),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }
  client.disconnect();
}

function defaultNodeId(): string {
  const host =
    hostname()
      .replace(/[^\x21-\x7e]/g, "")
      .slice(0, 64) || "node";
  return `${host}-${process.pid}-${randomUUID().slice(0, 8)}`;
}

function positiveInteger(
  option: string,
  value: number | undefined,
  fallback: number,
  min: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new InvalidOptionError(option, `an integer ≥ ${min}`, value);
  }
  return value;
}
