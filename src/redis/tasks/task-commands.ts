/**
 * The Redis commands of the task store: which keys and arguments each task script (task-scripts.ts)
 * takes, and what it answers, raw. One place knows the key layout of a task and the argument order
 * of every script; the store (redis-task-store.ts) decides what an answer means and what to do
 * when Redis is away.
 */

import type { NewTask, TaskOutcome, TaskUpdate } from "../../tasks/index.js";
import { ORPHANED_TASK_ERROR, ORPHANED_TASK_MESSAGE } from "../../tasks/index.js";
import type { RedisClient } from "../connection/connection.js";
import type { StoreCalls } from "../connection/store-calls.js";
import { cat, type KeyLayout, pairMember, type ShardKeys, type Wire, wire } from "../key-layout.js";
import {
  TASK_CANCEL_SCOPE_SCRIPT,
  TASK_CANCEL_SCRIPT,
  TASK_COUNT_BY_STATUS_SCRIPT,
  TASK_CREATE_SCRIPT,
  TASK_FINISH_SCRIPT,
  TASK_GET_SCRIPT,
  TASK_LIST_SCRIPT,
  TASK_RENEW_LEASE_SCRIPT,
  TASK_RETIRE_SCRIPT,
  TASK_SWEEP_SCRIPT,
  TASK_UPDATE_SCRIPT,
} from "./task-scripts.js";

/** The scripts, as ioredis `defineCommand` adds them (EVALSHA, falling back to EVAL). */
export interface TaskScripts {
  conduitMcpTaskCreateV2(...args: Wire[]): Promise<[number, string, string, string, string?]>;
  conduitMcpTaskGetV3(...args: Wire[]): Promise<string[] | number | null>;
  conduitMcpTaskCountByStatusV2(...args: Wire[]): Promise<Array<string | number> | null>;
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
  ["conduitMcpTaskGetV3", TASK_GET_SCRIPT, 1],
  ["conduitMcpTaskUpdateV2", TASK_UPDATE_SCRIPT, 1],
  ["conduitMcpTaskFinishV2", TASK_FINISH_SCRIPT, 1],
  ["conduitMcpTaskCancelV2", TASK_CANCEL_SCRIPT, 1],
  ["conduitMcpTaskCancelScopeV2", TASK_CANCEL_SCOPE_SCRIPT, 1],
  ["conduitMcpTaskListV2", TASK_LIST_SCRIPT, 1],
  ["conduitMcpTaskSweepV2", TASK_SWEEP_SCRIPT, 2],
  ["conduitMcpTaskCountByStatusV2", TASK_COUNT_BY_STATUS_SCRIPT, 1],
  ["conduitMcpTaskRenewLeaseV2", TASK_RENEW_LEASE_SCRIPT, 2],
  ["conduitMcpTaskRetireV2", TASK_RETIRE_SCRIPT, 3],
];

/** The pipeline a `get` sends: the check script, then a plain `HGETALL`. */
interface GetPipeline {
  conduitMcpTaskGetV3(...args: Wire[]): GetPipeline;
  hgetall(key: Wire): GetPipeline;
  exec(): Promise<Array<[Error | null, unknown]> | null>;
}

/** A call that did not reach Redis (outage, timeout, not connected). */
export const UNAVAILABLE: unique symbol = Symbol("unavailable");
export type Unavailable = typeof UNAVAILABLE;

/** The bounds the scripts enforce, as script arguments (`"-1"`: off). */
export interface TaskBoundArgs {
  readonly maxPerScope: string;
  /** The cap of one shard. */
  readonly max: string;
  readonly maxBucketBytes: string;
  /** The byte budget of one shard. */
  readonly maxBytes: string;
}

/** Options of {@link TaskCommands}. */
export interface TaskCommandsOptions {
  /** The command connection: the scripts are defined on it. */
  readonly client: RedisClient;
  readonly calls: StoreCalls<TaskScripts>;
  readonly keys: KeyLayout;
  /** The channel terminal changes are published on. */
  readonly channel: string;
  readonly nodeId: string;
  readonly leaseMs: number;
  readonly clock: (() => number) | null;
  readonly bounds: TaskBoundArgs;
}

/** Where a write lands: the task, the shard's epoch it was created in (`""` unknown). */
export interface TaskWrite {
  readonly scope: string;
  readonly taskId: string;
  readonly epoch: string;
}

/**
 * Every task script, with its keys and arguments; each resolves the script's raw answer, or
 * {@link UNAVAILABLE} when Redis could not be reached.
 *
 * @example
 * ```ts
 * const commands = new TaskCommands({ client, calls, keys, channel, nodeId, leaseMs, clock: null, bounds });
 * const fields = await commands.get(scope, taskId);
 * ```
 */
