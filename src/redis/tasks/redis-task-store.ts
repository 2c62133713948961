/**
 * `RedisTaskStore`: the tasks of every node of a deployment in one Redis (or Redis Cluster), with
 * the rules of the `TaskStore` contract (src/tasks/task-store.ts): a task created on one node is
 * read, listed, cancelled and finished from any other; quota, cap, check-and-set status changes
 * and the failing of a dead node's tasks run as Lua scripts (task-scripts.ts), so they hold under
 * any concurrency; every terminal change is published so the node running the task hears a cancel
 * made elsewhere; each node holds a lease, and a node whose lease expired has its running tasks
 * failed by whichever node looks first.
 *
 * Unlike the cancellation store, this store fails **closed** for what clients read: a task is
 * the client's only handle on its work, so during a Redis outage `create`, `get`, `list` and
 * `cancel` reject with {@link TaskStoreUnavailableError} (the client is answered with an error and
 * retries) instead of claiming that a task does not exist. What this node's own handlers write
 * (`update`, `finish`) is kept locally and written when Redis is back (see the class comment).
 */
import type { Cluster, Redis } from "ioredis";

import { TaskStoreUnavailableError } from "../../errors.js";
import type { Reachability } from "../../reachability.js";
import {
  type CancelTaskOutcome,
  type CreateTaskOutcome,
  type EvictedTask,
  emptyStatusCounts,
  type FinishTaskOutcome,
  isTaskId,
  type ListTasksOptions,
  type NewTask,
  type TaskChange,
  type TaskOutcome,
  type TaskPage,
  type TaskRecord,
  type TaskStatus,
  type TaskStore,
  type TaskSweepResult,
  type TaskUpdate,
} from "../../tasks/index.js";
import { readyWithin } from "../connection/bounded.js";
import type { RedisClient, RedisConnection } from "../connection/connection.js";
import { openNodeStore } from "../connection/node-store-setup.js";
import { describeError, type OutageMonitor } from "../connection/outage-monitor.js";
import { StoreCalls } from "../connection/store-calls.js";
import { KeyLayout, wire } from "../key-layout.js";
import { readTaskStoreOptions } from "../redis-option-declarations.js";
import { OwnedTasks } from "./owned-tasks.js";
import { TaskCommands, type TaskScripts, UNAVAILABLE, type Unavailable } from "./task-commands.js";
import { decodeChange, parseScope, toRecord } from "./task-replies.js";

/** Options of {@link RedisTaskStore}. */
export interface RedisTaskStoreOptions {
  /**
   * A Redis URL (the store then owns its connections, configured to fail fast), or an ioredis
   * `Redis` / `Cluster` you own (one created with `lazyConnect` is connected by the store).
   */
  readonly redis: Redis | Cluster | string;
  /** Key prefix, part of every hash tag; no braces. Default `"conduit-mcp"`. */
  readonly prefix?: string;
  /**
   * Number of key-space shards (1..1024), each under its own hash tag; a scope lives in one.
   * Default 1 on a single Redis, 16 on a `Cluster`. With more than one shard, `maxTasks` is
   * enforced per shard as `floor(maxTasks / shards)`, and `maxTasksPerScope` per shard too: the
   * tasks a bucket makes in different sessions may live in different shards.
   */
  readonly shards?: number;
  /** Per-scope quota (`Infinity` disables). Default 100. */
  readonly maxTasksPerScope?: number;
  /** Global cap (`Infinity` disables). Default 10 000. */
  readonly maxTasks?: number;
  /** Largest result or error, in UTF-8 bytes of its JSON text. Default 1 MiB. */
  readonly maxResultBytes?: number;
  /**
   * Bytes of results, errors, input requests and status messages one bucket's tasks may hold
   * (`Infinity` disables). Default 8 MiB. With more than one shard it holds per shard: a bucket's
   * tasks made in different sessions may live in different shards.
   */
  readonly maxTaskBytesPerScope?: number;
  /**
   * Bytes of every task together (`Infinity` disables). Default 128 MiB, enforced per shard as
   * `floor(maxTaskBytes / shards)`.
   */
  readonly maxTaskBytes?: number;
  /**
   * This node's lease, renewed every `leaseMs / 3`; once it lapses, any node fails the running
   * tasks this node owns. Default 15 000.
   */
  readonly leaseMs?: number;
  /**
   * This node's id, the `owner` of the tasks it creates: printable ASCII without spaces, ≤ 128
   * chars. Default `<host>-<pid>-<random>`; pass the cancellation store's `nodeId` to share it.
   */
  readonly nodeId?: string;
  /** Upper bound on one Redis call before it counts as an outage. Default 1 000. */
  readonly commandTimeoutMs?: number;
  /**
   * For tests only: a time source in ms that replaces Redis's `TIME` in every script. Unset (the
   * default), every stamp, expiry and cutoff comes from Redis's clock, one clock for all nodes.
   */
  readonly clock?: () => number;
  /** Receives the one line per outage (and script faults). Default `console.warn`. */
  readonly logger?: (message: string) => void;
}

