/**
 * `WWW-Authenticate: Bearer …` challenges (RFC 6750 §3, with RFC 9728 §5.1's
 * `resource_metadata` parameter). Every value is a quoted-string built only from the server's
 * own configuration and fixed texts: nothing a client sent is ever reflected into it.
 */

/** The parameters of one Bearer challenge; absent ones are left out. */
export interface BearerChallenge {
  /** RFC 6750 §3.1: `invalid_request`, `invalid_token` or `insufficient_scope`. */
  readonly error?: "invalid_request" | "invalid_token" | "insufficient_scope" | undefined;
  /** A fixed, human-readable sentence (never a client's input or an internal error). */
  readonly description?: string | undefined;
  /** Space-separated scopes the request needs (RFC 6750 §3). */
  readonly scopes?: readonly string[] | undefined;
  /** The URL of the protected resource metadata (RFC 9728 §5.1). */
  readonly resourceMetadata?: string | undefined;
}

/**
 * The header value of a Bearer challenge. An RFC 6750 §3 request without credentials gets no
 * `error`; every other refusal names one.
 *
 * @example
 * ```ts
 * bearerChallenge({ resourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scopes: ["mcp"] });
 * // 'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp"'
 * ```
 */
export function bearerChallenge(challenge: BearerChallenge): string {
  const params: string[] = [];
  if (challenge.error !== undefined) params.push(`error="${quoted(challenge.error)}"`);
  if (challenge.description !== undefined) {
    params.push(`error_description="${quoted(challenge.description)}"`);
  }
  if (challenge.scopes !== undefined && challenge.scopes.length > 0) {
    params.push(`scope="${quoted(challenge.scopes.join(" "))}"`);
  }
  if (challenge.resourceMetadata !== undefined) {
    params.push(`resource_metadata="${quoted(challenge.resourceMetadata)}"`);
  }
  return params.length === 0 ? "Bearer" : `Bearer ${params.join(", ")}`;
}

/**
 * RFC 6750 §3: `error_description` and `scope` values are restricted to printable ASCII without
 * `"` and `\`; anything else is dropped rather than escaped, so a value can never break out of
 * its quotes or split the header.
 */
function quoted(value: string): string {
  return value.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, "");
}
