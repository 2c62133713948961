/**
 * Opaque access tokens, checked by OAuth 2.0 Token Introspection (RFC 7662): the token is POSTed
 * to the authorization server's introspection endpoint with this resource server's client
 * credentials (RFC 7662 §2.1, HTTP Basic), and the answer must say `active: true`, name this
 * resource in `aud` (RFC 8707 §2), come from the expected issuer when one is configured, and not
 * be expired. Answers are cached by the token's SHA-256 (never the token itself) in a bounded
 * cache, no longer than the token lives; an unreachable or broken endpoint fails closed (503).
 */
import { createHash } from "node:crypto";

import { readBoundedBody } from "./bounded-body.js";
import { BoundedCache } from "./bounded-cache.js";
import { invalidToken, type TokenCheck, type TokenChecker, UNAVAILABLE } from "./token-check.js";

/** What {@link createIntrospector} needs (validated by the caller). */
export interface IntrospectorOptions {
  readonly url: URL;
  readonly clientId: string;
  readonly clientSecret: string;
  /** `iss` an answer must carry, when configured. */
  readonly issuer: string | undefined;
  readonly audiences: () => readonly string[];
  readonly timeoutMs: number;
  /** Longest time an answer is reused. */
  readonly cacheTtlMs: number;
  readonly maxCacheEntries: number;
  readonly clockToleranceSec: number;
}

/** Largest introspection answer read. */
const MAX_RESPONSE_BYTES = 65_536;
/** An inactive token's answer is reused this long, so a replayed bad token costs one call. */
const NEGATIVE_TTL_MS = 10_000;

const INACTIVE = invalidToken("The access token is not active");
const WRONG_AUDIENCE = invalidToken("The access token was not issued for this resource");
const WRONG_ISSUER = invalidToken("The access token was not issued by the expected issuer");
const EXPIRED = invalidToken("The access token expired");
const NOT_YET_VALID = invalidToken("The access token is not valid yet");

/**
 * A checker of opaque tokens by introspection.
 *
 * @example
 * ```ts
 * const check = createIntrospector({ url: new URL("https://idp.example.com/introspect"),
 *   clientId: "mcp", clientSecret, issuer: undefined, audiences: () => [resource],
 *   timeoutMs: 5000, cacheTtlMs: 60_000, maxCacheEntries: 10_000, clockToleranceSec: 5 });
 * ```
 */
export function createIntrospector(options: IntrospectorOptions): TokenChecker {
  const cache = new BoundedCache<TokenCheck>(options.maxCacheEntries);
  const authorization = `Basic ${Buffer.from(
    `${encodeURIComponent(options.clientId)}:${encodeURIComponent(options.clientSecret)}`,
  ).toString("base64")}`;
  return async (token) => {
    const key = createHash("sha256").update(token).digest("base64url");
    const cached = cache.get(key);
    if (cached !== undefined) return recheck(cached, options.clockToleranceSec);
    let answer: unknown;
    try {
      const response = await fetch(options.url, {
        method: "POST",
        redirect: "manual",
        signal: AbortSignal.timeout(options.timeoutMs),
        headers: {
          authorization,
          "content-type": "application/x-www-form-urlencoded",
          accept: "application/json",
        },
        body: new URLSearchParams({ token, token_type_hint: "access_token" }).toString(),
      });
      if (response.status !== 200) {
        await response.body?.cancel();
        return UNAVAILABLE;
      }
      const text = await readBoundedBody(response, MAX_RESPONSE_BYTES);
      if (text === null) return UNAVAILABLE;
      answer = JSON.parse(text);
    } catch {
      return UNAVAILABLE;
    }
    if (typeof answer !== "object" || answer === null || Array.isArray(answer)) return UNAVAILABLE;
    const outcome = judge(answer as Record<string, unknown>, options);
    const now = Date.now();
    if (outcome.ok) {
      const exp = (outcome.claims.exp as number | undefined) ?? Number.POSITIVE_INFINITY;
      cache.set(key, outcome, Math.min(now + options.cacheTtlMs, exp * 1000));
    } else cache.set(key, outcome, now + Math.min(NEGATIVE_TTL_MS, options.cacheTtlMs));
    return outcome;
  };
}

/** RFC 7662 §2.2: what an answer must say for the token to be accepted here. */
function judge(answer: Record<string, unknown>, options: IntrospectorOptions): TokenCheck {
  if (answer.active !== true) return INACTIVE;
  const aud = answer.aud;
  const audiences = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : [];
  const accepted = options.audiences();
  if (!audiences.some((a) => typeof a === "string" && accepted.includes(a))) {
    return WRONG_AUDIENCE;
  }
  if (options.issuer !== undefined && answer.iss !== options.issuer) return WRONG_ISSUER;
  if (answer.exp !== undefined && typeof answer.exp !== "number") return INACTIVE;
  if (answer.nbf !== undefined && typeof answer.nbf !== "number") return INACTIVE;
  const checked = recheck({ ok: true, claims: answer }, options.clockToleranceSec);
  return checked;
}

/** Expiry and not-before, checked again on every reuse of a cached answer. */
function recheck(outcome: TokenCheck, toleranceSec: number): TokenCheck {
  if (!outcome.ok) return outcome;
  const now = Date.now() / 1000;
  const { exp, nbf } = outcome.claims as { exp?: number; nbf?: number };
  if (exp !== undefined && exp + toleranceSec <= now) return EXPIRED;
  if (nbf !== undefined && nbf - toleranceSec > now) return NOT_YET_VALID;
  return outcome;
}
