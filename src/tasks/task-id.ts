/**
 * Task ids: 128 random bits from the operating system's CSPRNG, as 22 base64url characters.
 * A task id is a bearer of the task's state, so it must not be guessable (MCP 2025-11-25, Tasks,
 * "Task Isolation and Access Control": receivers "MUST generate cryptographically secure task IDs
 * with enough entropy to prevent guessing"); conduit-mcp also binds every task to its scope, so
 * a guessed id of another tenant is still answered as unknown.
 */
import { randomBytes } from "node:crypto";

/** Length of an id from {@link newTaskId}. */
export const TASK_ID_LENGTH = 22;

const TASK_ID_SHAPE = /^[A-Za-z0-9_-]{22}$/;

/**
 * A fresh, unguessable task id.
 *
 * @example
 * ```ts
 * newTaskId(); // "q3V0Xf8lq9Ik2kKsR1b2Ww"
 * ```
 */
export function newTaskId(): string {
  return randomBytes(16).toString("base64url");
}

/**
 * Whether `value` has the shape of an id from {@link newTaskId}. Anything else from the network
 * is answered as an unknown task before any store is asked.
 */
export function isTaskId(value: unknown): value is string {
  return typeof value === "string" && TASK_ID_SHAPE.test(value);
}
