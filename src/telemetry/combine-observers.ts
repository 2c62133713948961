/**
 * One {@link DispatchObserver} out of several (metrics, error reporting, tracing): the dispatcher
 * takes one observer, and each concern stays its own object. Each observer's failure is its own:
 * one that throws does not keep the others from hearing about the call.
 */
import type { DispatchObserver, HandlerEnd, HandlerInfo, ToolOutcome } from "../protocol/index.js";

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

  constructor(observers: readonly DispatchObserver[]) {
    this.toolCalls = observers.filter((o) => o.toolCall !== undefined);
    this.starts = observers.filter((o) => o.handlerStarted !== undefined);
    this.ends = observers.filter((o) => o.handlerEnded !== undefined);
  }

  toolCall(tool: string, outcome: ToolOutcome): void {
    for (const observer of this.toolCalls) {
      try {
        observer.toolCall?.(tool, outcome);
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

  handlerEnded(info: HandlerInfo, end: HandlerEnd): void {
    for (const observer of this.ends) {
      try {
        observer.handlerEnded?.(info, end);
      } catch {
        // its own failure
      }
    }
  }
}
