/**
 * Bearer-token and hook authentication (issue 3, "Auth"). Static tokens map a secret to a
 * principal id; the presented token is hashed with SHA-256 and looked up by its digest, so the
 * comparison never depends on how many leading characters of a secret the client guessed. A
 * `verify(req)` hook may authenticate anything else.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";

import { InvalidOptionError } from "../errors.js";
import { createPrincipal, type Principal } from "../identity/index.js";

/** The `auth` option. */
export interface AuthOptions {
  /** Bearer secret → principal id. */
  readonly tokens?: Readonly<Record<string, string>>;
  /** Any other scheme: resolve a principal, or null to refuse. */
  readonly verify?: (req: IncomingMessage) => Promise<Principal | null> | Principal | null;
}

/** Resolves the request's principal, or null when it is not authenticated (→ 401). */
export type Authenticator = (req: IncomingMessage) => Promise<Principal | null>;

/** Longer credentials are refused without hashing them. */
const MAX_TOKEN_LENGTH = 4096;

function digest(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("base64");
}

/**
 * Builds the authenticator for an `auth` option, or null when auth is off. Bad options throw
 * InvalidOptionError.
 *
 * @example
 * ```ts
 * const authenticate = createAuthenticator({ tokens: { "s3cret-a": "alice" } });
 * const principal = await authenticate?.(req); // principal.id === "alice"
 * ```
 */
export function createAuthenticator(auth: AuthOptions | undefined): Authenticator | null {
  if (auth === undefined) return null;
  if (typeof auth !== "object" || auth === null || Array.isArray(auth)) {
    throw new InvalidOptionError("auth", "an object with tokens and/or verify", auth);
  }
  const { tokens, verify } = auth;
  if (verify !== undefined && typeof verify !== "function") {
    throw new InvalidOptionError("auth.verify", "a function", verify);
  }
  const byDigest = new Map<string, Principal>();
  if (tokens !== undefined) {
    if (typeof tokens !== "object" || tokens === null || Array.isArray(tokens)) {
      throw new InvalidOptionError(
        "auth.tokens",
        "an object mapping secrets to principal ids",
        tokens,
      );
    }
    for (const [secret, id] of Object.entries(tokens)) {
      if (secret.length === 0 || secret.length > MAX_TOKEN_LENGTH) {
        throw new InvalidOptionError(
          "auth.tokens",
          `secrets of 1-${MAX_TOKEN_LENGTH} characters`,
          secret.length,
        );
      }
      if (typeof id !== "string" || id.length === 0) {
        throw new InvalidOptionError("auth.tokens[…]", "a non-empty principal id string", id);
      }
      byDigest.set(digest(secret), createPrincipal({ id }));
    }
  }
  if (byDigest.size === 0 && verify === undefined) {
    throw new InvalidOptionError("auth", "at least one token or a verify function", auth);
  }
  return async (req) => {
    if (byDigest.size > 0) {
      const token = bearerToken(req.headers.authorization);
      if (token !== null) {
        const principal = byDigest.get(digest(token));
        if (principal !== undefined) return principal;
      }
    }
    if (verify === undefined) return null;
    try {
      const principal = await verify(req);
      return typeof principal === "object" && principal !== null ? principal : null;
    } catch {
      return null; // a failing verifier refuses; its error is not sent anywhere
    }
  };
}

/**
 * The credentials of an `Authorization: Bearer …` header, or null.
 *
 * @example
 * ```ts
 * bearerToken("Bearer abc"); // "abc"
 * ```
 */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined || header.length > MAX_TOKEN_LENGTH + 7) return null;
  if (header.length < 8 || header.slice(0, 7).toLowerCase() !== "bearer ") return null;
  const token = header.slice(7).trim();
  return token.length === 0 ? null : token;
}
