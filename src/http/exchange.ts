/**
 * One HTTP exchange of a request: the {@link ResponseSink} of the HTTP transports, over the
 * transport-neutral {@link ResponseTarget} and {@link CloseSignal} (transport.ts).
 *
 * Lazy upgrade: the answer is one JSON body unless, while the client accepts
 * `text/event-stream`, the tool emits a notification related to the request; at the first one
 * the exchange becomes a request-scoped SSE stream (headers written then), carries the
 * notifications, then the response, then ends
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server).
 * Every write is guarded: once the exchange ended (answered, cancelled, client gone) nothing
 * more is written. Keep-alive comments run only while a stream is open.
 *
 * A hang-up is never lost: the exchange remembers that its client went away (even before it was
 * created, or before a listener was attached) and tells a listener attached later at once. A
 * client that does not read its stream is cut off once `maxBufferedBytes` wait for it.
 */
import type { HandleLifetime } from "../cancellation/types.js";
import type { TrustProxy } from "../identity/index.js";
import type { ScopeLimiter } from "../protocol/asking/index.js";
import type {
  RequestView,
  RequestViewSource,
  ResponseSink,
  SinkListener,
} from "../protocol/index.js";
import { buildRequestView } from "./core/context/request-view.js";
import { KeepAliveClock, sharedClock } from "./keep-alive-clock.js";
import type {
  CloseListener,
  CloseSignal,
  RequestInput,
  ResponseHeaders,
  ResponseTarget,
} from "./transport.js";
import { writeJson } from "./write-response.js";

/**
 * Records how an exchange ended (metrics): its method label, its HTTP status, and when its
 * request arrived (`performance.now()`), for the request duration.
 */
export type ExchangeRecorder = (method: string, status: number, startedAt: number) => void;

/**
 * The per-scope counters an exchange holds units of while its request runs.
 *
 * @example
 * ```ts
 * const limits: ExchangeLimits = {
 *   requests: new ScopeLimiter(64, 10_000),
 *   sessionRequests: new ScopeLimiter(64, Number.POSITIVE_INFINITY),
 *   streams: new ScopeLimiter(32, Number.POSITIVE_INFINITY),
 * };
 * ```
 */
export interface ExchangeLimits {
  /** Requests per scope they come from (principal or IP bucket), and in all. */
  readonly requests: ScopeLimiter;
  /** Requests per session (each also holds a unit of `requests`, which bounds the total). */
  readonly sessionRequests: ScopeLimiter;
  /** Request-scoped SSE streams per scope. */
  readonly streams: ScopeLimiter;
}

/** What a request holds while it runs (see {@link HttpExchange.hold}). */
export interface HeldUnits {
  /** A request unit of the scope the request comes from (its principal or address). */
  readonly origin: string;
  /** A request unit of its session's scope too, or null. */
  readonly session: string | null;
  /** A stream unit of this scope, or null. */
  readonly stream: string | null;
}

/** What a handler's `ctx.request` shows of a request (the server's options). */
export interface RequestViewOptions {
  /** Header names (lower case) the view shows (`requestHeaders`); unset: none. */
  readonly requestHeaders?: readonly string[];
  readonly trustProxy: TrustProxy;
}

/**
 * What every exchange of one server shares: the server's options, in one object all its
 * exchanges point to rather than copied into each (a running call holds its exchange).
 */
export interface ExchangeSettings {
  /** Interval of keep-alive comments on an open stream; 0 = none. */
  readonly keepAliveMs: number;
  /** Most bytes a stream may have waiting for a slow client before it is cut. */
  readonly maxBufferedBytes: number;
  readonly recorder: ExchangeRecorder | null;
  /** What `ctx.request` shows of a request; unset: the view is null. */
  readonly view?: RequestViewOptions | undefined;
}

/** What {@link HttpExchange} is built from. */
export interface HttpExchangeOptions {
  readonly target: ResponseTarget;
  readonly closed: CloseSignal;
  /** The client accepts `application/json`. */
  readonly jsonAccepted: boolean;
  /** The client accepts `text/event-stream` (and may get a stream). */
  readonly sseAccepted: boolean;
  /** The server's, shared by its exchanges. */
  readonly settings: ExchangeSettings;
  /** The request's method, as the metrics label it. */
  readonly method: string;
  /**
   * When the request arrived (`performance.now()`). Default: when the exchange was made (read
   * only with a recorder).
   */
  readonly startedAt?: number;
  /**
   * The request, for `ctx.request` (the exchange is the call's {@link RequestViewSource}); unset:
   * the view is null.
   */
  readonly input?: RequestInput;
}

