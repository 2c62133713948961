/**
 * Tasks on the wire: creating a task for a `tools/call` and running its handler detached from
 * the request, and the `tasks/*` methods of both eras.
 *
 * - 2025-11-25 experimental tasks
 *   (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks): the client
 *   asks per call (`params.task`); `tasks/get`, `tasks/result` (blocks until the task is
 *   terminal), `tasks/list`, `tasks/cancel` (answers the cancelled task; a terminal task is
 *   -32602).
 * - 2026-07-28 `io.modelcontextprotocol/tasks` extension (SEP-2663,
 *   https://modelcontextprotocol.io/extensions/tasks/overview): the server decides; a request
 *   that declares the extension gets a task for a task-supporting tool; `tasks/get` inlines the
 *   result, `tasks/update` and `tasks/cancel` answer an empty ack; without the extension every
 *   `tasks/*` method is -32021.
 *
 * A task belongs to the scope of the request that created it: every method looks it up under
 * the caller's scope only, so another tenant's id is answered exactly as an unknown one (and an
 * id of the wrong shape is never looked up at all).
 *
 * Cancellation goes through the cancellation registry, like a call's: the run's handle is tracked
 * under the task's key (`task:<id>`, never reachable by `notifications/cancelled`), and
 * `tasks/cancel` on any node records the cancel there, which aborts the handle on whichever node
 * runs it (with Redis, through its channel). The store's change announcements are a second path:
 * a run here whose task turned terminal elsewhere is aborted as well.
 */
import type { CancellationRegistry } from "../../cancellation/registry.js";
import type { RequestHandle, RequestId } from "../../cancellation/types.js";
import {
  ErrorCode,
  InvalidOptionError,
  RequestCancelledError,
  TaskStoreUnavailableError,
} from "../../errors.js";
import { OPTION, readOption } from "../../option-schema.js";
import { MemoryTaskStore } from "../../tasks/memory-task-store.js";
import { isTaskId, newTaskId } from "../../tasks/task-id.js";
import {
  isTerminalStatus,
  type TaskChange,
  type TaskRecord,
  type TaskStore,
} from "../../tasks/task-store.js";
import type {
  ClientAsker,
  ClientReply,
  ServerReplyBus,
  ServerRequestSettings,
} from "../asking/index.js";
import { NO_STABLE_CLIENT } from "../calls/index.js";
import type { TaskSupport } from "../tools/index.js";
import type { ListCursors } from "../wire/index.js";
import {
  cancelledResponseJson,
  errorResponseJson,
  isPlainObject,
  notificationJson,
  successResponseJson,
} from "../wire/index.js";
import { TaskAsker } from "./task-asker.js";
import { storedQuestions, storedWithdrawals, TaskOutbox } from "./task-outbox.js";
import { TaskSink, type TaskSinkOwner } from "./task-sink.js";
import { outstandingResponses, taskRoute } from "./task-update-relay.js";
import {
  detailedTask,
  legacyTask,
  META_RELATED_TASK,
  modernTask,
  TASKS_EXTENSION,
} from "./task-wire.js";

/** Task options of `createMcpServer({ tasks })`; every one has a documented default. */
export interface TaskOptions {
  /**
   * Where tasks are kept. Default: a {@link MemoryTaskStore} with the three bounds below;
   * `RedisTaskStore` (`conduit-mcp/redis`) shares them across nodes (the bounds are then its own
   * options).
   */
  readonly store?: TaskStore;
  /** Tasks one scope may hold (running or finished; a finished one makes room). Default 100. */
  readonly maxTasksPerScope?: number;
  /** Tasks the server holds in all. Default 10 000. */
  readonly maxTasks?: number;
  /** Largest result or error a task keeps, in bytes of JSON. Default 1 048 576 (1 MiB). */
  readonly maxResultBytes?: number;
  /**
   * Bytes of results, errors, questions and status messages one bucket's tasks may hold. Default
   * 8 MiB.
   */
  readonly maxTaskBytesPerScope?: number;
  /** Bytes of every task together. Default 128 MiB. */
  readonly maxTaskBytes?: number;
  /** How long a finished task is kept when the client asks for nothing else (ms). Default 3 600 000 (1 h). */
  readonly defaultTtlMs?: number;
  /** The longest retention a 2025-era client may ask for (`params.task.ttl`, ms). Default 86 400 000 (24 h). */
  readonly maxTtlMs?: number;
  /** The polling interval suggested to clients (ms). Default 1 000. */
  readonly pollIntervalMs?: number;
  /** How often expired tasks are removed (ms); 0 turns the janitor off. Default 60 000. */
  readonly sweepIntervalMs?: number;
}

