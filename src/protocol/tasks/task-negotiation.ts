/**
 * What a `tools/call` asks of a task: whether the call becomes a task, runs as usual, or is
 * refused (tool-level negotiation, both eras), and how long its task is kept (the 2025-era
 * `params.task.ttl`).
 */
import type { RequestId } from "../../cancellation/types.js";
import { ErrorCode } from "../../errors.js";
import type { TaskSupport } from "../tools/index.js";
import { errorResponseJson, isPlainObject } from "../wire/index.js";
import { declaresExtension, missingTasksExtension, type TaskAnswer } from "./task-answers.js";

/** What a `tools/call` of a task-supporting tool should do. */
export type TaskDecision =
  | { readonly kind: "task" }
  | { readonly kind: "sync" }
  | { readonly kind: "refuse"; readonly answer: TaskAnswer };

/** What negotiation reads of a request. */
export interface NegotiatedRequest {
  readonly id: RequestId | null;
  readonly params: Readonly<Record<string, unknown>> | undefined;
  /** The 2026-07-28 client capabilities, or null for a 2025-era request. */
  readonly modern: Readonly<Record<string, unknown>> | null;
}

const TASK_ONLY_TOOL = "This tool runs only as a task: call it with params.task";
const NOT_A_TASK_TOOL = "This tool does not run as a task: call it without params.task";
/** Shortest retention a client may ask for: a task gone before its first poll helps nobody. */
const MIN_TTL_MS = 1_000;

/**
 * Whether a `tools/call` of a tool with `taskSupport` becomes a task, runs as usual, or is
 * refused: a `required` tool called without a task (2025 -32601, 2026 -32021), or, in the 2025
 * era, a `forbidden` tool called with `params.task` (-32601: 2025-11-25 tasks, "Tool-Level
 * Negotiation", https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks#tool-level-negotiation;
 * a 2026-07-28 request's `task` is ignored, SEP-2663 "Backward Compatibility").
 *
 * @example
 * ```ts
 * decideTask({ id: 1, params: { name: "report", task: {} }, modern: null }, "optional"); // { kind: "task" }
 * ```
 */
export function decideTask(request: NegotiatedRequest, taskSupport: TaskSupport): TaskDecision {
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

/** The retention bounds of a server's tasks (ms). */
export interface RetentionBounds {
  readonly defaultTtlMs: number;
  readonly maxTtlMs: number;
}

/**
 * The retention of a new task: a 2025-era client's `params.task.ttl` when it asked for one
 * within [{@link MIN_TTL_MS}, `maxTtlMs`], the default when it asked for none (or is a
 * 2026-07-28 request, whose extension has no ttl); when it asked for one out of bounds, the
 * refusal (never silently changed: the client would believe a retention it does not get).
 *
 * @example
 * ```ts
 * const ttl = retentionOf(request, { defaultTtlMs: 3_600_000, maxTtlMs: 86_400_000 });
 * if (typeof ttl !== "number") return ttl; // -32602
 * ```
 */
export function retentionOf(
  request: NegotiatedRequest,
  bounds: RetentionBounds,
): number | TaskAnswer {
  const asked = isPlainObject(request.params?.task) ? request.params.task.ttl : undefined;
  if (request.modern !== null || asked === undefined || asked === null) {
    return Math.round(bounds.defaultTtlMs);
  }
  if (
    typeof asked === "number" &&
    Number.isFinite(asked) &&
    asked >= MIN_TTL_MS &&
    asked <= bounds.maxTtlMs
  ) {
    return Math.round(asked);
  }
  return {
    json: errorResponseJson(
      request.id,
      ErrorCode.InvalidParams,
      `params.task.ttl must be a number of milliseconds from ${MIN_TTL_MS} to ${bounds.maxTtlMs}`,
    ),
    status: 200,
  };
}

/** A 2025-era refusal of a call whose task augmentation does not match the tool (-32601). */
function methodNotFound(id: RequestId | null, message: string): TaskDecision {
  return {
    kind: "refuse",
    answer: { json: errorResponseJson(id, ErrorCode.MethodNotFound, message), status: 200 },
  };
}
