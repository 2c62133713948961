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
  const length = BUFFER.byteLength(json);
  if (extra === undefined && target.writeJsonHead !== undefined) {
    // The same headers, without an object built per answer (most answers: a call's result).
    target.writeJsonHead(status, length);
  } else {
    const own = jsonHeaders(length);
    // Extra headers first, so none of them can replace the type, length or security headers.
    target.writeHead(status, extra === undefined ? own : { ...extra, ...own });
  }
  target.end(json);
}

/**
 * `Buffer`, read once: the global is an accessor on Node.js (a getter call at every use in a
 * request's path).
 */
const BUFFER = Buffer;

/**
 * The headers of every JSON answer as a flat `[name, value, …]` list, in the order of
 * {@link jsonHeaders}, its `content-length` value at {@link JSON_LENGTH_AT} to be set by its
 * writer: the form node's `writeHead` takes without iterating an object
 * (https://nodejs.org/api/http.html#responsewriteheadstatuscode-statusmessage-headers).
 *
 * @example
 * ```ts
 * const head = jsonHeaderList();
 * head[JSON_LENGTH_AT] = 42;
 * res.writeHead(200, head);
 * ```
 */
export function jsonHeaderList(): Array<string | number> {
  const list: Array<string | number> = [];
  for (const [name, value] of Object.entries(jsonHeaders(0))) list.push(name, value);
  return list;
}

/** Where {@link jsonHeaderList} holds the `content-length` value (found, not assumed). */
export const JSON_LENGTH_AT = jsonHeaderList().indexOf("content-length") + 1;

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