/** The defaults of {@link TaskOptions}. */
export const TASK_DEFAULTS = Object.freeze({
  defaultTtlMs: 3_600_000,
  maxTtlMs: 86_400_000,
  pollIntervalMs: 1_000,
  sweepIntervalMs: 60_000,
});

/** One answer of a task method: JSON-RPC text and the HTTP status of a plain JSON answer. */
export interface TaskAnswer {
  readonly json: string;
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The request a task method answers. */
export interface TaskRequest {
  readonly id: RequestId | null;
  readonly params: Readonly<Record<string, unknown>> | undefined;
  readonly scope: string;
  /**
   * The bucket a new task is paid for by (the creator's principal or IP bucket); null when the
   * request has no stable identity, and then no task is made. Absent: `scope`.
   */
  readonly bucket?: string | null;
  /** The 2026-07-28 client capabilities, or null for a 2025-era request. */
  readonly modern: Readonly<Record<string, unknown>> | null;
  /**
   * 2025 era: the capabilities the client declared in `initialize` (its session's), or null when
   * this server was not told; what a task's asks may use.
   */
  readonly declared?: Readonly<Record<string, unknown>> | null;
  /** Aborts when the request itself is cancelled (ends a `tasks/result` wait). */
  readonly signal: AbortSignal;
  /**
   * Sends a message on the request's own stream (a `tasks/result` sends a 2025 task's questions
   * there), or null when the client does not accept one.
   */
  readonly send?: ((json: string) => Promise<void>) | null;
}

/**
 * Starts the detached handler call of a new task: `sink` and `handle` replace the request's;
 * `asker` is where its asks go (2026-07-28: `input_required` and `tasks/update`; 2025-11-25:
 * `input_required` and the `tasks/result` stream), or null when it may not ask.
 */
export type StartTaskRun = (
  sink: TaskSink,
  handle: RequestHandle,
  asker: ClientAsker | null,
) => void;

/**
 * Told that task `taskId` of `scope` may have changed status: `everywhere` when every node hears
 * it (a store announcement of a terminal status), else only this node does (its run parked or
 * resumed).
 */
export type TaskStatusListener = (taskId: string, scope: string, everywhere: boolean) => void;

/** What a `tools/call` of a task-supporting tool should do. */
export type TaskDecision =
  | { readonly kind: "task" }
  | { readonly kind: "sync" }
  | { readonly kind: "refuse"; readonly answer: TaskAnswer };

const TASK_KEY_PREFIX = "task:";
const NOT_FOUND_2025 = "Failed to retrieve task: Task not found";
const TASK_ONLY_TOOL = "This tool runs only as a task: call it with params.task";
const NOT_A_TASK_TOOL = "This tool does not run as a task: call it without params.task";
const NOT_FOUND = "Task not found";
const CANCELLED_BY_CLIENT = "The task was cancelled by request.";
const CREATOR_CANCELLED = "The request creating this task was cancelled before it was answered.";
const SESSION_ENDED = "The session that owned this task ended (closed, or expired while idle).";
const EVICTED = "The server dropped this task to stay within its task limit.";
const TOO_MANY_TASKS =
  "Too many tasks for this client: wait for one to finish or cancel one (tasks/cancel), then retry.";
const TASK_LIMIT_RETRY_AFTER: Readonly<Record<string, string>> = { "retry-after": "5" };
/** Shortest retention a client may ask for: a task gone before its first poll helps nobody. */
const MIN_TTL_MS = 1_000;
const STORE_UNAVAILABLE = "Task store unavailable; retry in a moment.";
/** A shared store's outage lasts until its backend answers again: retry soon, not at once. */
const STORE_RETRY_AFTER: Readonly<Record<string, string>> = { "retry-after": "1" };

/**
 * The answer to a task request while the task store cannot be reached (a shared store fails
 * closed): HTTP 503 with `Retry-After`, JSON-RPC -32603 saying to retry. Nothing happened.
 */
export function taskStoreOutage(id: RequestId | null): TaskAnswer {
  return {
    json: errorResponseJson(id, ErrorCode.InternalError, STORE_UNAVAILABLE),
    status: 503,
    headers: STORE_RETRY_AFTER,
  };
}

/** Runs a task method, answering {@link taskStoreOutage} when the store is unreachable. */
export async function orStoreOutage<T extends TaskAnswer | null>(
  id: RequestId | null,
  run: () => Promise<T>,
): Promise<T | TaskAnswer> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof TaskStoreUnavailableError) return taskStoreOutage(id);
    throw error;
  }
}
/**
 * A `tasks/result` wait re-reads the store this often, in case a change announcement was lost,
 * and to see a question asked on another node when no shared change feed told this one.
 */