// The exchange's state and its flags, in one small integer (a field each cost 8 bytes per
// running call: docs/profile.md, "Held calls at 10 000").
const PENDING = 0;
const STREAMING = 1;
const DONE = 2;
const STATE = 3;
/** The client accepts `application/json`. */
const JSON_ACCEPTED = 4;
/** The client accepts `text/event-stream` (ResponseSink.streamable). */
const STREAMABLE = 8;
/** A handler call gives the slots back itself ({@link HttpExchange.callReleasesSlots}). */
const RELEASED_BY_CALL = 16;
/** The client went away before the exchange ended (remembered for a late listener). */
const DISCONNECTED = 32;

/** Status recorded for a client that went away before its answer (nginx's convention). */
const CLIENT_GONE = 499;
const RESOLVED: Promise<void> = Promise.resolve();
const KEEP_ALIVE = ": keepalive\n\n";
const NO_HEADERS: readonly string[] = Object.freeze([]);

/**
 * The HTTP sink of one request.
 *
 * @example
 * ```ts
 * const settings = { keepAliveMs: 15_000, maxBufferedBytes: 1_048_576, recorder: null };
 * const exchange = new HttpExchange({ target, closed: input.closed, jsonAccepted: true,
 *   sseAccepted: true, settings,
 *   method: "tools/call" });
 * await dispatcher.handleRequest(message, meta, exchange);
 * ```
 */
