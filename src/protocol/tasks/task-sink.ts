/**
 * The {@link ResponseSink} of a task: where a detached handler's answer goes once the request
 * that created the task has been answered. The handler runs as an ordinary handler call
 * (handler-call.ts), so cancellation, the stream cancel timeout, isolated workers and observers
 * work as for any call; only its way back differs:
 *
 * - the final response becomes the task's outcome in the {@link TaskStore} (a result, or the
 *   JSON-RPC error the request would have answered);
 * - a cancelled call makes sure the stored task reads `cancelled`;
 * - progress notifications become the task's status message (MCP 2025-11-25, Tasks, "Task
 *   Status": a status message "can provide context for any status"); writes are coalesced, so a
 *   chatty handler costs at most one store write in flight per task. Other notifications (log
 *   messages) are dropped: the 2026-07-28 extension does not carry them on tasks, and the 2025
 *   request they would belong to has been answered.
 */
import type { HandleLifetime, RequestHandle } from "../../cancellation/types.js";
import { ErrorCode, RequestCancelledError } from "../../errors.js";
import { reflectText } from "../../reflect.js";
import type { TaskOutcome, TaskStore } from "../../tasks/task-store.js";
import type { ResponseSink, SinkListener } from "../wire/index.js";
import { isPlainObject } from "../wire/index.js";

/** Longest status message kept from a progress notification or an error. */
const MAX_STATUS_MESSAGE = 512;

const TOO_LARGE_ERROR = JSON.stringify({
  code: ErrorCode.InternalError,
  message: "The task's result exceeds the server's size limit",
});
const TOO_LARGE_MESSAGE = "The result was larger than the server keeps.";
const TOOL_FAILED_MESSAGE = "The tool reported an error.";
const CANCELLED_MESSAGE = "The task was cancelled.";

/** What a {@link TaskSink} is told when its task leaves this node's hands. */
export interface TaskSinkOwner {
  /** The run ended here (answered or cancelled): forget it. */
  settled(sink: TaskSink): void;
}

/** What {@link TaskSink} takes. */
export interface TaskSinkOptions {
  readonly store: TaskStore;
  readonly scope: string;
  readonly taskId: string;
  /** The creating request's era: 2025 marks an `isError` tool result `failed`, 2026 `completed`. */
  readonly modern: boolean;
  readonly owner: TaskSinkOwner;
  /** The run's handle: why it aborted becomes the cancelled task's status message. */
  readonly handle: RequestHandle;
  /** Told what a store write that failed threw (the task then ends by its TTL or its node's lease). */
  readonly onStoreError?: (error: unknown) => void;
}

/**
 * A task's way back: the store.
 *
 * @example
 * ```ts
 * const sink = new TaskSink({ store, scope, taskId, modern: false, owner, handle });
 * // handed to a HandlerCall instead of the request's exchange
 * ```
 */
export class TaskSink implements ResponseSink, HandleLifetime {
  readonly streamable = true;
  readonly scope: string;
  readonly taskId: string;
  private readonly store: TaskStore;
  private readonly modern: boolean;
  private readonly owner: TaskSinkOwner;
  private readonly handle: RequestHandle;
  private readonly onStoreError: (error: unknown) => void;
  private done = false;
  /** A status message write in flight, and the newest message waiting behind it. */
  private writing = false;
  private pending: string | null = null;
  /** Settles when the outcome (or the cancel) reached the store; for tests and shutdown. */
  readonly finished: Promise<void>;
  private resolveFinished!: () => void;

  constructor(options: TaskSinkOptions) {
    this.store = options.store;
    this.scope = options.scope;
    this.taskId = options.taskId;
    this.modern = options.modern;
    this.owner = options.owner;
    this.handle = options.handle;
    this.onStoreError = options.onStoreError ?? ignore;
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
  }

  get ended(): boolean {
    return this.done;
  }

  /** HandleLifetime: the task's handle is dead once its run ended here. */
  get aborted(): boolean {
    return this.done;
  }

  get lifetime(): HandleLifetime {
    return this;
  }

