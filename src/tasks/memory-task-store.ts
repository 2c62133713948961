/**
 * The default, single-process {@link TaskStore}: tasks in Maps.
 *
 * Layout: `scopes` maps a scope to its tasks (task id → record) in creation order, for reads and
 * lists. `buckets` maps the bucket that pays for a task (its creator's `principal:` or `ip:`
 * bucket, see {@link NewTask.bucket}) to the tasks it holds in creation order, the ones that
 * finished in the order they finished (what the quota and the caps drop first), and their bytes.
 * Nested Maps, never a joined key: scopes and ids are arbitrary strings, so no separator is safe.
 *
 * Costs: get, update, finish and cancel are O(1) below the byte budgets. Create is O(1) below the
 * cap; at the cap, and a write over the global byte budget, scans the buckets once (O(buckets))
 * to find the largest one. List walks the scope's tasks (at most `maxTasksPerScope`). Sweep walks
 * the finished tasks.
 */
import { randomUUID } from "node:crypto";

import { utf8Bytes } from "../byte-ledger.js";
import { StoreClosedError } from "../errors.js";
import { OPTION, readOption } from "../option-schema.js";
import {
  type CancelTaskOutcome,
  type CreateTaskOutcome,
  type EvictedTask,
  emptyStatusCounts,
  type FinishTaskOutcome,
  isTerminalStatus,
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
} from "./task-store.js";

/** Options of {@link MemoryTaskStore}. */
export interface MemoryTaskStoreOptions {
  /** Per-scope quota; `Infinity` disables it. Default {@link DEFAULT_MAX_TASKS_PER_SCOPE}. */
  readonly maxTasksPerScope?: number;
  /** Global cap; `Infinity` disables it. Default {@link DEFAULT_MAX_TASKS}. */
  readonly maxTasks?: number;
  /** Largest result or error (UTF-8 bytes of its JSON text). Default {@link DEFAULT_MAX_TASK_RESULT_BYTES}. */
  readonly maxResultBytes?: number;
  /**
   * Bytes of results, errors, input requests and status messages one bucket may hold; `Infinity`
   * disables it. Default {@link DEFAULT_MAX_TASK_BYTES_PER_SCOPE}.
   */
  readonly maxTaskBytesPerScope?: number;
  /** Bytes of every task together; `Infinity` disables it. Default {@link DEFAULT_MAX_TASK_BYTES}. */
  readonly maxTaskBytes?: number;
  /** Stamps tasks, in ms since the epoch. Default `Date.now`. */
  readonly clock?: () => number;
  /** This node's id (the `owner` of its running tasks). Default: a random UUID. */
  readonly nodeId?: string;
}

/** Default per-scope quota of tasks. */
export const DEFAULT_MAX_TASKS_PER_SCOPE = 100;
/** Default global cap of tasks. */
export const DEFAULT_MAX_TASKS = 10_000;
/** Default largest result or error: 1 MiB of JSON text. */
export const DEFAULT_MAX_TASK_RESULT_BYTES = 1_048_576;
/** Default bytes one bucket's tasks may hold: 8 MiB (eight largest results). */
export const DEFAULT_MAX_TASK_BYTES_PER_SCOPE = 8 * 1_048_576;
/** Default bytes of every task together: 128 MiB. */
export const DEFAULT_MAX_TASK_BYTES = 128 * 1_048_576;

/** The five bounds every task store reads alike (each documented in MemoryTaskStoreOptions). */
export interface TaskBounds {
  readonly maxTasksPerScope: number;
  readonly maxTasks: number;
  readonly maxResultBytes: number;
  readonly maxTaskBytesPerScope: number;
  readonly maxTaskBytes: number;
}

/**
 * Reads and checks a task store's bounds, defaults applied; errors name the option.
 *
 * @internal
 */
