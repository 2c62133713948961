/**
 * One `tools/call` in flight: it is the tool's {@link ToolContext}, the listener of its handle's
 * abort signal and of its exchange's disconnect. One object per call, with methods rather than
 * per-request closures (the request path is benchmarked).
 *
 * Lifecycle (DESIGN.md, "Request model"): running → settled (the tool answered; the answer is
 * written) or running → cancelled (the exchange is ended at once: a stream without a response,
 * a JSON exchange with -32800) → released when the tool settles, or abandoned when it is still
 * running `streamCancelTimeoutMs` later (handle released, late result discarded, `toolKilled`).
 */
import type { RequestHandle, RequestId } from "../cancellation/types.js";
import { channels } from "../diagnostics.js";
import { type CancellationSource, ErrorCode, WorkerPoolFullError } from "../errors.js";
import type { Principal } from "../identity/index.js";
import type { IsolatedTask, WorkerPool } from "../isolation/worker-pool.js";
import type { Tool } from "./define-tool.js";
import {
  cancelledResponseJson,
  errorResponseJson,
  internalErrorJson,
  isPlainObject,
  notificationJson,
  successResponseJson,
} from "./json-rpc.js";
import { isLoggingLevel, type LoggingLevel, loggingLevelRank } from "./logging.js";
import type { ResponseSink, SinkListener } from "./response-sink.js";
import type { ToolContext } from "./tool-context.js";

/** How a tool call ended, as counted by `conduit_mcp_tool_calls_total{outcome}`. */
export type ToolOutcome = "ok" | "error" | "cancelled" | "killed";

/** What a call needs from the dispatcher that runs it. */
export interface ToolCallHost {
  readonly streamCancelTimeoutMs: number;
  readonly cancelOnDisconnect: boolean;
  /**
   * Cancels this call's handle alone (disconnect, session end): aborts it at once and records a
   * row under its scope; namesakes keep running. Resolves whether a row was written.
   */
  cancelHandle(handle: RequestHandle, reason: string, source: CancellationSource): Promise<boolean>;
  /** Untracks then clears (the seed's `finally` order); never rejects. */
  release(call: ToolCall): Promise<void>;
  outcome(tool: string, outcome: ToolOutcome): void;
  /** The server's worker pool for isolated tools, created on first use. */
  workerPool(): WorkerPool;
}

const RUNNING = 0;
const SETTLED = 1;
const CANCELLED = 2;
const ABANDONED = 3;

const RESOLVED: Promise<void> = Promise.resolve();

/**
 * A running tool call and its context.
 *
 * @example
 * ```ts
 * const call = new ToolCall(host, tool, handle, sink, message.id, scope, principal, token, null, null);
 * void call.run(args);
 * ```
 */
export class ToolCall implements ToolContext, SinkListener {
  readonly requestId: RequestId | null;
  readonly scope: string;
  readonly principal: Principal | null;
  readonly handle: RequestHandle;
  readonly tool: Tool;
  /** The session the call belongs to, for `DELETE`; null without sessions. */
  readonly sessionId: string | null;
  private readonly host: ToolCallHost;
  private readonly sink: ResponseSink;
  private readonly progressToken: string | number | undefined;
  private readonly logThreshold: number;
  private lastProgress = Number.NEGATIVE_INFINITY;
  private state = RUNNING;
  private timer: NodeJS.Timeout | undefined;
  /** A 2026-07-28 request: disconnect always cancels, results carry `resultType`. */
  private readonly modern: boolean;
  /** The worker task of an isolated tool while it runs. */
  private task: IsolatedTask | null = null;

  constructor(
    host: ToolCallHost,
    tool: Tool,
    handle: RequestHandle,
    sink: ResponseSink,
    requestId: RequestId | null,
    scope: string,
    principal: Principal | null,
    progressToken: string | number | undefined,
    logLevel: LoggingLevel | null,
    sessionId: string | null,
    modern = false,
  ) {
    this.host = host;
    this.tool = tool;
    this.handle = handle;
    this.sink = sink;
    this.requestId = requestId;
    this.scope = scope;
    this.principal = principal;
    this.progressToken = progressToken;
    // 2025 era: no level set → every level. 2026-07-28: no `_meta` logLevel → no log messages
    // at all for the request (mcp-protocol.md B.2: the server MUST NOT emit them).
    this.logThreshold =
      logLevel !== null ? loggingLevelRank(logLevel) : modern ? Number.POSITIVE_INFINITY : 0;
    this.sessionId = sessionId;
    this.modern = modern;
  }

