/**
 * Bounded request-body reading. A declared `Content-Length` over the limit is refused before a
 * byte is read; otherwise the limit is enforced while streaming (chunked bodies), so a hostile
 * client can never make the server buffer more than `limit` bytes (413 beyond).
 */
import type { IncomingMessage } from "node:http";

/** Returned instead of a body when the limit was exceeded. */
export const BODY_TOO_LARGE: unique symbol = Symbol("conduit-mcp.body-too-large");

/** Returned instead of a body when it did not arrive in time (a client trickling its body). */
export const BODY_TIMEOUT: unique symbol = Symbol("conduit-mcp.body-timeout");

/**
 * Whether the declared `Content-Length` already exceeds `limit` (checked before reading).
 *
 * @example
 * ```ts
 * if (declaredTooLarge(req.headers["content-length"], 1_048_576)) reply(413);
 * ```
 */
export function declaredTooLarge(contentLength: string | undefined, limit: number): boolean {
  if (contentLength === undefined) return false;
  const length = Number(contentLength);
  return !Number.isFinite(length) || length > limit;
}

/**
 * Reads the whole body, at most `limit` bytes. Resolves the bytes, or {@link BODY_TOO_LARGE} as
 * soon as the limit is crossed (reading stops there: the stream is paused, so node stops reading
 * the socket once its buffers fill), or {@link BODY_TIMEOUT} when the body is still incomplete
 * `timeoutMs` after reading began (a total deadline: a byte per 100 ms never resets it; 0 = none);
 * rejects when the client goes away.
 *
 * @example
 * ```ts
 * const body = await readBody(req, 1_048_576, 10_000);
 * if (body === BODY_TOO_LARGE) return reply(413);
 * if (body === BODY_TIMEOUT) return reply(408);
 * ```
 */
export function readBody(
  req: IncomingMessage,
  limit: number,
  timeoutMs = 0,
): Promise<Buffer | typeof BODY_TOO_LARGE | typeof BODY_TIMEOUT> {
  return new Promise((resolve, reject) => {
    // Gone already (e.g. while an async `verify` ran): its 'close' will not come again.
    if (req.destroyed) {
      reject(new Error("request closed before its body was read"));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let timer: NodeJS.Timeout | undefined;
    const cleanup = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      req.removeListener("data", onData);
      req.removeListener("end", onEnd);
      req.removeListener("error", onError);
      req.removeListener("close", onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        resolve(BODY_TOO_LARGE);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const onClose = (): void => {
      cleanup();
      reject(new Error("request closed before its body ended"));
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
    // A body that came with its headers is complete already (the parser ran before this
    // microtask): the common case arms no timer, which keeps the benchmarked path lean.
    if (timeoutMs > 0 && !req.complete) {
      timer = setTimeout(() => {
        cleanup();
        req.pause();
        resolve(BODY_TIMEOUT);
      }, timeoutMs);
      timer.unref();
    }
  });
}
