/**
 * The scope of a request, decided once and kept on its context: the scope it comes from (its
 * principal, else its client's IP bucket) when it is admitted, then — once its session is known —
 * the scope its message is handled in: session > principal > IP bucket (identity/scope.ts). Every
 * bound, every cancellation and every answer routed back is keyed by it.
 */
import { clientAddress, principalId, scopeOf } from "../../../identity/index.js";
import { ADDRESS_SCOPES, type CoreState } from "./core-state.js";
import type { RequestContext } from "./request-context.js";

/**
 * The `ip:` scope of a request without principal (nor session). Unless a trusted proxy's
 * X-Forwarded-For is read, it depends only on the peer's address: the scope of the last address
 * seen is remembered (one string compared, as a keep-alive client or a single proxy in front sends
 * request after request), then those of the last {@link ADDRESS_SCOPES} addresses (a Map
 * lookup), so clients pay for address parsing about once per address, not per request. Keyed by
 * address, not by connection: a table entry per connection is memory per held call
 * (docs/profile.md, "Held calls at 10 000").
 */
function anonymousScope(ctx: RequestContext): string {
  const input = ctx.input;
  const remote = input.remoteAddress;
  // No address to vouch for: `X-Forwarded-For` cannot be checked against a peer either.
  if (remote === undefined && input.fallbackScope !== undefined) return input.fallbackScope;
  const core = ctx.core;
  const { trustProxy } = core.config;
  // Trusting no proxy, `X-Forwarded-For` can change nothing: not even read (a header lookup).
  const forwarded = trustProxy.kind === "none" ? undefined : ctx.headers["x-forwarded-for"];
  if (forwarded === undefined && remote !== undefined && remote === core.lastAddress) {
    return core.lastAddressScope;
  }
  const memo = core.addressScopes;
  const byAddress = remote !== undefined && forwarded === undefined;
  if (byAddress) {
    const cached = memo.get(remote);
    if (cached !== undefined) return remember(core, remote, cached);
  }
  const address = clientAddress(remote, forwarded, trustProxy) ?? null;
  const scope = scopeOf({ sessionId: null, principal: null, address });
  if (byAddress) {
    // Oldest out first (a Map iterates in insertion order).
    if (memo.size >= ADDRESS_SCOPES) memo.delete(memo.keys().next().value as string);
    memo.set(remote, scope);
  }
  return forwarded === undefined ? remember(core, remote, scope) : scope;
}

/** Remembers `scope` as the scope of the peer address `remote` (see {@link anonymousScope}). */
function remember(core: CoreState, remote: string | undefined, scope: string): string {
  if (remote !== undefined) {
    core.lastAddress = remote;
    core.lastAddressScope = scope;
  }
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
