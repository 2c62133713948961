/**
 * How a stored task goes on the wire, per era:
 *
 * - 2025-11-25 experimental tasks (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks,
 *   "Data Types"): `Task` with `ttl` and `pollInterval`; `CreateTaskResult` wraps it in `task`;
 *   `tasks/result` answers with the underlying result and the
 *   `io.modelcontextprotocol/related-task` key in its `_meta`.
 * - 2026-07-28 `io.modelcontextprotocol/tasks` extension (SEP-2663, "Tasks"): `ttlMs` and
 *   `pollIntervalMs`; `CreateTaskResult` is the task itself with `resultType: "task"`;
 *   `tasks/get` inlines `result`, `error` or `inputRequests` by status (`DetailedTask`).
 *
 * Times are ISO 8601 (RFC 3339 §5.6) from the store's milliseconds.
 */
import { ErrorCode } from "../../errors.js";
import type { TaskRecord } from "../../tasks/task-store.js";
import { isPlainObject } from "../wire/index.js";

/** The `_meta` key tying a message to its task (2025-11-25, "Related Task Metadata"). */
export const META_RELATED_TASK = "io.modelcontextprotocol/related-task";

/** The 2026-07-28 extension's identifier (SEP-2663, "Extension Identifier"). */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/**
 * A record's `inputRequests` text as the map it holds (key or request id → entry), or null when
 * there is none or the text is not a JSON object: a record of a shared store is not trusted
 * blindly.
 *
 * @example
 * ```ts
 * storedInputRequests('{"a":{"method":"roots/list"}}'); // { a: { method: "roots/list" } }
 * ```
 */
export function storedInputRequests(inputRequests: string | null): Record<string, unknown> | null {
  if (inputRequests === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(inputRequests);
  } catch {
    return null;
  }
  return isPlainObject(parsed) ? parsed : null;
}

/** The 2025-11-25 `Task` object. */
export function legacyTask(task: TaskRecord): Record<string, unknown> {
  const wire: Record<string, unknown> = { taskId: task.taskId, status: task.status };
  if (task.statusMessage !== null) wire.statusMessage = task.statusMessage;
  wire.createdAt = new Date(task.createdAt).toISOString();
  wire.lastUpdatedAt = new Date(task.lastUpdatedAt).toISOString();
  wire.ttl = task.ttlMs;
  wire.pollInterval = task.pollIntervalMs;
  return wire;
}

/** The 2026-07-28 `Task` base object (a `CreateTaskResult` adds `resultType: "task"`). */
export function modernTask(task: TaskRecord): Record<string, unknown> {
  const wire: Record<string, unknown> = { taskId: task.taskId, status: task.status };
  if (task.statusMessage !== null) wire.statusMessage = task.statusMessage;
  wire.createdAt = new Date(task.createdAt).toISOString();
  wire.lastUpdatedAt = new Date(task.lastUpdatedAt).toISOString();
  wire.ttlMs = task.ttlMs;
  wire.pollIntervalMs = task.pollIntervalMs;
  return wire;
}

/**
 * The 2026-07-28 `DetailedTask` of `tasks/get`: the base task plus `result` when completed,
 * `error` when failed, `inputRequests` when input is required.
 */
export function detailedTask(task: TaskRecord): Record<string, unknown> {
  const wire = modernTask(task);
  if (task.status === "completed" && task.result !== null) wire.result = JSON.parse(task.result);
  else if (task.status === "failed") {
    wire.error = task.error !== null ? JSON.parse(task.error) : FAILED_WITHOUT_ERROR;
  } else if (task.status === "input_required") {
    wire.inputRequests = task.inputRequests !== null ? JSON.parse(task.inputRequests) : {};
  }
  return wire;
}

/** A failed task always carries an `error` in 2026-07-28; one stored without it reads as internal. */
const FAILED_WITHOUT_ERROR = Object.freeze({
  code: ErrorCode.InternalError,
  message: "Internal error",
});