const RESULT_RECHECK_MS = 1_000;
/**
 * Most questions one `tasks/result` stream sends: a task has at most the per-scope bound of open
 * asks at once, but asks again after each answer; this stops a run that asks forever.
 */
const MAX_QUESTIONS_SENT = 1_000;

/**
 * The tasks of one server.
 *
 * @example
 * ```ts
 * const tasks = new TaskService({ registry, cursors, pageSize: 100, options: { maxTasksPerScope: 10 } });
 * ```
 */
export class TaskService implements TaskSinkOwner {
  readonly store: TaskStore;
  private readonly registry: CancellationRegistry;
  private readonly cursors: ListCursors;
  private readonly pageSize: number;
  private readonly defaultTtlMs: number;
  private readonly maxTtlMs: number;
  private readonly pollIntervalMs: number;
  /** Runs of this node: task id → sink (task ids are unique across scopes). */
  private readonly runs = new Map<
    string,
    { sink: TaskSink; handle: RequestHandle; asker: TaskAsker | null }
  >();
  /** `tasks/result` waits of this node: task id → wake-up functions. */
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Told of status changes (status notifications: create-mcp-server.ts). */
  private readonly statusListeners = new Set<TaskStatusListener>();
  /** 2025-era asks (server-requests.ts), or null: a 2025 task may then not ask. */
  private readonly serverRequests: ServerRequestSettings | null;
  /** Carries `tasks/update` answers to the node that runs the task, or null (this node only). */
  private readonly bus: ServerReplyBus | null;
  private readonly detachBus: () => void;
  private readonly unsubscribe: () => void;
  private readonly janitor: NodeJS.Timeout | undefined;

  constructor(options: {
    readonly registry: CancellationRegistry;
    readonly cursors: ListCursors;
    readonly pageSize: number;
    readonly options?: TaskOptions | undefined;
    /** 2025-era asks: a 2025 task asks through them, and their bus carries `tasks/update` answers. */
    readonly serverRequests?: ServerRequestSettings | null;
  }) {
    const given: TaskOptions = options.options ?? {};
    if (!isPlainObject(given as unknown)) {
      throw new InvalidOptionError("tasks", "an options object or false", given);
    }
    this.registry = options.registry;
    this.cursors = options.cursors;
    this.pageSize = options.pageSize;
    this.defaultTtlMs = readOption(
      OPTION.durationMs,
      "tasks.defaultTtlMs",
      given.defaultTtlMs,
      TASK_DEFAULTS.defaultTtlMs,
    );
    this.maxTtlMs = readOption(
      OPTION.durationMs,
      "tasks.maxTtlMs",
      given.maxTtlMs,
      TASK_DEFAULTS.maxTtlMs,
    );
    this.pollIntervalMs = readOption(
      OPTION.positiveInteger,
      "tasks.pollIntervalMs",
      given.pollIntervalMs,
      TASK_DEFAULTS.pollIntervalMs,
    );
    const sweepMs = readOption(
      OPTION.timerOrZeroMs,
      "tasks.sweepIntervalMs",
      given.sweepIntervalMs,
      TASK_DEFAULTS.sweepIntervalMs,
    );
    if (given.store !== undefined && !isTaskStore(given.store)) {
      throw new InvalidOptionError(
        "tasks.store",
        "a TaskStore (src/tasks/task-store.ts)",
        given.store,
      );
    }
    this.store =
      given.store ??
      new MemoryTaskStore({
        ...(given.maxTasksPerScope === undefined
          ? {}
          : { maxTasksPerScope: given.maxTasksPerScope }),
        ...(given.maxTasks === undefined ? {} : { maxTasks: given.maxTasks }),
        ...(given.maxResultBytes === undefined ? {} : { maxResultBytes: given.maxResultBytes }),
        ...(given.maxTaskBytesPerScope === undefined
          ? {}
          : { maxTaskBytesPerScope: given.maxTaskBytesPerScope }),
        ...(given.maxTaskBytes === undefined ? {} : { maxTaskBytes: given.maxTaskBytes }),
      });
    this.unsubscribe = this.store.onChange((change) => this.changed(change));
    this.serverRequests = options.serverRequests ?? null;
    this.bus = this.serverRequests?.table.bus ?? null;
    this.detachBus =
      this.bus?.attach(taskRoute(this.store.nodeId), (scope, id, reply) => {
        this.updateArrived(scope, id, reply);
      }) ?? ignore;
    if (sweepMs > 0) {
      this.janitor = setInterval(() => {
        this.store.sweep(Date.now()).catch(ignore);
      }, sweepMs);
      this.janitor.unref();
    }
  }

