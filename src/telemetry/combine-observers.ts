/**
 * One {@link DispatchObserver} out of several (metrics, error reporting, tracing): the dispatcher
 * takes one observer, and each concern stays its own object. Each observer's failure is its own:
 * one that throws does not keep the others from hearing about the call.
 */
import type {
  DispatchObserver,
  HandlerEnd,
  HandlerInfo,
  HandlerOutcome,
  RequestInfo,
  ResponseSink,
  ToolOutcome,
} from "../protocol/index.js";

/**
 * Combines observers; `null` entries are skipped. None gives null, one gives itself (no
 * indirection on the request path).
 *
 * @example
 * ```ts
 * const observer = combineObservers([metrics, new ErrorReporter(logHandlerError)]);
 * ```
 */
export function combineObservers(
  observers: readonly (DispatchObserver | null | undefined)[],
): DispatchObserver | null {
  const present = observers.filter((o): o is DispatchObserver => o !== null && o !== undefined);
  if (present.length === 0) return null;
  if (present.length === 1) return present[0] as DispatchObserver;
  return new CombinedObserver(present);
}

class CombinedObserver implements DispatchObserver {
  private readonly toolCalls: DispatchObserver[];
  private readonly starts: DispatchObserver[];
  private readonly ends: DispatchObserver[];
  private readonly requests: DispatchObserver[];
  private readonly runners: DispatchObserver[];
  /** Present only when an observer wants requests: the dispatcher then pays nothing for them. */
  readonly requestStarted?: (info: RequestInfo, sink: ResponseSink) => ResponseSink | undefined;
  readonly runHandler?: (info: HandlerInfo, run: () => unknown) => unknown;

  constructor(observers: readonly DispatchObserver[]) {
    this.toolCalls = observers.filter((o) => o.toolCall !== undefined);
    this.starts = observers.filter((o) => o.handlerStarted !== undefined);
    this.ends = observers.filter((o) => o.handlerEnded !== undefined);
    this.requests = observers.filter((o) => o.requestStarted !== undefined);
    this.runners = observers.filter((o) => o.runHandler !== undefined);
    if (this.requests.length > 0) this.requestStarted = this.startRequest;
    if (this.runners.length > 0) this.runHandler = this.runInside;
  }

  /** Each observer may stand its own sink in front of the one before. */
  private readonly startRequest = (info: RequestInfo, sink: ResponseSink): ResponseSink => {
    let current = sink;
    for (const observer of this.requests) {
      try {
        current = observer.requestStarted?.(info, current) ?? current;
      } catch {
        // its own failure
      }
    }
    return current;
  };

  /** Whether one of the observers of requests may follow one now. */
  followsRequests(): boolean {
    for (const observer of this.requests) {
      if (observer.followsRequests?.() !== false) return true;
    }
    return false;
  }

  /** The first observer's context is the outermost. */
  private readonly runInside = (info: HandlerInfo, run: () => unknown): unknown => {
    let inner = run;
    for (let i = this.runners.length - 1; i >= 0; i--) {
      const observer = this.runners[i] as DispatchObserver;
      const next = inner;
      inner = () =>
        (observer.runHandler as NonNullable<DispatchObserver["runHandler"]>)(info, next);
    }
    return inner();
  };

  toolCall(tool: string, outcome: ToolOutcome, seconds: number): void {
    for (const observer of this.toolCalls) {
      try {
        observer.toolCall?.(tool, outcome, seconds);
      } catch {
        // its own failure
      }
    }
  }

  handlerStarted(info: HandlerInfo): void {
    for (const observer of this.starts) {
      try {
        observer.handlerStarted?.(info);
      } catch {
        // its own failure
      }
    }
  }

  /** An end concerns the group when it concerns one of its members (tool calls: every end). */
  wantsEnd(outcome: HandlerOutcome, followed: boolean): boolean {
    if (this.toolCalls.length > 0) return true;
    for (const observer of this.ends) {
      if (observer.wantsEnd?.(outcome, followed) !== false) return true;
    }
    return false;
  }

  handlerEnded(info: HandlerInfo, end: HandlerEnd, seconds: number): void {
    for (const observer of this.ends) {
      try {
        observer.handlerEnded?.(info, end, seconds);
      } catch {
        // its own failure
      }
    }
  }
}
