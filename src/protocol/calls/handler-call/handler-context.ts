/**
 * What a handler sees of its call (its {@link ToolContext}): who asked, the request's view and
 * signal, progress and log notifications on the call's own stream, and questions to the client.
 * The base of {@link HandlerCall}, which adds the run from start to answer: one object per
 * invocation either way, with methods rather than per-request closures.
 */
import type { RequestHandle, RequestId } from "../../../cancellation/types.js";
import type { HandlerKind } from "../../../diagnostics.js";
import { CannotAskClientError } from "../../../errors.js";
import type { Principal } from "../../../identity/index.js";
import { isLoggingLevel, type LoggingLevel, loggingLevelRank } from "../../../logging-levels.js";
import {
  type AskerScope,
  type AskOptions,
  type ClientAsker,
  cannotAsk,
  type ElicitResult,
  type ElicitSchema,
  FirstRound,
  type RootsResult,
  type SampleRequest,
  type SampleResult,
} from "../../asking/index.js";
import type { ResponseSink } from "../../wire/index.js";
import { notificationJson } from "../../wire/index.js";
import { HANDLED } from "../handled.js";
import type { RequestInfo, RequestView, RequestViewSource } from "../request-info.js";
import type { ToolContext } from "../tool-context.js";
import type { HandlerInfo } from "./handler-outcome.js";

/** What a handler's context needs from the dispatcher that runs it. */
export interface HandlerContextHost {
  /**
   * A 2025-era asker (server requests on the call's own stream) for a call made with
   * {@link HandlerContextOptions.serverAsks}: made on the call's first ask.
   */
  serverAsker(
    sink: ResponseSink,
    who: AskerScope,
    capabilities: Readonly<Record<string, unknown>> | null,
  ): ClientAsker;
}

/** Which handler a call runs, as observers name it. */
export interface NamedInvocation {
  readonly method: string;
  readonly kind: HandlerKind;
  readonly name: string;
}

/** What a {@link HandlerContext} takes (the host and the invocation are its call's). */
export interface HandlerContextOptions<Host, Invocation> {
  readonly host: Host;
  readonly invocation: Invocation;
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
   * when this server was not told), the asker made by the host; or a 2026-07-28 call's
   * {@link FirstRound}. Either asker is made on the first ask (or `saveState`), not per call
   * (most calls never ask). Undefined: no such asker.
   */
  readonly serverAsks?: Readonly<Record<string, unknown>> | FirstRound | null | undefined;
}

/**
 * {@link HandlerContext.bits}: a 2026-07-28 request. Subclasses use the bits above it, up to
 * bit 7; the log threshold is above those.
 */
export const MODERN = 1;

/** Whether the context's view field still holds where the view comes from. */
function isViewSource(view: RequestViewSource | RequestView): view is RequestViewSource {
  return typeof (view as Partial<RequestViewSource>).requestView === "function";
}

/** A notification not sent (the call ended, no stream, nothing asked for it): settled already. */
const RESOLVED: Promise<void> = HANDLED;
/**
 * The log threshold of a call that gets no log messages: above every level's rank (0 to 7). The
 * threshold is kept in {@link HandlerContext.bits}, from {@link LOG_SHIFT} up.
 */
const NO_LOG_MESSAGES = 8;
/** Where the log threshold starts in the bits (below: MODERN and the subclass's own). */
const LOG_SHIFT = 8;
const COMPLETED = "The request that asked has completed";
/** The error of asks withdrawn because their call completed (made only when one is waiting). */
const completedError = (): CannotAskClientError => new CannotAskClientError(COMPLETED);

/**
 * A handler's context. Abstract: {@link HandlerCall} runs the handler and says whether the call
 * still runs ({@link HandlerContext.isRunning}).
 *
 * @example
 * ```ts
 * class Call extends HandlerContext<HandlerContextHost, NamedInvocation> {
 *   protected isRunning(): boolean { return !this.answered; }
 * }
 * ```
 */
export abstract class HandlerContext<
  Host extends HandlerContextHost,
  Invocation extends NamedInvocation,
