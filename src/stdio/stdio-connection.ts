/**
 * One stdio connection: newline-delimited JSON-RPC read from a Readable (stdin) and written to a
 * Writable (stdout), through the same dispatcher, registry and per-scope bounds as the HTTP door
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio and
 * https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio).
 *
 * The scope. A stdio server is a subprocess of exactly one client, which alone holds its stdin,
 * so every request of the connection belongs to that client: one fixed scope,
 * `stdio:<random UUID>`, is its whole tenancy. Random rather than the pid, so that two processes
 * sharing a Redis registry on different hosts never share rows or quota. Nothing a message says
 * can change it (there is no auth on stdio; the spec leaves credentials to the environment).
 *
 * Cancellation. `notifications/cancelled` is the only way a stdio client cancels, in both eras
 * (2026-07-28 basic/patterns/cancellation, "Transport-Specific Cancellation"): it goes through the
 * dispatcher's notification path under the connection's scope, exactly as on HTTP, and the
 * request then gets no further message. The end of the input is the end of the connection: every
 * request still running is cancelled at once (source `disconnect`), whatever
 * `cancelOnDisconnect` says, since no answer can be read any more.
 */
import { randomUUID } from "node:crypto";
import type { Readable, Writable } from "node:stream";
import type { CancellationRegistry } from "../cancellation/index.js";
import { normalizeRequestId } from "../cancellation/index.js";
import { ErrorCode } from "../errors.js";
import {
  ACQUIRED,
  askableCapabilities,
  capabilitiesOf,
  checkModernRequest,
  classifyMessage,
  type Dispatcher,
  errorResponseJson,
  inlineModernHeaders,
  isLoggingLevel,
  isPlainObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type LoggingLevel,
  type ModernRequestInfo,
  modernClaim,
  type RequestMeta,
  type ScopeLimiter,
} from "../protocol/index.js";
import { LineSplitter } from "./line-splitter.js";
import { StdioExchange, type StdioExchangeHost } from "./stdio-exchange.js";

/**
 * What a connection needs from the server it serves: the server's own dispatcher, registry and
 * bounds, so that stdio requests count against the same limits as HTTP ones. The server hands it
 * over (see src/server/transport-core.ts); this layer only declares it.
 */
export interface TransportCore {
  readonly dispatcher: Dispatcher;
  readonly registry: CancellationRegistry;
  /** Running requests per scope (and in all): the same bound every door counts against. */
  readonly requests: ScopeLimiter;
  /** The largest message accepted (`maxBodyBytes`). */
  readonly maxMessageBytes: number;
  /** True once `close()` began: new requests are refused. */
  closing(): boolean;
}

const PARSE_ERROR = errorResponseJson(null, ErrorCode.ParseError, "Parse error");
const TOO_LARGE = errorResponseJson(null, ErrorCode.InvalidRequest, "Message too large");
const INVALID_REQUEST = "Invalid JSON-RPC 2.0 request";
const SHUTTING_DOWN = "Server is shutting down";
const TOO_MANY = "Too many concurrent requests";
const INPUT_CLOSED = "input closed";
const RESOLVED: Promise<void> = Promise.resolve();

/**
 * A running stdio connection.
 *
 * @example
 * ```ts
 * const connection = new StdioConnection(transportCore(server), process.stdin, process.stdout);
 * await connection.closed;
 * ```
 */
export class StdioConnection implements StdioExchangeHost {
  /** The one scope of every request on this connection. */
  readonly scope = `stdio:${randomUUID()}`;
  /** Resolves once the connection ended (input closed, output failed, or {@link close}). */
  readonly closed: Promise<void>;
  private readonly core: TransportCore;
  private readonly input: Readable;
  private readonly output: Writable;
  private readonly splitter: LineSplitter;
  /** Requests not yet answered: the ones a `notifications/cancelled` can still reach. */
  private readonly open = new Set<StdioExchange>();
  /** Cancels that arrived before their call's handle was tracked, carried out once it is. */
  private readonly deferred = new Map<StdioExchange, () => void>();
  /** Set by `logging/setLevel`: the connection is the client's session for log levels. */
  private logLevel: LoggingLevel | null = null;
  /** What the client's `initialize` declared it can be asked; null before it. */
  private clientCapabilities: Readonly<Record<string, unknown>> | null = null;
  private ended = false;
  private outputFailed = false;
  private drain: Promise<void> | null = null;
  private resolveClosed!: () => void;

