/**
 * One handler invocation in flight — a `tools/call`, `resources/read`, `prompts/get` or
 * `completion/complete`: it is the handler's {@link ToolContext}, the listener of its handle's
 * abort signal and of its exchange's disconnect. One object per invocation, with methods rather
 * than per-request closures (the request path is benchmarked: `npm run bench`).
 *
 * Lifecycle: running → settled (the handler answered; the answer is
 * written) or running → cancelled (the exchange is ended at once: a stream without a response, a
 * JSON exchange with -32800) → released when the handler settles, or abandoned when it is still
 * running `streamCancelTimeoutMs` later (handle released, late result discarded, `toolKilled`).
 *
 * Cancellation follows MCP 2025-11-25 (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation)
 * and, for 2026-07-28, the stream's closing
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation).
 */
import type { RequestHandle, RequestId } from "../../cancellation/types.js";
import { channels, type HandlerKind } from "../../diagnostics.js";
import {
  type CancellationSource,
  CannotAskClientError,
  ErrorCode,
  InvalidParamsError,
  MissingClientCapabilityError,
  RequestCancelledError,
  WorkerPoolFullError,
} from "../../errors.js";
import type { Principal } from "../../identity/index.js";
import type { IsolatedHandler } from "../../isolation/isolated-handler.js";
import type { IsolatedTask, WorkerPool } from "../../isolation/worker-pool.js";
import { isLoggingLevel, type LoggingLevel, loggingLevelRank } from "../../logging-levels.js";
import {
  type AskerScope,
  type AskOptions,
  type ClientAsker,
  cannotAsk,
  type ElicitResult,
  type ElicitSchema,
  type RootsResult,
  type SampleRequest,
  type SampleResult,
} from "../asking/index.js";
import type { Listed, ResponseSink, SinkListener } from "../wire/index.js";
import {
  cancelledResponseJson,
  errorResponseJson,
  internalErrorJson,
  notificationJson,
  successResponseJson,
} from "../wire/index.js";
import { HANDLED } from "./handled.js";
import type { ProtocolEra, RequestInfo, RequestView, RequestViewSource } from "./request-info.js";
import type { ToolContext } from "./tool-context.js";

/** How a handler invocation ended, as counted by `conduit_mcp_tool_calls_total{outcome}`. */
export type HandlerOutcome = "ok" | "error" | "cancelled" | "killed";
/** The outcome of a tool call (the same four values). */
export type ToolOutcome = HandlerOutcome;

export type { ProtocolEra } from "./request-info.js";

/** What an observer learns when a handler starts (and again, with {@link HandlerEnd}, when it ends). */
export interface HandlerInfo {
  /** `tools/call`, `resources/read`, `prompts/get` or `completion/complete`. */
  readonly method: string;
  /** Which handler: `tool`, `resource`, `resource-template`, `prompt` or `completion`. */
  readonly kind: HandlerKind;
  /** The tool or prompt name, the resource URI, or the completion reference. */
  readonly name: string;
  readonly requestId: RequestId | null;
  readonly scope: string;
  readonly sessionId: string | null;
  readonly protocolEra: ProtocolEra;
  /** The authenticated principal's id, or null. */
  readonly principalId: string | null;
  /**
   * The request this invocation answers, as observers were told of it; null when no observer
   * followed it (none asked, or none stood a sink of its own in front of it).
   */
  readonly request: RequestInfo | null;
}

/** How a handler ended. */
export interface HandlerEnd {
  readonly outcome: HandlerOutcome;
  /** What the handler threw, or why its result was refused; undefined otherwise. */
  readonly error?: unknown;
  /** For `cancelled` and `killed`: which cause aborted the request. */
  readonly cancellationSource?: CancellationSource;
}

/** A handler's value turned into a result object, or refused (never sent as is). */
export type HandlerResult =
  | {
      readonly ok: true;
      readonly result: Record<string, unknown>;
      /** A tool result with `isError: true`: counted as outcome `error`. */
      readonly isError?: boolean;
      /** Why a value was replaced by an error result (e.g. invalid `structuredContent`). */
      readonly error?: unknown;
    }
  | { readonly ok: false; readonly error: unknown };