export function readTaskBounds(options: Partial<TaskBounds>): TaskBounds {
  return {
    maxTasksPerScope: readOption(
      OPTION.positiveLimit,
      "maxTasksPerScope",
      options.maxTasksPerScope,
      DEFAULT_MAX_TASKS_PER_SCOPE,
    ),
    maxTasks: readOption(OPTION.positiveLimit, "maxTasks", options.maxTasks, DEFAULT_MAX_TASKS),
    maxResultBytes: readOption(
      OPTION.positiveInteger,
      "maxResultBytes",
      options.maxResultBytes,
      DEFAULT_MAX_TASK_RESULT_BYTES,
    ),
    maxTaskBytesPerScope: readOption(
      OPTION.positiveLimit,
      "maxTaskBytesPerScope",
      options.maxTaskBytesPerScope,
      DEFAULT_MAX_TASK_BYTES_PER_SCOPE,
    ),
    maxTaskBytes: readOption(
      OPTION.positiveLimit,
      "maxTaskBytes",
      options.maxTaskBytes,
      DEFAULT_MAX_TASK_BYTES,
    ),
  };
}

/** The store's own, mutable copy of a task, with its place in creation order. */
interface StoredTask {
  taskId: string;
  scope: string;
  /** The bucket that pays for it (quota, byte budget). */
  readonly bucket: string;
  /** UTF-8 bytes of its result, error, input requests and status message. */
  bytes: number;
  status: TaskRecord["status"];
  statusMessage: string | null;
  createdAt: number;
  lastUpdatedAt: number;
  ttlMs: number;
  pollIntervalMs: number;
  owner: string | null;
  expiresAt: number | null;
  result: string | null;
  error: string | null;
  inputRequests: string | null;
  /** Creation order across the store: the `after` position of {@link MemoryTaskStore.list}. */
  readonly sequence: number;
}

/** What one bucket holds: its tasks across every scope it created them in. */
interface BucketTasks {
  readonly name: string;
  /** Every task it pays for, in creation order. */
  readonly all: Set<StoredTask>;
  /** Its finished tasks, in the order they finished. */
  readonly finished: Set<StoredTask>;
  /** The sum of its tasks' `bytes`. */
  bytes: number;
}

function bytesOf(task: StoredTask): number {
  return (
    utf8Bytes(task.result) +
    utf8Bytes(task.error) +
    utf8Bytes(task.inputRequests) +
    utf8Bytes(task.statusMessage)
  );
}

const POSITION = /^(0|[1-9][0-9]{0,15})$/;

function snapshot(task: StoredTask): TaskRecord {
  return {
    taskId: task.taskId,
    scope: task.scope,
    status: task.status,
    statusMessage: task.statusMessage,
    createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
    owner: task.owner,
    expiresAt: task.expiresAt,
    result: task.result,
    error: task.error,
    inputRequests: task.inputRequests,
  };
}

/**
 * In-memory tasks for one process, with the per-scope quota, global cap, result size limit and
 * expiry of {@link TaskStore}.
 *
 * @example
 * ```ts
 * const store = new MemoryTaskStore({ maxTasksPerScope: 100 });
 * const created = await store.create({ scope: "ip:203.0.113.9", taskId: newTaskId(), ttlMs: 60_000, pollIntervalMs: 1_000 });
 * if (created.ok) await store.finish("ip:203.0.113.9", created.task.taskId, { status: "completed", result: "{}" });
 * ```
 */
export class MemoryTaskStore implements TaskStore {
  readonly nodeId: string;
  readonly maxTasksPerScope: number;
  readonly maxTasks: number;
  readonly maxResultBytes: number;
  /** Bytes one bucket's tasks may hold (`Infinity` when disabled). */
  readonly maxTaskBytesPerScope: number;
  /** Bytes of every task together (`Infinity` when disabled). */
  readonly maxTaskBytes: number;
  private readonly clock: () => number;
  private readonly scopes = new Map<string, Map<string, StoredTask>>();
  private readonly buckets = new Map<string, BucketTasks>();
  private readonly listeners = new Set<(change: TaskChange) => void>();
  private count = 0;
  private bytes = 0;
  private sequence = 0;
  private closed = false;