  constructor(core: TransportCore, input: Readable, output: Writable) {
    this.core = core;
    this.input = input;
    this.output = output;
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    this.splitter = new LineSplitter(core.maxMessageBytes, {
      line: (text) => this.receive(text),
      oversized: () => void this.write(TOO_LARGE),
    });
    input.on("data", this.onData);
    input.once("end", this.onInputEnd);
    input.once("close", this.onInputEnd);
    input.once("error", this.onInputEnd);
    output.on("error", this.onOutputError);
  }

  /** Stops reading and cancels every request of the connection. Idempotent. */
  close(): Promise<void> {
    this.end();
    return this.closed;
  }

  /** @internal StdioExchangeHost: one message line, with the output's backpressure. */
  write(json: string): Promise<void> {
    if (this.outputFailed) return RESOLVED;
    if (this.output.write(`${json}\n`)) return RESOLVED;
    // The reader is slow: stop reading requests until it catches up, so neither our output
    // buffer nor the work queued behind it grows without bound.
    this.input.pause();
    this.drain ??= new Promise<void>((resolve) => {
      const done = (): void => {
        this.output.removeListener("drain", done);
        this.output.removeListener("close", done);
        this.drain = null;
        if (!this.ended) this.input.resume();
        resolve();
      };
      this.output.once("drain", done);
      this.output.once("close", done);
    });
    return this.drain;
  }

  /** @internal StdioExchangeHost. */
  finished(exchange: StdioExchange): void {
    this.open.delete(exchange);
    this.deferred.delete(exchange);
  }

  /** @internal StdioExchangeHost. */
  released(): void {
    this.core.requests.release(this.scope);
  }

  /** @internal StdioExchangeHost: the call's handle is tracked now. */
  attached(exchange: StdioExchange): void {
    const cancel = this.deferred.get(exchange);
    if (cancel === undefined) return;
    this.deferred.delete(exchange);
    cancel();
  }