/** Expired tasks removed per sweep call: one script never holds Redis for long. */
const SWEEP_PAGE = 1_000;
/** The most tasks of one shard `countByStatus` walks in one script (about 10 ms of Redis). */
const COUNT_WALK_LIMIT = 50_000;
/** Upper bound on sweep calls per shard and sweep (10 M tasks); a bounded loop. */
const SWEEP_MAX_PAGES = 10_000;
const POSITION = /^(0|[1-9][0-9]{0,15})$/;

/**
 * A {@link TaskStore} on Redis (ioredis 5), shared by every node that uses the same Redis and
 * prefix.
 *
 * Outages: no call waits longer than `commandTimeoutMs`. `create`, `get`, `list` and `cancel`
 * reject with {@link TaskStoreUnavailableError} while Redis is away: a task must be durably
 * created before its id is handed out (2026 tasks extension, "Task Creation"), and "unknown task"
 * would make a client abandon work that still exists. `update` and `finish` of a task this node
 * created keep the change locally (bounded by the tasks this node runs) and write it when Redis is
 * back, as a check-and-set, so a cancel made elsewhere meanwhile still wins; the handler never sees
 * the outage. `cancelScope`, `sweep` and `size` fail open (nothing, zeros). One log line and one
 * `conduit-mcp:store:outage` event (`part: "tasks"`) per outage.
 *
 * A node whose lease lapses (it died, or could not reach Redis for a whole lease) has its running
 * tasks failed by the first node that reads them or sweeps: a terminal status is final, so a node
 * that comes back after a lapse cannot finish them (its late `finish` resolves `"not_running"`).
 * Redis without persistence loses every task when it restarts; configure AOF or RDB for tasks that
 * must survive one.
 *
 * @example
 * ```ts
 * import { RedisCancellationStore, RedisTaskStore } from "conduit-mcp/redis";
 * const cancellation = new RedisCancellationStore({ redis: "redis://127.0.0.1:6379" });
 * const tasks = new RedisTaskStore({ redis: "redis://127.0.0.1:6379", nodeId: cancellation.nodeId });
 * await tasks.ready();
 * ```
 */
export class RedisTaskStore implements TaskStore {
  readonly nodeId: string;
  readonly maxTasksPerScope: number;
  readonly maxTasks: number;
  readonly maxResultBytes: number;
  readonly maxTaskBytesPerScope: number;
  readonly maxTaskBytes: number;
  /** Whether Redis is reachable, from the command connection's events (`GET /ready`). */
  readonly reachability: Reachability;
  private readonly client: RedisClient;
  private readonly subscriber: RedisClient;
  private readonly connection: RedisConnection;
  private readonly commands: TaskCommands;
  private readonly keys: KeyLayout;
  private readonly channel: string;
  private readonly clock: (() => number) | null;
  private readonly logger: (message: string) => void;
  private readonly monitor: OutageMonitor;
  private readonly listeners = new Set<(change: TaskChange) => void>();
  /** The running tasks this node created, and what it wrote for them while Redis was away. */
  private readonly owned: OwnedTasks;
  /** Shards whose lost records were already reported, by epoch (one log line per restart). */
  private readonly reportedEpochs = new Set<string>();
  private readonly leaseTimer: NodeJS.Timeout;
  private subscribed = false;
  private leaseHeld = false;
  private flushing = false;
  private closed = false;