  /** Tasks whose handler runs on this node now. */
  get running(): number {
    return this.runs.size;
  }

  /** Subscribes to status changes (see {@link TaskStatusListener}); returns the unsubscribe. */
  onStatusChange(listener: TaskStatusListener): () => void {
    this.statusListeners.add(listener);
    return () => {
      this.statusListeners.delete(listener);
    };
  }

  /** The tasks among `taskIds` that `scope` may see (others, malformed ids included, are left out). */
  async visible(scope: string, taskIds: readonly string[]): Promise<TaskRecord[]> {
    const found = await Promise.all(
      taskIds.map((taskId) => (isTaskId(taskId) ? this.store.get(scope, taskId) : undefined)),
    );
    return found.filter((task): task is TaskRecord => task !== undefined);
  }

  /**
   * The task's status changed on another node (heard on the change feed): this node's
   * `tasks/result` waits on it re-read it now instead of at their next recheck.
   */
  heard(taskId: string): void {
    this.wake(taskId);
  }

  /** Whether 2026-07-28 client capabilities declare the tasks extension. */
  static declaresExtension(capabilities: Readonly<Record<string, unknown>>): boolean {
    return declaresExtension(capabilities);
  }

  /**
   * Whether a `tools/call` of a tool with `taskSupport` becomes a task, runs as usual, or is
   * refused: a `required` tool called without a task (2025 -32601, 2026 -32021), or, in the 2025
   * era, a `forbidden` tool called with `params.task` (-32601: 2025-11-25 tasks, "Tool-Level
   * Negotiation", https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks#tool-level-negotiation;
   * a 2026-07-28 request's `task` is ignored, SEP-2663 "Backward Compatibility").
   */
  decide(request: Omit<TaskRequest, "signal">, taskSupport: TaskSupport): TaskDecision {
    if (request.modern !== null) {
      if (taskSupport === "forbidden") return { kind: "sync" };
      if (declaresExtension(request.modern)) return { kind: "task" };
      if (taskSupport === "optional") return { kind: "sync" };
      return { kind: "refuse", answer: missingTasksExtension(request.id) };
    }
    // 2025-11-25: the client augments the request with `task`.
    const asked = isPlainObject(request.params?.task);
    if (taskSupport === "forbidden") {
      return asked ? methodNotFound(request.id, NOT_A_TASK_TOOL) : { kind: "sync" };
    }
    if (asked) return { kind: "task" };
    if (taskSupport === "optional") return { kind: "sync" };
    return methodNotFound(request.id, TASK_ONLY_TOOL);
  }

