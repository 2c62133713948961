/**
 * The issuer's signing keys, fetched from its JWKS URL (RFC 7517 §5) through `jose`'s remote
 * key set: cached for `cacheMaxAgeMs`, refetched once when a token names an unknown `kid`
 * (key rotation) but not more often than every `cooldownMs`, each fetch bounded by
 * `timeoutMs` and never following redirects. On top of it, a failed fetch is not retried for
 * `retryAfterFailureMs`: during an outage every request is refused at once (503) instead of
 * each one waiting for the timeout and adding load to the struggling identity provider.
 */
import { createRemoteJWKSet, customFetch, type JWTVerifyGetKey } from "jose";

import { boundedFetch } from "./bounded-body.js";

/** How the key set is fetched. */
export interface JwksSourceOptions {
  readonly url: URL;
  readonly timeoutMs: number;
  readonly cacheMaxAgeMs: number;
  readonly cooldownMs: number;
  readonly retryAfterFailureMs: number;
}

/** Thrown when the keys could not be fetched: the caller answers 503. */
export class KeySetUnavailableError extends Error {
  constructor(cause: unknown) {
    super("the JWKS could not be fetched", { cause });
    this.name = "KeySetUnavailableError";
  }
}

/** Largest JWKS read. */
const MAX_JWKS_BYTES = 262_144;

/** jose error codes that come from fetching or parsing the key set, not from a token. */
const FETCH_FAILURES = new Set(["ERR_JWKS_TIMEOUT", "ERR_JOSE_GENERIC", "ERR_JWKS_INVALID"]);

/**
 * A `jose` key resolver over the remote key set. Rejects with {@link KeySetUnavailableError}
 * when the set could not be fetched, with jose's own errors for a token whose key is not in it.
 *
 * @example
 * ```ts
 * const getKey = createJwksSource({ url: new URL("https://idp.example.com/jwks"), timeoutMs: 5000,
 *   cacheMaxAgeMs: 600_000, cooldownMs: 30_000, retryAfterFailureMs: 1000 });
 * await jwtVerify(token, getKey, { issuer, audience });
 * ```
 */
export function createJwksSource(options: JwksSourceOptions): JWTVerifyGetKey {
  const remote = createRemoteJWKSet(options.url, {
    timeoutDuration: options.timeoutMs,
    cacheMaxAge: options.cacheMaxAgeMs,
    cooldownDuration: options.cooldownMs,
    // A key set is a few KiB: a larger answer is refused unread (503), never buffered whole.
    [customFetch]: boundedFetch(MAX_JWKS_BYTES),
  });
  let failedAt = Number.NEGATIVE_INFINITY;
  return async (header, token) => {
    // Only while the cached set is unusable: known keys keep working through an outage until
    // the cache ages out.
    if (!remote.fresh && Date.now() - failedAt < options.retryAfterFailureMs) {
      throw new KeySetUnavailableError(undefined);
    }
    try {
      return await remote(header, token);
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code !== "string" || FETCH_FAILURES.has(code)) {
        failedAt = Date.now();
        throw new KeySetUnavailableError(error);
      }
      throw error;
    }
  };
}