  constructor(options: RedisTaskStoreOptions) {
    const bounds = readTaskStoreOptions(options);
    this.maxTasksPerScope = bounds.maxTasksPerScope;
    this.maxTasks = bounds.maxTasks;
    this.maxResultBytes = bounds.maxResultBytes;
    this.maxTaskBytesPerScope = bounds.maxTaskBytesPerScope;
    this.maxTaskBytes = bounds.maxTaskBytes;
    // Bounded like the store: the cap, or 100 000 when the cap is off.
    this.owned = new OwnedTasks(Number.isFinite(this.maxTasks) ? this.maxTasks : 100_000);
    const setup = openNodeStore(bounds, "tasks");
    const { connection, nodeId, shards } = setup;
    this.nodeId = nodeId;
    this.clock = setup.clock;
    this.logger = setup.logger;
    this.monitor = setup.monitor;
    this.connection = connection;
    this.client = connection.client;
    this.reachability = connection.reachability;
    this.keys = new KeyLayout(setup.prefix, connection.keyPrefix, shards);
    // Channels are not key-prefixed by ioredis, so the channel carries both parts.
    this.channel = `${connection.keyPrefix}{${setup.prefix}}:tasks`;
    const calls = new StoreCalls<TaskScripts>({
      client: this.client,
      timeoutMs: setup.timeoutMs,
      monitor: this.monitor,
      logger: this.logger,
      faultLine: (text) => `conduit-mcp: Redis task store call failed (${text})`,
      isClosed: () => this.closed,
      onBack: () => void this.renewLease().then(() => this.flush()),
    });
    // The caps per shard: the whole store never holds more than maxTasks (maxTaskBytes).
    const perShard = (n: number) =>
      Number.isFinite(n) ? String(Math.max(1, Math.floor(n / shards))) : "-1";
    const orOff = (n: number) => (Number.isFinite(n) ? String(n) : "-1");
    this.commands = new TaskCommands({
      client: this.client,
      calls,
      keys: this.keys,
      channel: this.channel,
      nodeId,
      leaseMs: setup.leaseMs,
      clock: this.clock,
      bounds: {
        maxPerScope: orOff(this.maxTasksPerScope),
        max: perShard(this.maxTasks),
        maxBucketBytes: orOff(this.maxTaskBytesPerScope),
        maxBytes: perShard(this.maxTaskBytes),
      },
    });

    connection.on("ready", () => this.onReady());

    // A dedicated connection for SUBSCRIBE (a subscribed connection runs no other command).
    this.subscriber = connection.subscriber(`conduit-mcp-tasks-${nodeId}`);
    this.subscriber.on("close", () => {
      this.subscribed = false;
    });
    this.subscriber.on("ready", () => void this.subscribe());
    this.subscriber.on("message", (channel: string, raw: string) => this.onMessage(channel, raw));
    if (this.subscriber.status === "ready") void this.subscribe();

    this.leaseTimer = setInterval(() => void this.renewLease(), Math.floor(setup.leaseMs / 3));
    this.leaseTimer.unref();
    if (this.client.status === "ready") this.onReady();
    connection.connect();
  }

  /**
   * Resolves true once the command connection is ready, the lease is held and the subscriber
   * listens; false after `timeoutMs`.
   *
   * @example
   * ```ts
   * if (!(await tasks.ready(2_000))) console.warn("Redis not reachable yet: tasks are refused until it is");
   * ```
   */
  ready(timeoutMs = 5_000): Promise<boolean> {
    return readyWithin(timeoutMs, () => {
      if (this.closed) return "closed";
      const live = this.client.status === "ready" && this.subscribed && this.leaseHeld;
      return live ? "ready" : "wait";
    });
  }

