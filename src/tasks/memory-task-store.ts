/**
 * The default, single-process {@link TaskStore}: tasks in Maps.
 *
 * Layout: `scopes` maps a scope to its tasks (task id → record) in creation order, so a scope's
 * count is a Map size and its oldest task comes first; a second Map per scope holds its finished
 * tasks in the order they finished, which is what the quota and the cap drop first. Nested Maps,
 * never a joined key: scopes and ids are arbitrary strings, so no separator is safe.
 *
 * Costs: get, update, finish and cancel are O(1). Create is O(1) below the cap; at the cap it
 * scans the scopes once (O(scopes)) to find the largest one. List walks the scope's tasks
 * (at most `maxTasksPerScope`). Sweep walks the finished tasks.
 */
import { randomUUID } from "node:crypto";

import { StoreClosedError } from "../errors.js";
import { OPTION, readOption } from "../option-schema.js";
import {
  type CancelTaskOutcome,
  type CreateTaskOutcome,
  type EvictedTask,
  type FinishTaskOutcome,
  isTerminalStatus,
  type ListTasksOptions,
  type NewTask,
  type TaskChange,
  type TaskOutcome,
  type TaskPage,
  type TaskRecord,
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

/** The store's own, mutable copy of a task, with its place in creation order. */
interface StoredTask {
  taskId: string;
  scope: string;
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

interface ScopeTasks {
  /** Every task of the scope, in creation order. */
  readonly all: Map<string, StoredTask>;
  /** Its finished tasks, in the order they finished. */
  readonly finished: Map<string, StoredTask>;
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
  private readonly clock: () => number;
  private readonly scopes = new Map<string, ScopeTasks>();
  private readonly listeners = new Set<(change: TaskChange) => void>();
  private count = 0;
  private sequence = 0;
  private closed = false;

  constructor(options: MemoryTaskStoreOptions = {}) {
    this.maxTasksPerScope = readOption(
      OPTION.positiveLimit,
      "maxTasksPerScope",
      options.maxTasksPerScope,
      DEFAULT_MAX_TASKS_PER_SCOPE,
    );
    this.maxTasks = readOption(
      OPTION.positiveLimit,
      "maxTasks",
      options.maxTasks,
      DEFAULT_MAX_TASKS,
    );
    this.maxResultBytes = readOption(
      OPTION.positiveInteger,
      "maxResultBytes",
      options.maxResultBytes,
      DEFAULT_MAX_TASK_RESULT_BYTES,
    );
    this.clock = readOption(OPTION.clock, "clock", options.clock, Date.now);
    this.nodeId = readOption(OPTION.label, "nodeId", options.nodeId, randomUUID());
  }

  async create(task: NewTask): Promise<CreateTaskOutcome> {
    this.open();
    const now = this.clock();
    let tasks = this.scopes.get(task.scope);
    if (tasks !== undefined && tasks.all.size >= this.maxTasksPerScope) {
      // Quota: the scope's own oldest finished task makes room; if all run, refuse.
      const oldest = this.firstExpired(tasks.finished, now) ?? tasks.finished.values().next().value;
      if (oldest === undefined) return { ok: false, error: "task_limit_reached" };
      this.remove(tasks, oldest);
    }
    const evicted: EvictedTask[] = [];
    if (this.count >= this.maxTasks) {
      const dropped = this.evictOne();
      if (dropped !== undefined) evicted.push(dropped);
    }
    tasks = this.scopes.get(task.scope);
    // Ids come from newTaskId (128 random bits); a repeat is a caller's bug, never overwritten.
    if (tasks?.all.has(task.taskId) === true) throw new Error("duplicate task id");
    if (tasks === undefined) {
      tasks = { all: new Map(), finished: new Map() };
      this.scopes.set(task.scope, tasks);
    }
    const stored: StoredTask = {
      taskId: task.taskId,
      scope: task.scope,
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
    tasks.all.set(task.taskId, stored);
    this.count++;
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
      for (const task of tasks.all.values()) {
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
    return true;
  }

  async finish(scope: string, taskId: string, outcome: TaskOutcome): Promise<FinishTaskOutcome> {
    this.open();
    const task = this.live(scope, taskId);
    if (task === undefined || isTerminalStatus(task.status)) return "not_running";
    const payload = "result" in outcome ? outcome.result : outcome.error;
    if (Buffer.byteLength(payload, "utf8") > this.maxResultBytes) return "too_large";
    if ("result" in outcome) task.result = outcome.result;
    else task.error = outcome.error;
    if (outcome.statusMessage !== undefined) task.statusMessage = outcome.statusMessage;
    this.terminate(task, outcome.status);
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
    const running = [...tasks.all.values()].filter((task) => !isTerminalStatus(task.status));
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
    for (const tasks of [...this.scopes.values()]) {
      for (const task of [...tasks.finished.values()]) {
        if (this.expired(task, now)) {
          this.remove(tasks, task);
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
    this.listeners.clear();
    this.count = 0;
  }

  private open(): void {
    if (this.closed) throw new StoreClosedError();
  }

  /** The scope's task if it exists and has not expired. */
  private live(scope: string, taskId: string): StoredTask | undefined {
    const task = this.scopes.get(scope)?.all.get(taskId);
    if (task === undefined || this.expired(task, this.clock())) return undefined;
    return task;
  }

  private expired(task: StoredTask, now: number): boolean {
    return task.expiresAt !== null && now >= task.expiresAt;
  }

  private firstExpired(tasks: Map<string, StoredTask>, now: number): StoredTask | undefined {
    for (const task of tasks.values()) if (this.expired(task, now)) return task;
    return undefined;
  }

  private terminate(task: StoredTask, status: "completed" | "failed" | "cancelled"): void {
    const now = Math.max(this.clock(), task.lastUpdatedAt);
    task.status = status;
    task.lastUpdatedAt = now;
    task.owner = null;
    task.inputRequests = null;
    task.expiresAt = now + task.ttlMs;
    this.scopes.get(task.scope)?.finished.set(task.taskId, task);
    this.announce({ scope: task.scope, taskId: task.taskId, status });
  }

  private remove(tasks: ScopeTasks, task: StoredTask): void {
    tasks.all.delete(task.taskId);
    tasks.finished.delete(task.taskId);
    this.count--;
    if (tasks.all.size === 0) this.scopes.delete(task.scope);
  }

  /**
   * Drops one task at the global cap: the oldest finished task of the largest scope that has
   * one, else the oldest running task of the largest scope (returned, so its handler is
   * aborted). Ties between scopes go to the name that sorts first.
   */
  private evictOne(): EvictedTask | undefined {
    let finishedScope: ScopeTasks | undefined;
    let finishedName = "";
    let anyScope: ScopeTasks | undefined;
    let anyName = "";
    for (const [name, tasks] of this.scopes) {
      if (larger(tasks, name, anyScope, anyName)) {
        anyScope = tasks;
        anyName = name;
      }
      if (tasks.finished.size > 0 && larger(tasks, name, finishedScope, finishedName)) {
        finishedScope = tasks;
        finishedName = name;
      }
    }
    if (finishedScope !== undefined) {
      const oldest = finishedScope.finished.values().next().value as StoredTask;
      this.remove(finishedScope, oldest);
      return undefined;
    }
    if (anyScope === undefined) return undefined;
    const oldest = anyScope.all.values().next().value as StoredTask;
    this.remove(anyScope, oldest);
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

/** Whether scope `name` with `tasks` beats the current best in the cap's order. */
function larger(
  tasks: ScopeTasks,
  name: string,
  best: ScopeTasks | undefined,
  bestName: string,
): boolean {
  if (best === undefined) return true;
  if (tasks.all.size !== best.all.size) return tasks.all.size > best.all.size;
  return name < bestName;
}
