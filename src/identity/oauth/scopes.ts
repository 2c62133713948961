/**
 * OAuth scopes of a verified token and what a request needs. A JWT access token carries them in
 * `scope` (a space-separated string: RFC 9068 §2.2.3, RFC 8693 §4.2), some identity providers
 * in `scp` (a string or an array); an introspection answer in `scope` (RFC 7662 §2.2).
 */

/** Most scopes read from one token: a token listing more is refused as a whole. */
export const MAX_TOKEN_SCOPES = 256;

/** Longest single scope accepted. */
const MAX_SCOPE_LENGTH = 256;

/**
 * The scopes a token grants (duplicates dropped), or null when the claim read has the wrong shape
 * or lists too many. RFC 9068 §2.2.3.1 names `scope` as the JWT access token's claim, so when a
 * token has `scope` only `scope` is read; `scp` is read only from a token without `scope` (as some
 * identity providers issue). Never the union: a token whose two claims disagree grants what its
 * `scope` says, not more.
 *
 * @example
 * ```ts
 * grantedScopes({ scope: "mcp files:read" }); // ["mcp", "files:read"]
 * grantedScopes({ scp: ["mcp"] }); // ["mcp"]
 * grantedScopes({ scope: "mcp", scp: ["admin"] }); // ["mcp"]
 * ```
 */
export function grantedScopes(claims: Readonly<Record<string, unknown>>): string[] | null {
  const found = new Set<string>();
  const claim = claims.scope !== undefined ? claims.scope : claims.scp;
  if (claim !== undefined) {
    let items: unknown[];
    if (typeof claim === "string") items = claim.split(" ");
    else if (Array.isArray(claim)) items = claim;
    else return null;
    for (const item of items) {
      if (typeof item !== "string" || item.length > MAX_SCOPE_LENGTH) return null;
      if (item !== "") found.add(item);
    }
    if (found.size > MAX_TOKEN_SCOPES) return null;
  }
  return [...found];
}

/**
 * The required scopes missing from a grant, in the order they were required.
 *
 * @example
 * ```ts
 * missingScopes(["mcp"], ["mcp", "admin"]); // ["admin"]
 * ```
 */
export function missingScopes(
  granted: readonly string[],
  required: readonly string[],
): readonly string[] {
  if (required.length === 0) return required;
  const have = new Set(granted);
  return required.filter((scope) => !have.has(scope));
}

/**
 * A grant with the scopes its scopes imply (MCP 2026-07-28 "Step-Up Authorization Flow": servers
 * MUST account for scope hierarchies, where a broader scope implies narrower ones), followed
 * transitively: `{ admin: ["write"], write: ["read"] }` turns `["admin"]` into
 * `["admin", "write", "read"]`.
 *
 * @example
 * ```ts
 * withImpliedScopes(["files:write"], new Map([["files:write", ["files:read"]]])); // ["files:write", "files:read"]
 * ```
 */
export function withImpliedScopes(
  granted: readonly string[],
  implied: ReadonlyMap<string, readonly string[]>,
): string[] {
  const all = new Set(granted);
  if (implied.size === 0) return [...all];
  const pending = [...granted];
  while (pending.length > 0) {
    for (const next of implied.get(pending.pop() as string) ?? []) {
      if (!all.has(next)) {
        all.add(next);
        pending.push(next);
      }
    }
  }
  return [...all];
}

/**
 * A scope option: an array of distinct RFC 6749 §3.3 scope tokens (printable ASCII without
 * space, `"` or `\`), or null when `value` is not one.
 *
 * @example
 * ```ts
 * scopeList(["mcp", "files:read"]); // ["mcp", "files:read"]
 * scopeList(["two words"]); // null
 * ```
 */
export function scopeList(value: unknown): string[] | null {
  if (!Array.isArray(value)) return null;
  const out = new Set<string>();
  for (const item of value) {
    if (typeof item !== "string" || !/^[\x21\x23-\x5b\x5d-\x7e]{1,256}$/.test(item)) return null;
    out.add(item);
  }
  return [...out];
}
