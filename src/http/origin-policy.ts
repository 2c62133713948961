/**
 * DNS-rebinding protection (MCP 2025-11-25 transports, "Security Warning"; conformance scenario
 * dns-rebinding-protection). A server bound to a loopback address accepts only a loopback `Host`
 * (`localhost`, `127.0.0.1`, `[::1]`, optional port) and, when present, a loopback `Origin` (or
 * one listed in `allowedOrigins`). Any other server accepts an `Origin` only if it is listed.
 * A request without `Origin` is not a browser's cross-origin request and passes that check.
 */
import type { IncomingHttpHeaders } from "node:http";

import { InvalidOptionError } from "../errors.js";

const LOOPBACK_HOST = /^(?:localhost|127\.0\.0\.1|\[::1\])(?::\d{1,5})?$/i;
const LOOPBACK_ORIGIN = /^https?:\/\/(?:localhost|127\.0\.0\.1|\[::1\])(?::\d{1,5})?$/i;

/**
 * Whether a listen host is a loopback address or name.
 *
 * @example
 * ```ts
 * isLoopbackListenHost("127.0.0.1"); // true
 * isLoopbackListenHost("0.0.0.0"); // false
 * ```
 */
export function isLoopbackListenHost(host: string): boolean {
  const h = host.toLowerCase();
  return (
    h === "localhost" || h === "::1" || h === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)
  );
}

/**
 * Normalises an allowed origin to its serialised form (`scheme://host[:port]`, lower case).
 * Throws InvalidOptionError for anything that is not an http(s) origin.
 *
 * @example
 * ```ts
 * normalizeOrigin("https://App.Example.com/"); // "https://app.example.com"
 * ```
 */
export function normalizeOrigin(origin: unknown): string {
  if (typeof origin !== "string") {
    throw new InvalidOptionError("allowedOrigins[]", "an http(s) origin string", origin);
  }
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new InvalidOptionError("allowedOrigins[]", "an http(s) origin string", origin);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.origin === "null") {
    throw new InvalidOptionError("allowedOrigins[]", "an http(s) origin string", origin);
  }
  return url.origin;
}

/**
 * Decides whether a request's `Host` and `Origin` are acceptable.
 *
 * @example
 * ```ts
 * const policy = new OriginPolicy(["https://app.example.com"]);
 * policy.loopbackOnly = true; // set by listen() on 127.0.0.1
 * if (!policy.allows(req.headers)) reply(403);
 * ```
 */
export class OriginPolicy {
  /** Set when the server listens on a loopback address. */
  loopbackOnly = false;
  private readonly allowed: ReadonlySet<string>;
  /** The last `Host` value that matched {@link LOOPBACK_HOST}, or null. */
  private loopbackHost: string | null = null;

  constructor(allowedOrigins: readonly string[] | undefined) {
    if (allowedOrigins !== undefined && !Array.isArray(allowedOrigins)) {
      throw new InvalidOptionError("allowedOrigins", "an array of origin strings", allowedOrigins);
    }
    this.allowed = new Set((allowedOrigins ?? []).map(normalizeOrigin));
  }

  /** Whether the request may proceed (false → 403). */
  allows(headers: IncomingHttpHeaders): boolean {
    const origin = headers.origin;
    if (this.loopbackOnly) {
      const host = headers.host;
      if (host === undefined) return false;
      // The last Host value found to be a loopback name is remembered (one string): clients send
      // the same one on every request, so the pattern runs once per new value, not per request.
      if (host !== this.loopbackHost) {
        if (!LOOPBACK_HOST.test(host)) return false;
        this.loopbackHost = host;
      }
      if (origin === undefined) return true;
      return LOOPBACK_ORIGIN.test(origin) || this.allowed.has(origin.toLowerCase());
    }
    if (origin === undefined) return true;
    return this.allowed.has(origin.toLowerCase());
  }
}
