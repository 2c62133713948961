/**
 * The cancellation scope of a request (docs/architecture.md, "Decisions and why"): the
 * namespace its request ids, cancellations and quota live in, so one client can never cancel or
 * exhaust another's requests.
 */
import { clientBucket } from "./client-bucket.js";
import { type Principal, principalId } from "./principal.js";

/** What the scope is derived from; the transport fills it once per request, before dispatch. */
export interface ScopeInput {
  /** A session id the transport has already validated (2025-era sessions only). */
  readonly sessionId?: string | null | undefined;
  readonly principal?: Principal | null | undefined;
  readonly address?: string | null | undefined;
}

/** The scope used when no request is at hand (the registry's default). */
export const GLOBAL_SCOPE = "global";

/**
 * The scope of a request, first match wins: `session:<sessionId>`, `principal:<id>` (see
 * {@link principalId}), else `ip:<clientBucket(address)>` (`ip:unknown` without an address).
 * The prefixes keep namespaces apart: principal `"203.0.113.9"` and an anonymous client at
 * 203.0.113.9 share neither rows nor quota. A non-object input gives {@link GLOBAL_SCOPE}.
 */
export function scopeOf(input: ScopeInput): string {
  if (typeof input !== "object" || input === null) return GLOBAL_SCOPE;
  const { sessionId, principal, address } = input;
  if (typeof sessionId === "string" && sessionId !== "") return `session:${sessionId}`;
  const id = principalId(principal);
  if (id !== null) return `principal:${id}`;
  return `ip:${clientBucket(address)}`;
}