> implements ToolContext
{
  readonly requestId: RequestId | null;
  readonly scope: string;
  /** The bucket paying for its questions (HandlerContextOptions.bucket). */
  private readonly bucket: string;
  readonly principal: Principal | null;
  readonly handle: RequestHandle;
  readonly invocation: Invocation;
  /** The session the call belongs to, for `DELETE`; null without sessions. */
  readonly sessionId: string | null;
  protected readonly host: Host;
  protected readonly sink: ResponseSink;
  /**
   * {@link MODERN} and the subclass's own state and flags, in one small integer: a field each
   * cost 8 bytes per running call (docs/profile.md, "Held calls at 10 000").
   */
  protected bits: number;
  private readonly progressToken: string | number | undefined;
  /**
   * The last progress sent; null before the first. Not `-Infinity`: a field that starts as a
   * double gets a heap box of its own in every call (16 B per running call).
   */
  private lastProgress: number | null = null;
  /**
   * What observers are told, for a request an observer follows (made once, as it starts);
   * null otherwise (see {@link info}).
   */
  private readonly described: HandlerInfo | null;
  /**
   * Where `ctx.request` comes from ({@link HandlerContextOptions.view}) until a handler reads it,
   * then the view made from it; null for none.
   */
  private view: RequestViewSource | RequestView | null;
  protected asker: ClientAsker | null;
  /** See {@link HandlerContextOptions.serverAsks}; undefined once made (or when there is none). */
  private serverAsks: Readonly<Record<string, unknown>> | FirstRound | null | undefined;

  constructor(options: HandlerContextOptions<Host, Invocation>) {
    this.host = options.host;
    this.invocation = options.invocation;
    this.handle = options.handle;
    this.sink = options.sink;
    this.requestId = options.requestId;
    this.scope = options.scope;
    this.bucket = options.bucket ?? options.scope;
    this.principal = options.principal;
    this.progressToken = options.progressToken;
    // 2025 era: no level set → every level. 2026-07-28: no `_meta` logLevel → no log messages
    // for the request (https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging).
    const logThreshold =
      options.logLevel !== null
        ? loggingLevelRank(options.logLevel)
        : options.modern
          ? NO_LOG_MESSAGES
          : 0;
    this.bits = (options.modern ? MODERN : 0) | (logThreshold << LOG_SHIFT);
    this.sessionId = options.sessionId;
    const request = options.request ?? null;
    // Tracing keys its span by this object: the same one from start to end.
    this.described = request === null ? null : this.describe(request);
    this.view = options.view ?? null;
    this.asker = options.asker ?? null;
    this.serverAsks = this.asker === null ? options.serverAsks : undefined;
  }

  /** A 2026-07-28 request: disconnect always cancels, results carry `resultType`. */
  get modern(): boolean {
    return (this.bits & MODERN) !== 0;
  }

  /** The request as observers were told of it; null when none follows it. */
  get requestInfo(): RequestInfo | null {
    return this.described === null ? null : this.described.request;
  }

  /** True until the call is answered, cancelled or abandoned: only then does it notify or ask. */
  protected abstract isRunning(): boolean;

  /**
   * What observers are told about this call. For a request an observer follows (tracing keys
   * its span by this object) it is the same object from start to end; otherwise it is made on
   * each use, so a waiting call keeps none.
   */
  get info(): HandlerInfo {
    return this.described ?? this.describe(null);
  }

  private describe(request: RequestInfo | null): HandlerInfo {
    return Object.freeze({
      method: this.invocation.method,
      kind: this.invocation.kind,
      name: this.invocation.name,
      requestId: this.requestId,
      scope: this.scope,
      sessionId: this.sessionId,
      protocolEra: this.modern ? "2026-07-28" : "2025-11-25",
      principalId: typeof this.principal?.id === "string" ? this.principal.id : null,
      request,
    });
  }

  /** The HTTP request's view, made on first use (a handler that never reads it costs none). */
  get request(): RequestView | null {
    const view = this.view;
    if (view === null || !isViewSource(view)) return view;
    const made = view.requestView();
    this.view = made;
    return made;
  }

  /** The request's signal, created on first use (a handler that never reads it costs none). */
  get signal(): AbortSignal {
    return this.handle.signal;
  }

  cancelled(): boolean {
    return this.handle.aborted;
  }

  progress(progress: number, total?: number, message?: string): Promise<void> {
    if (!this.isRunning() || this.progressToken === undefined || !this.sink.streamable) {
      return RESOLVED;
    }
    if (typeof progress !== "number" || !Number.isFinite(progress)) return RESOLVED;
    // MCP 2025-11-25 progress: the value MUST increase with every notification.
    if (this.lastProgress !== null && progress <= this.lastProgress) return RESOLVED;
    this.lastProgress = progress;
    const params: Record<string, unknown> = { progressToken: this.progressToken, progress };
    if (typeof total === "number" && Number.isFinite(total)) params.total = total;
    if (typeof message === "string") params.message = message;
    return this.sink.notify(notificationJson("notifications/progress", params));
  }

  log(level: LoggingLevel, data: unknown): Promise<void> {
    if (!this.isRunning() || !this.sink.streamable || !isLoggingLevel(level)) return RESOLVED;
    if (loggingLevelRank(level) < this.bits >> LOG_SHIFT) return RESOLVED;
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
    // A 2026-07-28 first round is made now: the state goes with the round's next question.
    if (this.asker === null && this.serverAsks instanceof FirstRound) this.openAsker();
    this.asker?.saveState(value);
  }

  /** Whether a question of this run is pending or an answer was invalid (the run ends asking). */
  asking(): boolean {
    return this.asker?.waiting?.() === true;
  }

  /** The call was answered without waiting for every question: those still open are withdrawn. */
  protected withdrawQuestions(): void {
    this.asker?.close?.(COMPLETED, completedError);
  }

  /** Null when `this.asker` may ask (made now if it is made on first use), else the refusal. */
  private askRefused(): Promise<never> | null {
    if (this.handle.aborted) return Promise.reject(this.handle.signal.reason);
    if (this.asker === null && this.serverAsks !== undefined) this.openAsker();
    return this.asker === null ? cannotAsk() : null;
  }

  /** Makes the asker made on first use ({@link HandlerContextOptions.serverAsks}). */
  private openAsker(): void {
    const made = this.serverAsks;
    if (made === undefined) return;
    const asker: ClientAsker =
      made instanceof FirstRound
        ? made.open(this.invocation.method, this.invocation.name, this.scope)
        : this.host.serverAsker(this.sink, { scope: this.scope, bucket: this.bucket }, made);
    this.serverAsks = undefined;
    this.asker = asker;
    // Asked after the call was answered: refused, as a closed asker refuses.
    if (!this.isRunning()) asker.close?.(COMPLETED, completedError);
  }
}