  async create(task: NewTask): Promise<CreateTaskOutcome> {
    const reply = await this.commands.create(task, "");
    if (reply === UNAVAILABLE) throw new TaskStoreUnavailableError();
    const [code, createdAt, evictedScope, evictedId, epoch] = reply;
    if (code === 3) throw new Error("duplicate task id");
    if (code === 0) return { ok: false, error: "task_limit_reached" };
    const at = Number(createdAt);
    this.owned.add({ task: { ...task, statusMessage: null }, createdAt: at, epoch: epoch ?? "" });
    const evicted: EvictedTask[] = [];
    const gone = evictedId === "" ? null : parseScope(evictedScope);
    if (gone !== null && isTaskId(evictedId)) {
      evicted.push({ scope: gone, taskId: evictedId });
      this.owned.forget(gone, evictedId);
    }
    const record: TaskRecord = {
      taskId: task.taskId,
      scope: task.scope,
      status: "working",
      statusMessage: task.statusMessage ?? null,
      createdAt: at,
      lastUpdatedAt: at,
      ttlMs: task.ttlMs,
      pollIntervalMs: task.pollIntervalMs,
      owner: this.nodeId,
      expiresAt: null,
      result: null,
      error: null,
      inputRequests: null,
    };
    for (const drop of evicted) this.announce({ ...drop, status: "evicted" });
    return { ok: true, task: record, evicted };
  }

  async get(scope: string, taskId: string): Promise<TaskRecord | undefined> {
    const reply = await this.commands.get(scope, taskId);
    if (reply === UNAVAILABLE) throw new TaskStoreUnavailableError();
    return reply === null ? undefined : toRecord(scope, reply, 0, reply.length);
  }

  async list(scope: string, options: ListTasksOptions): Promise<TaskPage | null> {
    if (options.after !== null && !POSITION.test(options.after)) return null;
    const limit = Math.max(1, Math.floor(options.limit));
    const reply = await this.commands.list(scope, options.after ?? "", limit);
    if (reply === UNAVAILABLE) throw new TaskStoreUnavailableError();
    if (reply === null) return null;
    const tasks: TaskRecord[] = [];
    let i = 1;
    while (i < reply.length) {
      const count = Number(reply[i]);
      tasks.push(toRecord(scope, reply, i + 1, i + 1 + count));
      i += 1 + count;
    }
    const next = reply[0] ?? "";
    return { tasks, next: next === "" ? null : next };
  }

  async update(scope: string, taskId: string, update: TaskUpdate): Promise<boolean> {
    const written = await this.writeUpdate(scope, taskId, update);
    if (written !== UNAVAILABLE) return written;
    return this.owned.keep(scope, taskId, (p) => {
      if (p.end !== null) return false;
      p.update = { ...p.update, ...update };
      return true;
    });
  }

  async finish(scope: string, taskId: string, outcome: TaskOutcome): Promise<FinishTaskOutcome> {
    const payload = "result" in outcome ? outcome.result : outcome.error;
    const written = await this.writeFinish(scope, taskId, outcome);
    if (written === UNAVAILABLE) {
      // Checked here too: a result kept for later must fit as one written now would.
      if (Buffer.byteLength(payload, "utf8") > this.maxResultBytes) return "too_large";
      const kept = this.owned.keep(scope, taskId, (p) => {
        if (p.end !== null) return false;
        p.end = { kind: "finish", outcome };
        return true;
      });
      return kept ? "finished" : "not_running";
    }
    return written;
  }

  async cancel(
    scope: string,
    taskId: string,
    statusMessage: string | null,
  ): Promise<CancelTaskOutcome> {
    const written = await this.writeCancel(scope, taskId, statusMessage);
    if (written !== UNAVAILABLE) return written;
    // A run of this node that ended cancelled (its session closed, the node shuts down) must not
    // leave its task `working` for good: the cancel is kept and written when Redis is back. The
    // caller is still told that nothing was written now.
    this.owned.keep(scope, taskId, (p) => {
      if (p.end !== null) return false;
      p.end = { kind: "cancel", statusMessage };
      return true;
    });
    throw new TaskStoreUnavailableError();
  }

