/**
 * One request's {@link ResponseSink} on the stdio transport. All of a connection's messages share
 * its stdout, one per line: notifications related to the request (progress, log messages) and
 * then its response (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio,
 * "Receiving Messages"). There is no per-request stream to open or close, so the exchange is
 * always `streamable`, and its end is only a state: nothing is written for it afterwards.
 *
 * A request the client cancelled gets no further message at all, not even an error: the client
 * "MUST NOT send any further messages for it" rule of
 * https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio ("Cancellation")
 * and the 2025-11-25 "SHOULD NOT send a response for the cancelled request". A request cancelled
 * by the server (shutdown) is still answered (the error the dispatcher gives), since its client is waiting for it.
 */
import type { HandleLifetime, RequestId } from "../cancellation/types.js";
import type { ResponseSink, SinkListener } from "../protocol/index.js";

/** What an exchange needs from its connection. */
export interface StdioExchangeHost {
  /** Writes one message line; resolves once it is written or dropped. Never rejects. */
  write(json: string): Promise<void>;
  /** The exchange ended (answered or cancelled): the request is no longer cancellable. */
  finished(exchange: StdioExchange): void;
  /** The request gives back its concurrency unit (called once). */
  released(exchange: StdioExchange): void;
  /** The call's listener is attached: a cancel that arrived before it can be carried out now. */
  attached(exchange: StdioExchange): void;
}

const RESOLVED: Promise<void> = Promise.resolve();

/**
 * The stdio sink of one request.
 *
 * @example
 * ```ts
 * const exchange = new StdioExchange(host, message.id);
 * await dispatcher.handleRequest(message, meta, exchange);
 * ```
 */
export class StdioExchange implements ResponseSink, HandleLifetime {
  readonly streamable = true;
  /** The client's id, as sent (null: a request that cannot be cancelled). */
  readonly requestId: RequestId | null;
  private readonly host: StdioExchangeHost;
  private done = false;
  private silenced = false;
  private holding = true;
  private listener: SinkListener | null = null;

  /** A 2026-07-28 request (tracked out of reach of the registry's notification path). */
  readonly modern: boolean;

  constructor(host: StdioExchangeHost, requestId: RequestId | null, modern = false) {
    this.host = host;
    this.requestId = requestId;
    this.modern = modern;
  }

  get ended(): boolean {
    return this.done;
  }

  /** The exchange is the lifetime of its handle: dead for the janitor's sweep once ended. */
  get lifetime(): HandleLifetime {
    return this;
  }

  /** Read by the registry's dead-handle sweep. */
  get aborted(): boolean {
    return this.done;
  }

  /** Whether a tool call's listener is attached (its handle is tracked and it runs). */
  get running(): boolean {
    return this.listener !== null;
  }

  /** The client cancelled this request: nothing more is written for it. */
  silence(): void {
    this.silenced = true;
  }

  notify(json: string): Promise<void> {
    if (this.done || this.silenced) return RESOLVED;
    return this.host.write(json);
  }

  respond(json: string): void {
    if (this.done) return;
    this.end();
    if (!this.silenced) void this.host.write(json);
  }

  cancel(json: string): void {
    this.respond(json);
  }

  /** Sessions are an HTTP concept (`Mcp-Session-Id`): nothing to attach on stdio. */
  setSessionId(): void {}

  setListener(listener: SinkListener | null): void {
    this.listener = listener;
    if (listener !== null && !this.done) this.host.attached(this);
  }

  /**
   * Gives back the request's concurrency unit: when the dispatch settles, or earlier when the
   * protocol layer abandons a cancelled handler (ResponseSink.releaseSlots). Idempotent.
   */
  releaseSlots(): void {
    if (!this.holding) return;
    this.holding = false;
    this.host.released(this);
  }

  private end(): void {
    this.done = true;
    this.listener = null;
    this.host.finished(this);
  }
}
