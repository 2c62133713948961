/**
 * Writing whole responses with the security headers every answer carries (conduit-behavior.md
 * §6.1: `nosniff`, `DENY`, `no-store`), in one `writeHead` so the headers are built once.
 */
import type { ServerResponse } from "node:http";

import { ErrorCode } from "../errors.js";
import { errorResponseJson } from "../protocol/index.js";

/**
 * Writes a complete JSON response, with the session id header and `extra` headers when given.
 *
 * @example
 * ```ts
 * writeJson(res, 200, '{"status":"ok"}');
 * ```
 */
export function writeJson(
  res: ServerResponse,
  status: number,
  json: string,
  sessionId: string | null = null,
  extra?: Readonly<Record<string, string>>,
): void {
  // Extra headers first, so none of them can replace the type, length or security headers.
  const headers: Record<string, string | number> = {
    ...extra,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(json),
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
  };
  if (sessionId !== null) headers["mcp-session-id"] = sessionId;
  res.writeHead(status, headers);
  res.end(json);
}

/**
 * Writes an empty response (202 for an accepted notification, 204 for DELETE).
 *
 * @example
 * ```ts
 * writeEmpty(res, 202);
 * ```
 */
export function writeEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status, {
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
  });
  res.end();
}

/**
 * Last resort for an unexpected failure: a generic 500 if nothing was sent yet, else the
 * connection is destroyed (never a half-written answer, never internals).
 *
 * @example
 * ```ts
 * handle(req, res).catch(() => failResponse(res));
 * ```
 */
export function failResponse(res: ServerResponse): void {
  try {
    if (!res.headersSent) {
      writeJson(
        res,
        500,
        errorResponseJson(null, ErrorCode.InternalError, "Internal server error"),
      );
    } else if (!res.writableEnded) {
      res.destroy();
    }
  } catch {
    res.destroy();
  }
}