  async cancelScope(scope: string, statusMessage: string | null): Promise<readonly string[]> {
    const reply = await this.commands.cancelScope(scope, statusMessage);
    // Fail-open: the registry's own scope cancel still aborts this node's handlers.
    if (reply === UNAVAILABLE) return [];
    for (const taskId of reply) {
      this.owned.forget(scope, taskId);
      this.announce({ scope, taskId, status: "cancelled" });
    }
    return reply;
  }

  /**
   * Removes finished tasks past `expiresAt` and fails the running tasks of nodes whose lease
   * expired, in every shard. Expiry uses Redis's clock (`now`, this node's clock, is used only
   * with a test `clock`): a node whose clock is ahead must not remove tasks that have not expired.
   */
  async sweep(now: number): Promise<TaskSweepResult> {
    let expired = 0;
    let orphaned = 0;
    const at = this.clock === null ? "" : String(now);
    await Promise.all(
      this.keys.all.map(async (shard) => {
        for (let page = 0; page < SWEEP_MAX_PAGES; page++) {
          const reply = await this.commands.sweep(shard, at, SWEEP_PAGE);
          if (reply === UNAVAILABLE) return;
          expired += reply[0];
          orphaned += reply[1];
          if (reply[0] < SWEEP_PAGE) return;
        }
      }),
    );
    return { expired, orphaned };
  }

  async size(): Promise<number> {
    const counts = await Promise.all(this.keys.all.map((shard) => this.commands.size(shard)));
    return counts.reduce<number>((sum, n) => sum + (n === UNAVAILABLE ? 0 : n), 0);
  }

  /**
   * Tasks by status on every node. Each shard is walked by one script, so a shard holding more
   * than {@link COUNT_WALK_LIMIT} tasks (or Redis away) leaves the gauge out: null.
   */
  async countByStatus(): Promise<Readonly<Record<TaskStatus, number>> | null> {
    const replies = await Promise.all(
      this.keys.all.map((shard) => this.commands.countByStatus(shard, COUNT_WALK_LIMIT)),
    );
    const counts = emptyStatusCounts();
    for (const reply of replies) {
      if (reply === UNAVAILABLE || reply === null) return null;
      for (let i = 0; i + 1 < reply.length; i += 2) {
        const status = String(reply[i]);
        if (status in counts) counts[status as TaskStatus] += Number(reply[i + 1]);
      }
    }
    return counts;
  }