/** The part of an invocation that differs between methods. */
export interface HandlerInvocation {
  readonly method: string;
  readonly kind: HandlerKind;
  readonly name: string;
  /**
   * The run's deadline in ms (a tool's `timeoutMs`); null for none; undefined: the host's
   * {@link HandlerCallHost.toolTimeoutMs} for a tool, none for anything else.
   */
  readonly timeoutMs?: number | null | undefined;
  /** Runs the user's handler with `ctx`. */
  invoke(ctx: HandlerCall): unknown;
  /**
   * Checks and shapes its value; `modern` results get `resultType` added by the call itself. A
   * promise only where the check is asynchronous (a schema library that validates so).
   */
  toResult(value: unknown, modern: boolean): HandlerResult | Promise<HandlerResult>;
  /**
   * Optional: answers the value itself instead of {@link HandlerInvocation.toResult}, once no
   * question is pending (a tool's `beforeTask` phase: creates the task, answers the task).
   */
  answer?(value: unknown, call: HandlerCall): Promise<InvocationAnswer>;
}

/** An answer an invocation writes itself: JSON-RPC text, HTTP status and headers. */
export interface InvocationAnswer {
  readonly json: string;
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/** What a call needs from the dispatcher that runs it. */
export interface HandlerCallHost {
  readonly streamCancelTimeoutMs: number;
  /** The server's default deadline of a tool's run (`toolTimeoutMs`), null for none. */
  readonly toolTimeoutMs: number | null;
  readonly cancelOnDisconnect: boolean;
  /** True once the server began aborting every call to shut down (see `Dispatcher.abortAll`). */
  readonly shuttingDown: boolean;
  /**
   * Cancels this call's handle alone (disconnect, session end): aborts it at once and records a
   * row under its scope; namesakes keep running. Resolves whether a row was written.
   */
  cancelHandle(handle: RequestHandle, reason: string, source: CancellationSource): Promise<boolean>;
  /** Untracks then clears; never rejects. */
  release(call: HandlerCall): Promise<void>;
  /** Runs the invocation's handler (inside an observer's context, for tracing). */
  invoke(call: HandlerCall): unknown;
  /** Reports the start and the end of every invocation (metrics, error hooks, tracing). */
  started(call: HandlerCall): void;
  ended(call: HandlerCall, end: HandlerEnd): void;
  /** The server's worker pool for isolated tools. */
  workerPool(): WorkerPool;
  /**
   * A 2025-era asker (server requests on the call's own stream) for a call made with
   * {@link HandlerCallOptions.serverAsks}: made on the call's first ask.
   */
  serverAsker(
    sink: ResponseSink,
    who: AskerScope,
    capabilities: Readonly<Record<string, unknown>> | null,
  ): ClientAsker;
}

/** What {@link HandlerCall} takes. */
export interface HandlerCallOptions {
  readonly host: HandlerCallHost;
  readonly invocation: HandlerInvocation;
  readonly handle: RequestHandle;
  readonly sink: ResponseSink;
  readonly requestId: RequestId | null;
  readonly scope: string;
  /**
   * The bucket that pays for what the call leaves waiting (its questions to the client): the
   * principal, else the client's IP bucket (RequestMeta.bucket). Absent: `scope`.
   */
  readonly bucket?: string | undefined;
  readonly principal: Principal | null;
  readonly progressToken?: string | number | undefined;
  readonly logLevel: LoggingLevel | null;
  readonly sessionId: string | null;
  /** A 2026-07-28 request: disconnect always cancels, results carry `resultType`. */
  readonly modern: boolean;
  /** The request as observers were told of it, if any asked. */
  readonly request?: RequestInfo | null | undefined;
  /** Where `ctx.request` comes from (the transport's {@link RequestMeta.view}); absent: null. */
  readonly view?: RequestViewSource | null | undefined;
  /** Where `ctx.elicit`/`sample`/`roots` ask (a 2026-07-28 request that may answer input_required). */
  readonly asker?: ClientAsker | null;
  /**
   * A 2025-era call that may ask the client: the client's capabilities from `initialize` (null
   * when this server was not told). The asker is made by the host on the first ask, not per call
   * (most calls never ask). Undefined: no such asker.
   */
  readonly serverAsks?: Readonly<Record<string, unknown>> | null | undefined;
  /**
   * A task's detached run (its sink is the task's record, no client waits on it): a deadline
   * that elapses cancels it like any cancel of a task's run, instead of answering a tool error.
   */
  readonly detached?: boolean;
}

const RUNNING = 0;
const SETTLED = 1;
const CANCELLED = 2;
const ABANDONED = 3;

/** A call that settled before `run` returned (handled.ts). */
const RESOLVED: Promise<void> = HANDLED;
const DISCONNECTED = "client disconnected";
const SHUTTING_DOWN = "Server is shutting down";
const CANCELLED_REASON = "The request that asked was cancelled";
const COMPLETED = "The request that asked has completed";
/** The error of asks withdrawn because their call completed (made only when one is waiting). */
const completedError = (): CannotAskClientError => new CannotAskClientError(COMPLETED);

/**
 * A running handler and its context.
 *
 * @example
 * ```ts
 * const call = new HandlerCall({ host, invocation, handle, sink, requestId: message.id, scope,
 *   principal, logLevel: null, sessionId: null, modern: false });
 * void call.run();
 * ```
 */
export class HandlerCall implements ToolContext, SinkListener, Listed<HandlerCall> {
  /** The dispatcher's list of running calls (intrusive-list.ts): its links. */
  listPrev: HandlerCall | null = null;
  listNext: HandlerCall | null = null;
  listed = false;
  readonly requestId: RequestId | null;
  readonly scope: string;
  /** The bucket paying for its questions (HandlerCallOptions.bucket). */
  private readonly bucket: string;
  readonly principal: Principal | null;
  readonly handle: RequestHandle;
  readonly invocation: HandlerInvocation;
  /** The session the call belongs to, for `DELETE`; null without sessions. */
  readonly sessionId: string | null;
  readonly modern: boolean;
  private readonly host: HandlerCallHost;
  private readonly sink: ResponseSink;
  private readonly progressToken: string | number | undefined;
  private readonly logThreshold: number;
  private lastProgress = Number.NEGATIVE_INFINITY;
  private state = RUNNING;
  private timer: NodeJS.Timeout | undefined;
  /** The deadline's timer while the run has one (see {@link HandlerInvocation.timeoutMs}). */
  private deadline: NodeJS.Timeout | undefined;
  /** While the deadline's cancel runs: its limit in ms (0 otherwise). */
  private timingOut = 0;
  private readonly detached: boolean;
  /** The worker task of an isolated tool while it runs. */
  private task: IsolatedTask | null = null;
  private described: HandlerInfo | null = null;
  /** The request as observers were told of it; null when none follows it. */
  readonly requestInfo: RequestInfo | null;
  /** See {@link HandlerCallOptions.view}; the view once made (undefined before). */
  private readonly viewSource: RequestViewSource | null;
  private view: RequestView | null | undefined;
  private asker: ClientAsker | null;
  /** See {@link HandlerCallOptions.serverAsks}; undefined once made (or when there is none). */
  private serverAsks: Readonly<Record<string, unknown>> | null | undefined;