  notify(json: string): Promise<void> {
    if (this.done) return RESOLVED;
    const message = progressMessage(json);
    if (message === null) return RESOLVED;
    this.pending = message;
    if (!this.writing) void this.flush();
    return RESOLVED;
  }

  respond(json: string): void {
    if (this.done) return;
    this.done = true;
    this.pending = null;
    this.owner.settled(this);
    void this.finish(outcomeOf(json, this.modern));
  }

  cancel(): void {
    if (this.done) return;
    this.done = true;
    this.pending = null;
    this.owner.settled(this);
    void this.markCancelled();
  }

  /** Only a session's `initialize` sets one; a task never does. */
  setSessionId(): void {}

  /** A task has no client connection to lose. */
  setListener(_listener: SinkListener | null): void {}

  private async flush(): Promise<void> {
    this.writing = true;
    try {
      while (this.pending !== null && !this.done) {
        const statusMessage = this.pending;
        this.pending = null;
        await this.store.update(this.scope, this.taskId, { statusMessage });
      }
    } catch (error) {
      this.onStoreError(error);
    } finally {
      this.writing = false;
    }
  }

  private async finish(outcome: TaskOutcome): Promise<void> {
    try {
      const stored = await this.store.finish(this.scope, this.taskId, outcome);
      if (stored === "too_large") {
        await this.store.finish(this.scope, this.taskId, {
          status: "failed",
          error: TOO_LARGE_ERROR,
          statusMessage: TOO_LARGE_MESSAGE,
        });
      }
    } catch (error) {
      this.onStoreError(error);
    } finally {
      this.resolveFinished();
    }
  }

  private async markCancelled(): Promise<void> {
    try {
      // Usually already `cancelled` by tasks/cancel; a session's end or a cancel that reached
      // only the registry is recorded here.
      // Read once the abort has finished: the sink is told before the handle's signal aborts.
      await RESOLVED;
      const reason = this.handle.aborted ? cancelMessageOf(this.handle.signal.reason) : null;
      await this.store.cancel(this.scope, this.taskId, reason ?? CANCELLED_MESSAGE);
    } catch (error) {
      this.onStoreError(error);
    } finally {
      this.resolveFinished();
    }
  }
}

const RESOLVED: Promise<void> = Promise.resolve();

function ignore(): void {}

/** The status message a `notifications/progress` carries (its message, else "n/total"), or null. */
function progressMessage(json: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return null;
  }
  if (!isPlainObject(parsed) || parsed.method !== "notifications/progress") return null;
  const params = parsed.params;
  if (!isPlainObject(params)) return null;
  if (typeof params.message === "string") return reflectText(params.message, MAX_STATUS_MESSAGE);
  const { progress, total } = params;
  if (typeof progress !== "number") return null;
  return typeof total === "number" ? `${progress}/${total}` : String(progress);
}

/** The task outcome of a JSON-RPC response the handler call wrote. */
function outcomeOf(json: string, modern: boolean): TaskOutcome {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    parsed = null;
  }
  if (isPlainObject(parsed) && isPlainObject(parsed.result)) {
    const { resultType: _resultType, ...result } = parsed.result;
    // 2025-11-25, Tasks, "Task Status": a tool result with isError is a failed task; the 2026
    // extension keeps it completed ("failed" is for JSON-RPC errors only).
    if (result.isError === true && !modern) {
      return {
        status: "failed",
        result: JSON.stringify(result),
        statusMessage: TOOL_FAILED_MESSAGE,
      };
    }
    return { status: "completed", result: JSON.stringify(result) };
  }
  const error =
    isPlainObject(parsed) && isPlainObject(parsed.error)
      ? parsed.error
      : { code: ErrorCode.InternalError, message: "Internal server error" };
  const message = typeof error.message === "string" ? error.message : "Internal server error";
  return {
    status: "failed",
    error: JSON.stringify(error),
    statusMessage: reflectText(message, MAX_STATUS_MESSAGE),
  };
}

/** The status message of a handle aborted by `reason` (a session's end says so). */
export function cancelMessageOf(reason: unknown): string | null {
  if (reason instanceof RequestCancelledError && reason.reason !== null) {
    return reflectText(reason.reason, MAX_STATUS_MESSAGE);
  }
  return null;
}
