/**
 * What the task scripts (task-scripts.ts) answer and the task channel carries, read back: a task
 * record from a hash's fields, a scope the scripts return as JSON text, a change another node
 * published. Anything read from Redis is hostile until validated: any client allowed to PUBLISH on
 * that Redis can forge a change, so each one is size-checked, then every field is checked.
 */
import { isTaskId, type TaskChange, type TaskRecord, type TaskStatus } from "../../tasks/index.js";
import { NODE_ID } from "../connection/node-id.js";

const STATUSES: ReadonlySet<string> = new Set<TaskStatus>([
  "working",
  "input_required",
  "completed",
  "failed",
  "cancelled",
]);
const CHANGES: ReadonlySet<string> = new Set(["completed", "failed", "cancelled", "evicted"]);
/** Upper bound on a channel message (characters), checked before it is parsed. */
const MAX_MESSAGE_LENGTH = 4_096;
/** Upper bound on a scope read back (characters). */
const MAX_SCOPE_LENGTH = 2_048;

/**
 * A scope sent as JSON text by a script; null unless it is a non-empty string.
 *
 * @example
 * ```ts
 * parseScope('"session:abc"'); // "session:abc"
 * ```
 */
export function parseScope(json: string): string | null {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === "string" && value.length > 0 && value.length <= MAX_SCOPE_LENGTH
      ? value
      : null;
  } catch {
    return null;
  }
}

/**
 * A task from `HGETALL` fields `reply[from..to)`; the scope is the caller's.
 *
 * @example
 * ```ts
 * const record = toRecord(scope, reply, 0, reply.length);
 * ```
 */
export function toRecord(
  scope: string,
  reply: readonly string[],
  from: number,
  to: number,
): TaskRecord {
  const f = new Map<string, string>();
  for (let i = from; i + 1 < to; i += 2) f.set(reply[i] as string, reply[i + 1] as string);
  const text = (field: string): string | null => f.get(field) ?? null;
  const number = (field: string): number | null => {
    const raw = f.get(field);
    return raw === undefined ? null : Number(raw);
  };
  const message = f.get("m");
  const status = f.get("s") ?? "failed";
  return {
    taskId: f.get("id") ?? "",
    scope,
    status: (STATUSES.has(status) ? status : "failed") as TaskStatus,
    statusMessage: message === undefined ? null : parseMessage(message),
    createdAt: number("c") ?? 0,
    lastUpdatedAt: number("u") ?? 0,
    ttlMs: number("l") ?? 0,
    pollIntervalMs: number("p") ?? 0,
    owner: text("o"),
    expiresAt: number("e"),
    result: text("r"),
    error: text("er"),
    inputRequests: text("ir"),
  };
}

function parseMessage(json: string): string | null {
  try {
    const value: unknown = JSON.parse(json);
    return typeof value === "string" ? value : null;
  } catch {
    return null;
  }
}

/**
 * A change published by another node, `<status> <node> <taskId> <scope JSON>`; null unless valid.
 *
 * @example
 * ```ts
 * const change = decodeChange(raw);
 * if (change !== null && change.node !== nodeId) announce(change);
 * ```
 */
export function decodeChange(raw: unknown): (TaskChange & { readonly node: string }) | null {
  if (typeof raw !== "string" || raw.length > MAX_MESSAGE_LENGTH) return null;
  const first = raw.indexOf(" ");
  const second = first === -1 ? -1 : raw.indexOf(" ", first + 1);
  const third = second === -1 ? -1 : raw.indexOf(" ", second + 1);
  if (third === -1) return null;
  const status = raw.slice(0, first);
  const node = raw.slice(first + 1, second);
  const taskId = raw.slice(second + 1, third);
  if (!CHANGES.has(status) || !NODE_ID.test(node) || !isTaskId(taskId)) return null;
  const scope = parseScope(raw.slice(third + 1));
  if (scope === null) return null;
  return { status: status as TaskChange["status"], node, taskId, scope };
}