  private readonly onData = (chunk: Buffer | string): void => {
    this.splitter.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk);
  };

  private readonly onInputEnd = (): void => {
    if (!this.ended) this.splitter.end();
    this.end();
  };

  private readonly onOutputError = (): void => {
    // EPIPE and the like: nobody reads our answers any more; the connection is over.
    this.outputFailed = true;
    this.end();
  };

  private receive(text: string): void {
    if (this.ended || text.trim() === "") return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      void this.write(PARSE_ERROR);
      return;
    }
    const classified = classifyMessage(parsed);
    switch (classified.kind) {
      case "invalid":
        void this.write(
          errorResponseJson(classified.id, ErrorCode.InvalidRequest, INVALID_REQUEST),
        );
        return;
      case "response":
        // An answer to one of our requests (elicitation, sampling, roots): this connection's scope.
        void this.core.dispatcher.handleResponse(classified.message, this.scope);
        return;
      case "notification":
        this.notification(classified.message);
        return;
      default:
        this.request(classified.message);
    }
  }

  private request(message: JsonRpcRequest): void {
    const { core, scope } = this;
    if (core.closing()) {
      void this.write(errorResponseJson(message.id, ErrorCode.InternalError, SHUTTING_DOWN));
      return;
    }
    const modern = modernClaim(message.params) !== undefined;
    const checked = modern ? checkModernRequest(message, inlineModernHeaders(message)) : null;
    if (checked !== null && !checked.ok) {
      void this.write(checked.json);
      return;
    }
    // No paramHeaders: there are no headers to check against the tool's `x-mcp-header` ones.
    const envelope: ModernRequestInfo | null =
      checked === null ? null : { clientCapabilities: checked.clientCapabilities };
    // The same per-scope (then global) bound as every other door; notifications are never
    // refused by it, so a client at its bound can still cancel.
    if (core.requests.tryAcquire(scope) !== ACQUIRED) {
      void this.write(errorResponseJson(message.id, ErrorCode.ServerError, TOO_MANY));
      return;
    }
    const exchange = new StdioExchange(this, message.id, envelope !== null);
    this.open.add(exchange);
    const meta: RequestMeta = {
      scope,
      principal: null,
      sessionId: null,
      logLevel: checked === null ? this.logLevel : checked.logLevel,
      clientCapabilities: this.clientCapabilities,
    };
    if (envelope === null && message.method === "initialize") this.rememberCapabilities(message);
    void this.dispatch(message, meta, exchange, envelope);
  }

  /** Runs one admitted request; never rejects (neither does the dispatcher). */
  private async dispatch(
    message: JsonRpcRequest,
    meta: RequestMeta,
    exchange: StdioExchange,
    envelope: ModernRequestInfo | null,
  ): Promise<void> {
    const { dispatcher } = this.core;
    try {
      if (envelope === null) await dispatcher.handleRequest(message, meta, exchange);
      else await dispatcher.handleModernRequest(message, meta, exchange, envelope);
    } finally {
      exchange.releaseSlots();
    }
    if (envelope === null && message.method === "logging/setLevel") this.rememberLevel(message);
  }

  /** The connection is the client's session: what its `initialize` declared is remembered. */
  private rememberCapabilities(message: JsonRpcRequest): void {
    const params = isPlainObject(message.params) ? message.params : undefined;
    this.clientCapabilities = capabilitiesOf(
      askableCapabilities(params?.capabilities, this.core.dispatcher.extensionIds),
    );
  }

  /** After an accepted `logging/setLevel`, later requests of the connection use that level. */
  private rememberLevel(message: JsonRpcRequest): void {
    const level = isPlainObject(message.params) ? message.params.level : undefined;
    if (isLoggingLevel(level)) this.logLevel = level;
  }

  private notification(message: JsonRpcNotification): void {
    if (message.method !== "notifications/cancelled") return;
    const params = isPlainObject(message.params) ? message.params : undefined;
    const key = normalizeRequestId(params?.requestId);
    if (key === undefined || key === null) return; // malformed: ignored, as the spec asks
    for (const exchange of this.open) {
      if (normalizeRequestId(exchange.requestId) !== key) continue;
      exchange.silence();
      const cancel = exchange.modern
        ? (): void => {
            // A 2026-07-28 request is tracked out of reach of notification-sourced cancels (on
            // HTTP that era cancels by closing its stream). On stdio the notification is that
            // era's only cancel, so it is carried out as the stream close it stands for.
            const id = exchange.requestId;
            if (id === null) return;
            this.core.registry.cancel(id, params?.reason, this.scope, "disconnect").catch(() => {});
          }
        : (): void => {
            // The dispatcher's own notification path: in-flight check in this scope, row, abort.
            this.core.dispatcher.handleNotification(message, this.scope).catch(() => {});
          };
      if (exchange.running) cancel();
      else this.deferred.set(exchange, cancel);
    }
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.input.removeListener("data", this.onData);
    this.input.pause();
    for (const exchange of [...this.open]) {
      exchange.silence();
      const cancel = (): void => {
        const id = exchange.requestId;
        if (id === null) return;
        this.core.registry.cancel(id, INPUT_CLOSED, this.scope, "disconnect").catch(() => {});
      };
      if (exchange.running) cancel();
      else this.deferred.set(exchange, cancel);
    }
    this.resolveClosed();
  }
}