export class TaskCommands {
  readonly keys: KeyLayout;
  private readonly o: TaskCommandsOptions;

  constructor(options: TaskCommandsOptions) {
    this.o = options;
    this.keys = options.keys;
    for (const [name, lua, numberOfKeys] of SCRIPTS) {
      options.client.defineCommand(name, { lua, numberOfKeys });
    }
  }

  /** Creates `task`; `createdAt` `""` stamps now, else keeps the given time (a restore). */
  create(task: NewTask, createdAt: string) {
    const s = wire(task.scope);
    const bucket = wire(task.bucket ?? task.scope);
    const shard = this.keys.shardOf(s);
    const nodeId = this.o.nodeId;
    const message = task.statusMessage ?? null;
    return this.run((c) =>
      c.conduitMcpTaskCreateV2(
        this.taskKey(shard, s, task.taskId),
        cat(`${shard.tag}:ts:`, s),
        cat(`${shard.tag}:tb:`, bucket),
        `${shard.tag}:tall`,
        `${shard.tag}:trun:${nodeId}`,
        `${shard.tag}:tnodes`,
        `${shard.tag}:tlease:${nodeId}`,
        ...this.context(shard),
        s,
        task.taskId,
        JSON.stringify(task.scope),
        String(task.ttlMs),
        String(task.pollIntervalMs),
        ...optional(message, true),
        this.o.bounds.maxPerScope,
        this.o.bounds.max,
        bucket,
        createdAt,
      ),
    );
  }

  /**
   * The task's fields (field, value, …), or null when it is not there (or no longer live): the
   * check script and a plain `HGETALL` in one pipeline, one round trip (task-scripts.ts GET). The
   * `HGETALL` runs right after the check; should the script have to be sent again (Redis's
   * script cache was flushed), after it: either way it reads the task as it was at one moment
   * the task was live, or finds it gone.
   */
  get(scope: string, taskId: string) {
    const s = wire(scope);
    const shard = this.keys.shardOf(s);
    const key = this.taskKey(shard, s, taskId);
    return this.run(async (c): Promise<string[] | null> => {
      const pipeline = c.pipeline() as unknown as GetPipeline;
      const replies = await pipeline
        .conduitMcpTaskGetV3(key, ...this.context(shard), pairMember(s, taskId))
        .hgetall(key)
        .exec();
      const [checked, read] = replies ?? [];
      if (checked === undefined || read === undefined) throw new Error("pipeline not answered");
      if (checked[0] !== null) throw checked[0];
      if (read[0] !== null) throw read[0];
      const verdict = checked[1];
      if (verdict === null) return null;
      if (Array.isArray(verdict)) return verdict.map(String);
      const fields = read[1] as Record<string, string>;
      const flat: string[] = [];
      for (const name of Object.keys(fields)) flat.push(name, fields[name] as string);
      return flat.length === 0 ? null : flat;
    });
  }

  /** One page of a scope's tasks after position `after` (`""` from the start). */
  list(scope: string, after: string, limit: number) {
    const s = wire(scope);
    const shard = this.keys.shardOf(s);
    return this.run((c) =>
      c.conduitMcpTaskListV2(
        cat(`${shard.tag}:ts:`, s),
        ...this.context(shard),
        s,
        after,
        String(limit),
      ),
    );
  }

  update(at: TaskWrite, update: TaskUpdate) {
    const s = wire(at.scope);
    const shard = this.keys.shardOf(s);
    return this.run((c) =>
      c.conduitMcpTaskUpdateV2(
        this.taskKey(shard, s, at.taskId),
        ...this.context(shard),
        pairMember(s, at.taskId),
        update.status ?? "",
        ...optional(update.statusMessage, true),
        ...optional(update.inputRequests, false),
        this.o.bounds.maxBucketBytes,
        this.o.bounds.maxBytes,
        at.epoch,
      ),
    );
  }

  finish(at: TaskWrite, outcome: TaskOutcome) {
    const s = wire(at.scope);
    const shard = this.keys.shardOf(s);
    const isResult = "result" in outcome;
    return this.run((c) =>
      c.conduitMcpTaskFinishV2(
        this.taskKey(shard, s, at.taskId),
        ...this.context(shard),
        pairMember(s, at.taskId),
        outcome.status,
        isResult ? "r" : "er",
        isResult ? outcome.result : outcome.error,
        ...optional(outcome.statusMessage, true),
        this.o.bounds.maxBucketBytes,
        this.o.bounds.maxBytes,
        at.epoch,
      ),
    );
  }

