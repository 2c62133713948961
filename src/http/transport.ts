/**
 * What the request core (endpoint.ts) needs from a transport, and nothing more: a small,
 * transport-neutral description of one HTTP request and of the way back. The node:http door
 * (node-door.ts) adapts `IncomingMessage`/`ServerResponse` to it; another door (a web-standard
 * `fetch` handler) adapts `Request`/`Response` the same way and shares every step of the core.
 */
import type { BODY_TIMEOUT, BODY_TOO_LARGE } from "./read-body.js";

/** Request headers, names in lower case (the shape of node's `IncomingHttpHeaders`). */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * A body a framework already read and parsed as JSON (Express's `express.json()`, Fastify's
 * content parser): the core uses the value as it is and never waits for the stream.
 */
export interface ParsedBody {
  readonly parsed: unknown;
}

/** What {@link BodySource.read} resolves. */
export type BodyOutcome = Buffer | ParsedBody | typeof BODY_TOO_LARGE | typeof BODY_TIMEOUT;

/** The request body, read only once the request passed every check that needs no body. */
export interface BodySource {
  /**
   * Reads the whole body, at most `limit` bytes, within `timeoutMs` of the start (0 = no limit):
   * the bytes, {@link BODY_TOO_LARGE} as soon as the limit is crossed, or {@link BODY_TIMEOUT}.
   * Rejects when the client went away. A client that sent `Expect: 100-continue` is told to
   * continue here, and only here.
   */
  read(limit: number, timeoutMs: number): Promise<BodyOutcome>;
  /**
   * The whole body at once, without waiting, when it has all arrived already and nobody read
   * from it (a small body comes in the packet of its headers), under the same `limit`; undefined
   * when it has not (then {@link read} waits for it). Optional: a door without it always waits.
   * `declaredLength` is the request's `Content-Length` as the core read it, if any.
   */
  readNow?(limit: number, declaredLength: string | undefined): BodyOutcome | undefined;
  /**
   * The answer goes out without the body being read (a refusal): a transport that would have
   * to read and discard it to keep the connection (HTTP/1.1) closes the connection instead.
   */
  skip(): void;
}

/**
 * A close listener that is an object with a method, not a closure: an exchange listens with
 * itself, so a running request holds no closure for it (docs/profile.md, "Heap per in-flight
 * call").
 */
export interface CloseListener {
  onClosed(): void;
}

/** Tells whether, and when, the way back to the client closed. */
export interface CloseSignal {
  /** True once the response's connection (or stream) closed, before or after the answer. */
  readonly closed: boolean;
  /**
   * Calls `listener` (or its `onClosed`) once when it closes — at once (synchronously) when it
   * already has, so a listener attached late never misses a close.
   */
  onClose(listener: (() => void) | CloseListener): void;
}

/**
 * Tells one close listener that the way back closed.
 *
 * @example
 * ```ts
 * for (const listener of listeners) notifyClosed(listener);
 * ```
 */
export function notifyClosed(listener: (() => void) | CloseListener): void {
  if (typeof listener === "function") listener();
  else listener.onClosed();
}

/** One request as the core sees it. */
export interface RequestInput {
  /** The HTTP method, upper case. */
  readonly method: string;
  /** The request target without its query string. */
  readonly path: string;
  readonly headers: RequestHeaders;
  /**
   * Every header with each of its values apart (a repeated header is not joined), names in lower
   * case: node's `headersDistinct`, a `Headers` object's entries.
   */
  readonly headersDistinct: Readonly<Record<string, readonly string[] | undefined>>;
  /** The peer's address as the socket reports it (before any `X-Forwarded-For`). */
  readonly remoteAddress: string | undefined;
  /**
   * The scope of a request with neither principal nor session when the door knows no client
   * address (a fetch handler called without `clientAddress`): a fresh one per request, so that
   * unrelated clients never share a scope. Unset: the client's IP bucket, as usual.
   */
  readonly fallbackScope?: string | undefined;
  /**
   * True when the host's router already chose this request for the MCP endpoint (a framework
   * route such as `app.all("/api/mcp", …)`): its path is not matched against `path`, and
   * `/health` and `/metrics` are not served on it.
   */
  readonly endpoint?: boolean;
  readonly body: BodySource;
  /** The response's way back closing: a client hang-up before the answer is a disconnect. */
  readonly closed: CloseSignal;
  /**
   * An object that lives as long as the connection (node: the socket), for facts the core
   * caches per connection; null when the transport has none.
   */
  readonly connection: object | null;
  /**
   * The transport's own request object (node: the `IncomingMessage`), handed to hooks written
   * for that transport (auth's `verify`).
   */
  readonly native: unknown;
}

/** Headers of an answer. */
export type ResponseHeaders = Readonly<Record<string, string | number>>;

/**
 * The way back to the client: a whole answer, or a stream written in parts. Every method is
 * called at most in this order: `writeHead` (once), `write`/`flushHeaders` (a stream), `end`.
 */
export interface ResponseTarget {
  /** Whether the status line and headers went out (or were committed). */
  readonly headersSent: boolean;
  /** Whether `end` was called. */
  readonly ended: boolean;
  /** Sets the status and headers. */
  writeHead(status: number, headers: ResponseHeaders): void;
  /**
   * Optional: sets the status and exactly the headers of a JSON answer without extra headers
   * (write-response.ts `jsonHeaderList`, with `contentLength`), as `writeHead` would with them as
   * an object; a door that can hand them to its runtime without building that object per answer
   * (node: one flat array, reused) implements it.
   */
  writeJsonHead?(status: number, contentLength: number): void;
  /** Sends the headers now (a stream opened before its first event). */
  flushHeaders(): void;
  /** Writes part of the body; false when the client is not keeping up (the part is buffered). */
  write(chunk: string): boolean;
  /** Bytes written and still buffered because the client has not taken them. */
  readonly bufferedBytes: number;
  /** Ends the answer, with a last part. */
  end(chunk?: string): void;
  /** Calls `listener` once when the buffered bytes were taken (or the client went away). */
  onDrain(listener: () => void): void;
  /** The connection ends after this answer (HTTP/1.1 `Connection: close`). */
  closeAfterAnswer(): void;
  /** Drops the connection at once (a stream cut, a broken answer). */
  destroy(): void;
  /**
   * True when a timer any request armed may serve this answer too (node:http, where timers are
   * the process's): its keep-alives then wait on one clock shared by every stream of the process
   * (keep-alive-clock.ts) instead of a timer each. Unset on fetch doors: on Cloudflare's workerd
   * a timer belongs to the request that armed it and never reaches another request's stream.
   */
  readonly sharedTimers?: boolean;
  /**
   * False when the door learns that the answer is complete from the answer itself (node:http:
   * the `ServerResponse` finishes or closes), not from {@link RequestCore.handle}'s promise. That
   * promise may then settle as soon as a call runs on the exchange, so the core keeps no promise,
   * reaction or closure per running call (docs/profile.md, "Held calls at 10 000"). Unset
   * (the fetch doors, which settle their `Response` when that promise settles): it settles once
   * the answer is complete.
   */
  readonly awaitsAnswer?: boolean;
}
