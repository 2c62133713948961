/**
 * JSON-RPC 2.0 message shapes as MCP uses them, the classification of one parsed POST body, and
 * the serialisers for responses. Classification (JSON-RPC 2.0, https://www.jsonrpc.org/specification): a request is an
 * object with `"jsonrpc": "2.0"`, an `id` key (any JSON-RPC id, `null` included) and a string
 * `method`; a notification is the same without an `id` key. A client's *response* answers a
 * server request (2025-11-25 elicitation, sampling, roots: pending-server-requests.ts).
 */
import type { RequestId } from "../../cancellation/types.js";
import { ErrorCode } from "../../errors.js";

/** A JSON-RPC request: it gets exactly one response. */
export interface JsonRpcRequest {
  readonly jsonrpc: "2.0";
  /** The client's id, echoed as is; `null` is allowed on the wire but cannot be cancelled. */
  readonly id: RequestId | null;
  readonly method: string;
  /** Present only when the client sent it; always a plain object once validated. */
  readonly params?: unknown;
}

/** A JSON-RPC notification: it gets no response. */
export interface JsonRpcNotification {
  readonly jsonrpc: "2.0";
  readonly method: string;
  readonly params?: unknown;
}

/** What a parsed body turned out to be. */
export type ClassifiedMessage =
  | { readonly kind: "request"; readonly message: JsonRpcRequest }
  | { readonly kind: "notification"; readonly message: JsonRpcNotification }
  | { readonly kind: "response"; readonly message: Readonly<Record<string, unknown>> }
  | { readonly kind: "invalid"; readonly id: RequestId | null };

/**
 * Classifies one parsed JSON body. Never throws; arrays (batches) and scalars are invalid.
 *
 * @example
 * ```ts
 * classifyMessage({ jsonrpc: "2.0", id: 1, method: "ping" }).kind; // "request"
 * classifyMessage([]).kind; // "invalid"
 * ```
 */
export function classifyMessage(body: unknown): ClassifiedMessage {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { kind: "invalid", id: null };
  }
  const message = body as Record<string, unknown>;
  const hasId = "id" in message;
  const id = message.id;
  // MCP ids are strings or integers. A fractional or unsafe integer id cannot be echoed as the
  // client sent it (JSON.parse already rounded 2^60+1), so such a message is invalid, answered
  // with a null id. A null id is kept: it is still a request, one that
  // cannot be cancelled.
  const validId =
    id === null || typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id));
  if (message.jsonrpc !== "2.0")
    return { kind: "invalid", id: validId && hasId ? (id as RequestId | null) : null };
  if (typeof message.method === "string") {
    if (!hasId) return { kind: "notification", message: message as unknown as JsonRpcNotification };
    if (validId) return { kind: "request", message: message as unknown as JsonRpcRequest };
    return { kind: "invalid", id: null };
  }
  if ("method" in message)
    return { kind: "invalid", id: validId ? (id as RequestId | null) : null };
  // No method: a response to a server request (result or error and an id).
  if (hasId && validId && ("result" in message || "error" in message)) {
    return { kind: "response", message };
  }
  return { kind: "invalid", id: validId && hasId ? (id as RequestId | null) : null };
}

/**
 * Whether a value is a plain JSON object (what `params`, `arguments` and `_meta` must be).
 *
 * @example
 * ```ts
 * isPlainObject({}); // true
 * isPlainObject([]); // false
 * ```
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The `id` text of a response: the client's id as is, serialised once. */
function idText(id: RequestId | null): string {
  return id === null ? "null" : JSON.stringify(id);
}

/**
 * Serialises a success response. `resultJson` is already JSON text, so a precomputed result
 * (e.g. `tools/list`) is not serialised again per request.
 *
 * @example
 * ```ts
 * successResponseJson(1, "{}"); // '{"jsonrpc":"2.0","id":1,"result":{}}'
 * ```
 */
export function successResponseJson(id: RequestId | null, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${idText(id)},"result":${resultJson}}`;
}

/**
 * {@link successResponseJson} with the id already as JSON text (`idJson`): a handler call whose
 * numeric id was made into its decimal text when it was tracked (the registry's key, the same
 * text) does not serialise it again.
 *
 * @example
 * ```ts
 * successResponseJsonFor("7", "{}"); // '{"jsonrpc":"2.0","id":7,"result":{}}'
 * ```
 */
export function successResponseJsonFor(idJson: string, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${idJson},"result":${resultJson}}`;
}

/**
 * Serialises an error response; `data` is included only when given.
 *
 * @example
 * ```ts
 * errorResponseJson(null, ErrorCode.ParseError, "Parse error");
 * ```
 */
export function errorResponseJson(
  id: RequestId | null,
  code: number,
  message: string,
  data?: unknown,
): string {
  const error = data === undefined ? { code, message } : { code, message, data };
  return `{"jsonrpc":"2.0","id":${idText(id)},"error":${JSON.stringify(error)}}`;
}

/**
 * Serialises a notification the server sends on a request's stream (progress, log message).
 *
 * @example
 * ```ts
 * notificationJson("notifications/progress", { progressToken: 1, progress: 5 });
 * ```
 */
export function notificationJson(method: string, params: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", method, params });
}

/**
 * The answer to a cancelled 2025-era JSON exchange (docs/protocol-eras.md).
 *
 * @example
 * ```ts
 * cancelledResponseJson(7); // '{"jsonrpc":"2.0","id":7,"error":{"code":-32800,"message":"Request cancelled"}}'
 * ```
 */
export function cancelledResponseJson(id: RequestId | null): string {
  return errorResponseJson(id, ErrorCode.RequestCancelled, "Request cancelled");
}

/**
 * The generic internal error: details never leak.
 *
 * @example
 * ```ts
 * internalErrorJson(42); // '{"jsonrpc":"2.0","id":42,"error":{"code":-32603,"message":"Internal server error"}}'
 * ```
 */
export function internalErrorJson(id: RequestId | null): string {
  return errorResponseJson(id, ErrorCode.InternalError, "Internal server error");
}