  /** When {@link run} began (`performance.now()`): the handler duration's start (metrics). */
  startedAt = 0;

  constructor(options: HandlerCallOptions) {
    this.host = options.host;
    this.invocation = options.invocation;
    this.handle = options.handle;
    this.sink = options.sink;
    this.requestId = options.requestId;
    this.scope = options.scope;
    this.bucket = options.bucket ?? options.scope;
    this.principal = options.principal;
    this.progressToken = options.progressToken;
    this.modern = options.modern;
    // 2025 era: no level set → every level. 2026-07-28: no `_meta` logLevel → no log messages
    // for the request (https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging).
    this.logThreshold =
      options.logLevel !== null
        ? loggingLevelRank(options.logLevel)
        : options.modern
          ? Number.POSITIVE_INFINITY
          : 0;
    this.sessionId = options.sessionId;
    this.requestInfo = options.request ?? null;
    this.viewSource = options.view ?? null;
    this.asker = options.asker ?? null;
    this.serverAsks = this.asker === null ? options.serverAsks : undefined;
    this.detached = options.detached === true;
  }

  /**
   * What observers are told about this call. For a request an observer follows (tracing keys
   * its span by this object) it is the same object from start to end; otherwise it is made on
   * each use, so a waiting call keeps none.
   */
  get info(): HandlerInfo {
    if (this.described !== null) return this.described;
    const info: HandlerInfo = Object.freeze({
      method: this.invocation.method,
      kind: this.invocation.kind,
      name: this.invocation.name,
      requestId: this.requestId,
      scope: this.scope,
      sessionId: this.sessionId,
      protocolEra: this.modern ? "2026-07-28" : "2025-11-25",
      principalId: typeof this.principal?.id === "string" ? this.principal.id : null,
      request: this.requestInfo,
    });
    if (this.requestInfo !== null) this.described = info;
    return info;
  }

