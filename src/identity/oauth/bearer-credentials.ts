/**
 * The bearer token a request presents, read by the rules of RFC 6750 §2 and MCP 2025-11-25
 * "Access Token Usage" (https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#access-token-usage):
 * exactly one `Authorization: Bearer <token>` header; a token in the query string is refused
 * (MUST NOT be sent there), as is a request presenting more than one `Authorization` header.
 */

/** Longest access token read; a longer one is refused without being parsed. */
export const MAX_ACCESS_TOKEN_LENGTH = 8_192;

/** What the request presents. */
export type PresentedCredentials =
  /** No `Authorization: Bearer` header (another scheme counts as none: a hook may read it). */
  | { readonly kind: "none" }
  | { readonly kind: "token"; readonly token: string }
  /** RFC 6750 §3.1 `invalid_request` (400): the request itself is malformed. */
  | { readonly kind: "malformed"; readonly description: string }
  /** Longer than {@link MAX_ACCESS_TOKEN_LENGTH}: an invalid token (401). */
  | { readonly kind: "oversized" };

const NONE: PresentedCredentials = Object.freeze({ kind: "none" });
const OVERSIZED: PresentedCredentials = Object.freeze({ kind: "oversized" });

/**
 * Reads the credentials of a request from its `Authorization` header values (each apart, as
 * node's `headersDistinct` keeps them: node itself would silently keep only the first) and its
 * request target (for the query-string check).
 *
 * @example
 * ```ts
 * presentedCredentials(["Bearer abc"], "/mcp"); // { kind: "token", token: "abc" }
 * presentedCredentials(["Bearer a", "Bearer b"], "/mcp").kind; // "malformed"
 * presentedCredentials(undefined, "/mcp?access_token=abc").kind; // "malformed"
 * ```
 */
export function presentedCredentials(
  authorization: readonly string[] | undefined,
  target: string | undefined,
): PresentedCredentials {
  if (target !== undefined && hasQueryToken(target)) {
    return {
      kind: "malformed",
      description: "Access tokens are accepted in the Authorization header only",
    };
  }
  if (authorization === undefined || authorization.length === 0) return NONE;
  if (authorization.length > 1) {
    return { kind: "malformed", description: "More than one Authorization header" };
  }
  const header = authorization[0] as string;
  const space = header.indexOf(" ");
  const scheme = space === -1 ? header : header.slice(0, space);
  if (scheme.toLowerCase() !== "bearer") return NONE;
  const token = header.slice(space + 1).trim();
  if (token.length > MAX_ACCESS_TOKEN_LENGTH) return OVERSIZED;
  // RFC 6750 §2.1: one b64token; visible ASCII is accepted (static secrets may use more).
  if (space === -1 || !/^[\x21-\x7e]+$/.test(token)) {
    return { kind: "malformed", description: "Malformed Authorization header" };
  }
  return { kind: "token", token };
}

/** True when the target's query names `access_token` (RFC 6750 §2.3), whatever its value. */
function hasQueryToken(target: string): boolean {
  const question = target.indexOf("?");
  if (question === -1) return false;
  const query = target.slice(question + 1);
  if (!query.toLowerCase().includes("access_token")) return false;
  try {
    return new URLSearchParams(query).has("access_token");
  } catch {
    return false;
  }
}