  /**
   * Creates a task for the request and starts its run through `start`; resolves the
   * `CreateTaskResult` (after the task is stored: a `tasks/get` on it resolves from then on) or
   * the refusal of a scope at its quota. When `signal` has aborted (the request was cancelled,
   * so nobody would learn the id), no task is created; when it aborts while the task is stored,
   * the task is left cancelled and its run not started.
   */
  async create(
    request: Omit<TaskRequest, "signal"> & { readonly signal?: AbortSignal },
    start: StartTaskRun,
  ): Promise<TaskAnswer> {
    if (isAborted(request.signal)) {
      return { json: cancelledResponseJson(request.id), status: 200 };
    }
    const bucket = request.bucket === undefined ? request.scope : request.bucket;
    if (bucket === null) {
      // Nobody could ever poll, fetch or cancel it: every later request gets a scope of its own.
      return {
        json: errorResponseJson(request.id, ErrorCode.InvalidRequest, NO_STABLE_CLIENT),
        status: 400,
      };
    }
    const ttlMs = this.ttlOf(request);
    if (ttlMs === null) {
      return {
        json: errorResponseJson(
          request.id,
          ErrorCode.InvalidParams,
          `params.task.ttl must be a number of milliseconds from ${MIN_TTL_MS} to ${this.maxTtlMs}`,
        ),
        status: 200,
      };
    }
    const taskId = newTaskId();
    // Tracked before the task exists, so a cancel that arrives as soon as the client has the id
    // finds the handle.
    const handle = await this.registry.track(TASK_KEY_PREFIX + taskId, request.scope, {
      notifiable: false,
    });
    const sink = new TaskSink({
      store: this.store,
      scope: request.scope,
      taskId,
      modern: request.modern !== null,
      owner: this,
      handle,
    });
    const asker =
      request.modern === null
        ? null
        : new TaskAsker(this.store, request.scope, taskId, request.modern, () =>
            this.localChange(request.scope, taskId),
          );
    const legacyAsker =
      request.modern !== null || this.serverRequests === null
        ? null
        : TaskOutbox.asker(
            this.serverRequests,
            {
              store: this.store,
              scope: request.scope,
              bucket,
              taskId,
              changed: () => this.localChange(request.scope, taskId),
            },
            request.declared ?? null,
          );
    this.runs.set(taskId, { sink, handle, asker });
    let created: Awaited<ReturnType<TaskStore["create"]>>;
    try {
      created = await this.store.create({
        scope: request.scope,
        bucket,
        taskId,
        ttlMs,
        pollIntervalMs: this.pollIntervalMs,
      });
    } catch (error) {
      this.runs.delete(taskId);
      await this.registry.untrack(handle);
      if (error instanceof TaskStoreUnavailableError) return taskStoreOutage(request.id);
      throw error;
    }
    if (!created.ok) {
      this.runs.delete(taskId);
      await this.registry.untrack(handle);
      return {
        json: errorResponseJson(request.id, ErrorCode.ServerError, TOO_MANY_TASKS),
        status: 429,
        headers: TASK_LIMIT_RETRY_AFTER,
      };
    }
    for (const gone of created.evicted) void this.abortRun(gone.scope, gone.taskId, EVICTED);
    if (isAborted(request.signal)) {
      this.runs.delete(taskId);
      await this.registry.untrack(handle);
      await this.store.cancel(request.scope, taskId, CREATOR_CANCELLED).catch(ignore);
      return { json: cancelledResponseJson(request.id), status: 200 };
    }
    start(sink, handle, asker ?? legacyAsker);
    const task = created.task;
    const result =
      request.modern === null
        ? { task: legacyTask(task) }
        : { ...modernTask(task), resultType: "task" };
    return ok(request.id, result);
  }

  /** `tasks/get`: the task (2025 `Task`; 2026 `DetailedTask`). */
  async get(request: TaskRequest): Promise<TaskAnswer> {
    const refused = this.gate(request);
    if (refused !== null) return refused;
    const task = await this.find(request);
    if (task === undefined) return notFound(request);
    if (request.modern === null) return ok(request.id, legacyTask(task));
    return ok(request.id, { ...detailedTask(task), resultType: "complete" });
  }