  constructor(options: MemoryTaskStoreOptions = {}) {
    const bounds = readTaskBounds(options);
    this.maxTasksPerScope = bounds.maxTasksPerScope;
    this.maxTasks = bounds.maxTasks;
    this.maxResultBytes = bounds.maxResultBytes;
    this.maxTaskBytesPerScope = bounds.maxTaskBytesPerScope;
    this.maxTaskBytes = bounds.maxTaskBytes;
    this.clock = readOption(OPTION.clock, "clock", options.clock, Date.now);
    this.nodeId = readOption(OPTION.label, "nodeId", options.nodeId, randomUUID());
  }

  async create(task: NewTask): Promise<CreateTaskOutcome> {
    this.open();
    const now = this.clock();
    const bucketName = task.bucket ?? task.scope;
    const bucket = this.buckets.get(bucketName);
    if (bucket !== undefined && bucket.all.size >= this.maxTasksPerScope) {
      // Quota: the bucket's own oldest finished task makes room; if all run, refuse.
      const oldest = this.firstExpired(bucket.finished, now) ?? first(bucket.finished);
      if (oldest === undefined) return { ok: false, error: "task_limit_reached" };
      this.remove(oldest);
    }
    // Ids come from newTaskId (128 random bits); a repeat is a caller's bug, never overwritten.
    if (this.scopes.get(task.scope)?.has(task.taskId) === true) {
      throw new Error("duplicate task id");
    }
    const evicted: EvictedTask[] = [];
    if (this.count >= this.maxTasks) {
      const dropped = this.evictLargest((b) => b.all.size, null);
      if (dropped) evicted.push(dropped);
    }
    const stored: StoredTask = {
      taskId: task.taskId,
      scope: task.scope,
      bucket: bucketName,
      bytes: 0,
      status: "working",
      statusMessage: task.statusMessage ?? null,
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: task.ttlMs,
      pollIntervalMs: task.pollIntervalMs,
      owner: this.nodeId,
      expiresAt: null,
      result: null,
      error: null,
      inputRequests: null,
      sequence: this.sequence++,
    };
    this.add(stored);
    evicted.push(...this.fitBytes(stored));
    for (const gone of evicted) this.announce({ ...gone, status: "evicted" });
    return { ok: true, task: snapshot(stored), evicted };
  }

  async get(scope: string, taskId: string): Promise<TaskRecord | undefined> {
    this.open();
    const task = this.live(scope, taskId);
    return task === undefined ? undefined : snapshot(task);
  }

  async list(scope: string, options: ListTasksOptions): Promise<TaskPage | null> {
    this.open();
    let after = -1;
    if (options.after !== null) {
      if (!POSITION.test(options.after)) return null;
      after = Number(options.after);
      if (after >= this.sequence) return null;
    }
    const limit = Math.max(1, Math.floor(options.limit));
    const tasks = this.scopes.get(scope);
    const page: TaskRecord[] = [];
    let next: string | null = null;
    if (tasks !== undefined) {
      const now = this.clock();
      let last = after;
      for (const task of tasks.values()) {
        if (task.sequence <= after || this.expired(task, now)) continue;
        if (page.length === limit) {
          next = String(last);
          break;
        }
        page.push(snapshot(task));
        last = task.sequence;
      }
    }
    return { tasks: page, next };
  }

  async update(scope: string, taskId: string, update: TaskUpdate): Promise<boolean> {
    this.open();
    const task = this.live(scope, taskId);
    if (task === undefined || isTerminalStatus(task.status)) return false;
    if (update.status !== undefined) task.status = update.status;
    if (update.statusMessage !== undefined) task.statusMessage = update.statusMessage;
    if (update.inputRequests !== undefined) task.inputRequests = update.inputRequests;
    task.lastUpdatedAt = Math.max(this.clock(), task.lastUpdatedAt);
    this.recount(task);
    for (const gone of this.fitBytes(task)) this.announce({ ...gone, status: "evicted" });
    return true;
  }