export class HttpExchange
  implements ResponseSink, HandleLifetime, CloseListener, RequestViewSource
{
  private readonly target: ResponseTarget;
  private readonly settings: ExchangeSettings;
  private readonly method: string;
  private readonly startedAt: number;
  /**
   * What `ctx.request` is made from, when a handler asks ({@link requestView}): kept here rather
   * than the request core's whole context, which a running call then no longer holds.
   */
  private readonly input: RequestInput | null;
  /** The state (`STATE` bits) and the flags above. */
  private bits: number;
  private sessionId: string | null = null;
  private listener: SinkListener | null = null;
  /**
   * The keep-alive wait (upgrade while pending, pings once a stream): a timer of its own, or its
   * place in the process's shared clock when the door allows one (`ResponseTarget.sharedTimers`).
   */
  private keepAlive: NodeJS.Timeout | KeepAliveClock<HttpExchange> | undefined;
  /** What the request holds (see {@link hold}); `limits` null once given back. */
  private limits: ExchangeLimits | null = null;
  private origin = "";
  private sessionUnit: string | null = null;
  private streamUnit: string | null = null;
  /** One waiter for a drain, shared by every backpressured write; null when none waits. */
  private drain: DrainWait | null = null;

  constructor(options: HttpExchangeOptions) {
    this.target = options.target;
    this.settings = options.settings;
    this.method = options.method;
    this.startedAt =
      options.startedAt ?? (options.settings.recorder === null ? 0 : performance.now());
    this.input = options.input ?? null;
    this.bits =
      PENDING | (options.jsonAccepted ? JSON_ACCEPTED : 0) | (options.sseAccepted ? STREAMABLE : 0);
    // Told at once when the client already left (during auth, the body, a session lookup).
    // The exchange itself is the listener (onClosed): no closure per request.
    options.closed.onClose(this);
  }

  /** The client accepts `text/event-stream`: notifications may go out on a stream. */
  get streamable(): boolean {
    return (this.bits & STREAMABLE) !== 0;
  }

  /**
   * A handler call runs on this exchange and gives its slots back itself when it ends
   * ({@link callReleasesSlots}): the core does not chain on the dispatch for it.
   */
  get releasedByCall(): boolean {
    return (this.bits & RELEASED_BY_CALL) !== 0;
  }

  private get state(): number {
    return this.bits & STATE;
  }

  private set state(state: number) {
    this.bits = (this.bits & ~STATE) | state;
  }

  /** As a {@link CloseListener}: the way back closed (a disconnect unless the exchange ended). */
  onClosed(): void {
    this.clientGone();
  }

  /** As a {@link RequestViewSource}: `ctx.request` of the call answered here (request-view.ts). */
  requestView(): RequestView {
    const input = this.input;
    const options = this.settings.view;
    if (input === null || options === undefined) throw new Error("an exchange without its request");
    return buildRequestView(input, options.requestHeaders ?? NO_HEADERS, options.trustProxy);
  }

  /** True once the exchange ended (answered, cancelled, or the client went away). */
  get ended(): boolean {
    return this.state === DONE;
  }

  /**
   * The handle's lifetime (see {@link ResponseSink.lifetime}): the exchange itself, whose
   * `aborted` is {@link ended} (no object of its own held per running call).
   */
  get lifetime(): HandleLifetime {
    return this;
  }

  /** As a {@link HandleLifetime}: true once the answer is done or the client left. */
  get aborted(): boolean {
    return this.state === DONE;
  }

  setSessionId(id: string): void {
    this.sessionId = id;
  }

  /**
   * Attaches the listener of the call in flight. When the client already went away, it is told
   * at once: a hang-up at any moment before the answer reaches the call.
   */
  setListener(listener: SinkListener | null): void {
    this.listener = listener;
    if (listener !== null && (this.bits & DISCONNECTED) !== 0) listener.onDisconnect();
  }

  /**
   * Records the units the request holds in `limits`, given back once by {@link releaseSlots}.
   */
  hold(limits: ExchangeLimits, units: HeldUnits): void {
    // Copied into fields: the units object is not kept for as long as the request runs.
    this.limits = limits;
    this.origin = units.origin;
    this.sessionUnit = units.session;
    this.streamUnit = units.stream;
  }

  /**
   * Gives back what {@link hold} recorded, exactly once: the core calls it when the dispatch
   * settles, and the protocol layer when it abandons a call whose handler never settles.
   */
  /** As a {@link ResponseSink}: the call running here gives the slots back when it ends. */
  callReleasesSlots(): void {
    this.bits |= RELEASED_BY_CALL;
  }

  /** Whether the door waits on the core's promise for this answer's end (transport.ts). */
  get awaitsAnswer(): boolean {
    return this.target.awaitsAnswer !== false;
  }

  releaseSlots(): void {
    const limits = this.limits;
    if (limits === null) return;
    this.limits = null;
    limits.requests.release(this.origin, this.target);
    if (this.sessionUnit !== null) limits.sessionRequests.release(this.sessionUnit);
    if (this.streamUnit !== null) limits.streams.release(this.streamUnit);
  }

  notify(json: string): Promise<void> {
    if (this.state === DONE || !this.streamable) return RESOLVED;
    if (this.state === PENDING) this.openStream();
    if (this.target.write(`event: message\ndata: ${json}\n\n`)) return RESOLVED;
    if (this.target.bufferedBytes > this.settings.maxBufferedBytes) {
      // The client is not reading: the stream is cut rather than buffered without bound.
      this.cut();
      return RESOLVED;
    }
    return this.drained();
  }

  respond(json: string, status = 200, headers?: ResponseHeaders): void {
    if (this.state === DONE) return;
    if (this.state === PENDING && ((this.bits & JSON_ACCEPTED) !== 0 || status !== 200)) {
      this.finish(status);
      const extra =
        this.sessionId === null ? headers : { ...headers, "mcp-session-id": this.sessionId };
      writeJson(this.target, status, json, extra);
      return;
    }
    // A client that accepts only event streams gets the answer as a one-event stream.
    if (this.state === PENDING) this.openStream();
    this.finish(200);
    this.target.end(`event: message\ndata: ${json}\n\n`);
  }

  cancel(json: string): void {
    if (this.state === DONE) return;
    if (this.state === STREAMING) {
      // A cancelled stream ends without a response.
      this.finish(200);
      this.target.end();
      return;
    }
    this.respond(json);
  }

  /**
   * For calls that may run long (2026-07-28 `tools/call`): when the exchange is still waiting
   * `keepAliveMs` from now and the client accepts a stream, it becomes a stream and starts its
   * keep-alive comments, so proxies do not reap a silent call. One unref'd timer, armed once the
   * current turn's ticks and microtasks have run (see {@link armLater}): a call answered by then,
   * as most short calls are, never makes one.
   */
  keepAliveWhilePending(): void {
    if (!this.streamable || this.state !== PENDING) return;
    const keepAliveMs = this.settings.keepAliveMs;
    if (keepAliveMs <= 0 || keepAliveMs === Number.POSITIVE_INFINITY) return;
    armLater(this);
  }

  /** Arms the keep-alive timer of {@link keepAliveWhilePending} (from {@link armLater}). */
  armKeepAlive(): void {
    if (this.state !== PENDING || this.keepAlive !== undefined) return;
    this.waitKeepAlive("upgrade", false, upgradeExchange);
  }

  /** Opens the stream of a call still waiting, with a first keep-alive (timer callback). */
  upgrade(): void {
    if (this.state !== PENDING) return;
    this.openStream();
    this.target.write(KEEP_ALIVE);
  }

  /** Writes a keep-alive comment (timer callback); none while the client is behind. */
  ping(): void {
    if (this.state === STREAMING && this.target.bufferedBytes === 0) {
      this.target.write(KEEP_ALIVE);
    }
  }

  /** The way back closed: a disconnect unless the exchange had already ended. */
  private clientGone(): void {
    if (this.state === DONE) return;
    this.finish(this.state === STREAMING ? 200 : CLIENT_GONE);
    this.bits |= DISCONNECTED;
    this.wake();
    this.listener?.onDisconnect();
  }

  /** Ends a stream whose client does not read: a disconnect, then the connection is dropped. */
  private cut(): void {
    this.clientGone();
    this.target.destroy();
  }

  private openStream(): void {
    const headers: Record<string, string> = {
      "content-type": "text/event-stream",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "x-frame-options": "DENY",
      // Reverse proxies (nginx) must not buffer a request-scoped stream.
      "x-accel-buffering": "no",
    };
    if (this.sessionId !== null) headers["mcp-session-id"] = this.sessionId;
    this.target.writeHead(200, headers);
    this.target.flushHeaders();
    this.state = STREAMING;
    // A call that opened its stream before its upgrade came due stops waiting for it.
    this.stopKeepAlive();
    const keepAliveMs = this.settings.keepAliveMs;
    if (keepAliveMs > 0 && keepAliveMs !== Number.POSITIVE_INFINITY) {
      this.waitKeepAlive("ping", true, pingExchange);
    }
  }

  /**
   * Waits `keepAliveMs` (once, or `repeat`ing) for `tick`: in the process's shared clock of that
   * kind when the door shares timers (node:http), else on an unref'd timer of its own (a fetch
   * door's timer belongs to its request, keep-alive-clock.ts).
   */
  private waitKeepAlive(
    kind: "upgrade" | "ping",
    repeat: boolean,
    tick: (exchange: HttpExchange) => void,
  ): void {
    if (this.target.sharedTimers === true) {
      const clock = sharedClock(kind, this.settings.keepAliveMs, repeat, tick);
      clock.add(this);
      this.keepAlive = clock;
      return;
    }
    const timer = (repeat ? setInterval : setTimeout)(tick, this.settings.keepAliveMs, this);
    timer.unref();
    this.keepAlive = timer;
  }

  private finish(status: number): void {
    this.state = DONE;
    this.stopKeepAlive();
    this.wake();
    this.settings.recorder?.(this.method, status, this.startedAt);
  }

  private stopKeepAlive(): void {
    const keepAlive = this.keepAlive;
    if (keepAlive === undefined) return;
    this.keepAlive = undefined;
    if (keepAlive instanceof KeepAliveClock) keepAlive.remove(this);
    else clearTimeout(keepAlive);
  }

  /** Resolves once the client took the buffered bytes, or the exchange ended. */
  private drained(): Promise<void> {
    let drain = this.drain;
    if (drain === null) {
      let wake: () => void = noop;
      const promise = new Promise<void>((resolve) => {
        wake = resolve;
      });
      drain = { promise, wake };
      this.drain = drain;
      this.target.onDrain(() => this.wake());
    }
    return drain.promise;
  }

  private wake(): void {
    const drain = this.drain;
    this.drain = null;
    drain?.wake();
  }
}