  /** The HTTP request's view, made on first use (a handler that never reads it costs none). */
  get request(): RequestView | null {
    if (this.view === undefined) this.view = this.viewSource?.requestView() ?? null;
    return this.view;
  }

  /** The request's signal, created on first use (a handler that never reads it costs none). */
  get signal(): AbortSignal {
    return this.handle.signal;
  }

  cancelled(): boolean {
    return this.handle.aborted;
  }

  progress(progress: number, total?: number, message?: string): Promise<void> {
    if (this.state !== RUNNING || this.progressToken === undefined || !this.sink.streamable) {
      return RESOLVED;
    }
    if (typeof progress !== "number" || !Number.isFinite(progress)) return RESOLVED;
    // MCP 2025-11-25 progress: the value MUST increase with every notification.
    if (progress <= this.lastProgress) return RESOLVED;
    this.lastProgress = progress;
    const params: Record<string, unknown> = { progressToken: this.progressToken, progress };
    if (typeof total === "number" && Number.isFinite(total)) params.total = total;
    if (typeof message === "string") params.message = message;
    return this.sink.notify(notificationJson("notifications/progress", params));
  }

  log(level: LoggingLevel, data: unknown): Promise<void> {
    if (this.state !== RUNNING || !this.sink.streamable || !isLoggingLevel(level)) return RESOLVED;
    if (loggingLevelRank(level) < this.logThreshold) return RESOLVED;
    let json: string;
    try {
      json = notificationJson("notifications/message", { level, data });
    } catch {
      return RESOLVED; // not serialisable (cycle, BigInt): dropped rather than thrown into the handler
    }
    return this.sink.notify(json);
  }

  // Asking the client: the asker (input-required.ts) does the work; without one, asks are refused.
  elicit(
    message: string,
    schema: ElicitSchema,
    options?: AskOptions,
  ): Promise<ElicitResult<never>> {
    const refused = this.askRefused();
    return refused ?? (this.asker as ClientAsker).elicit(message, schema, options);
  }

  elicitUrl(message: string, url: string, options?: AskOptions): Promise<ElicitResult<undefined>> {
    return this.askRefused() ?? (this.asker as ClientAsker).elicitUrl(message, url, options);
  }

  sample(request: SampleRequest, options?: AskOptions): Promise<SampleResult> {
    return this.askRefused() ?? (this.asker as ClientAsker).sample(request, options);
  }

  roots(options?: AskOptions): Promise<RootsResult> {
    return this.askRefused() ?? (this.asker as ClientAsker).roots(options);
  }

  get savedState(): unknown {
    return this.asker?.savedState;
  }

  saveState(value: unknown): void {
    this.asker?.saveState(value);
  }

  /** Whether a question of this run is pending or an answer was invalid (the run ends asking). */
  asking(): boolean {
    return this.asker?.waiting?.() === true;
  }

  /** Null when `this.asker` may ask (made now if it is made on first use), else the refusal. */
  private askRefused(): Promise<never> | null {
    if (this.handle.aborted) return Promise.reject(this.handle.signal.reason);
    if (this.asker === null && this.serverAsks !== undefined) {
      const asker = this.host.serverAsker(
        this.sink,
        { scope: this.scope, bucket: this.bucket },
        this.serverAsks,
      );
      this.serverAsks = undefined;
      this.asker = asker;
      // Asked after the call was answered: refused, as a closed asker refuses.
      if (this.state !== RUNNING) asker.close?.(COMPLETED, completedError);
    }
    return this.asker === null ? cannotAsk() : null;
  }