  async finish(scope: string, taskId: string, outcome: TaskOutcome): Promise<FinishTaskOutcome> {
    this.open();
    const task = this.live(scope, taskId);
    if (task === undefined || isTerminalStatus(task.status)) return "not_running";
    const payload = "result" in outcome ? outcome.result : outcome.error;
    const size = Buffer.byteLength(payload, "utf8");
    if (size > this.maxResultBytes) return "too_large";
    // The bucket's budget: its own oldest finished tasks make room; what still runs is not
    // dropped for its own result, so a result that cannot fit beside them is refused.
    const bucket = this.buckets.get(task.bucket) as BucketTasks;
    const message =
      outcome.statusMessage === undefined ? task.statusMessage : outcome.statusMessage;
    const after = size + utf8Bytes(message);
    while (bucket.bytes - task.bytes + after > this.maxTaskBytesPerScope) {
      const oldest = first(bucket.finished);
      if (oldest === undefined) return "too_large";
      this.remove(oldest);
    }
    if ("result" in outcome) task.result = outcome.result;
    else task.error = outcome.error;
    task.statusMessage = message;
    task.inputRequests = null;
    this.recount(task);
    const evicted = this.fitBytes(task);
    this.terminate(task, outcome.status);
    for (const gone of evicted) this.announce({ ...gone, status: "evicted" });
    return "finished";
  }

  async cancel(
    scope: string,
    taskId: string,
    statusMessage: string | null,
  ): Promise<CancelTaskOutcome> {
    this.open();
    const task = this.live(scope, taskId);
    if (task === undefined) return { outcome: "unknown" };
    if (isTerminalStatus(task.status)) return { outcome: "terminal", task: snapshot(task) };
    task.statusMessage = statusMessage;
    this.terminate(task, "cancelled");
    return { outcome: "cancelled", task: snapshot(task) };
  }

  async cancelScope(scope: string, statusMessage: string | null): Promise<readonly string[]> {
    this.open();
    const tasks = this.scopes.get(scope);
    if (tasks === undefined) return [];
    const running = [...tasks.values()].filter((task) => !isTerminalStatus(task.status));
    for (const task of running) {
      task.statusMessage = statusMessage;
      this.terminate(task, "cancelled");
    }
    return running.map((task) => task.taskId);
  }

  /** Removes finished tasks past `expiresAt`; a single process has no other node to orphan tasks. */
  async sweep(now: number): Promise<TaskSweepResult> {
    this.open();
    let expired = 0;
    for (const bucket of [...this.buckets.values()]) {
      for (const task of [...bucket.finished]) {
        if (this.expired(task, now)) {
          this.remove(task);
          expired++;
        }
      }
    }
    return { expired, orphaned: 0 };
  }

  async size(): Promise<number> {
    this.open();
    return this.count;
  }

  async countByStatus(): Promise<Readonly<Record<TaskStatus, number>>> {
    this.open();
    const counts = emptyStatusCounts();
    for (const tasks of this.scopes.values())
      for (const task of tasks.values()) counts[task.status]++;
    return counts;
  }

  /** Bytes held by every task together (results, errors, input requests, status messages). */
  async byteSize(): Promise<number> {
    this.open();
    return this.bytes;
  }

  onChange(listener: (change: TaskChange) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Drops every task and listener; later calls reject with {@link StoreClosedError}. Idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    this.scopes.clear();
    this.buckets.clear();
    this.listeners.clear();
    this.count = 0;
    this.bytes = 0;
  }

  private open(): void {
    if (this.closed) throw new StoreClosedError();
  }

  /** The scope's task if it exists and has not expired. */
  private live(scope: string, taskId: string): StoredTask | undefined {
    const task = this.scopes.get(scope)?.get(taskId);
    if (task === undefined || this.expired(task, this.clock())) return undefined;
    return task;
  }

  private expired(task: StoredTask, now: number): boolean {
    return task.expiresAt !== null && now >= task.expiresAt;
  }

  private firstExpired(tasks: Set<StoredTask>, now: number): StoredTask | undefined {
    for (const task of tasks) if (this.expired(task, now)) return task;
    return undefined;
  }

  private terminate(task: StoredTask, status: "completed" | "failed" | "cancelled"): void {
    const now = Math.max(this.clock(), task.lastUpdatedAt);
    task.status = status;
    task.lastUpdatedAt = now;
    task.owner = null;
    task.inputRequests = null;
    task.expiresAt = now + task.ttlMs;
    this.recount(task);
    this.buckets.get(task.bucket)?.finished.add(task);
    this.announce({ scope: task.scope, taskId: task.taskId, status });
  }

