/**
 * One handler invocation in flight — a `tools/call`, `resources/read`, `prompts/get` or
 * `completion/complete`: its run from start to answer. It is the handler's context
 * (handler-context.ts), the listener of its handle's abort signal and of its exchange's
 * disconnect. One object per invocation, with methods rather than per-request closures (the
 * request path is benchmarked: `npm run bench`).
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
import type { RequestHandle } from "../../../cancellation/types.js";
import { channels } from "../../../diagnostics.js";
import {
  type CancellationSource,
  ErrorCode,
  InvalidParamsError,
  MissingClientCapabilityError,
  RequestCancelledError,
} from "../../../errors.js";
import type { IsolatedHandler } from "../../../isolation/isolated-handler.js";
import type { IsolatedTask, WorkerPool } from "../../../isolation/worker-pool.js";
import { COMPLETE_VERDICT } from "../../asking/index.js";
import type { Listed, SinkListener } from "../../wire/index.js";
import {
  cancelledResponseJson,
  errorResponseJson,
  internalErrorJson,
  successResponseJson,
  successResponseJsonFor,
} from "../../wire/index.js";
import { HANDLED } from "../handled.js";
import { completeResultJson, thrownErrorJson, timeoutJson } from "./handler-answers.js";
import {
  HandlerContext,
  type HandlerContextHost,
  type HandlerContextOptions,
  type NamedInvocation,
} from "./handler-context.js";
import type { HandlerEnd, HandlerResult, InvocationAnswer } from "./handler-outcome.js";

/** The part of an invocation that differs between methods. */
export interface HandlerInvocation extends NamedInvocation {
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

/** What a call needs from the dispatcher that runs it. */
export interface HandlerCallHost extends HandlerContextHost {
  readonly streamCancelTimeoutMs: number;
  /** The server's default deadline of a tool's run (`toolTimeoutMs`), null for none. */
  readonly toolTimeoutMs: number | null;
  readonly cancelOnDisconnect: boolean;
  /** True when an observer may read a call's {@link HandlerCall.startedAt} (see {@link ended}). */
  readonly observed: boolean;
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
}

/** What {@link HandlerCall} takes. */
export interface HandlerCallOptions
  extends HandlerContextOptions<HandlerCallHost, HandlerInvocation> {
  /**
   * A task's detached run (its sink is the task's record, no client waits on it): a deadline
   * that elapses cancels it like any cancel of a task's run, instead of answering a tool error.
   */
  readonly detached?: boolean;
}

// The call's state and flags, in HandlerContext.bits above its MODERN (1): one small
// integer, not a field each (docs/profile.md, "Held calls at 10 000").
const RUNNING = 0;
const SETTLED = 2;
const CANCELLED = 4;
const ABANDONED = 6;
const STATE = 6;
/** In the dispatcher's list of running calls (Listed.listed). */
const LISTED = 8;
/** A task's detached run (HandlerCallOptions.detached). */
const DETACHED = 16;
/** While the deadline's cancel runs (see HandlerCall.timeOut). */
const TIMING_OUT = 32;

/** A call that settled before `run` returned (handled.ts). */
const RESOLVED: Promise<void> = HANDLED;
const DISCONNECTED = "client disconnected";
const SHUTTING_DOWN = "Server is shutting down";
const CANCELLED_REASON = "The request that asked was cancelled";
/** The end of a call that answered its result: one frozen object, not one per call. */
const ENDED_OK: HandlerEnd = Object.freeze({ outcome: "ok" });

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
export class HandlerCall
  extends HandlerContext<HandlerCallHost, HandlerInvocation>
  implements SinkListener, Listed<HandlerCall>
{
  /** The dispatcher's list of running calls (intrusive-list.ts): its links. */
  listPrev: HandlerCall | null = null;
  listNext: HandlerCall | null = null;
  /**
   * The deadline's timer while the handler runs with one (see
   * {@link HandlerInvocation.timeoutMs}); once cancelled, the timer that abandons it.
   */
  private timer: NodeJS.Timeout | undefined;
  /** The worker task of an isolated tool while it runs. */
  private task: IsolatedTask | null = null;

  /**
   * When {@link run} began (`performance.now()`): the handler duration's start, read by the
   * host's observer only; 0 without one (a double is a heap box of its own per running call).
   */
  startedAt = 0;

  constructor(options: HandlerCallOptions) {
    super(options);
    if (options.detached === true) this.bits |= DETACHED;
  }

  /**
   * A task's detached run: its handle is the task's, not the one its request was tracked with
   * (see {@link HandlerCallOptions.detached}).
   */
  get detached(): boolean {
    return (this.bits & DETACHED) !== 0;
  }

  /** Listed.listed: in the dispatcher's list of running calls. */
  get listed(): boolean {
    return (this.bits & LISTED) !== 0;
  }

  set listed(listed: boolean) {
    this.bits = listed ? this.bits | LISTED : this.bits & ~LISTED;
  }

  private get state(): number {
    return this.bits & STATE;
  }

  private set state(state: number) {
    this.bits = (this.bits & ~STATE) | state;
  }

  protected isRunning(): boolean {
    return this.state === RUNNING;
  }

  /** The run's deadline in ms, null for none (see {@link HandlerInvocation.timeoutMs}). */
  private limit(): number | null {
    const invocation = this.invocation;
    if (invocation.timeoutMs !== undefined) return invocation.timeoutMs;
    return invocation.kind === "tool" ? this.host.toolTimeoutMs : null;
  }

  /**
   * Runs the handler and writes its answer, unless the call was cancelled first. Never rejects.
   * Not async: while the handler runs, the call holds one reaction on the handler's promise (two
   * closures over `this`), not a suspended frame (generator, register file, await closures), so a
   * waiting call keeps less heap (docs/profile.md, "Heap per in-flight call").
   */
  run(): Promise<void> {
    if (this.host.observed) this.startedAt = performance.now();
    this.sink.setListener(this);
    // The call gives its request's slots back itself when it ends, however it ends (settle,
    // abandon, a cancel before the start): the transport need not chain on its promise for it.
    this.sink.callReleasesSlots?.();
    this.host.started(this);
    if (this.handle.aborted) {
      // Cancelled between track and start (a racing cancel): the handler never runs.
      this.state = CANCELLED;
      this.sink.cancel(cancelledResponseJson(this.requestId));
      this.host.ended(this, this.cancelledEnd("cancelled"));
      const releaseSlots = (): void => this.sink.releaseSlots?.();
      return this.host.release(this).then(releaseSlots, releaseSlots);
    }
    this.handle.setAbortListener(this);
    const limit = this.limit();
    if (limit !== null) {
      const deadline = setTimeout(timeOutCall, limit, this, limit);
      deadline.unref();
      this.timer = deadline;
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
            this.settle(answer.json, ENDED_OK, answer.status, answer.headers);
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
        const resultJson = this.modern
          ? completeResultJson(checked.result)
          : JSON.stringify(checked.result);
        // A numeric id's text is its handle's key, made when the request was tracked (the same
        // text: normalizeRequestId serialises a number as JSON does); a task's run has the task's
        // handle, and a string id is quoted on the wire.
        json =
          typeof this.requestId === "number" && !this.detached && this.handle.requestId !== null
            ? successResponseJsonFor(this.handle.requestId, resultJson)
            : successResponseJson(this.requestId, resultJson);
        end = checked.isError === true ? { outcome: "error", error: checked.error } : ENDED_OK;
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
    const asked = this.asker?.verdict?.() ?? COMPLETE_VERDICT;
    if (asked.kind === "input_required" && asked.json !== null) {
      json = successResponseJson(this.requestId, asked.json);
      end = ENDED_OK;
    } else if (asked.kind === "invalid") {
      json = errorResponseJson(this.requestId, ErrorCode.InvalidParams, asked.message);
      end = { outcome: "error", error: new InvalidParamsError(asked.message) };
    } else {
      const error =
        asked.kind === "complete"
          ? thrown
          : new RangeError("the requestState would exceed inputRequired.maxStateBytes");
      json = thrownErrorJson(this, error);
      end = { outcome: "error", error };
      if (error instanceof MissingClientCapabilityError && this.modern) status = 400;
    }
    this.task = null;
    this.settle(json, end, status);
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
    if (this.state !== RUNNING) return;
    this.timer = undefined;
    // The registry aborts the handle synchronously, so the abort listener runs inside this call
    // and knows the abort is the deadline's (the signal's reason is set only after listeners).
    this.bits |= TIMING_OUT;
    try {
      this.cancelWith("timeout", `${this.invocation.name} timed out after ${limit} ms`);
    } finally {
      this.bits &= ~TIMING_OUT;
    }
  }

  /** The abort listener (an EventListener object: no closure per call). */
  handleEvent(): void {
    if (this.state !== RUNNING) return;
    this.state = CANCELLED;
    const timingOut = (this.bits & TIMING_OUT) !== 0;
    clearTimeout(this.timer);
    this.timer = undefined;
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
    } else if (timingOut && !this.detached) {
      // Nobody cancelled and the client still waits: it gets an answer, not silence
      // (docs/limits.md, "What the client gets"). A task's run is cancelled like any other.
      this.sink.respond(timeoutJson(this, this.limit() ?? 0));
    } else {
      // The exchange ends now, not when the handler notices.
      this.sink.cancel(cancelledResponseJson(this.requestId));
    }
    const timer = setTimeout(abandonCall, this.host.streamCancelTimeoutMs, this);
    timer.unref();
    this.timer = timer;
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
    // The deadline while running, the abandon timer once cancelled: either is done with.
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.state === ABANDONED) return; // the late result of an abandoned call is discarded
    if (this.state === CANCELLED) {
      this.host.ended(this, this.cancelledEnd("cancelled"));
      void this.host.release(this);
      this.sink.releaseSlots?.();
      return;
    }
    this.state = SETTLED;
    // The handler answered without waiting for every question: those still open are withdrawn.
    this.withdrawQuestions();
    this.host.ended(this, end);
    // Untracked before the answer is written, so a client that got its answer never sees the
    // request still in flight; the row is cleared afterwards.
    void this.host.release(this);
    this.sink.respond(json, status, headers);
    this.sink.releaseSlots?.();
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