  /**
   * `tasks/result` (2025-11-25 only): waits until the task is terminal, then answers what the
   * request would have answered, with the related-task `_meta`. Meanwhile the questions of an
   * `input_required` task are sent on this request's stream, each once ("Input Required Status":
   * the requestor calls `tasks/result` to receive them), wherever the task runs: they are read
   * from its record, and the client's answers find the asking node by their ids. Each change
   * between `working` and `input_required` seen while waiting is sent there too as
   * `notifications/tasks/status` ("Task Status Notification": optional, the full `Task`, without
   * the related-task `_meta`); the terminal status is the answer itself, so a task that never
   * asks answers plain JSON as before. A question this stream sent that is then withdrawn
   * unanswered (timed out) is announced with `notifications/cancelled` (task-outbox.ts).
   */
  async result(request: TaskRequest): Promise<TaskAnswer | null> {
    let task = await this.find(request);
    if (task === undefined) return notFound(request);
    const sent = new Set<string>();
    const withdrawn = new Set<string>();
    let seen = task.status;
    for (;;) {
      if (task.status !== seen && !isTerminalStatus(task.status) && request.send != null) {
        seen = task.status;
        await request.send(notificationJson("notifications/tasks/status", legacyTask(task)));
      }
      if (isTerminalStatus(task.status)) break;
      if (task.status === "input_required" && request.send != null) {
        for (const [id, json] of storedQuestions(task.inputRequests)) {
          if (sent.has(id) || sent.size >= MAX_QUESTIONS_SENT) continue;
          sent.add(id);
          await request.send(json);
        }
      }
      if (request.send != null) {
        // A question this stream sent, withdrawn unanswered (task-outbox.ts): the client is told.
        for (const [id, json] of storedWithdrawals(task.inputRequests, task.taskId)) {
          if (!sent.has(id) || withdrawn.has(id)) continue;
          withdrawn.add(id);
          await request.send(json);
        }
      }
      const woke = await this.waitForChange(task.taskId, request.signal);
      if (!woke) return null; // the request itself was cancelled: its exchange is over
      task = await this.store.get(request.scope, task.taskId);
      if (task === undefined) return notFound(request);
    }
    const related = { [META_RELATED_TASK]: { taskId: task.taskId } };
    if (task.result !== null) {
      const result = JSON.parse(task.result) as Record<string, unknown>;
      const meta = isPlainObject(result._meta) ? result._meta : {};
      return ok(request.id, { ...result, _meta: { ...meta, ...related } });
    }
    if (task.status === "cancelled") {
      return {
        json: errorResponseJson(request.id, ErrorCode.RequestCancelled, "Task was cancelled", {
          [META_RELATED_TASK]: { taskId: task.taskId },
        }),
        status: 200,
      };
    }
    const error = task.error === null ? null : (JSON.parse(task.error) as Record<string, unknown>);
    const code = typeof error?.code === "number" ? error.code : ErrorCode.InternalError;
    const message = typeof error?.message === "string" ? error.message : "Internal error";
    return {
      json: errorResponseJson(request.id, code, message, error?.data),
      status: 200,
    };
  }

  /** `tasks/list` (2025-11-25 only): the caller's tasks, paged. */
  async list(request: TaskRequest): Promise<TaskAnswer> {
    const cursor = request.params?.cursor;
    let after: string | null = null;
    if (cursor !== undefined) {
      after = this.cursors.open("tasks", request.scope, cursor);
      if (after === null) return invalid(request.id, "Invalid cursor");
    }
    const page = await this.store.list(request.scope, { after, limit: this.pageSize });
    if (page === null) return invalid(request.id, "Invalid cursor");
    const result: Record<string, unknown> = { tasks: page.tasks.map(legacyTask) };
    if (page.next !== null)
      result.nextCursor = this.cursors.seal("tasks", request.scope, page.next);
    return ok(request.id, result);
  }

  /**
   * `tasks/cancel`: marks the task cancelled, then aborts its run wherever it is. 2025 answers
   * the cancelled task (a terminal one is -32602); 2026 answers an empty ack either way.
   */
  async cancel(request: TaskRequest): Promise<TaskAnswer> {
    const refused = this.gate(request);
    if (refused !== null) return refused;
    const taskId = request.params?.taskId;
    if (!isTaskId(taskId)) return notFound(request);
    const outcome = await this.store.cancel(request.scope, taskId, CANCELLED_BY_CLIENT);
    if (outcome.outcome === "unknown") return notFound(request);
    if (outcome.outcome === "cancelled") {
      await this.abortRun(request.scope, taskId, CANCELLED_BY_CLIENT);
    }
    if (request.modern !== null) return ok(request.id, { resultType: "complete" });
    if (outcome.outcome === "terminal") {
      return invalid(
        request.id,
        `Cannot cancel task: already in terminal status '${outcome.task.status}'`,
      );
    }
    return ok(request.id, legacyTask(outcome.task));
  }

  /** `tasks/update` (2026-07-28 only): acknowledges input responses for a known task. */
  async update(request: TaskRequest): Promise<TaskAnswer> {
    const refused = this.gate(request);
    if (refused !== null) return refused;
    if (!isPlainObject(request.params?.inputResponses)) {
      return invalid(request.id, "inputResponses must be an object");
    }
    const task = await this.find(request);
    if (task === undefined) return notFound(request);
    const responses = request.params?.inputResponses as Record<string, unknown>;
    // Responses for keys not outstanding are ignored, as the extension says ("Task Update
    // Requests"). A run on this node gets them at once and checks them (task-asker.ts).
    const run = this.runs.get(task.taskId);
    if (run?.asker != null && run.sink.scope === request.scope) {
      const refused = await run.asker.answer(responses);
      if (refused !== null) return invalid(request.id, refused);
    } else if (task.owner !== null && task.owner !== this.store.nodeId && this.bus !== null) {
      // A run on another node: the answers it still waits for travel there (task-update-relay.ts);
      // the ack is eventually consistent ("Task Update Requests"), and an answer that fails its
      // check there is ignored, its question staying outstanding.
      const outstanding = outstandingResponses(task.inputRequests, responses);
      if (outstanding !== null) {
        await this.bus.forward(taskRoute(task.owner), request.scope, task.taskId, {
          ok: true,
          result: outstanding,
        });
      }
    }
    return ok(request.id, { resultType: "complete" });
  }

