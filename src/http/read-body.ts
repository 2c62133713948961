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

const NO_BYTES = Buffer.alloc(0);

/**
 * The whole body without waiting, when node's parser has already handed all of it over and
 * nobody has read from the stream: one `read()` of what is buffered, no listeners, no promise.
 * A small body comes in the packet of its headers; the parser passes it on before it reports the
 * message complete, and a request's handler that resumes on a microtask runs in between, so a
 * body is whole when the message is complete or when the bytes buffered are its declared
 * `Content-Length` (the parser never passes more than that: RFC 9112 §6.3), `declaredLength`
 * here (the core reads it from its copy of the headers: core/context/steady-headers.ts). {@link BODY_TOO_LARGE}
 * when it exceeds `limit` (nothing is read then); undefined when the body is not all there yet
 * (then {@link readBody} waits for it). Node documents the fields read here:
 * https://nodejs.org/api/http.html#class-httpincomingmessage, https://nodejs.org/api/stream.html#readable-streams.
 *
 * @example
 * ```ts
 * const body =
 *   bufferedBody(req, 1_048_576, headers["content-length"]) ??
 *   (await readBody(req, 1_048_576, 10_000));
 * ```
 */
export function bufferedBody(
  req: IncomingMessage,
  limit: number,
  declaredLength: string | undefined,
): Buffer | typeof BODY_TOO_LARGE | undefined {
  if (req.destroyed || req.readableFlowing !== null || req.readableDidRead) return undefined;
  const length = req.readableLength;
  const complete = req.complete;
  if (!complete) {
    if (typeof declaredLength !== "string" || length === 0 || Number(declaredLength) !== length) {
      return undefined;
    }
  }
  if (length > limit) return BODY_TOO_LARGE;
  const body = req.read() as Buffer | null;
  // The end of the message is still to come: the stream flows on to it, so it ends (and is
  // released) as a stream read to its end does.
  if (!complete) req.resume();
  return body ?? NO_BYTES;
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
