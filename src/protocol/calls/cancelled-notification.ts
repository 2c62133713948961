/**
 * `notifications/cancelled`
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation): the request must be
 * in flight **in the caller's own scope** before anything is recorded, so one tenant can never
 * cancel (or fill the quota of) another's request, and a sweep of guessed ids records nothing.
 * An id in flight nowhere the store can see is only announced to the other nodes, in the caller's
 * scope (a shared store may not have shared a young call yet): no row, so no quota is used.
 */
import type { CancellationRegistry } from "../../cancellation/index.js";
import { normalizeRequestId } from "../../cancellation/index.js";
import { ErrorCode } from "../../errors.js";
import { errorResponseJson, isPlainObject, type JsonRpcNotification } from "../wire/index.js";

const NOT_AN_OBJECT = errorResponseJson(
  null,
  ErrorCode.InvalidParams,
  "notifications/cancelled requires a params object",
);
const BAD_REQUEST_ID = errorResponseJson(
  null,
  ErrorCode.InvalidParams,
  "notifications/cancelled requires a string or integer requestId (strings at most 256 bytes)",
);
const LIMIT_REACHED = errorResponseJson(
  null,
  ErrorCode.ServerError,
  "Too many outstanding cancellations; try again shortly.",
);

/**
 * Processes one `notifications/cancelled` from `scope`. Resolves `null` when it was accepted or
 * ignored (the transport answers 202), or the JSON text of the error to send (id `null`).
 * Never rejects for bad input.
 *
 * @example
 * ```ts
 * const error = await processCancelledNotification(message, "principal:alice", registry);
 * if (error === null) res.writeHead(202).end();
 * ```
 */
export async function processCancelledNotification(
  message: JsonRpcNotification,
  scope: string,
  registry: CancellationRegistry,
): Promise<string | null> {
  // The key absent means `{}`; present but not an object (null, array, string, number) is an error.
  const params = "params" in message ? message.params : undefined;
  if (params !== undefined && !isPlainObject(params)) return NOT_AN_OBJECT;
  const requestId = params?.requestId;
  if (requestId === undefined || requestId === null) return null;
  // Checked before the in-flight gate, so it is reported even when nothing is in flight.
  if (normalizeRequestId(requestId) === undefined) return BAD_REQUEST_ID;
  if (!(await registry.isInFlight(requestId, scope))) {
    // No row: a store may not have shared a young call yet, so its node is told instead.
    await registry.announceCancel(requestId, params?.reason, scope);
    return null;
  }
  const result = await registry.cancel(requestId, params?.reason, scope, "notification");
  if (result.ok) return null;
  return result.error === "invalid_request_id" ? BAD_REQUEST_ID : LIMIT_REACHED;
}
