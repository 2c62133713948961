/**
 * The contract of task storage: where a task's record (status, status message, result or error)
 * lives while its handler runs and after it finished. The memory store
 * ({@link MemoryTaskStore}) is the default; a shared store (Redis, `conduit-mcp/redis`) lets every
 * node of a deployment see the same tasks.
 *
 * A task is the MCP answer for work that outlives its request: the request returns at once with a
 * task id, the client polls the task and fetches its result later
 * (MCP 2025-11-25, Tasks: https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks;
 * 2026-07-28, the `io.modelcontextprotocol/tasks` extension,
 * https://modelcontextprotocol.io/extensions/tasks/overview). The store knows nothing of either
 * wire: results and errors reach it as JSON text the protocol layer wrote, and times as
 * milliseconds since the epoch.
 *
 * Rules every implementation keeps, checked by the shared contract suite
 * (test/tasks/task-store-contract.ts):
 *
 * - **Scoped.** Every read and write names the caller's scope. A task of another scope is
 *   answered exactly as a task that does not exist (`undefined`, `"unknown"`, `false`), so a
 *   caller learns nothing about other tenants' ids.
 * - **Status lifecycle** (2025-11-25, "Task Status Lifecycle"): a task starts `working`; it may
 *   move between `working` and `input_required`; `completed`, `failed` and `cancelled` are
 *   terminal and never change again. A write aimed at a terminal task changes nothing.
 * - **Bounds, per bucket first.** A task is paid for by its creator's bucket
 *   ({@link NewTask.bucket}: the `principal:` or `ip:` bucket, whatever session it was made in),
 *   so opening sessions never multiplies a tenant's share. `maxTasksPerScope` counts every stored
 *   task of a bucket, running or finished. At that quota the bucket's own oldest finished task is
 *   dropped to make room; only a bucket whose tasks are all still running is refused
 *   (`"task_limit_reached"`: the only bound that refuses). At the global cap `maxTasks` one task of
 *   the bucket holding the most tasks is dropped before the write: its oldest finished task, else
 *   its oldest running task, which {@link CreateTaskOutcome} reports so its handler is aborted.
 *   Ties between buckets go to the name that sorts first. The tenant filling the table pays first;
 *   a smaller tenant's tasks, finished or not, are never dropped before a larger one's.
 * - **Bytes, per bucket first.** The UTF-8 bytes of a task's result, error, input requests and
 *   status message count against its bucket. A bucket over `maxTaskBytesPerScope` drops its own
 *   oldest finished tasks; a result that does not fit beside what the bucket still runs is refused
 *   (`"too_large"`). Every task together over `maxTaskBytes` drops tasks of the bucket holding the
 *   most bytes first (finished, then running, reported as `evicted`), never the task being written.
 * - **Result size.** A result or error longer than `maxResultBytes` (UTF-8 bytes of the JSON text)
 *   is refused with `"too_large"` and nothing is written; the caller then finishes the task with a
 *   small error instead.
 * - **Expiry.** A finished task is kept `ttlMs` after it finished (`expiresAt`; this is at least
 *   the spec's "ttl from creation", which a receiver may exceed). An expired task is gone for every
 *   read at once, whether or not {@link TaskStore.sweep} has removed it yet. A running task never
 *   expires: it is bounded by the quota, the cap and its node's lease.
 * - **Owners.** A running task records the node that runs its handler (`owner`). A store shared by
 *   several nodes gives each node a lease; {@link TaskStore.sweep} turns the running tasks of a node
 *   whose lease expired into `failed` tasks with {@link ORPHANED_TASK_MESSAGE} and
 *   {@link ORPHANED_TASK_ERROR}, found by any node. A single-process store is its only node.
 * - **Changes are announced.** Every transition to a terminal status, and every running task
 *   dropped at the cap, is delivered to {@link TaskStore.onChange} listeners: this store's own
 *   listeners before the writing call resolves, other nodes' listeners when the change reaches
 *   them (a shared store publishes it). A cancel recorded on one node thus reaches the handler on
 *   another even when the cancellation registry's own path missed it.
 *
 * Ids reaching a store are already checked by {@link isTaskId}; status messages are already
 * sanitised and bounded by the caller.
 */

import { ErrorCode } from "../errors.js";
import type { Reachability } from "../reachability.js";

/** A task's status (MCP 2025-11-25 `TaskStatus`; the same five values in the 2026 extension). */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** The statuses a task never leaves. */
export type TerminalTaskStatus = "completed" | "failed" | "cancelled";

/** Whether `status` is terminal (`completed`, `failed` or `cancelled`). */
/** Every task status at 0: a gauge shows each status, including those no task has now. */
export function emptyStatusCounts(): Record<TaskStatus, number> {
  return { working: 0, input_required: 0, completed: 0, failed: 0, cancelled: 0 };
}

