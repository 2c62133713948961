/**
 * One HTTP exchange of a request: the {@link ResponseSink} of the node:http transport.
 *
 * Lazy upgrade (the lead's decision for issue 3): the answer is one JSON body unless, while the
 * client accepts `text/event-stream`, the tool emits a notification related to the request; at
 * the first one the exchange becomes a request-scoped SSE stream (headers written then), carries
 * the notifications, then the response, then ends (mcp-protocol.md A.3). Every write is guarded:
 * once the exchange ended (answered, cancelled, client gone) nothing more is written. Keep-alive
 * comments run only while a stream is open and stop the instant it ends.
 */
import type { ServerResponse } from "node:http";

import type { HandleLifetime } from "../cancellation/types.js";

import type { ResponseSink, SinkListener } from "../protocol/index.js";
import type { ScopeLimiter } from "./scope-limiter.js";
import { writeJson } from "./write-response.js";

/** Records how an exchange ended (metrics). */
export type ExchangeRecorder = (method: string, status: number) => void;

/**
 * The per-scope counters an exchange holds a unit of while its request runs (issue 6).
 *
 * @example
 * ```ts
 * const limits: ExchangeLimits = { requests: new ScopeLimiter(64, 10_000), streams: new ScopeLimiter(32, 10_000) };
 * ```
 */
export interface ExchangeLimits {
  readonly requests: ScopeLimiter;
  readonly streams: ScopeLimiter;
}

const PENDING = 0;
const STREAMING = 1;
const DONE = 2;

const RESOLVED: Promise<void> = Promise.resolve();
const EXCHANGE = Symbol("conduit-mcp.exchange");
const KEEP_ALIVE = ": keepalive\n\n";
/** One shared reason: `abort()` without one would build a DOMException (and its stack) per request. */

type TaggedResponse = ServerResponse & { [EXCHANGE]?: HttpExchange };

/**
 * The node:http sink of one request.
 *
 * @example
 * ```ts
 * const exchange = new HttpExchange(res, true, true, 15_000, null, "tools/call");
 * await dispatcher.handleRequest(message, meta, exchange);
 * ```
 */
export class HttpExchange implements ResponseSink {
  readonly streamable: boolean;
  private readonly res: ServerResponse;
  private readonly jsonAccepted: boolean;
  private readonly keepAliveMs: number;
  private readonly recorder: ExchangeRecorder | null;
  private readonly method: string;
  private state = PENDING;
  private sessionId: string | null = null;
  private listener: SinkListener | null = null;
  private keepAlive: NodeJS.Timeout | undefined;
  /** What the request holds (see {@link hold}); null once given back. */
  private limits: ExchangeLimits | null = null;
  private heldScope = "";
  private heldStream = false;

  constructor(
    res: ServerResponse,
    jsonAccepted: boolean,
    sseAccepted: boolean,
    keepAliveMs: number,
    recorder: ExchangeRecorder | null,
    method: string,
  ) {
    this.res = res;
    this.jsonAccepted = jsonAccepted;
    this.streamable = sseAccepted;
    this.keepAliveMs = keepAliveMs;
    this.recorder = recorder;
    this.method = method;
    (res as TaggedResponse)[EXCHANGE] = this;
    // A module-level listener (its `this` is the response): no closure per exchange.
    res.once("close", onResponseClose);
    if (res.destroyed) this.closed();
  }

  get ended(): boolean {
    return this.state === DONE;
  }

  /** The exchange is its handle's lifetime: it has ended once the answer is done or the client left. */
  get lifetime(): HandleLifetime {
    return this;
  }

  /** Whether the exchange has ended (read by the registry's dead-handle sweep). */
  get aborted(): boolean {
    return this.state === DONE;
  }

  setSessionId(id: string): void {
    this.sessionId = id;
  }

  setListener(listener: SinkListener | null): void {
    this.listener = listener;
  }

  /**
   * Records that the request holds one request unit of `scope` in `limits` (and one stream unit
   * when `stream`), given back once by {@link released}.
   */
  hold(limits: ExchangeLimits, scope: string, stream: boolean): void {
    this.limits = limits;
    this.heldScope = scope;
    this.heldStream = stream;
  }

