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
import { ErrorCode, TaskStoreUnavailableError } from "../../errors.js";
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
} from "../wire/index.js";
import {
  answerInvalid,
  answerNotFound,
  answerOk,
  declaresExtension,
  missingTasksExtension,
  type TaskAnswer,
  taskStoreOutage,
  terminalAnswer,
  tooManyTasks,
} from "./task-answers.js";
import { TaskAsker } from "./task-asker.js";
import {
  decideTask,
  type RetentionBounds,
  retentionOf,
  type TaskDecision,
} from "./task-negotiation.js";
import { readTaskOptions, type TaskOptions } from "./task-options.js";
import { storedQuestions, storedWithdrawals, TaskOutbox } from "./task-outbox.js";
import { ResultWaits } from "./task-result-waits.js";
import { TaskRuns, taskKey } from "./task-runs.js";
import { TaskSink, type TaskSinkOwner } from "./task-sink.js";
import { outstandingResponses, taskRoute } from "./task-update-relay.js";
import { detailedTask, legacyTask, modernTask } from "./task-wire.js";

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

const CANCELLED_BY_CLIENT = "The task was cancelled by request.";
const CREATOR_CANCELLED = "The request creating this task was cancelled before it was answered.";
const SESSION_ENDED = "The session that owned this task ended (closed, or expired while idle).";
const EVICTED = "The server dropped this task to stay within its task limit.";
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
  private readonly retention: RetentionBounds;
  private readonly pollIntervalMs: number;
  /** The task runs of this node. */
  private readonly runs: TaskRuns;
  /** `tasks/result` waits of this node. */
  private readonly waits = new ResultWaits();
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
    const settings = readTaskOptions(options.options);
    this.registry = options.registry;
    this.runs = new TaskRuns(options.registry);
    this.cursors = options.cursors;
    this.pageSize = options.pageSize;
    this.retention = settings;
    this.pollIntervalMs = settings.pollIntervalMs;
    this.store = settings.store;
    this.unsubscribe = this.store.onChange((change) => this.changed(change));
    this.serverRequests = options.serverRequests ?? null;
    this.bus = this.serverRequests?.table.bus ?? null;
    this.detachBus =
      this.bus?.attach(taskRoute(this.store.nodeId), (scope, id, reply) => {
        this.updateArrived(scope, id, reply);
      }) ?? ignore;
    if (settings.sweepIntervalMs > 0) {
      this.janitor = setInterval(() => {
        this.store.sweep(Date.now()).catch(ignore);
      }, settings.sweepIntervalMs);
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
    this.waits.wake(taskId);
  }

  /** Whether 2026-07-28 client capabilities declare the tasks extension. */
  static declaresExtension(capabilities: Readonly<Record<string, unknown>>): boolean {
    return declaresExtension(capabilities);
  }

  /** Whether a `tools/call` of a tool with `taskSupport` becomes a task (task-negotiation.ts). */
  decide(request: Omit<TaskRequest, "signal">, taskSupport: TaskSupport): TaskDecision {
    return decideTask(request, taskSupport);
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
    const ttlMs = retentionOf(request, this.retention);
    if (typeof ttlMs !== "number") return ttlMs;
    const taskId = newTaskId();
    // Tracked before the task exists, so a cancel that arrives as soon as the client has the id
    // finds the handle.
    const handle = await this.registry.track(taskKey(taskId), request.scope, {
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
    this.runs.add(taskId, { sink, handle, asker });
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
      await this.runs.drop(taskId, handle);
      if (error instanceof TaskStoreUnavailableError) return taskStoreOutage(request.id);
      throw error;
    }
    if (!created.ok) {
      await this.runs.drop(taskId, handle);
      return tooManyTasks(request.id);
    }
    for (const gone of created.evicted) void this.runs.abort(gone.scope, gone.taskId, EVICTED);
    if (isAborted(request.signal)) {
      await this.runs.drop(taskId, handle);
      await this.store.cancel(request.scope, taskId, CREATOR_CANCELLED).catch(ignore);
      return { json: cancelledResponseJson(request.id), status: 200 };
    }
    start(sink, handle, asker ?? legacyAsker);
    const task = created.task;
    const result =
      request.modern === null
        ? { task: legacyTask(task) }
        : { ...modernTask(task), resultType: "task" };
    return answerOk(request.id, result);
  }

  /** `tasks/get`: the task (2025 `Task`; 2026 `DetailedTask`). */
  async get(request: TaskRequest): Promise<TaskAnswer> {
    const refused = this.gate(request);
    if (refused !== null) return refused;
    const task = await this.find(request);
    if (task === undefined) return answerNotFound(request);
    if (request.modern === null) return answerOk(request.id, legacyTask(task));
    return answerOk(request.id, { ...detailedTask(task), resultType: "complete" });
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
    if (task === undefined) return answerNotFound(request);
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
      const woke = await this.waits.next(task.taskId, request.signal);
      if (!woke) return null; // the request itself was cancelled: its exchange is over
      task = await this.store.get(request.scope, task.taskId);
      if (task === undefined) return answerNotFound(request);
    }
    return terminalAnswer(request.id, task);
  }

  /** `tasks/list` (2025-11-25 only): the caller's tasks, paged. */
  async list(request: TaskRequest): Promise<TaskAnswer> {
    const cursor = request.params?.cursor;
    let after: string | null = null;
    if (cursor !== undefined) {
      after = this.cursors.open("tasks", request.scope, cursor);
      if (after === null) return answerInvalid(request.id, "Invalid cursor");
    }
    const page = await this.store.list(request.scope, { after, limit: this.pageSize });
    if (page === null) return answerInvalid(request.id, "Invalid cursor");
    const result: Record<string, unknown> = { tasks: page.tasks.map(legacyTask) };
    if (page.next !== null)
      result.nextCursor = this.cursors.seal("tasks", request.scope, page.next);
    return answerOk(request.id, result);
  }

  /**
   * `tasks/cancel`: marks the task cancelled, then aborts its run wherever it is. 2025 answers
   * the cancelled task (a terminal one is -32602); 2026 answers an empty ack either way.
   */
  async cancel(request: TaskRequest): Promise<TaskAnswer> {
    const refused = this.gate(request);
    if (refused !== null) return refused;
    const taskId = request.params?.taskId;
    if (!isTaskId(taskId)) return answerNotFound(request);
    const outcome = await this.store.cancel(request.scope, taskId, CANCELLED_BY_CLIENT);
    if (outcome.outcome === "unknown") return answerNotFound(request);
    if (outcome.outcome === "cancelled") {
      await this.runs.abort(request.scope, taskId, CANCELLED_BY_CLIENT);
    }
    if (request.modern !== null) return answerOk(request.id, { resultType: "complete" });
    if (outcome.outcome === "terminal") {
      return answerInvalid(
        request.id,
        `Cannot cancel task: already in terminal status '${outcome.task.status}'`,
      );
    }
    return answerOk(request.id, legacyTask(outcome.task));
  }

  /** `tasks/update` (2026-07-28 only): acknowledges input responses for a known task. */
  async update(request: TaskRequest): Promise<TaskAnswer> {
    const refused = this.gate(request);
    if (refused !== null) return refused;
    if (!isPlainObject(request.params?.inputResponses)) {
      return answerInvalid(request.id, "inputResponses must be an object");
    }
    const task = await this.find(request);
    if (task === undefined) return answerNotFound(request);
    const responses = request.params?.inputResponses as Record<string, unknown>;
    // Responses for keys not outstanding are ignored, as the extension says ("Task Update
    // Requests"). A run on this node gets them at once and checks them (task-asker.ts).
    const run = this.runs.get(request.scope, task.taskId);
    if (run?.asker != null) {
      const refused = await run.asker.answer(responses);
      if (refused !== null) return answerInvalid(request.id, refused);
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
    return answerOk(request.id, { resultType: "complete" });
  }

  /** `tasks/update` answers another node relayed: for a run here of the same scope only. */
  private updateArrived(scope: string, taskId: string, reply: ClientReply): void {
    if (!reply.ok || !isPlainObject(reply.result)) return;
    const run = this.runs.get(scope, taskId);
    if (run?.asker == null) return;
    run.asker.answer(reply.result).catch(ignore);
  }

  /**
   * A 2025-era session ended (`DELETE`, idle expiry, eviction; told by every node sharing the
   * session store, possibly more than once): its running tasks are cancelled, here and elsewhere.
   */
  async cancelSession(sessionId: string): Promise<void> {
    const scope = `session:${sessionId}`;
    const ids = await this.store.cancelScope(scope, SESSION_ENDED);
    for (const taskId of ids) await this.runs.abort(scope, taskId, SESSION_ENDED);
  }

  /** TaskSinkOwner: the run ended here; a cancel row it left (`tasks/cancel`) is cleared. */
  settled(sink: TaskSink): void {
    this.runs.settled(sink);
  }

  /** Stops the janitor and the change subscription (the store is the caller's to close). */
  close(): void {
    if (this.janitor !== undefined) clearInterval(this.janitor);
    this.unsubscribe();
    this.detachBus();
    this.waits.wakeAll();
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

  /** A run of this node wrote its status: wake local waits, tell the status listeners. */
  private localChange(scope: string, taskId: string): void {
    this.waits.wake(taskId);
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
    this.waits.wake(change.taskId);
    this.tell(change.taskId, change.scope, true);
    if (change.status === "cancelled" || change.status === "evicted") {
      this.runs.abortHere(
        change.scope,
        change.taskId,
        change.status === "evicted" ? EVICTED : CANCELLED_BY_CLIENT,
      );
    }
  }
}

/** Whether `signal` is given and has aborted (a function: it may abort across an await). */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function ignore(): void {}
