/**
 * The answers the core writes itself — refusals, 202 and 204 — each counted in the metrics under
 * the request's method (null, "none", until the body was read). The bodies of the fixed refusals
 * are built once: nothing from the request is reflected in them.
 */
import { ErrorCode } from "../../../errors.js";
import { type LimitOutcome, SCOPE_LIMIT } from "../../../protocol/asking/index.js";
import { errorResponseJson, type JsonRpcRequest } from "../../../protocol/index.js";
import { methodLabel } from "../../operability/metrics.js";
import type { ResponseHeaders } from "../../transport.js";
import { writeEmpty, writeJson } from "../../write-response.js";
import type { RequestContext } from "./request-context.js";

export const SESSION_NOT_FOUND = errorResponseJson(
  null,
  ErrorCode.InvalidRequest,
  "Session not found. Send an initialize request to create a new session.",
);
export const SESSION_REQUIRED = errorResponseJson(
  null,
  ErrorCode.InvalidRequest,
  "Mcp-Session-Id header required. Send an initialize request to obtain one.",
);
export const FORBIDDEN = errorResponseJson(
  null,
  ErrorCode.ServerError,
  "Forbidden: Host or Origin not allowed",
);
export const TOO_LARGE = errorResponseJson(
  null,
  ErrorCode.InvalidRequest,
  "Request body too large",
);
export const BODY_TIMED_OUT = errorResponseJson(
  null,
  ErrorCode.InvalidRequest,
  "Request body timeout",
);
export const BAD_CONTENT_TYPE = errorResponseJson(
  null,
  ErrorCode.InvalidRequest,
  "Unsupported Media Type: Content-Type must be application/json",
);
export const NOT_ACCEPTABLE = errorResponseJson(
  null,
  ErrorCode.InvalidRequest,
  "Not Acceptable: the client must accept application/json or text/event-stream",
);
export const PARSE_ERROR = errorResponseJson(null, ErrorCode.ParseError, "Parse error");
export const METHOD_NOT_ALLOWED = errorResponseJson(
  null,
  ErrorCode.ServerError,
  "Method not allowed.",
);
export const SHUTTING_DOWN = errorResponseJson(
  null,
  ErrorCode.InternalError,
  "Server is shutting down",
);
export const INVALID_REQUEST = "Invalid JSON-RPC 2.0 request";
const TOO_MANY = "Too many concurrent requests";
const TOO_MANY_BYTES = "Too many request bytes in flight";
export const RETRY_SOON: ResponseHeaders = Object.freeze({ "retry-after": "1" });

/**
 * A whole JSON answer, counted in the metrics.
 *
 * @example
 * ```ts
 * reply(ctx, 404, SESSION_NOT_FOUND);
 * ```
 */
export function reply(
  ctx: RequestContext,
  status: number,
  json: string,
  headers?: ResponseHeaders,
): void {
  ctx.core.recorder?.(methodLabel(ctx.method), status, ctx.startedAt);
  writeJson(ctx.target, status, json, headers);
}

/**
 * A refusal before the body was read: the body is never read (the connection may close).
 *
 * @example
 * ```ts
 * refuseUnread(ctx, 415, BAD_CONTENT_TYPE);
 * ```
 */
export function refuseUnread(
  ctx: RequestContext,
  status: number,
  json: string,
  headers?: ResponseHeaders,
): void {
  ctx.input.body.skip();
  reply(ctx, status, json, headers);
}

/**
 * 202 with no body: an accepted (or deliberately dropped) notification, or a client's answer.
 *
 * @example
 * ```ts
 * accepted(ctx);
 * ```
 */
export function accepted(ctx: RequestContext): void {
  ctx.core.recorder?.(methodLabel(ctx.method), 202, ctx.startedAt);
  writeEmpty(ctx.target, 202);
}

/**
 * 429 (the scope's bound) or 503 (the global one), with `Retry-After` and the request's id,
 * counted in the metrics under the refused scope's kind (`scope`: the request's origin unless
 * its session's or stream's bound refused it).
 *
 * @example
 * ```ts
 * refuseBusy(ctx, outcome, request.id);
 * ```
 */
export function refuseBusy(
  ctx: RequestContext,
  outcome: LimitOutcome,
  id: JsonRpcRequest["id"] | null,
  scope: string = ctx.origin,
): void {
  ctx.core.config.metrics?.refused(scope, outcome);
  const json = errorResponseJson(id, ErrorCode.ServerError, TOO_MANY);
  reply(ctx, outcome === SCOPE_LIMIT ? 429 : 503, json, RETRY_SOON);
}

/**
 * 429 (the scope's body budget) or 503 (the global one), with `Retry-After`, before the body is
 * read (the connection closes after the answer); counted in the metrics as a refusal of the
 * request's origin.
 *
 * @example
 * ```ts
 * refuseBodyBytes(ctx, outcome);
 * ```
 */
export function refuseBodyBytes(ctx: RequestContext, outcome: LimitOutcome): void {
  ctx.core.config.metrics?.refused(ctx.origin, outcome);
  const json = errorResponseJson(null, ErrorCode.ServerError, TOO_MANY_BYTES);
  ctx.input.body.skip();
  reply(ctx, outcome === SCOPE_LIMIT ? 429 : 503, json, RETRY_SOON);
}