  /**
   * Gives back what {@link hold} recorded, exactly once: the endpoint calls it in `finally` when
   * the dispatch settles, and the protocol layer when it abandons a call whose handler never
   * settles. Every later call is a no-op.
   */
  released(): void {
    const limits = this.limits;
    if (limits === null) return;
    this.limits = null;
    limits.requests.release(this.heldScope);
    if (this.heldStream) limits.streams.release(this.heldScope);
  }

  notify(json: string): Promise<void> {
    if (this.state === DONE || !this.streamable) return RESOLVED;
    if (this.state === PENDING) this.openStream();
    if (this.res.write(`event: message\ndata: ${json}\n\n`)) return RESOLVED;
    return this.drained();
  }

  respond(json: string, status = 200, headers?: Readonly<Record<string, string>>): void {
    if (this.state === DONE) return;
    if (this.state === PENDING && (this.jsonAccepted || status !== 200)) {
      this.finish(status);
      writeJson(this.res, status, json, this.sessionId, headers);
      return;
    }
    // A client that accepts only event streams gets the answer as a one-event stream.
    if (this.state === PENDING) this.openStream();
    this.finish(200);
    this.res.end(`event: message\ndata: ${json}\n\n`);
  }

  cancel(json: string): void {
    if (this.state === DONE) return;
    if (this.state === STREAMING) {
      // A cancelled stream ends without a response (mcp-protocol.md E.3).
      this.finish(200);
      this.res.end();
      return;
    }
    this.respond(json);
  }

  /** The response closed: a disconnect unless the exchange had already ended. */
  closed(): void {
    if (this.state === DONE) return;
    const wasStreaming = this.state === STREAMING;
    this.finish(wasStreaming ? 200 : 499);
    this.listener?.onDisconnect();
  }

  /**
   * For calls that may run long (2026-07-28 `tools/call`): when the exchange is still waiting
   * `keepAliveMs` from now and the client accepts a stream, it becomes a stream and starts its
   * keep-alive comments (mcp-protocol.md B.3: encouraged on long streams), so proxies do not
   * reap a silent call. One unref'd timer, cleared when the exchange ends.
   */
  keepAliveWhilePending(): void {
    if (!this.streamable || this.state !== PENDING) return;
    if (this.keepAliveMs <= 0 || this.keepAliveMs === Number.POSITIVE_INFINITY) return;
    const timer = setTimeout(upgradeExchange, this.keepAliveMs, this);
    timer.unref();
    this.keepAlive = timer;
  }

  /** Opens the stream of a call still waiting, with a first keep-alive (timer callback). */
  upgrade(): void {
    if (this.state !== PENDING) return;
    this.openStream();
    this.res.write(KEEP_ALIVE);
  }

  /** Writes a keep-alive comment (timer callback). */
  ping(): void {
    if (this.state === STREAMING) this.res.write(KEEP_ALIVE);
  }

  private openStream(): void {
    const headers: Record<string, string> = {
      "content-type": "text/event-stream",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
      // Reverse proxies (nginx) must not buffer a request-scoped stream (mcp-protocol.md B.3).
      "x-accel-buffering": "no",
    };
    if (this.sessionId !== null) headers["mcp-session-id"] = this.sessionId;
    this.res.writeHead(200, headers);
    this.res.flushHeaders();
    this.state = STREAMING;
    if (this.keepAliveMs > 0 && this.keepAliveMs !== Number.POSITIVE_INFINITY) {
      const timer = setInterval(pingExchange, this.keepAliveMs, this);
      timer.unref();
      this.keepAlive = timer;
    }
  }

  private finish(status: number): void {
    this.state = DONE;
    if (this.keepAlive !== undefined) {
      clearInterval(this.keepAlive);
      this.keepAlive = undefined;
    }
    this.recorder?.(this.method, status);
  }

  private drained(): Promise<void> {
    const res = this.res;
    return new Promise((resolve) => {
      const done = (): void => {
        res.removeListener("drain", done);
        res.removeListener("close", done);
        resolve();
      };
      res.once("drain", done);
      res.once("close", done);
    });
  }
}

function onResponseClose(this: ServerResponse): void {
  (this as TaggedResponse)[EXCHANGE]?.closed();
}

function upgradeExchange(exchange: HttpExchange): void {
  exchange.upgrade();
}

function pingExchange(exchange: HttpExchange): void {
  exchange.ping();
}