  /**
   * Runs the handler and writes its answer, unless the call was cancelled first. Never rejects.
   * Not async: while the handler runs, the call holds one reaction on the handler's promise (two
   * closures over `this`), not a suspended frame (generator, register file, await closures), so a
   * waiting call keeps less heap (docs/profile.md, "Heap per in-flight call").
   */
  run(): Promise<void> {
    this.startedAt = performance.now();
    this.sink.setListener(this);
    this.host.started(this);
    if (this.handle.aborted) {
      // Cancelled between track and start (a racing cancel): the handler never runs.
      this.state = CANCELLED;
      this.sink.cancel(cancelledResponseJson(this.requestId));
      this.host.ended(this, this.cancelledEnd("cancelled"));
      return this.host.release(this);
    }
    this.handle.setAbortListener(this);
    const invocation = this.invocation;
    const limit =
      invocation.timeoutMs !== undefined
        ? invocation.timeoutMs
        : invocation.kind === "tool"
          ? this.host.toolTimeoutMs
          : null;
    if (limit !== null) {
      const deadline = setTimeout(timeOutCall, limit, this, limit);
      deadline.unref();
      this.deadline = deadline;
    }
    let value: unknown;
    try {
      value = this.host.invoke(this);
    } catch (thrown) {
      this.fail(thrown);
      return RESOLVED;
    }
    if (typeof value !== "object" && typeof value !== "function") {
      // A plain value (a string, a number, nothing) is answered at once: it cannot be a thenable,
      // and waiting a tick for it would only cost a promise and a microtask per call.
      return this.complete(value) ?? RESOLVED;
    }
    // An object may be a thenable: settled when it settles, as `await` would.
    return Promise.resolve(value).then(
      (settled) => this.complete(settled),
      (thrown: unknown) => this.fail(thrown),
    );
  }

  /**
   * The handler returned (or resolved) `value`: checked, shaped and answered; or answered by the
   * invocation itself (then the promise of that answer).
   */
  private complete(value: unknown): void | Promise<void> {
    let checked: HandlerResult | Promise<HandlerResult>;
    try {
      const asked = this.asker?.verdict?.();
      if (asked !== undefined && asked.kind !== "complete") throw asked;
      const invocation = this.invocation;
      if (invocation.answer !== undefined) {
        return invocation.answer(value, this).then(
          (answer) => {
            this.task = null;
            this.settle(answer.json, { outcome: "ok" }, answer.status, answer.headers);
          },
          (thrown: unknown) => this.fail(thrown),
        );
      }
      checked = invocation.toResult(value, this.modern);
    } catch (thrown) {
      this.fail(thrown);
      return;
    }
    if (checked instanceof Promise) {
      // Settled as a cancelled call settles should a cancel come first (settle() knows).
      return checked.then(
        (result) => this.answerChecked(result),
        (thrown: unknown) => this.fail(thrown),
      );
    }
    this.answerChecked(checked);
  }

  /** Answers a checked value: its result, or -32603 when it was refused. */
  private answerChecked(checked: HandlerResult): void {
    let json: string;
    let end: HandlerEnd;
    try {
      if (checked.ok) {
        json = successResponseJson(
          this.requestId,
          this.modern ? completeResultJson(checked.result) : JSON.stringify(checked.result),
        );
        end =
          checked.isError === true ? { outcome: "error", error: checked.error } : { outcome: "ok" };
      } else {
        json = internalErrorJson(this.requestId);
        end = { outcome: "error", error: checked.error };
      }
    } catch (thrown) {
      this.fail(thrown);
      return;
    }
    this.task = null;
    this.settle(json, end);
  }

  /** The handler threw (or rejected), or its value could not be answered. */
  private fail(thrown: unknown): void {
    let json: string;
    let end: HandlerEnd;
    let status = 200;
    // Once a question is pending or an answer was invalid, that decides, whatever the handler did.
    const asked = this.asker?.verdict?.() ?? { kind: "complete" };
    if (asked.kind === "input_required" && asked.json !== null) {
      json = successResponseJson(this.requestId, asked.json);
      end = { outcome: "ok" };
    } else if (asked.kind === "invalid") {
      json = errorResponseJson(this.requestId, ErrorCode.InvalidParams, asked.message);
      end = { outcome: "error", error: new InvalidParamsError(asked.message) };
    } else {
      const error =
        asked.kind === "complete"
          ? thrown
          : new RangeError("the requestState would exceed inputRequired.maxStateBytes");
      json = this.errorJson(error);
      end = { outcome: "error", error };
      if (error instanceof MissingClientCapabilityError && this.modern) status = 400;
    }
    this.task = null;
    this.settle(json, end, status);
  }

