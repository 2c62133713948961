/**
 * Step: the tenant's rate limits (docs/limits.md, "Rate limits"), once a request's message is
 * read and before it is routed: a token from each bucket its bucket, method and tool have
 * (`rateLimits`), or 429 with `Retry-After` and a JSON-RPC error carrying the request's id.
 * Notifications (a cancel must always get through) and a client's answers are never limited; nor
 * is a request without a stable client identity (`server.fetch` given no `clientAddress` and no
 * authentication): a bucket of its own per request would bound nothing.
 */
import { ErrorCode } from "../../../errors.js";
import { errorResponseJson, type JsonRpcRequest } from "../../../protocol/index.js";
import { reply } from "../context/answers.js";
import type { RequestContext } from "../context/request-context.js";
import { stableBucket } from "../context/scope.js";

/** Longest tool name looked up (MCP tool names are 1-128 characters). */
const MAX_TOOL_NAME = 128;
const LIMITED = "Rate limit exceeded";

/**
 * True when the request may go on; false once it was refused (answered). A promise when the store
 * answers asynchronously (Redis).
 *
 * @example
 * ```ts
 * const allowed = withinRate(ctx, request);
 * if (allowed === false) return; // 429 answered
 * ```
 */
export function withinRate(
  ctx: RequestContext,
  request: JsonRpcRequest,
): boolean | Promise<boolean> {
  const plan = ctx.core.config.rateLimits;
  if (plan === null || plan === undefined) return true;
  const bucket = stableBucket(ctx);
  if (bucket === null) return true;
  const rates = plan.ratesFor(bucket, request.method, toolOf(request));
  if (rates.length === 0) return true;
  const wait = plan.store.take(bucket, rates);
  if (typeof wait === "number") return wait <= 0 || refuse(ctx, request, bucket, wait);
  return wait.then((ms) => ms <= 0 || refuse(ctx, request, bucket, ms));
}

/** The tool a `tools/call` names (only a name a rule may match), else null. */
function toolOf(request: JsonRpcRequest): string | null {
  if (request.method !== "tools/call") return null;
  const name = (request.params as { name?: unknown } | undefined)?.name;
  return typeof name === "string" && name.length <= MAX_TOOL_NAME ? name : null;
}

/**
 * 429 with `Retry-After` in whole seconds (RFC 6585, section 4; RFC 9110, section 10.2.3) and
 * the project's busy error, -32000, with `data.retryAfterMs`: the MCP specification defines no
 * JSON-RPC error for rate limiting (docs/limits.md, "What a limited client gets").
 */
function refuse(
  ctx: RequestContext,
  request: JsonRpcRequest,
  bucket: string,
  waitMs: number,
): false {
  ctx.core.config.metrics?.rateLimited(bucket);
  const retryAfterMs = Math.ceil(waitMs);
  const json = errorResponseJson(request.id, ErrorCode.ServerError, LIMITED, { retryAfterMs });
  reply(ctx, 429, json, { "retry-after": String(Math.max(1, Math.ceil(waitMs / 1000))) });
  return false;
}
