/**
 * What the task methods answer on the wire, in one place: success, the refusals (an unknown task,
 * invalid params, a scope at its task quota, the 2026-07-28 extension not declared, the task store
 * unreachable) and the answer a terminal task gives to `tasks/result`. Each is JSON-RPC text with
 * the HTTP status (and headers) of a plain JSON answer.
 */
import type { RequestId } from "../../cancellation/types.js";
import { ErrorCode, TaskStoreUnavailableError } from "../../errors.js";
import type { TaskRecord } from "../../tasks/task-store.js";
import { errorResponseJson, isPlainObject, successResponseJson } from "../wire/index.js";
import { META_RELATED_TASK, TASKS_EXTENSION } from "./task-wire.js";

/** One answer of a task method: JSON-RPC text and the HTTP status of a plain JSON answer. */
export interface TaskAnswer {
  readonly json: string;
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
}

const NOT_FOUND_2025 = "Failed to retrieve task: Task not found";
const NOT_FOUND = "Task not found";
const TOO_MANY_TASKS =
  "Too many tasks for this client: wait for one to finish or cancel one (tasks/cancel), then retry.";
const TASK_LIMIT_RETRY_AFTER: Readonly<Record<string, string>> = { "retry-after": "5" };
const STORE_UNAVAILABLE = "Task store unavailable; retry in a moment.";
/** A shared store's outage lasts until its backend answers again: retry soon, not at once. */
const STORE_RETRY_AFTER: Readonly<Record<string, string>> = { "retry-after": "1" };

/**
 * A success answer.
 *
 * @example
 * ```ts
 * answerOk(7, { resultType: "complete" }); // HTTP 200, {"jsonrpc":"2.0","id":7,"result":{…}}
 * ```
 */
export function answerOk(id: RequestId | null, result: Record<string, unknown>): TaskAnswer {
  return { json: successResponseJson(id, JSON.stringify(result)), status: 200 };
}

/** -32602 with `message`. */
export function answerInvalid(id: RequestId | null, message: string): TaskAnswer {
  return { json: errorResponseJson(id, ErrorCode.InvalidParams, message), status: 200 };
}

/** The one answer for an unknown, expired, malformed or another scope's task id. */
export function answerNotFound(request: {
  readonly id: RequestId | null;
  readonly modern: unknown;
}): TaskAnswer {
  return answerInvalid(request.id, request.modern === null ? NOT_FOUND_2025 : NOT_FOUND);
}

/** A scope at its task quota (or the store at its cap): 429 with `Retry-After`. */
export function tooManyTasks(id: RequestId | null): TaskAnswer {
  return {
    json: errorResponseJson(id, ErrorCode.ServerError, TOO_MANY_TASKS),
    status: 429,
    headers: TASK_LIMIT_RETRY_AFTER,
  };
}

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

/**
 * Runs a task method, answering {@link taskStoreOutage} when the store is unreachable.
 *
 * @example
 * ```ts
 * const answer = await orStoreOutage(request.id, () => tasks.get(request));
 * ```
 */
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

/** Whether 2026-07-28 client capabilities declare the tasks extension. */
export function declaresExtension(capabilities: Readonly<Record<string, unknown>>): boolean {
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

/**
 * What `tasks/result` answers for a terminal task: what the request would have answered (its
 * result, or its error), with the related-task `_meta`; a cancelled task is -32800.
 *
 * @example
 * ```ts
 * if (isTerminalStatus(task.status)) return terminalAnswer(request.id, task);
 * ```
 */
export function terminalAnswer(id: RequestId | null, task: TaskRecord): TaskAnswer {
  const related = { [META_RELATED_TASK]: { taskId: task.taskId } };
  if (task.result !== null) {
    const result = JSON.parse(task.result) as Record<string, unknown>;
    const meta = isPlainObject(result._meta) ? result._meta : {};
    return answerOk(id, { ...result, _meta: { ...meta, ...related } });
  }
  if (task.status === "cancelled") {
    return {
      json: errorResponseJson(id, ErrorCode.RequestCancelled, "Task was cancelled", related),
      status: 200,
    };
  }
  const error = task.error === null ? null : (JSON.parse(task.error) as Record<string, unknown>);
  const code = typeof error?.code === "number" ? error.code : ErrorCode.InternalError;
  const message = typeof error?.message === "string" ? error.message : "Internal error";
  return { json: errorResponseJson(id, code, message, error?.data), status: 200 };
}
