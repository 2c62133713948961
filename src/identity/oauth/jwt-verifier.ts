/**
 * Verifies a JWT access token with `jose` (RFC 7519, RFC 9068): the signature with the issuer's
 * keys and an allow-list of asymmetric algorithms (`none` and HMAC are never accepted, so a token
 * "signed" with the issuer's public key as an HMAC secret fails), then `iss`, `aud` (must name
 * this resource: RFC 8707 §2, MCP 2025-11-25 "Token Handling"), `exp` (required) and `nbf`,
 * with a small clock tolerance.
 */
import { errors, type JWTVerifyGetKey, jwtVerify } from "jose";

import { KeySetUnavailableError } from "./jwks.js";
import { invalidToken, type TokenCheck, type TokenChecker, UNAVAILABLE } from "./token-check.js";

/** Asymmetric JWS algorithms (RFC 7518 §3.1, RFC 8037) a verifier may allow. */
export const ASYMMETRIC_ALGORITHMS: readonly string[] = Object.freeze([
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
]);

/** What {@link createJwtVerifier} needs. */
export interface JwtVerifierOptions {
  readonly getKey: JWTVerifyGetKey;
  /** The exact `iss` expected. */
  readonly issuer: string;
  /** The accepted audiences (read per token: the resource may be fixed only at listen()). */
  readonly audiences: () => readonly string[];
  readonly algorithms: readonly string[];
  readonly clockToleranceSec: number;
}

const EXPIRED = invalidToken("The access token expired");
const NOT_YET_VALID = invalidToken("The access token is not valid yet");
const WRONG_AUDIENCE = invalidToken("The access token was not issued for this resource");
const WRONG_ISSUER = invalidToken("The access token was not issued by the expected issuer");
const INVALID = invalidToken("The access token is invalid");

/**
 * A checker of JWT access tokens.
 *
 * @example
 * ```ts
 * const check = createJwtVerifier({ getKey, issuer: "https://idp.example.com/",
 *   audiences: () => ["https://mcp.example.com/mcp"], algorithms: ["RS256"], clockToleranceSec: 5 });
 * const outcome = await check(token); // { ok: true, claims } or a refusal
 * ```
 */
export function createJwtVerifier(options: JwtVerifierOptions): TokenChecker {
  const { getKey, issuer, algorithms, clockToleranceSec } = options;
  const allowed = [...algorithms];
  return async (token: string): Promise<TokenCheck> => {
    try {
      const { payload } = await jwtVerify(token, getKey, {
        issuer,
        audience: [...options.audiences()],
        algorithms: allowed,
        clockTolerance: clockToleranceSec,
        requiredClaims: ["exp"],
      });
      return { ok: true, claims: payload as Readonly<Record<string, unknown>> };
    } catch (error) {
      if (error instanceof KeySetUnavailableError) return UNAVAILABLE;
      if (error instanceof errors.JWTExpired) return EXPIRED;
      if (error instanceof errors.JWTClaimValidationFailed) {
        if (error.claim === "nbf") return NOT_YET_VALID;
        if (error.claim === "aud") return WRONG_AUDIENCE;
        if (error.claim === "iss") return WRONG_ISSUER;
      }
      // Anything else (bad signature, unknown key, disallowed algorithm, garbage): one answer,
      // so a client learns nothing about which check failed.
      return INVALID;
    }
  };
}