export function isTerminalStatus(status: TaskStatus): status is TerminalTaskStatus {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** One task as a store hands it back. Read-only: a store never exposes its own copy. */
export interface TaskRecord {
  /** The unguessable id ({@link newTaskId}). */
  readonly taskId: string;
  /** The prefixed scope that owns it (`session:…`, `principal:…`, `ip:…`). */
  readonly scope: string;
  readonly status: TaskStatus;
  /** A human-readable note on the current status (progress, reason of a failure), or null. */
  readonly statusMessage: string | null;
  /** When it was created, in ms since the epoch (the store's clock). */
  readonly createdAt: number;
  /** When its status, status message or input requests last changed (ms since the epoch). */
  readonly lastUpdatedAt: number;
  /** How long it is kept after it finished (ms). */
  readonly ttlMs: number;
  /** The polling interval suggested to the client (ms). */
  readonly pollIntervalMs: number;
  /** The node running its handler while it is not terminal; null once terminal. */
  readonly owner: string | null;
  /** When a finished task expires (`finishedAt + ttlMs`); null while it runs. */
  readonly expiresAt: number | null;
  /**
   * The result of the underlying request as JSON text, when it produced one (a `completed`
   * task; a 2025-era `failed` tool call whose result has `isError: true` keeps it too).
   */
  readonly result: string | null;
  /** The JSON-RPC error object (`{code, message, data?}`) as JSON text, when the request failed with one. */
  readonly error: string | null;
  /**
   * Outstanding server-to-client requests of an `input_required` task as JSON text, or null: the
   * 2026 extension's `inputRequests` map (key → request), or for a 2025-era task the JSON-RPC
   * requests a `tasks/result` sends (request id → request).
   */
  readonly inputRequests: string | null;
}

/** What {@link TaskStore.create} needs; the store stamps the times, the owner and the status. */
export interface NewTask {
  readonly scope: string;
  /**
   * The bucket that pays for the task (quota, byte budget): the creator's `principal:` or `ip:`
   * bucket, so a tenant's sessions share one quota. Default: `scope`.
   */
  readonly bucket?: string;
  /** A fresh id from {@link newTaskId}. */
  readonly taskId: string;
  /** Retention after it finishes (ms), already clamped by the caller. */
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  /** The first status message, or null. */
  readonly statusMessage?: string | null;
}

/** A running task dropped at the global cap: its handler, wherever it runs, must be aborted. */
export interface EvictedTask {
  readonly scope: string;
  readonly taskId: string;
}

/** The outcome of {@link TaskStore.create}. */
export type CreateTaskOutcome =
  | {
      readonly ok: true;
      /** The task as stored, status `working`: a `get` on it resolves from now on. */
      readonly task: TaskRecord;
      /** Running tasks dropped at the global cap to make room (usually none). */
      readonly evicted: readonly EvictedTask[];
    }
  | {
      readonly ok: false;
      /** The scope holds `maxTasksPerScope` tasks and none of them has finished. */
      readonly error: "task_limit_reached";
    };

/** A change of a non-terminal task's status, status message or input requests. */
export interface TaskUpdate {
  /** `working` or `input_required`; absent keeps the status. */
  readonly status?: "working" | "input_required";
  /** Absent keeps the message; null clears it. */
  readonly statusMessage?: string | null;
  /** Absent keeps them; null clears them. */
  readonly inputRequests?: string | null;
}

/** How a task ends, as its handler (or its owner's failure) decides. */
export type TaskOutcome =
  | {
      /** `failed` with a result: a 2025-era tool result with `isError: true`. */
      readonly status: "completed" | "failed";
      /** The request's result, JSON text. */
      readonly result: string;
      readonly statusMessage?: string | null;
    }
  | {
      readonly status: "failed";
      /** The JSON-RPC error object, JSON text. */
      readonly error: string;
      readonly statusMessage?: string | null;
    };

/** The outcome of {@link TaskStore.finish}. */
export type FinishTaskOutcome =
  /** Stored; the task is terminal now. */
  | "finished"
  /** Unknown, another scope's, expired, or already terminal (e.g. cancelled): nothing written. */
  | "not_running"
  /**
   * The result or error is longer than `maxResultBytes`, or does not fit the bucket's byte budget
   * beside the tasks it still runs: nothing written.
   */
  | "too_large";

/** The outcome of {@link TaskStore.cancel}. */
export type CancelTaskOutcome =
  /** It was running and is `cancelled` now; `task` is the record after the change. */
  | { readonly outcome: "cancelled"; readonly task: TaskRecord }
  /** It had already finished; nothing changed. */
  | { readonly outcome: "terminal"; readonly task: TaskRecord }
  /** Unknown, another scope's, or expired. */
  | { readonly outcome: "unknown" };

/** One page of {@link TaskStore.list}. */
export interface TaskPage {
  /** The scope's tasks in creation order, oldest first. */
  readonly tasks: readonly TaskRecord[];
  /** The position to pass as `after` for the next page, or null on the last page. */
  readonly next: string | null;
}

/** Paging of {@link TaskStore.list}. */
export interface ListTasksOptions {
  /**
   * A `next` of an earlier page (opaque to the caller: it must not be built or parsed), or
   * null for the first page. Tasks removed meanwhile are simply not listed; tasks created
   * meanwhile come last.
   */
  readonly after: string | null;
  /** Largest page, ≥ 1. */
  readonly limit: number;
}

/** A task that reached a terminal status, or a running task dropped at the cap. */
export interface TaskChange {
  readonly scope: string;
  readonly taskId: string;
  /** The terminal status reached, or `"evicted"` for a running task dropped at the cap. */
  readonly status: TerminalTaskStatus | "evicted";
}

/** Counts of one {@link TaskStore.sweep}. */
export interface TaskSweepResult {
  /** Finished tasks past `expiresAt` that were removed. */
  readonly expired: number;
  /** Running tasks of nodes whose lease expired that were marked `failed`. */
  readonly orphaned: number;
}

/** The status message of a task whose node stopped while it ran. */
export const ORPHANED_TASK_MESSAGE =
  "The server node running this task stopped before it finished.";

/**
 * The JSON-RPC error (JSON text) of a task whose node stopped while it ran: an internal error,
 * as the request itself would have ended (2025-11-25, Tasks, "Error Handling").
 */
export const ORPHANED_TASK_ERROR = JSON.stringify({
  code: ErrorCode.InternalError,
  message: "Internal error",
});

/** Storage of tasks. See the module comment for the rules every implementation keeps. */
export interface TaskStore {
  /**
   * Whether the service behind the store is reachable (`GET /ready` answers 503 while it is not).
   * Absent for a store that needs no other process.
   */
  readonly reachability?: Reachability;
  /** This node's id: the `owner` of the tasks it creates. */
  readonly nodeId: string;
  /** Per-scope quota (`Infinity` when disabled). */
  readonly maxTasksPerScope: number;
  /** Global cap (`Infinity` when disabled). */
  readonly maxTasks: number;
  /** Largest result or error, in UTF-8 bytes of its JSON text. */
  readonly maxResultBytes: number;
  /** Bytes one bucket's tasks may hold (`Infinity` when disabled). */
  readonly maxTaskBytesPerScope: number;
  /** Bytes of every task together (`Infinity` when disabled). */
  readonly maxTaskBytes: number;
  /**
   * Creates a `working` task owned by this node, after the quota (own finished tasks dropped
   * first, else refused) and the global cap (one task dropped). Strongly consistent: once it
   * resolves `ok`, a `get` of the task resolves on every node (2026 extension, "Task Creation").
   */
  create(task: NewTask): Promise<CreateTaskOutcome>;
  /** The task, or `undefined` when unknown, another scope's or expired. */
  get(scope: string, taskId: string): Promise<TaskRecord | undefined>;
  /**
   * A page of the scope's unexpired tasks in creation order; `null` when `after` is not a
   * position this store handed out.
   */
  list(scope: string, options: ListTasksOptions): Promise<TaskPage | null>;
  /**
   * Changes a non-terminal task and stamps `lastUpdatedAt`. Resolves false (nothing written)
   * when the task is unknown, another scope's or terminal.
   */
  update(scope: string, taskId: string, update: TaskUpdate): Promise<boolean>;
  /**
   * Makes a running task terminal with its outcome; clears `owner` and `inputRequests`, sets
   * `expiresAt`, announces the change. A cancelled task stays cancelled (2025-11-25: "Once a task
   * is cancelled, it MUST remain in cancelled status").
   */
  finish(scope: string, taskId: string, outcome: TaskOutcome): Promise<FinishTaskOutcome>;
  /**
   * Makes a running task `cancelled` with `statusMessage` (before the caller answers, as
   * 2025-11-25 requires), and announces it. Aborting the handler is the caller's part, through
   * the cancellation registry; listeners of {@link onChange} on the owner node are the fallback.
   */
  cancel(scope: string, taskId: string, statusMessage: string | null): Promise<CancelTaskOutcome>;
  /**
   * Cancels every running task of the scope (a 2025-era session was closed); resolves their ids.
   * Each is announced like a single cancel.
   */
  cancelScope(scope: string, statusMessage: string | null): Promise<readonly string[]>;
  /**
   * Removes finished tasks past `expiresAt` at `now`, and marks `failed` the running tasks of
   * nodes whose lease expired (a single-process store has none).
   */
  sweep(now: number): Promise<TaskSweepResult>;
  /** Number of stored tasks, expired ones not yet swept included. */
  size(): Promise<number>;
  /**
   * Stored tasks by status (every status present, 0 when none), for the metrics; null when the
   * store cannot count now (its service away, or more tasks than it will walk for a gauge).
   */
  countByStatus?(): Promise<Readonly<Record<TaskStatus, number>> | null>;
  /** Subscribes to terminal transitions and cap evictions (see the module comment). Returns an unsubscribe function. */
  onChange(listener: (change: TaskChange) => void): () => void;
  /** Releases timers and connections; later calls reject with `StoreClosedError`. Idempotent. */
  close(): Promise<void>;
}