  onChange(listener: (change: TaskChange) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Stops the lease, fails the running tasks this node still owns (it can no longer finish them;
   * other nodes read them `failed` at once instead of one lease later), closes the subscriber and,
   * if the store owns it, the connection. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.leaseTimer);
    if (this.client.status === "ready") {
      await this.flush();
      await Promise.all(this.keys.all.map((shard) => this.commands.retire(shard)));
    }
    this.closed = true;
    this.owned.clear();
    this.listeners.clear();
    await this.connection.close();
  }

  /** Writes an update as a check-and-set; a task Redis lost is restored first, once. */
  private async writeUpdate(
    scope: string,
    taskId: string,
    update: TaskUpdate,
    lost = false,
  ): Promise<boolean | Unavailable> {
    const epoch = this.owned.get(scope, taskId)?.epoch ?? "";
    const reply = await this.commands.update({ scope, taskId, epoch }, update);
    if (reply === UNAVAILABLE) return UNAVAILABLE;
    if (Number(reply[0]) === -2 && !lost) {
      const back = await this.restore(scope, taskId);
      if (back === UNAVAILABLE) return UNAVAILABLE;
      return back && this.writeUpdate(scope, taskId, update, true);
    }
    this.evictedBy(reply);
    return Number(reply[0]) === 1;
  }

  /** Writes an outcome as a check-and-set; a task Redis lost is restored first, once. */
  private async writeFinish(
    scope: string,
    taskId: string,
    outcome: TaskOutcome,
    lost = false,
  ): Promise<FinishTaskOutcome | Unavailable> {
    const payload = "result" in outcome ? outcome.result : outcome.error;
    // Unknown and terminal tasks come first, as in the contract: only a write that would happen
    // can be too large. One read, then the size check, then the check-and-set.
    if (Buffer.byteLength(payload, "utf8") > this.maxResultBytes) {
      const current = await this.commands.get(scope, taskId);
      if (current === UNAVAILABLE) return UNAVAILABLE;
      if (current === null) return "not_running";
      const record = toRecord(scope, current, 0, current.length);
      return record.owner === null ? "not_running" : "too_large";
    }
    const epoch = this.owned.get(scope, taskId)?.epoch ?? "";
    const reply = await this.commands.finish({ scope, taskId, epoch }, outcome);
    if (reply === UNAVAILABLE) return UNAVAILABLE;
    const code = Number(reply[0]);
    if (code === -2 && !lost) {
      const back = await this.restore(scope, taskId);
      if (back === UNAVAILABLE) return UNAVAILABLE;
      if (back) return this.writeFinish(scope, taskId, outcome, true);
    }
    if (code === 2) return "too_large";
    this.owned.forget(scope, taskId);
    if (code !== 1) return "not_running";
    this.announce({ scope, taskId, status: outcome.status });
    this.evictedBy(reply);
    return "finished";
  }

  private async writeCancel(
    scope: string,
    taskId: string,
    statusMessage: string | null,
  ): Promise<CancelTaskOutcome | Unavailable> {
    const reply = await this.commands.cancel(scope, taskId, statusMessage);
    if (reply === UNAVAILABLE) return UNAVAILABLE;
    const code = Number(reply[0]);
    if (code === -1) return { outcome: "unknown" };
    const fields = reply.map(String);
    const task = toRecord(scope, fields, 1, fields.length);
    if (code === 1) {
      this.owned.forget(scope, taskId);
      this.announce({ scope, taskId, status: "cancelled" });
      return { outcome: "cancelled", task };
    }
    return { outcome: "terminal", task };
  }

  /**
   * A task this node runs is gone from a Redis that lost its data (restarted without
   * persistence): writes it again as it was created (its bucket's quota and the cap apply as to
   * any create), so the write that found it missing can be made and the client still finds its
   * task. Resolves whether it is back; logs once per lost shard.
   */
  private async restore(scope: string, taskId: string): Promise<boolean | Unavailable> {
    const owned = this.owned.get(scope, taskId);
    if (owned === undefined) return false;
    const reply = await this.commands.create(owned.task, String(owned.createdAt));
    if (reply === UNAVAILABLE) return UNAVAILABLE;
    const [code, , evictedScope, evictedId, epoch] = reply;
    const restored = code === 1 || code === 3;
    if (code === 1) owned.epoch = epoch ?? "";
    this.evictedBy([0, evictedScope, evictedId]);
    const report = `${this.keys.shardOf(wire(scope)).tag} ${owned.epoch}`;
    if (!this.reportedEpochs.has(report) && this.reportedEpochs.size < 1_024) {
      this.reportedEpochs.add(report);
      this.log(
        restored
          ? "conduit-mcp: Redis lost the records of tasks this node runs (restarted without persistence?); writing them again. Finished tasks of other nodes and of the past are gone: configure AOF or RDB to keep them."
          : "conduit-mcp: Redis lost the record of a task this node runs, and its bucket is at its quota: the task is gone.",
      );
    }
    return restored;
  }

  /** Announces the running tasks a script dropped for the byte budget (`reply[1..]`: scope JSON, id). */
  private evictedBy(reply: ReadonlyArray<number | string>): void {
    for (let i = 1; i + 1 < reply.length; i += 2) {
      const scope = parseScope(String(reply[i]));
      const taskId = String(reply[i + 1]);
      if (scope === null || !isTaskId(taskId)) continue;
      this.owned.forget(scope, taskId);
      this.announce({ scope, taskId, status: "evicted" });
    }
  }

  /** Redis is back: writes what was kept, updates before the finish, each as a check-and-set. */
  private async flush(): Promise<void> {
    if (this.flushing || this.closed) return;
    this.flushing = true;
    try {
      for (const pending of this.owned.pendingWrites()) {
        if (pending.update !== null) {
          const done = await this.writeUpdate(pending.scope, pending.taskId, pending.update);
          if (done === UNAVAILABLE) return;
          pending.update = null;
        }
        const end = pending.end;
        if (end !== null) {
          const done =
            end.kind === "finish"
              ? await this.writeFinish(pending.scope, pending.taskId, end.outcome)
              : await this.writeCancel(pending.scope, pending.taskId, end.statusMessage);
          if (done === UNAVAILABLE) return;
        }
        this.owned.written(pending);
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Delivers a change to this store's listeners; a listener's failure never fails the write. */
  private announce(change: TaskChange): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (error) {
        this.log(`conduit-mcp: a task change listener threw: ${describeError(error)}`);
      }
    }
  }

  /** One line to the operator; a broken logger must not break request handling. */
  private log(line: string): void {
    try {
      this.logger(line);
    } catch {
      // Ignore a broken logger.
    }
  }

  /**
   * A (re)connection: the outage is over; renew the lease, write what was kept, then write again
   * the running tasks of this node that Redis lost meanwhile.
   */
  private onReady(): void {
    if (this.closed) return;
    this.monitor.up();
    void this.renewLease()
      .then(() => this.flush())
      .then(() => this.recoverOwned());
  }

  /**
   * Writes again every running task of this node that is gone from a shard whose epoch is not the
   * one it was created in (Redis restarted empty), so a client polling it finds it and its result
   * lands. A task gone from a shard with the same epoch was ended by someone (evicted, expired):
   * it stays gone. Bounded by the tasks this node runs.
   */
  private async recoverOwned(): Promise<void> {
    const epochs = new Map<string, string | null>();
    for (const owned of this.owned.list()) {
      if (this.closed) return;
      const { scope, taskId } = owned.task;
      const shard = this.keys.shardOf(wire(scope));
      let epoch = epochs.get(shard.tag);
      if (epoch === undefined) {
        const read = await this.commands.epoch(shard);
        if (read === UNAVAILABLE) return;
        epoch = read;
        epochs.set(shard.tag, epoch);
      }
      if (epoch === owned.epoch) continue;
      const exists = await this.commands.exists(scope, taskId);
      if (exists === UNAVAILABLE) return;
      if (exists === 0 && this.owned.has(scope, taskId)) {
        if ((await this.restore(scope, taskId)) === UNAVAILABLE) return;
        epochs.delete(shard.tag);
      } else {
        owned.epoch = epoch ?? owned.epoch;
      }
    }
  }

  /** Renews the lease in every shard. */
  private async renewLease(): Promise<void> {
    if (this.closed || this.client.status !== "ready") return;
    const held = await Promise.all(this.keys.all.map((shard) => this.commands.renewLease(shard)));
    if (held.every((h) => h !== UNAVAILABLE)) this.leaseHeld = true;
  }

  private async subscribe(): Promise<void> {
    if (this.closed) return;
    try {
      await this.subscriber.subscribe(this.channel);
    } catch {
      return; // Retried on the next `ready`.
    }
    if (!this.closed && this.subscriber.status === "ready") this.subscribed = true;
  }

  /** A channel message: hostile until validated; this node's own changes were delivered already. */
  private onMessage(channel: string, raw: string): void {
    if (this.closed || channel !== this.channel) return;
    const change = decodeChange(raw);
    if (change === null || change.node === this.nodeId) return;
    // Finished, cancelled or dropped elsewhere: nothing of it is left for this node to write.
    this.owned.forget(change.scope, change.taskId);
    this.announce({ scope: change.scope, taskId: change.taskId, status: change.status });
  }
}