  /** `tasks/update` answers another node relayed: for a run here of the same scope only. */
  private updateArrived(scope: string, taskId: string, reply: ClientReply): void {
    if (!reply.ok || !isPlainObject(reply.result)) return;
    const run = this.runs.get(taskId);
    if (run?.asker == null || run.sink.scope !== scope) return;
    run.asker.answer(reply.result).catch(ignore);
  }

  /**
   * A 2025-era session ended (`DELETE`, idle expiry, eviction; told by every node sharing the
   * session store, possibly more than once): its running tasks are cancelled, here and elsewhere.
   */
  async cancelSession(sessionId: string): Promise<void> {
    const scope = `session:${sessionId}`;
    const ids = await this.store.cancelScope(scope, SESSION_ENDED);
    for (const taskId of ids) await this.abortRun(scope, taskId, SESSION_ENDED);
  }

  /** TaskSinkOwner: the run ended here; a cancel row it left (`tasks/cancel`) is cleared. */
  settled(sink: TaskSink): void {
    const run = this.runs.get(sink.taskId);
    if (run?.sink !== sink) return;
    this.runs.delete(sink.taskId);
    if (run.handle.aborted) {
      this.registry.clear(TASK_KEY_PREFIX + sink.taskId, sink.scope).catch(ignore);
    }
  }

  /** Stops the janitor and the change subscription (the store is the caller's to close). */
  close(): void {
    if (this.janitor !== undefined) clearInterval(this.janitor);
    this.unsubscribe();
    this.detachBus();
    for (const wake of [...this.waiters.values()].flatMap((set) => [...set])) wake();
  }

  /** The 2026-07-28 gate: every `tasks/*` method needs the extension declared on the request. */
  private gate(request: TaskRequest): TaskAnswer | null {
    if (request.modern === null || declaresExtension(request.modern)) return null;
    return missingTasksExtension(request.id);
  }

  private async find(request: TaskRequest): Promise<TaskRecord | undefined> {
    const taskId = request.params?.taskId;
    if (!isTaskId(taskId)) return undefined;
    return this.store.get(request.scope, taskId);
  }

  /**
   * The retention of a new task: a 2025-era client's `params.task.ttl` when it asked for one
   * within [{@link MIN_TTL_MS}, `maxTtlMs`], the default when it asked for none (or is a
   * 2026-07-28 request, whose extension has no ttl), null when it asked for one out of bounds
   * (refused, never silently changed: the client would believe a retention it does not get).
   */
  private ttlOf(request: Omit<TaskRequest, "signal">): number | null {
    const asked = isPlainObject(request.params?.task) ? request.params.task.ttl : undefined;
    if (request.modern !== null || asked === undefined || asked === null) {
      return Math.round(this.defaultTtlMs);
    }
    if (typeof asked !== "number" || !Number.isFinite(asked)) return null;
    if (asked < MIN_TTL_MS || asked > this.maxTtlMs) return null;
    return Math.round(asked);
  }

  /**
   * Aborts the run of a task: records the cancel in the registry (which aborts the handle here,
   * or on the node that runs it), and aborts a local run directly if the registry refused.
   */
  private async abortRun(scope: string, taskId: string, reason: string): Promise<void> {
    const elsewhere = !this.runs.has(taskId);
    try {
      await this.registry.cancel(TASK_KEY_PREFIX + taskId, reason, scope, "library");
      // The cancel was published when its row was written; for a run on another node the row
      // has no reader, and that node cannot clear it (its run may end before the row lands), so
      // it goes now instead of counting against the scope's row quota until its TTL.
      if (elsewhere) await this.registry.clear(TASK_KEY_PREFIX + taskId, scope);
    } catch {
      // Fail-open: the local abort below and the store's announcement still reach the run.
    }
    this.abortLocal(scope, taskId, reason);
  }