  /**
   * The answer to a thrown error. Never the handler's message or stack on the wire (they may
   * name internals), except an {@link InvalidParamsError}'s, which the handler wrote for the client.
   */
  private errorJson(error: unknown): string {
    if (error instanceof WorkerPoolFullError) {
      return errorResponseJson(this.requestId, ErrorCode.ServerError, "Server busy");
    }
    if (error instanceof MissingClientCapabilityError && this.modern) {
      // MCP 2026-07-28 basic, "_meta": -32021 naming the capabilities (HTTP 400, set by run()).
      return errorResponseJson(this.requestId, ErrorCode.MissingCapability, error.message, {
        requiredCapabilities: error.requiredCapabilities,
      });
    }
    if (error instanceof CannotAskClientError) {
      if (this.invocation.method !== "tools/call") {
        return errorResponseJson(this.requestId, ErrorCode.InternalError, error.message);
      }
      return this.toolErrorJson(error.message);
    }
    if (!(error instanceof InvalidParamsError)) return internalErrorJson(this.requestId);
    if (this.invocation.method !== "tools/call") {
      return errorResponseJson(this.requestId, ErrorCode.InvalidParams, error.message);
    }
    return this.toolErrorJson(error.message);
  }

  /** A tool result with `isError: true` carrying `text` (a message written for the client). */
  private toolErrorJson(text: string): string {
    const result: Record<string, unknown> = {
      content: [{ type: "text", text }],
      isError: true,
    };
    if (this.modern) result.resultType = "complete";
    return successResponseJson(this.requestId, JSON.stringify(result));
  }

  /**
   * Starts an isolated tool in the server's pool; its progress and logs come back through
   * `this`, and the stream cancel timeout terminates its thread.
   */
  runIsolated(handler: IsolatedHandler, args: unknown): Promise<unknown> {
    const task = this.host.workerPool().start(handler as never, args, {
      signal: this.signal,
      requestId: this.requestId,
      scope: this.scope,
      onProgress: (progress, total, message) => this.progress(progress, total, message),
      onLog: (level, data) => this.log(level, data),
    });
    this.task = task;
    return task.result;
  }

  /**
   * The deadline elapsed while the handler runs: the call is cancelled through the registry with
   * source `timeout` (its signal aborts, a row is recorded, `conduit-mcp:request:cancelled` says
   * `timeout`), and the abort listener answers it (docs/limits.md, "Deadlines").
   */
  timeOut(limit: number): void {
    this.deadline = undefined;
    if (this.state !== RUNNING) return;
    // The registry aborts the handle synchronously, so the abort listener runs inside this call
    // and knows the abort is the deadline's (the signal's reason is set only after listeners).
    this.timingOut = limit;
    try {
      this.cancelWith("timeout", `${this.invocation.name} timed out after ${limit} ms`);
    } finally {
      this.timingOut = 0;
    }
  }

  /** The abort listener (an EventListener object: no closure per call). */
  handleEvent(): void {
    if (this.state !== RUNNING) return;
    this.state = CANCELLED;
    clearTimeout(this.deadline);
    this.deadline = undefined;
    // Questions still waiting are withdrawn while the stream can still carry the notice.
    this.asker?.close?.(
      this.host.shuttingDown ? SHUTTING_DOWN : CANCELLED_REASON,
      () => this.signal.reason,
    );
    if (this.host.shuttingDown) {
      // Nobody cancelled: the server is going away. The client gets an answer that says so,
      // on a stream too (a stream ended without a response would leave it waiting). HTTP 200,
      // like any error of a call that ran: a 503 would let a load balancer replay on another
      // node a call whose handler already ran here (docs/deploy.md, "Drain"); only requests
      // refused before they ran are 503.
      this.sink.respond(errorResponseJson(this.requestId, ErrorCode.InternalError, SHUTTING_DOWN));
    } else if (this.timingOut > 0 && !this.detached) {
      // Nobody cancelled and the client still waits: it gets an answer, not silence
      // (docs/limits.md, "What the client gets"). A task's run is cancelled like any other.
      this.sink.respond(this.timeoutJson(this.timingOut));
    } else {
      // The exchange ends now, not when the handler notices.
      this.sink.cancel(cancelledResponseJson(this.requestId));
    }
    const timer = setTimeout(abandonCall, this.host.streamCancelTimeoutMs, this);
    timer.unref();
    this.timer = timer;
  }

