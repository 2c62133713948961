/**
 * Writing whole answers with the security headers every answer carries (`nosniff`, `DENY`,
 * `no-store`), in one `writeHead` so the headers are built once. Transport-neutral: they write
 * to a {@link ResponseTarget}.
 */
import { ErrorCode } from "../errors.js";
import { errorResponseJson } from "../protocol/index.js";
import type { ResponseHeaders, ResponseTarget } from "./transport.js";

/**
 * Writes a complete JSON response, with `extra` headers when given (the session id of an
 * `initialize` answer, a `Retry-After`, a challenge).
 *
 * @example
 * ```ts
 * writeJson(target, 200, '{"status":"ok"}');
 * ```
 */
export function writeJson(
  target: ResponseTarget,
  status: number,
  json: string,
  extra?: ResponseHeaders,
): void {
  const own = jsonHeaders(Buffer.byteLength(json));
  // Extra headers first, so none of them can replace the type, length or security headers.
  const headers = extra === undefined ? own : { ...extra, ...own };
  target.writeHead(status, headers);
  target.end(json);
}

/** The headers of every JSON answer (a literal: built at once, no copy of another object). */
function jsonHeaders(length: number): Record<string, string | number> {
  return {
    "content-type": "application/json",
    "content-length": length,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
  };
}

/**
 * Writes an empty response (202 for an accepted notification, 204 for DELETE).
 *
 * @example
 * ```ts
 * writeEmpty(target, 202);
 * ```
 */
export function writeEmpty(target: ResponseTarget, status: number): void {
  target.writeHead(status, EMPTY_HEADERS);
  target.end();
}

/**
 * Writes a complete plain-text response (`/metrics`, the 404 of unknown paths).
 *
 * @example
 * ```ts
 * writeText(target, 404, "Not found");
 * ```
 */
export function writeText(
  target: ResponseTarget,
  status: number,
  text: string,
  contentType = "text/plain; charset=utf-8",
): void {
  target.writeHead(status, {
    "content-type": contentType,
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  target.end(text);
}

const EMPTY_HEADERS: ResponseHeaders = Object.freeze({
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
});

/**
 * Last resort for an unexpected failure: a generic 500 if nothing was sent yet, else the
 * connection is dropped (never a half-written answer, never internals).
 *
 * @example
 * ```ts
 * core.handle(input, target).catch(() => failResponse(target));
 * ```
 */
export function failResponse(target: ResponseTarget): void {
  try {
    if (!target.headersSent) {
      writeJson(
        target,
        500,
        errorResponseJson(null, ErrorCode.InternalError, "Internal server error"),
      );
    } else if (!target.ended) {
      target.destroy();
    }
  } catch {
    target.destroy();
  }
}