/** A drain waited for: its promise, and what resolves it. */
interface DrainWait {
  readonly promise: Promise<void>;
  readonly wake: () => void;
}

const noop = (): void => {};

/**
 * Exchanges whose keep-alive timer {@link armPending} arms if they are still waiting then: slots
 * `0 … armCount - 1`, emptied at every drain (bounded by the exchanges one turn starts). An array
 * rather than a Set: a Set hashes each new exchange (a runtime call per call), and one that ended
 * meanwhile is skipped at the drain instead of being deleted.
 */
const toArm: (HttpExchange | undefined)[] = [];
let armCount = 0;

/**
 * Arms `exchange`'s keep-alive timer after the ticks and microtasks queued so far (one
 * `process.nextTick` for every exchange of the turn): a timer per call cost more than the rest of
 * the exchange, and a call answered in the meantime needs none. Shifting the timer's start by
 * that much does not change what it is for.
 */
function armLater(exchange: HttpExchange): void {
  toArm[armCount++] = exchange;
  if (armCount === 1) process.nextTick(armPending);
}

function armPending(): void {
  const count = armCount;
  armCount = 0;
  for (let i = 0; i < count; i++) {
    const exchange = toArm[i] as HttpExchange;
    toArm[i] = undefined;
    exchange.armKeepAlive();
  }
}

function upgradeExchange(exchange: HttpExchange): void {
  exchange.upgrade();
}

function pingExchange(exchange: HttpExchange): void {
  exchange.ping();
}