  /** Aborts a run of this node without writing a row (the task's status records the cancel). */
  private abortLocal(scope: string, taskId: string, reason: string): void {
    const run = this.runs.get(taskId);
    if (run === undefined || run.sink.scope !== scope || run.handle.aborted) return;
    run.handle.abort(new RequestCancelledError("library", reason));
  }

  /** Wakes this node's `tasks/result` waits on the task. */
  private wake(taskId: string): void {
    const waiting = this.waiters.get(taskId);
    if (waiting !== undefined) for (const wake of [...waiting]) wake();
  }

  /** A run of this node wrote its status: wake local waits, tell the status listeners. */
  private localChange(scope: string, taskId: string): void {
    this.wake(taskId);
    this.tell(taskId, scope, false);
  }

  private tell(taskId: string, scope: string, everywhere: boolean): void {
    for (const listener of [...this.statusListeners]) {
      try {
        listener(taskId, scope, everywhere);
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  /** A store announcement: wake `tasks/result` waits; abort a local run its task left behind. */
  private changed(change: TaskChange): void {
    this.wake(change.taskId);
    this.tell(change.taskId, change.scope, true);
    if (change.status === "cancelled" || change.status === "evicted") {
      this.abortLocal(
        change.scope,
        change.taskId,
        change.status === "evicted" ? EVICTED : CANCELLED_BY_CLIENT,
      );
    }
  }

  /**
   * Resolves true at the task's next announced change (or after {@link RESULT_RECHECK_MS}, in
   * case an announcement was lost), false when `signal` aborts first.
   */
  private waitForChange(taskId: string, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      let set = this.waiters.get(taskId);
      if (set === undefined) {
        set = new Set();
        this.waiters.set(taskId, set);
      }
      const waiting = set;
      const done = (woke: boolean): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        waiting.delete(wake);
        if (waiting.size === 0 && this.waiters.get(taskId) === waiting) this.waiters.delete(taskId);
        resolve(woke);
      };
      const wake = (): void => done(true);
      const onAbort = (): void => done(false);
      const timer = setTimeout(wake, RESULT_RECHECK_MS);
      timer.unref();
      signal.addEventListener("abort", onAbort, { once: true });
      waiting.add(wake);
    });
  }
}

const STORE_METHODS = [
  "create",
  "get",
  "list",
  "update",
  "finish",
  "cancel",
  "cancelScope",
  "sweep",
  "onChange",
] as const;

/** Whether `value` has every method of a {@link TaskStore}. */
function isTaskStore(value: unknown): value is TaskStore {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return STORE_METHODS.every((name) => typeof candidate[name] === "function");
}

/** Whether 2026-07-28 client capabilities declare the tasks extension. */
function declaresExtension(capabilities: Readonly<Record<string, unknown>>): boolean {
  const extensions = capabilities.extensions;
  return isPlainObject(extensions) && isPlainObject(extensions[TASKS_EXTENSION]);
}

/** -32021 naming the extension (SEP-2663, "Capability Negotiation"), HTTP 400 as every -32021. */
export function missingTasksExtension(id: RequestId | null): TaskAnswer {
  return {
    json: errorResponseJson(id, ErrorCode.MissingCapability, "Missing required client capability", {
      requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    }),
    status: 400,
  };
}

/** A 2025-era refusal of a call whose task augmentation does not match the tool (-32601). */
function methodNotFound(id: RequestId | null, message: string): TaskDecision {
  return {
    kind: "refuse",
    answer: { json: errorResponseJson(id, ErrorCode.MethodNotFound, message), status: 200 },
  };
}

function ok(id: RequestId | null, result: Record<string, unknown>): TaskAnswer {
  return { json: successResponseJson(id, JSON.stringify(result)), status: 200 };
}

function invalid(id: RequestId | null, message: string): TaskAnswer {
  return { json: errorResponseJson(id, ErrorCode.InvalidParams, message), status: 200 };
}

/** The one answer for an unknown, expired, malformed or another scope's task id. */
function notFound(request: {
  readonly id: RequestId | null;
  readonly modern: unknown;
}): TaskAnswer {
  return invalid(request.id, request.modern === null ? NOT_FOUND_2025 : NOT_FOUND);
}

/** Whether `signal` is given and has aborted (a function: it may abort across an await). */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function ignore(): void {}
