/**
 * What watches the dispatcher: told about every handler invocation (tools, resource reads, prompt
 * gets, completions) and, when it asks, about every request. Metrics, error reporting and tracing
 * are observers.
 */
import type { ResponseSink } from "../wire/index.js";
import type {
  HandlerEnd,
  HandlerInfo,
  HandlerOutcome,
  ToolOutcome,
} from "./handler-call/handler-outcome.js";
import type { RequestInfo } from "./request-info.js";

/**
 * Told about every handler invocation: its start, and its end with outcome, error and
 * cancellation source. Every member is optional. Observers must not throw; what they throw is
 * ignored.
 */
export interface DispatchObserver {
  /** A tool call ended (metrics per tool), `seconds` after its handler started. */
  toolCall?(tool: string, outcome: ToolOutcome, seconds: number): void;
  /**
   * A handler is about to run. When the observers have `requestStarted`, only for handlers of
   * requests one of them follows.
   */
  handlerStarted?(info: HandlerInfo): void;
  /** A handler ended (answered, failed, cancelled, or abandoned: `killed`), `seconds` after it started. */
  handlerEnded?(info: HandlerInfo, end: HandlerEnd, seconds: number): void;
  /**
   * Whether this end concerns the observer at all (`followed`: a `requestStarted` followed the
   * call's request); false lets the dispatcher skip `toolCall` and `handlerEnded` for it, and the
   * info and clock reading it would build for them (an answered call nobody traces concerns
   * neither the error reporter nor tracing). Absent: every end concerns it.
   */
  wantsEnd?(outcome: HandlerOutcome, followed: boolean): boolean;
  /**
   * A request (any method) is about to run. May return a sink standing in for `sink` (it must
   * forward every member) to see how the request's exchange ends: tracing ends its span there.
   * An observer that returns none does not follow the request: its handler's
   * {@link HandlerInfo.request} is then null.
   */
  requestStarted?(info: RequestInfo, sink: ResponseSink): ResponseSink | undefined;
  /**
   * Whether `requestStarted` may follow a request at this moment; false lets the dispatcher skip
   * the request's info and the call altogether (tracing says false while no SDK is registered).
   * Absent: always true.
   */
  followsRequests?(): boolean;
  /**
   * Runs the user's handler (`run`) inside the observer's context: tracing makes its span active.
   * When the observers have `requestStarted`, only for handlers of requests one of them follows.
   */
  runHandler?(info: HandlerInfo, run: () => unknown): unknown;
}
