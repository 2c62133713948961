/**
 * The scope of a request, decided once and kept on its context: the scope it comes from (its
 * principal, else its client's IP bucket) when it is admitted, then — once its session is known —
 * the scope its message is handled in: session > principal > IP bucket (identity/scope.ts). Every
 * bound, every cancellation and every answer routed back is keyed by it.
 */
import { clientAddress, principalId, scopeOf } from "../../../identity/index.js";
import type { RequestContext } from "./request-context.js";

/**
 * The `ip:` scope of a request without principal (nor session). It depends only on the
 * connection unless a trusted proxy's X-Forwarded-For is read, so it is computed once per
 * connection: keep-alive clients pay for address parsing once, not per request.
 */
function anonymousScope(ctx: RequestContext): string {
  const input = ctx.input;
  // No address to vouch for: `X-Forwarded-For` cannot be checked against a peer either.
  if (input.remoteAddress === undefined && input.fallbackScope !== undefined) {
    return input.fallbackScope;
  }
  const { trustProxy } = ctx.core.config;
  const cache = ctx.core.connectionScopes;
  // Trusting no proxy, `X-Forwarded-For` can change nothing: not even read (a header lookup).
  const forwarded = trustProxy.kind === "none" ? undefined : input.headers["x-forwarded-for"];
  const perConnection = input.connection !== null && forwarded === undefined;
  if (perConnection) {
    const cached = cache.get(input.connection as object);
    if (cached !== undefined) return cached;
  }
  const address = clientAddress(input.remoteAddress, forwarded, trustProxy) ?? null;
  const scope = scopeOf({ sessionId: null, principal: null, address });
  if (perConnection) cache.set(input.connection as object, scope);
  return scope;
}

/**
 * The scope a request comes from — its principal, else its client's IP bucket — once its
 * principal is known. Its bounds are checked before the body is read.
 *
 * @example
 * ```ts
 * ctx.origin = originScope(ctx); // "principal:…" or "ip:…"
 * ```
 */
export function originScope(ctx: RequestContext): string {
  const principal = ctx.principal;
  return principalId(principal) === null
    ? anonymousScope(ctx)
    : scopeOf({ sessionId: null, principal, address: null });
}

/**
 * Fixes the scope the message is handled in, once its session is known (none for 2026-07-28):
 * the session's own scope when there is one, else the scope the request came from.
 *
 * @example
 * ```ts
 * decideScope(ctx); // ctx.scope: "session:…", else ctx.origin
 * ```
 */
export function decideScope(ctx: RequestContext): void {
  const sessionId = ctx.sessionId;
  const sessionScope =
    sessionId === null ? null : scopeOf({ sessionId, principal: null, address: null });
  ctx.sessionScope = sessionScope;
  ctx.scope = sessionScope ?? ctx.origin;
}

/**
 * The bucket that pays for what the request leaves behind (tasks, subscriptions): the scope it
 * came from, or null when that is the per-request fallback of a transport that knows no client
 * address (no later request could find what it made, nor would a quota of it bound anything).
 *
 * @example
 * ```ts
 * stableBucket(ctx); // "ip:203.0.113.7", or null for server.fetch without clientAddress
 * ```
 */
export function stableBucket(ctx: RequestContext): string | null {
  const fallback = ctx.input.fallbackScope;
  return fallback !== undefined && ctx.origin === fallback ? null : ctx.origin;
}