  /** The request's signal, created on first use (a tool that never reads it costs none). */
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
      return RESOLVED; // not serialisable (cycle, BigInt): dropped rather than thrown into the tool
    }
    return this.sink.notify(json);
  }

  /** Runs the tool and writes its answer, unless the call was cancelled first. Never rejects. */
  async run(args: unknown): Promise<void> {
    this.sink.setListener(this);
    if (this.handle.aborted) {
      // Cancelled between track and start (a racing cancel): the tool never runs.
      this.state = CANCELLED;
      this.sink.cancel(cancelledResponseJson(this.requestId));
      this.host.outcome(this.tool.name, "cancelled");
      await this.host.release(this);
      return;
    }
    this.handle.setAbortListener(this);
    let json: string;
    let outcome: ToolOutcome;
    try {
      const value = await (this.tool.isolatedHandler === null
        ? this.tool.handler(args as never, this)
        : this.runIsolated(args));
      const result = toResultJson(value, this.modern);
      if (result === null) {
        json = internalErrorJson(this.requestId);
        outcome = "error";
      } else {
        json = successResponseJson(this.requestId, result);
        outcome = (value as { isError?: unknown }).isError === true ? "error" : "ok";
      }
    } catch (error) {
      // Never the tool's message or stack: they may name internals (conduit-behavior.md 8.3 #52).
      json =
        error instanceof WorkerPoolFullError
          ? errorResponseJson(this.requestId, ErrorCode.ServerError, "Server busy")
          : internalErrorJson(this.requestId);
      outcome = "error";
    }
    this.task = null;
    this.settle(json, outcome);
  }

  /** Starts the isolated tool in the server's pool; its progress and logs come back through `this`. */
  private runIsolated(args: unknown): Promise<unknown> {
    const task = this.host.workerPool().start(this.tool.isolatedHandler as never, args, {
      signal: this.signal,
      requestId: this.requestId,
      scope: this.scope,
      onProgress: (progress, total, message) => this.progress(progress, total, message),
      onLog: (level, data) => this.log(level, data),
    });
    this.task = task;
    return task.result;
  }

  /** The abort listener (an EventListener object: no closure per call). */
  handleEvent(): void {
    if (this.state !== RUNNING) return;
    this.state = CANCELLED;
    // The exchange ends now, not when the tool notices (mcp-protocol.md E.3).
    this.sink.cancel(cancelledResponseJson(this.requestId));
    const timer = setTimeout(abandonCall, this.host.streamCancelTimeoutMs, this);
    timer.unref();
    this.timer = timer;
  }

  /** The exchange lost its client before it ended. */
  onDisconnect(): void {
    if (this.state !== RUNNING) return;
    if (this.modern) {
      // 2026-07-28: closing the stream IS the cancellation, whatever `cancelOnDisconnect` says
      // (mcp-protocol.md B.4). cancelHandle aborts the handle before the store write, so the
      // tool's signal fires in the same tick as the socket's close; the row is recorded next.
      this.cancelWith("disconnect", DISCONNECTED);
      return;
    }
    if (!this.host.cancelOnDisconnect) return;
    this.cancelWith("disconnect", DISCONNECTED);
  }

  /**
   * Cancels this call for `source` (a cause that concerns this request alone): its handle aborts
   * at once and a row is recorded under the call's own scope so that `isCancelled(id, scope)`
   * tells the truth; a namesake in the same scope (another client reusing the id) keeps running.
   */
  cancelWith(source: CancellationSource, reason: string): void {
    if (this.state !== RUNNING) return;
    this.host.cancelHandle(this.handle, reason, source).catch(() => {
      // The store failed after the handle aborted: the request is cancelled all the same.
    });
  }

  /** Stream cancel timeout: give up on a tool that ignores its signal. */
  abandon(): void {
    if (this.state !== CANCELLED) return;
    this.state = ABANDONED;
    this.timer = undefined;
    // An isolated tool's worker thread is terminated: its CPU-bound code really stops.
    const terminated = this.task?.kill() ?? false;
    this.task = null;
    this.host.outcome(this.tool.name, "killed");
    if (channels.toolKilled.hasSubscribers) {
      channels.toolKilled.publish({
        tool: this.tool.name,
        requestId: this.handle.requestId ?? "",
        scope: this.scope,
        terminated,
      });
    }
    void this.host.release(this);
    // The abandoned handler may never settle: its concurrency slot is given back now, else a
    // scope calling a stubborn tool would lose its quota for good (issue 6, "Abuse").
    this.sink.released?.();
  }

  private settle(json: string, outcome: ToolOutcome): void {
    this.handle.setAbortListener(null);
    if (this.state === ABANDONED) return; // the late result of an abandoned call is discarded
    if (this.state === CANCELLED) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.host.outcome(this.tool.name, "cancelled");
      void this.host.release(this);
      return;
    }
    this.state = SETTLED;
    this.host.outcome(this.tool.name, outcome);
    // Untracked before the answer is written, so a client that got its answer never sees the
    // request still in flight; the row is cleared afterwards (the seed's finally order).
    void this.host.release(this);
    this.sink.respond(json);
  }
}

function abandonCall(call: ToolCall): void {
  call.abandon();
}

const DISCONNECTED = "client disconnected";

/**
 * A string → one text item; a result object as is; anything else is a tool bug (null). A modern
 * result carries `resultType: "complete"` (mcp-protocol.md B.1 #8).
 */
function toResultJson(value: unknown, modern: boolean): string | null {
  if (typeof value === "string") {
    return modern
      ? JSON.stringify({ content: [{ type: "text", text: value }], resultType: "complete" })
      : JSON.stringify({ content: [{ type: "text", text: value }] });
  }
  if (!isPlainObject(value) || !Array.isArray(value.content)) return null;
  return JSON.stringify(modern ? { ...value, resultType: "complete" } : value);
}
