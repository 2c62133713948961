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
import { Cluster, type Redis } from "ioredis";

import { InvalidOptionError, StoreClosedError, TaskStoreUnavailableError } from "../errors.js";
import { integerBetween, MAX_TIMER_MS, OPTION, readOption } from "../option-schema.js";
import type { Reachability } from "../reachability.js";
import {
  type CancelTaskOutcome,
  type CreateTaskOutcome,
  type EvictedTask,
  type FinishTaskOutcome,
  isTaskId,
  type ListTasksOptions,
  type NewTask,
  ORPHANED_TASK_ERROR,
  ORPHANED_TASK_MESSAGE,
  readTaskBounds,
  type TaskChange,
  type TaskOutcome,
  type TaskPage,
  type TaskRecord,
  type TaskStatus,
  type TaskStore,
  type TaskSweepResult,
  type TaskUpdate,
} from "../tasks/index.js";
import { bounded } from "./bounded.js";
import { type RedisClient, RedisConnection } from "./connection.js";
import {
  cat,
  KeyLayout,
  pairMember,
  readPrefix,
  type ShardKeys,
  type Wire,
  wire,
} from "./key-layout.js";
import { describeError, OutageMonitor } from "./outage-monitor.js";
import { defaultNodeId } from "./redis-cancellation-store.js";
import {
  TASK_CANCEL_SCOPE_SCRIPT,
  TASK_CANCEL_SCRIPT,
  TASK_CREATE_SCRIPT,
  TASK_FINISH_SCRIPT,
  TASK_GET_SCRIPT,
  TASK_LIST_SCRIPT,
  TASK_RENEW_LEASE_SCRIPT,
  TASK_RETIRE_SCRIPT,
  TASK_SWEEP_SCRIPT,
  TASK_UPDATE_SCRIPT,
} from "./task-scripts.js";

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

type Client = RedisClient;

/** The scripts, as ioredis `defineCommand` adds them (EVALSHA, falling back to EVAL). */
interface TaskScripts {
  conduitMcpTaskCreateV2(...args: Wire[]): Promise<[number, string, string, string, string?]>;
  conduitMcpTaskGetV2(...args: Wire[]): Promise<string[] | null>;
  conduitMcpTaskUpdateV2(...args: Wire[]): Promise<Array<number | string>>;
  conduitMcpTaskFinishV2(...args: Wire[]): Promise<Array<number | string>>;
  conduitMcpTaskCancelV2(...args: Wire[]): Promise<Array<number | string>>;
  conduitMcpTaskCancelScopeV2(...args: Wire[]): Promise<string[]>;
  conduitMcpTaskListV2(...args: Wire[]): Promise<string[] | null>;
  conduitMcpTaskSweepV2(...args: Wire[]): Promise<[number, number]>;
  conduitMcpTaskRenewLeaseV2(...args: Wire[]): Promise<number>;
  conduitMcpTaskRetireV2(...args: Wire[]): Promise<number>;
}

const SCRIPTS: ReadonlyArray<readonly [keyof TaskScripts, string, number]> = [
  ["conduitMcpTaskCreateV2", TASK_CREATE_SCRIPT, 7],
  ["conduitMcpTaskGetV2", TASK_GET_SCRIPT, 1],
  ["conduitMcpTaskUpdateV2", TASK_UPDATE_SCRIPT, 1],
  ["conduitMcpTaskFinishV2", TASK_FINISH_SCRIPT, 1],
  ["conduitMcpTaskCancelV2", TASK_CANCEL_SCRIPT, 1],
  ["conduitMcpTaskCancelScopeV2", TASK_CANCEL_SCOPE_SCRIPT, 1],
  ["conduitMcpTaskListV2", TASK_LIST_SCRIPT, 1],
  ["conduitMcpTaskSweepV2", TASK_SWEEP_SCRIPT, 2],
  ["conduitMcpTaskRenewLeaseV2", TASK_RENEW_LEASE_SCRIPT, 2],
  ["conduitMcpTaskRetireV2", TASK_RETIRE_SCRIPT, 3],
];

/** A call that did not reach Redis (outage, timeout, not connected). */
const UNAVAILABLE: unique symbol = Symbol("unavailable");
type Unavailable = typeof UNAVAILABLE;