  /**
   * The answer of a run past its deadline. A tool's is a tool execution error (`isError: true`),
   * which the client hands to its model (MCP 2025-11-25 and 2026-07-28, Tools, "Error Handling":
   * https://modelcontextprotocol.io/specification/2026-07-28/server/tools#error-handling); any
   * other method's an internal error. The text names the deadline only.
   */
  private timeoutJson(limit: number): string {
    const text = `Tool ${this.invocation.name} did not finish within its ${limit} ms deadline`;
    if (this.invocation.method === "tools/call") return this.toolErrorJson(text);
    return errorResponseJson(this.requestId, ErrorCode.InternalError, "Request timed out");
  }

  /** The exchange lost its client before it ended. */
  onDisconnect(): void {
    if (this.state !== RUNNING) return;
    // 2026-07-28: closing the stream IS the cancellation, whatever `cancelOnDisconnect` says.
    // cancelHandle aborts the handle before the store write, so the handler's signal fires in
    // the same tick as the socket's close; the row is recorded next.
    if (this.modern || this.host.cancelOnDisconnect) this.cancelWith("disconnect", DISCONNECTED);
  }

  /**
   * Cancels this call for `source` (a cause that concerns this request alone): its handle aborts
   * at once and a row is recorded under the call's own scope, so `isCancelled(id, scope)` tells
   * the truth; a namesake in the same scope (another client reusing the id) keeps running.
   */
  cancelWith(source: CancellationSource, reason: string): void {
    if (this.state !== RUNNING) return;
    this.host.cancelHandle(this.handle, reason, source).catch(() => {
      // The store failed after the handle aborted: the request is cancelled all the same.
    });
  }

  /** Stream cancel timeout: give up on a handler that ignores its signal. */
  abandon(): void {
    if (this.state !== CANCELLED) return;
    this.state = ABANDONED;
    this.timer = undefined;
    // An isolated tool's worker thread is terminated: its CPU-bound code really stops.
    const terminated = this.task?.kill() ?? false;
    this.task = null;
    this.host.ended(this, this.cancelledEnd("killed"));
    if (channels.toolKilled.hasSubscribers) {
      channels.toolKilled.publish({
        tool: this.invocation.name,
        requestId: this.handle.requestId ?? "",
        scope: this.scope,
        terminated,
      });
    }
    void this.host.release(this);
    // The abandoned handler may never settle: its concurrency slot is given back now, else a
    // scope calling a stubborn handler would lose its quota for good.
    this.sink.releaseSlots?.();
  }

  private settle(
    json: string,
    end: HandlerEnd,
    status = 200,
    headers?: Readonly<Record<string, string>>,
  ): void {
    this.handle.setAbortListener(null);
    clearTimeout(this.deadline);
    this.deadline = undefined;
    if (this.state === ABANDONED) return; // the late result of an abandoned call is discarded
    if (this.state === CANCELLED) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.host.ended(this, this.cancelledEnd("cancelled"));
      void this.host.release(this);
      return;
    }
    this.state = SETTLED;
    // The handler answered without waiting for every question: those still open are withdrawn.
    this.asker?.close?.(COMPLETED, completedError);
    this.host.ended(this, end);
    // Untracked before the answer is written, so a client that got its answer never sees the
    // request still in flight; the row is cleared afterwards.
    void this.host.release(this);
    this.sink.respond(json, status, headers);
  }

  private cancelledEnd(outcome: "cancelled" | "killed"): HandlerEnd {
    const reason: unknown = this.handle.aborted ? this.handle.signal.reason : undefined;
    return reason instanceof RequestCancelledError
      ? { outcome, cancellationSource: reason.source }
      : { outcome };
  }
}

function abandonCall(call: HandlerCall): void {
  call.abandon();
}

function timeOutCall(call: HandlerCall, limit: number): void {
  call.timeOut(limit);
}

/**
 * A 2026-07-28 result's JSON with `resultType: "complete"`: spliced in front of the serialized
 * object's own members rather than copying the object to add it. A result that carries a
 * `resultType` of its own (or serializes itself through `toJSON`) is copied, so that "complete"
 * replaces it as before.
 */
function completeResultJson(result: Readonly<Record<string, unknown>>): string {
  if (!("resultType" in result) && typeof result.toJSON !== "function") {
    const json = JSON.stringify(result);
    return json === "{}"
      ? '{"resultType":"complete"}'
      : `{"resultType":"complete",${json.slice(1)}`;
  }
  return JSON.stringify({ ...result, resultType: "complete" });
}