  cancel(scope: string, taskId: string, statusMessage: string | null) {
    const s = wire(scope);
    const shard = this.keys.shardOf(s);
    return this.run((c) =>
      c.conduitMcpTaskCancelV2(
        this.taskKey(shard, s, taskId),
        ...this.context(shard),
        pairMember(s, taskId),
        ...optional(statusMessage, true),
      ),
    );
  }

  /** Cancels every running task of a scope; resolves their ids. */
  cancelScope(scope: string, statusMessage: string | null) {
    const s = wire(scope);
    const shard = this.keys.shardOf(s);
    return this.run((c) =>
      c.conduitMcpTaskCancelScopeV2(
        cat(`${shard.tag}:ts:`, s),
        ...this.context(shard),
        s,
        ...optional(statusMessage, true),
      ),
    );
  }

  /**
   * One page of a shard's sweep: removes up to `page` expired tasks and fails the running tasks
   * of lapsed nodes; `at` `""` uses Redis's clock. Resolves `[expired, orphaned]`.
   */
  sweep(shard: ShardKeys, at: string, page: number) {
    return this.run((c) =>
      c.conduitMcpTaskSweepV2(
        `${shard.tag}:texp`,
        `${shard.tag}:tnodes`,
        shard.luaBase,
        at,
        ...this.context(shard).slice(2),
        String(page),
      ),
    );
  }

  /** Renews this node's lease in one shard. */
  renewLease(shard: ShardKeys) {
    const nodeId = this.o.nodeId;
    return this.run((c) =>
      c.conduitMcpTaskRenewLeaseV2(
        `${shard.tag}:tlease:${nodeId}`,
        `${shard.tag}:tnodes`,
        nodeId,
        String(this.o.leaseMs),
        shard.luaBase,
        this.now(),
      ),
    );
  }

  /** Gives this node's lease up in one shard, failing the running tasks it still owns there. */
  retire(shard: ShardKeys) {
    const nodeId = this.o.nodeId;
    return this.run((c) =>
      c.conduitMcpTaskRetireV2(
        `${shard.tag}:tnodes`,
        `${shard.tag}:tlease:${nodeId}`,
        `${shard.tag}:trun:${nodeId}`,
        ...this.context(shard),
      ),
    );
  }

  /** The shard's epoch (null on an empty shard). */
  epoch(shard: ShardKeys) {
    return this.run((c) => c.get(`${shard.tag}:tepoch`));
  }

  /** Whether the task's hash exists (1) or not (0), live or not. */
  exists(scope: string, taskId: string) {
    const s = wire(scope);
    return this.run((c) => c.exists(this.taskKey(this.keys.shardOf(s), s, taskId)));
  }

  /** The number of tasks in one shard. */
  size(shard: ShardKeys) {
    return this.run((c) => c.scard(`${shard.tag}:tall`));
  }

  /** `[status, count, ...]` of one shard, or null past `limit` tasks. */
  countByStatus(shard: ShardKeys, limit: number) {
    return this.run((c) =>
      c.conduitMcpTaskCountByStatusV2(`${shard.tag}:tall`, shard.luaBase, String(limit)),
    );
  }

  private run<T>(op: (client: RedisClient & TaskScripts) => Promise<T>) {
    return this.o.calls.run(op, UNAVAILABLE);
  }

  /** The key of one task. */
  private taskKey(shard: ShardKeys, scope: Wire, taskId: string): Wire {
    return cat(`${shard.tag}:tk:`, pairMember(scope, taskId));
  }

  /** The scripts' "now": `""` lets Redis use its own `TIME`. */
  private now(): string {
    return this.o.clock === null ? "" : String(this.o.clock());
  }

  /**
   * ARGV 1..7 of every script that reads a task: base, now, channel, node, orphan message and
   * error, lease.
   */
  private context(shard: ShardKeys): string[] {
    return [
      shard.luaBase,
      this.now(),
      this.o.channel,
      this.o.nodeId,
      JSON.stringify(ORPHANED_TASK_MESSAGE),
      ORPHANED_TASK_ERROR,
      String(this.o.leaseMs),
    ];
  }
}

/** ARGV of an optional field: mode `k` (keep) when absent, `c` (clear) for null, else `s` and the text. */
function optional(value: string | null | undefined, asJson: boolean): [string, string] {
  if (value === undefined) return ["k", ""];
  if (value === null) return ["c", ""];
  return ["s", asJson ? JSON.stringify(value) : value];
}
