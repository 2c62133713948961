/**
 * The standalone SSE stream of each session: what a client opens with `GET` on the endpoint to
 * hear from the server outside any request (2025-11-25 basic/transports "Listening for Messages
 * from the Server",
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#listening-for-messages-from-the-server).
 * Carries server notifications only (never a response). One stream per session: a new GET for a
 * session replaces its stream (the old one ends), so a client that reconnects after a silent
 * network drop is not locked out. Keep-alive comments keep proxies from reaping an idle stream;
 * a client that does not read is cut once `maxBufferedBytes` wait for it; a hang-up frees all.
 */
import { KeepAliveClock } from "./keep-alive-clock.js";
import type { CloseSignal, ResponseTarget } from "./transport.js";

const KEEP_ALIVE = ": keepalive\n\n";

/** What {@link SessionStreams} is built from. */
export interface SessionStreamsOptions {
  /** Interval of keep-alive comments; 0 or Infinity = none. */
  readonly keepAliveMs: number;
  /** Most bytes a stream may have waiting for a slow client before it is cut. */
  readonly maxBufferedBytes: number;
}

class SessionStream {
  readonly target: ResponseTarget;
  timer: NodeJS.Timeout | undefined;
  /** Gives back what the stream holds (its scope's stream unit); called once. */
  onEnd: (() => void) | null;
  constructor(target: ResponseTarget, onEnd: (() => void) | null) {
    this.target = target;
    this.onEnd = onEnd;
  }
}

/**
 * The open standalone streams, by session id.
 *
 * @example
 * ```ts
 * const streams = new SessionStreams({ keepAliveMs: 15_000, maxBufferedBytes: 1_048_576 });
 * streams.open(sessionId, target, input.closed);
 * streams.send(sessionId, '{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a"}}');
 * ```
 */
export class SessionStreams {
  private readonly streams = new Map<string, SessionStream>();
  private readonly keepAliveMs: number;
  private readonly maxBufferedBytes: number;
  /**
   * One timer pinging every stream whose door shares timers (`ResponseTarget.sharedTimers`:
   * node:http); made with the first such stream. Other streams have a timer each.
   */
  private pings: KeepAliveClock<SessionStream> | null = null;

  constructor(options: SessionStreamsOptions) {
    this.keepAliveMs = options.keepAliveMs;
    this.maxBufferedBytes = options.maxBufferedBytes;
  }

  /** Open streams. */
  get size(): number {
    return this.streams.size;
  }

  /** Whether `sessionId` has an open stream. */
  has(sessionId: string): boolean {
    return this.streams.has(sessionId);
  }

  /**
   * Opens the stream of `sessionId` on `target` (headers written now), ending the session's
   * previous stream if any. It lasts until the client hangs up, {@link close}, or a cut;
   * `onEnd` is called once then (also at once when the client already left).
   */
  open(sessionId: string, target: ResponseTarget, closed: CloseSignal, onEnd?: () => void): void {
    this.close(sessionId);
    if (closed.closed) {
      onEnd?.();
      return;
    }
    const stream = new SessionStream(target, onEnd ?? null);
    target.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "mcp-session-id": sessionId,
      // Reverse proxies (nginx) must not buffer a long-lived stream.
      "x-accel-buffering": "no",
    });
    target.flushHeaders();
    this.streams.set(sessionId, stream);
    if (this.keepAliveMs > 0 && this.keepAliveMs !== Number.POSITIVE_INFINITY) {
      if (target.sharedTimers === true) {
        this.pings ??= new KeepAliveClock(this.keepAliveMs, true, ping);
        this.pings.add(stream);
      } else {
        stream.timer = setInterval(ping, this.keepAliveMs, stream);
        stream.timer.unref();
      }
    }
    closed.onClose(() => this.forget(sessionId, stream));
  }

  /** Sends one JSON-RPC message (JSON text) to the session's stream; false when none is open. */
  send(sessionId: string, json: string): boolean {
    const stream = this.streams.get(sessionId);
    if (stream === undefined) return false;
    if (stream.target.write(`event: message\ndata: ${json}\n\n`)) return true;
    if (stream.target.bufferedBytes > this.maxBufferedBytes) {
      // The client is not reading: the stream is cut rather than buffered without bound.
      this.forget(sessionId, stream);
      stream.target.destroy();
      return false;
    }
    return true;
  }

  /** Sends one JSON-RPC message to every open stream (a list changed); returns how many. */
  broadcast(json: string): number {
    let sent = 0;
    for (const sessionId of [...this.streams.keys()]) if (this.send(sessionId, json)) sent++;
    return sent;
  }

  /** Ends the session's stream (its session ended). */
  close(sessionId: string): void {
    const stream = this.streams.get(sessionId);
    if (stream === undefined) return;
    this.forget(sessionId, stream);
    if (!stream.target.ended) stream.target.end();
  }

  /** Ends every stream (shutdown). */
  closeAll(): void {
    for (const sessionId of [...this.streams.keys()]) this.close(sessionId);
  }

  private forget(sessionId: string, stream: SessionStream): void {
    if (stream.timer !== undefined) clearInterval(stream.timer);
    stream.timer = undefined;
    this.pings?.remove(stream);
    if (this.streams.get(sessionId) === stream) this.streams.delete(sessionId);
    const onEnd = stream.onEnd;
    stream.onEnd = null;
    onEnd?.();
  }
}

function ping(stream: SessionStream): void {
  // None while the client is behind: a comment would only add to its backlog.
  if (stream.target.bufferedBytes === 0) stream.target.write(KEEP_ALIVE);
}