  private add(task: StoredTask): void {
    let tasks = this.scopes.get(task.scope);
    if (tasks === undefined) {
      tasks = new Map();
      this.scopes.set(task.scope, tasks);
    }
    tasks.set(task.taskId, task);
    let bucket = this.buckets.get(task.bucket);
    if (bucket === undefined) {
      bucket = { name: task.bucket, all: new Set(), finished: new Set(), bytes: 0 };
      this.buckets.set(task.bucket, bucket);
    }
    bucket.all.add(task);
    this.count++;
    this.recount(task);
  }

  /** Brings the task's byte count, its bucket's and the store's up to date with its fields. */
  private recount(task: StoredTask): void {
    const bytes = bytesOf(task);
    const delta = bytes - task.bytes;
    task.bytes = bytes;
    this.bytes += delta;
    const bucket = this.buckets.get(task.bucket);
    if (bucket !== undefined) bucket.bytes += delta;
  }

  private remove(task: StoredTask): void {
    const tasks = this.scopes.get(task.scope);
    tasks?.delete(task.taskId);
    if (tasks?.size === 0) this.scopes.delete(task.scope);
    const bucket = this.buckets.get(task.bucket);
    if (bucket !== undefined) {
      bucket.all.delete(task);
      bucket.finished.delete(task);
      bucket.bytes -= task.bytes;
      if (bucket.all.size === 0) this.buckets.delete(task.bucket);
    }
    this.bytes -= task.bytes;
    this.count--;
  }

  /**
   * Keeps the byte budgets after `task` grew: first its bucket's own oldest finished tasks go
   * while the bucket is over its budget (never `task` itself), then, while every task together is
   * over the global budget, tasks of the bucket holding the most bytes go, largest first, so a
   * tenant holding less than the largest ones is never the one that pays. Returns the running
   * tasks dropped, whose handlers must be aborted.
   */
  private fitBytes(task: StoredTask): EvictedTask[] {
    const bucket = this.buckets.get(task.bucket);
    while (bucket !== undefined && bucket.bytes > this.maxTaskBytesPerScope) {
      const oldest = firstOther(bucket.finished, task);
      if (oldest === undefined) break;
      this.remove(oldest);
    }
    const evicted: EvictedTask[] = [];
    while (this.bytes > this.maxTaskBytes) {
      const dropped = this.evictLargest((b) => b.bytes, task);
      if (dropped === null) break;
      if (dropped !== undefined) evicted.push(dropped);
    }
    return evicted;
  }

  /**
   * Drops one task of the largest bucket by `size` (ties go to the name that sorts first): its
   * oldest finished task, else its oldest running task, which is returned so its handler is
   * aborted. Never `spare`. Returns null when there is nothing left to drop.
   */
  private evictLargest(
    size: (bucket: BucketTasks) => number,
    spare: StoredTask | null,
  ): EvictedTask | undefined | null {
    let best: BucketTasks | undefined;
    for (const bucket of this.buckets.values()) {
      if (bucket.all.size === 1 && bucket.all.has(spare as StoredTask)) continue;
      if (
        best === undefined ||
        size(bucket) > size(best) ||
        (size(bucket) === size(best) && bucket.name < best.name)
      ) {
        best = bucket;
      }
    }
    if (best === undefined) return null;
    const finished = firstOther(best.finished, spare);
    if (finished !== undefined) {
      this.remove(finished);
      return undefined;
    }
    const oldest = firstOther(best.all, spare) as StoredTask;
    this.remove(oldest);
    return { scope: oldest.scope, taskId: oldest.taskId };
  }

  private announce(change: TaskChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A listener's failure must not undo or fail the write that announced it.
      }
    }
  }
}

function first(tasks: Set<StoredTask>): StoredTask | undefined {
  return tasks.values().next().value;
}

function firstOther(tasks: Set<StoredTask>, spare: StoredTask | null): StoredTask | undefined {
  for (const task of tasks) if (task !== spare) return task;
  return undefined;
}
