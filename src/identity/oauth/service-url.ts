/**
 * Which URLs the resource server may call (JWKS, token introspection) or publish (its own
 * resource identifier, its authorization servers): `https:`, or plain `http:` on a loopback host
 * only. OAuth 2.1 (draft-ietf-oauth-v2-1-13, §1.5 "Communication Security") requires TLS for
 * every authorization server endpoint; loopback is allowed so that a local test server works.
 */
import { InvalidOptionError } from "../../errors.js";

/**
 * True for `localhost`, `127.0.0.0/8` and `::1` (as `URL.hostname` spells them).
 *
 * @example
 * ```ts
 * isLoopbackHostname("[::1]"); // true
 * isLoopbackHostname("idp.example.com"); // false
 * ```
 */
export function isLoopbackHostname(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return (
    h === "localhost" || h === "[::1]" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)
  );
}

/**
 * Parses `value` as an absolute `https:` URL (or `http:` on loopback) without credentials or
 * fragment, else throws {@link InvalidOptionError} naming `option`. Returns the parsed URL.
 *
 * @example
 * ```ts
 * serviceUrl("auth.oauth.jwksUrl", "https://idp.example.com/.well-known/jwks.json");
 * serviceUrl("auth.oauth.jwksUrl", "http://127.0.0.1:8080/jwks"); // loopback: allowed
 * serviceUrl("auth.oauth.jwksUrl", "http://idp.example.com/jwks"); // throws
 * ```
 */
export function serviceUrl(option: string, value: unknown): URL {
  const expected = "an https URL (http only on a loopback host), without credentials or fragment";
  if (typeof value !== "string" || value.length === 0 || value.length > 2_048) {
    throw new InvalidOptionError(option, expected, value);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidOptionError(option, expected, value);
  }
  const secure =
    url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHostname(url.hostname));
  if (!secure || url.username !== "" || url.password !== "" || value.includes("#")) {
    throw new InvalidOptionError(option, expected, value);
  }
  return url;
}