/** Expired tasks removed per sweep call: one script never holds Redis for long. */
const SWEEP_PAGE = 1_000;
/** Upper bound on sweep calls per shard and sweep (10 M tasks); a bounded loop. */
const SWEEP_MAX_PAGES = 10_000;
/** Reply errors that mean "Redis cannot serve now" (an outage), not "this call is wrong". */
const OUTAGE_REPLY =
  /^(LOADING|READONLY|CLUSTERDOWN|MASTERDOWN|BUSY|TRYAGAIN|NOREPLICAS|MOVED|ASK)\b/;
const NODE_ID = /^[\x21-\x7e]{1,128}$/;
const POSITION = /^(0|[1-9][0-9]{0,15})$/;
const STATUSES: ReadonlySet<string> = new Set<TaskStatus>([
  "working",
  "input_required",
  "completed",
  "failed",
  "cancelled",
]);
const CHANGES: ReadonlySet<string> = new Set(["completed", "failed", "cancelled", "evicted"]);
/** Upper bound on a channel message (characters), checked before it is parsed. */
const MAX_MESSAGE_LENGTH = 4_096;

/** What this node's handlers wrote while Redis was away, written when it is back. */
interface PendingWrite {
  readonly scope: string;
  readonly taskId: string;
  update: TaskUpdate | null;
  /** The first terminal write (a later one would find the task terminal anyway). */
  end:
    | { readonly kind: "finish"; readonly outcome: TaskOutcome }
    | { readonly kind: "cancel"; readonly statusMessage: string | null }
    | null;
}

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
  private readonly client: Client;
  private readonly subscriber: Client;
  private readonly connection: RedisConnection;
  private readonly keys: KeyLayout;
  private readonly channel: string;
  private readonly maxPerScopeArg: string;
  private readonly maxArg: string;
  private readonly maxBucketBytesArg: string;
  private readonly maxBytesArg: string;
  private readonly leaseMs: number;
  private readonly timeoutMs: number;
  private readonly clock: (() => number) | null;
  private readonly logger: (message: string) => void;
  /** Whether Redis is reachable, from the command connection's events (`GET /ready`). */
  readonly reachability: Reachability;
  private readonly monitor: OutageMonitor;
  private readonly listeners = new Set<(change: TaskChange) => void>();
  /** The running tasks this node created (insertion order): what it may write during an outage. */
  private readonly owned = new Map<string, OwnedTask>();
  /** Shards whose lost records were already reported, by epoch (one log line per restart). */
  private readonly reportedEpochs = new Set<string>();
  private readonly pending = new Map<string, PendingWrite>();
  /** Bound of {@link owned}: the cap, or 100 000 when the cap is off. */
  private readonly ownedLimit: number;
  private readonly reportedFaults = new Set<string>();
  private readonly leaseTimer: NodeJS.Timeout;
  private subscribed = false;
  private leaseHeld = false;
  private flushing = false;
  private closed = false;

  constructor(options: RedisTaskStoreOptions) {
    if (typeof options !== "object" || options === null) {
      throw new InvalidOptionError("options", "an object", options);
    }
    const prefix = readPrefix(options.prefix);
    const bounds = readTaskBounds(options);
    this.maxTasksPerScope = bounds.maxTasksPerScope;
    this.maxTasks = bounds.maxTasks;
    this.ownedLimit = Number.isFinite(this.maxTasks) ? this.maxTasks : 100_000;
    this.maxResultBytes = bounds.maxResultBytes;
    this.maxTaskBytesPerScope = bounds.maxTaskBytesPerScope;
    this.maxTaskBytes = bounds.maxTaskBytes;
    this.leaseMs = readOption(integerBetween(3, MAX_TIMER_MS), "leaseMs", options.leaseMs, 15_000);
    this.timeoutMs = readOption(
      OPTION.timerMs,
      "commandTimeoutMs",
      options.commandTimeoutMs,
      1_000,
    );
    this.clock = readOption(OPTION.clock, "clock", options.clock, null);
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
    this.monitor = new OutageMonitor(this.logger, "tasks");

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
    this.maxPerScopeArg = Number.isFinite(this.maxTasksPerScope)
      ? String(this.maxTasksPerScope)
      : "-1";
    // The cap per shard: the whole store never holds more than maxTasks.
    this.maxArg = Number.isFinite(this.maxTasks)
      ? String(Math.max(1, Math.floor(this.maxTasks / shards)))
      : "-1";
    this.maxBucketBytesArg = Number.isFinite(this.maxTaskBytesPerScope)
      ? String(this.maxTaskBytesPerScope)
      : "-1";
    this.maxBytesArg = Number.isFinite(this.maxTaskBytes)
      ? String(Math.max(1, Math.floor(this.maxTaskBytes / shards)))
      : "-1";
    this.keys = new KeyLayout(prefix, this.connection.keyPrefix, shards);
    // Channels are not key-prefixed by ioredis, so the channel carries both parts.
    this.channel = `${this.connection.keyPrefix}{${prefix}}:tasks`;
    for (const [name, lua, numberOfKeys] of SCRIPTS) {
      this.client.defineCommand(name, { lua, numberOfKeys });
    }

    this.connection.on("ready", () => this.onReady());

    // A dedicated connection for SUBSCRIBE (a subscribed connection runs no other command).
    this.subscriber = this.connection.subscriber(`conduit-mcp-tasks-${nodeId}`);
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
   * listens; false after `timeoutMs`.
   *
   * @example
   * ```ts
   * if (!(await tasks.ready(2_000))) console.warn("Redis not reachable yet: tasks are refused until it is");
   * ```
   */
  async ready(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.closed) return false;
      if (this.client.status === "ready" && this.subscribed && this.leaseHeld) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async create(task: NewTask): Promise<CreateTaskOutcome> {
    const message = task.statusMessage ?? null;
    const reply = await this.writeCreate(task, "");
    if (reply === UNAVAILABLE) throw new TaskStoreUnavailableError();
    const [code, createdAt, evictedScope, evictedId, epoch] = reply;
    if (code === 3) throw new Error("duplicate task id");
    if (code === 0) return { ok: false, error: "task_limit_reached" };
    this.owned.set(ownedKey(task.scope, task.taskId), {
      task: { ...task, statusMessage: null },
      createdAt: Number(createdAt),
      epoch: epoch ?? "",
    });
    // Bounded like the store: a task whose end this node never heard of (its handler never
    // finished it, the change message was missed) cannot make the map grow without end.
    if (this.owned.size > this.ownedLimit) {
      const oldest = this.owned.keys().next().value as string;
      this.owned.delete(oldest);
      this.pending.delete(oldest);
    }
    const evicted: EvictedTask[] = [];
    const gone = evictedId === "" ? null : parseScope(evictedScope);
    if (gone !== null && isTaskId(evictedId)) {
      evicted.push({ scope: gone, taskId: evictedId });
      this.owned.delete(ownedKey(gone, evictedId));
    }
    const at = Number(createdAt);
    const record: TaskRecord = {
      taskId: task.taskId,
      scope: task.scope,
      status: "working",
      statusMessage: message,
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

  /** The create script for `task`; `createdAt` '' stamps now, else keeps the given time. */
  private writeCreate(task: NewTask, createdAt: string) {
    const s = wire(task.scope);
    const bucket = wire(task.bucket ?? task.scope);
    const shard = this.keys.shardOf(s);
    const message = task.statusMessage ?? null;
    return this.call((c) =>
      c.conduitMcpTaskCreateV2(
        this.taskKey(shard, s, task.taskId),
        cat(`${shard.tag}:ts:`, s),
        cat(`${shard.tag}:tb:`, bucket),
        `${shard.tag}:tall`,
        `${shard.tag}:trun:${this.nodeId}`,
        `${shard.tag}:tnodes`,
        `${shard.tag}:tlease:${this.nodeId}`,
        ...this.context(shard),
        s,
        task.taskId,
        JSON.stringify(task.scope),
        String(task.ttlMs),
        String(task.pollIntervalMs),
        message === null ? "c" : "s",
        message === null ? "" : JSON.stringify(message),
        this.maxPerScopeArg,
        this.maxArg,
        bucket,
        createdAt,
      ),
    );
  }

  /**
   * A task this node runs is gone from a Redis that lost its data (restarted without
   * persistence): writes it again as it was created (its bucket's quota and the cap apply as to
   * any create), so the write that found it missing can be made and the client still finds its
   * task. Resolves whether it is back; logs once per lost shard.
   */
  private async restore(scope: string, taskId: string): Promise<boolean | Unavailable> {
    const owned = this.owned.get(ownedKey(scope, taskId));
    if (owned === undefined) return false;
    const reply = await this.writeCreate(owned.task, String(owned.createdAt));
    if (reply === UNAVAILABLE) return UNAVAILABLE;
    const [code, , evictedScope, evictedId, epoch] = reply;
    const restored = code === 1 || code === 3;
    if (code === 1) owned.epoch = epoch ?? "";
    this.evictedBy([0, evictedScope, evictedId]);
    const report = `${this.keys.shardOf(wire(scope)).tag} ${owned.epoch}`;
    if (!this.reportedEpochs.has(report) && this.reportedEpochs.size < 1_024) {
      this.reportedEpochs.add(report);
      try {
        this.logger(
          restored
            ? "conduit-mcp: Redis lost the records of tasks this node runs (restarted without persistence?); writing them again. Finished tasks of other nodes and of the past are gone: configure AOF or RDB to keep them."
            : "conduit-mcp: Redis lost the record of a task this node runs, and its bucket is at its quota: the task is gone.",
        );
      } catch {
        // A broken logger must not break request handling.
      }
    }
    return restored;
  }

  async get(scope: string, taskId: string): Promise<TaskRecord | undefined> {
    const s = wire(scope);
    const shard = this.keys.shardOf(s);
    const reply = await this.call((c) =>
      c.conduitMcpTaskGetV2(
        this.taskKey(shard, s, taskId),
        ...this.context(shard),
        pairMember(s, taskId),
      ),
    );
    if (reply === UNAVAILABLE) throw new TaskStoreUnavailableError();
    return reply === null ? undefined : toRecord(scope, reply, 0, reply.length);
  }

  async list(scope: string, options: ListTasksOptions): Promise<TaskPage | null> {
    if (options.after !== null && !POSITION.test(options.after)) return null;
    const s = wire(scope);
    const shard = this.keys.shardOf(s);
    const limit = Math.max(1, Math.floor(options.limit));
    const reply = await this.call((c) =>
      c.conduitMcpTaskListV2(
        cat(`${shard.tag}:ts:`, s),
        ...this.context(shard),
        s,
        options.after ?? "",
        String(limit),
      ),
    );
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
    return this.keep(scope, taskId, (p) => {
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
      const kept = this.keep(scope, taskId, (p) => {
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
    this.keep(scope, taskId, (p) => {
      if (p.end !== null) return false;
      p.end = { kind: "cancel", statusMessage };
      return true;
    });
    throw new TaskStoreUnavailableError();
  }

  private async writeCancel(
    scope: string,
    taskId: string,
    statusMessage: string | null,
  ): Promise<CancelTaskOutcome | Unavailable> {
    const s = wire(scope);
    const shard = this.keys.shardOf(s);
    const reply = await this.call((c) =>
      c.conduitMcpTaskCancelV2(
        this.taskKey(shard, s, taskId),
        ...this.context(shard),
        pairMember(s, taskId),
        statusMessage === null ? "c" : "s",
        statusMessage === null ? "" : JSON.stringify(statusMessage),
      ),
    );
    if (reply === UNAVAILABLE) return UNAVAILABLE;
    const code = Number(reply[0]);
    if (code === -1) return { outcome: "unknown" };
    const fields = reply.map(String);
    const task = toRecord(scope, fields, 1, fields.length);
    if (code === 1) {
      this.forgetOwned(scope, taskId);
      this.announce({ scope, taskId, status: "cancelled" });
      return { outcome: "cancelled", task };
    }
    return { outcome: "terminal", task };
  }

  async cancelScope(scope: string, statusMessage: string | null): Promise<readonly string[]> {
    const s = wire(scope);
    const shard = this.keys.shardOf(s);
    const reply = await this.call((c) =>
      c.conduitMcpTaskCancelScopeV2(
        cat(`${shard.tag}:ts:`, s),
        ...this.context(shard),
        s,
        statusMessage === null ? "c" : "s",
        statusMessage === null ? "" : JSON.stringify(statusMessage),
      ),
    );
    // Fail-open: the registry's own scope cancel still aborts this node's handlers.
    if (reply === UNAVAILABLE) return [];
    for (const taskId of reply) {
      this.forgetOwned(scope, taskId);
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
          const reply = await this.call((c) =>
            c.conduitMcpTaskSweepV2(
              `${shard.tag}:texp`,
              `${shard.tag}:tnodes`,
              shard.luaBase,
              at,
              ...this.context(shard).slice(2),
              String(SWEEP_PAGE),
            ),
          );
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
    const counts = await Promise.all(
      this.keys.all.map((shard) => this.call((c) => c.scard(`${shard.tag}:tall`))),
    );
    return counts.reduce<number>((sum, n) => sum + (n === UNAVAILABLE ? 0 : n), 0);
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
      await Promise.all(
        this.keys.all.map((shard) =>
          this.call((c) =>
            c.conduitMcpTaskRetireV2(
              `${shard.tag}:tnodes`,
              `${shard.tag}:tlease:${this.nodeId}`,
              `${shard.tag}:trun:${this.nodeId}`,
              ...this.context(shard),
            ),
          ),
        ),
      );
    }
    this.closed = true;
    this.owned.clear();
    this.pending.clear();
    this.listeners.clear();
    await this.connection.close();
  }

  /** The key of one task. */
  private taskKey(shard: ShardKeys, scope: Wire, taskId: string): Wire {
    return cat(`${shard.tag}:tk:`, pairMember(scope, taskId));
  }

  /**
   * ARGV 1..7 of every script that reads a task: base, now, channel, node, orphan message and
   * error, lease.
   */
  private context(shard: ShardKeys): string[] {
    return [
      shard.luaBase,
      this.clock === null ? "" : String(this.clock()),
      this.channel,
      this.nodeId,
      JSON.stringify(ORPHANED_TASK_MESSAGE),
      ORPHANED_TASK_ERROR,
      String(this.leaseMs),
    ];
  }

  private async writeUpdate(
    scope: string,
    taskId: string,
    update: TaskUpdate,
    lost = false,
  ): Promise<boolean | Unavailable> {
    const s = wire(scope);
    const shard = this.keys.shardOf(s);
    const reply = await this.call((c) =>
      c.conduitMcpTaskUpdateV2(
        this.taskKey(shard, s, taskId),
        ...this.context(shard),
        pairMember(s, taskId),
        update.status ?? "",
        ...optional(update.statusMessage, true),
        ...optional(update.inputRequests, false),
        this.maxBucketBytesArg,
        this.maxBytesArg,
        this.owned.get(ownedKey(scope, taskId))?.epoch ?? "",
      ),
    );
    if (reply === UNAVAILABLE) return UNAVAILABLE;
    if (Number(reply[0]) === -2 && !lost) {
      const back = await this.restore(scope, taskId);
      if (back === UNAVAILABLE) return UNAVAILABLE;
      return back && this.writeUpdate(scope, taskId, update, true);
    }
    this.evictedBy(reply);
    return Number(reply[0]) === 1;
  }

  private async writeFinish(
    scope: string,
    taskId: string,
    outcome: TaskOutcome,
    lost = false,
  ): Promise<FinishTaskOutcome | Unavailable> {
    const s = wire(scope);
    const shard = this.keys.shardOf(s);
    const isResult = "result" in outcome;
    const payload = isResult ? outcome.result : outcome.error;
    // Unknown and terminal tasks come first, as in the contract: only a write that would happen
    // can be too large. One read, then the size check, then the check-and-set.
    if (Buffer.byteLength(payload, "utf8") > this.maxResultBytes) {
      const current = await this.call((c) =>
        c.conduitMcpTaskGetV2(
          this.taskKey(shard, s, taskId),
          ...this.context(shard),
          pairMember(s, taskId),
        ),
      );
      if (current === UNAVAILABLE) return UNAVAILABLE;
      if (current === null) return "not_running";
      const record = toRecord(scope, current, 0, current.length);
      return record.owner === null ? "not_running" : "too_large";
    }
    const reply = await this.call((c) =>
      c.conduitMcpTaskFinishV2(
        this.taskKey(shard, s, taskId),
        ...this.context(shard),
        pairMember(s, taskId),
        outcome.status,
        isResult ? "r" : "er",
        payload,
        ...optional(outcome.statusMessage, true),
        this.maxBucketBytesArg,
        this.maxBytesArg,
        this.owned.get(ownedKey(scope, taskId))?.epoch ?? "",
      ),
    );
    if (reply === UNAVAILABLE) return UNAVAILABLE;
    const code = Number(reply[0]);
    if (code === -2 && !lost) {
      const back = await this.restore(scope, taskId);
      if (back === UNAVAILABLE) return UNAVAILABLE;
      if (back) return this.writeFinish(scope, taskId, outcome, true);
    }
    if (code === 2) return "too_large";
    this.forgetOwned(scope, taskId);
    if (code !== 1) return "not_running";
    this.announce({ scope, taskId, status: outcome.status });
    this.evictedBy(reply);
    return "finished";
  }

  /** Announces the running tasks a script dropped for the byte budget (`reply[1..]`: scope JSON, id). */
  private evictedBy(reply: ReadonlyArray<number | string>): void {
    for (let i = 1; i + 1 < reply.length; i += 2) {
      const scope = parseScope(String(reply[i]));
      const taskId = String(reply[i + 1]);
      if (scope === null || !isTaskId(taskId)) continue;
      this.owned.delete(ownedKey(scope, taskId));
      this.announce({ scope, taskId, status: "evicted" });
    }
  }

  /**
   * Keeps a write of a task this node runs for when Redis is back; false when this node does not
   * run it (then the caller is told, as for any task it cannot write).
   */
  private keep(scope: string, taskId: string, change: (p: PendingWrite) => boolean): boolean {
    const key = ownedKey(scope, taskId);
    if (!this.owned.has(key)) return false;
    let pending = this.pending.get(key);
    if (pending === undefined) {
      pending = { scope, taskId, update: null, end: null };
      this.pending.set(key, pending);
    }
    return change(pending);
  }

  /** Redis is back: writes what was kept, updates before the finish, each as a check-and-set. */
  private async flush(): Promise<void> {
    if (this.flushing || this.closed) return;
    this.flushing = true;
    try {
      for (const [key, pending] of [...this.pending]) {
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
        this.pending.delete(key);
      }
    } finally {
      this.flushing = false;
    }
  }

  private forgetOwned(scope: string, taskId: string): void {
    const key = ownedKey(scope, taskId);
    this.owned.delete(key);
  }

  /** Delivers a change to this store's listeners; a listener's failure never fails the write. */
  private announce(change: TaskChange): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (error) {
        try {
          this.logger(`conduit-mcp: a task change listener threw: ${describeError(error)}`);
        } catch {
          // Ignore a broken logger.
        }
      }
    }
  }

  /**
   * Runs one Redis call: not sent while the connection is not ready (no buffering), bounded by
   * `commandTimeoutMs`; any failure resolves {@link UNAVAILABLE}.
   */
  private async call<T>(
    op: (client: Client & TaskScripts) => Promise<T>,
  ): Promise<T | Unavailable> {
    if (this.closed) throw new StoreClosedError();
    if (this.client.status !== "ready") return UNAVAILABLE;
    try {
      const result = await bounded(op(this.client as Client & TaskScripts), this.timeoutMs);
      if (this.monitor.isDown) {
        // Redis answered again on a connection that never dropped (e.g. after a stall).
        this.monitor.up();
        void this.renewLease().then(() => this.flush());
      }
      return result;
    } catch (error) {
      this.fault(error);
      return UNAVAILABLE;
    }
  }

  /** An outage (reported once), or a reply error no retry will fix (reported once per text). */
  private fault(error: unknown): void {
    const name = error instanceof Error ? error.name : "";
    const message = error instanceof Error ? error.message : "";
    if (name === "ReplyError" && !OUTAGE_REPLY.test(message)) {
      const text = describeError(error);
      if (this.reportedFaults.has(text) || this.reportedFaults.size >= 20) return;
      this.reportedFaults.add(text);
      try {
        this.logger(`conduit-mcp: Redis task store call failed (${text})`);
      } catch {
        // A broken logger must not break request handling.
      }
      return;
    }
    this.monitor.down(error);
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
    for (const [key, owned] of [...this.owned]) {
      if (this.closed) return;
      const s = wire(owned.task.scope);
      const shard = this.keys.shardOf(s);
      let epoch = epochs.get(shard.tag);
      if (epoch === undefined) {
        const read = await this.call((c) => c.get(`${shard.tag}:tepoch`));
        if (read === UNAVAILABLE) return;
        epoch = read;
        epochs.set(shard.tag, epoch);
      }
      if (epoch === owned.epoch) continue;
      const exists = await this.call((c) => c.exists(this.taskKey(shard, s, owned.task.taskId)));
      if (exists === UNAVAILABLE) return;
      if (exists === 0 && this.owned.has(key)) {
        if ((await this.restore(owned.task.scope, owned.task.taskId)) === UNAVAILABLE) return;
        epochs.delete(shard.tag);
      } else {
        owned.epoch = epoch ?? owned.epoch;
      }
    }
  }

  /** Renews the lease in every shard. */
  private async renewLease(): Promise<void> {
    if (this.closed || this.client.status !== "ready") return;
    const held = await Promise.all(
      this.keys.all.map((shard) =>
        this.call((c) =>
          c.conduitMcpTaskRenewLeaseV2(
            `${shard.tag}:tlease:${this.nodeId}`,
            `${shard.tag}:tnodes`,
            this.nodeId,
            String(this.leaseMs),
            shard.luaBase,
            this.clock === null ? "" : String(this.clock()),
          ),
        ),
      ),
    );
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
    this.owned.delete(ownedKey(change.scope, change.taskId));
    this.announce({ scope: change.scope, taskId: change.taskId, status: change.status });
  }
}

/** A running task this node created: enough to write it again if Redis loses it. */
interface OwnedTask {
  readonly task: NewTask;
  readonly createdAt: number;
  /** The shard's epoch when it was written (see task-scripts.ts `epochOf`). */
  epoch: string;
}

/** The key of {@link RedisTaskStore}'s owned and pending maps: unambiguous for any scope. */
function ownedKey(scope: string, taskId: string): string {
  return `${taskId} ${scope}`;
}

/** ARGV of an optional field: mode `k` (keep) when absent, `c` (clear) for null, else `s` and the text. */
function optional(value: string | null | undefined, asJson: boolean): [string, string] {
  if (value === undefined) return ["k", ""];
  if (value === null) return ["c", ""];
  return ["s", asJson ? JSON.stringify(value) : value];
}

/** A scope sent as JSON text by a script; null unless it is a string. */
function parseScope(json: string): string | null {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === "string" && value.length > 0 && value.length <= 2_048 ? value : null;
  } catch {
    return null;
  }
}

/** A task from `HGETALL` fields `reply[from..to)`; the scope is the caller's. */
function toRecord(scope: string, reply: readonly string[], from: number, to: number): TaskRecord {
  const f = new Map<string, string>();
  for (let i = from; i + 1 < to; i += 2) f.set(reply[i] as string, reply[i + 1] as string);
  const text = (field: string): string | null => f.get(field) ?? null;
  const number = (field: string): number | null => {
    const raw = f.get(field);
    return raw === undefined ? null : Number(raw);
  };
  const message = f.get("m");
  const status = f.get("s") ?? "failed";
  return {
    taskId: f.get("id") ?? "",
    scope,
    status: (STATUSES.has(status) ? status : "failed") as TaskStatus,
    statusMessage: message === undefined ? null : parseMessage(message),
    createdAt: number("c") ?? 0,
    lastUpdatedAt: number("u") ?? 0,
    ttlMs: number("l") ?? 0,
    pollIntervalMs: number("p") ?? 0,
    owner: text("o"),
    expiresAt: number("e"),
    result: text("r"),
    error: text("er"),
    inputRequests: text("ir"),
  };
}

function parseMessage(json: string): string | null {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === "string" ? value : null;
  } catch {
    return null;
  }
}

/** A change published by another node, `<status> <node> <taskId> <scope JSON>`; null unless valid. */
function decodeChange(raw: unknown): (TaskChange & { readonly node: string }) | null {
  if (typeof raw !== "string" || raw.length > MAX_MESSAGE_LENGTH) return null;
  const first = raw.indexOf(" ");
  const second = first === -1 ? -1 : raw.indexOf(" ", first + 1);
  const third = second === -1 ? -1 : raw.indexOf(" ", second + 1);
  if (third === -1) return null;
  const status = raw.slice(0, first);
  const node = raw.slice(first + 1, second);
  const taskId = raw.slice(second + 1, third);
  if (!CHANGES.has(status) || !NODE_ID.test(node) || !isTaskId(taskId)) return null;
  const scope = parseScope(raw.slice(third + 1));
  if (scope === null) return null;
  return { status: status as TaskChange["status"], node, taskId, scope };
}
