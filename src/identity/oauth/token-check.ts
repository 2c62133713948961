/**
 * What checking one access token concludes, whichever way it was checked (a JWT against the
 * issuer's keys, or an opaque token by introspection). "unavailable" means the authorization
 * server could not be asked: the request is refused (503), never let through: an outage fails
 * closed.
 */

/** The outcome of checking one access token. */
export type TokenCheck =
  | { readonly ok: true; readonly claims: Readonly<Record<string, unknown>> }
  /** The token is not valid here (401 `invalid_token`); `description` is a fixed sentence. */
  | { readonly ok: false; readonly reason: "invalid"; readonly description: string }
  /** The keys or the introspection endpoint could not be reached in time (503). */
  | { readonly ok: false; readonly reason: "unavailable" };

/** The check of one token (a JWT verifier or an introspection client). */
export type TokenChecker = (token: string) => Promise<TokenCheck>;

/**
 * A refusal with a fixed description.
 *
 * @example
 * ```ts
 * invalidToken("The access token expired"); // { ok: false, reason: "invalid", description: "The access token expired" }
 * ```
 */
export function invalidToken(description: string): TokenCheck {
  return { ok: false, reason: "invalid", description };
}

/** The outage outcome (one frozen object). */
export const UNAVAILABLE: TokenCheck = Object.freeze({ ok: false, reason: "unavailable" });
