/**
 * The handler calls running on one dispatcher: all of them (a shutdown aborts each), and those of
 * each session (a session's `DELETE` cancels them). Adding and removing a call costs no
 * allocation for a call without a session (intrusive-list.ts).
 */
import type { RequestCancelledError } from "../../errors.js";
import { IntrusiveList } from "../wire/index.js";
import type { HandlerCall } from "./handler-call/handler-call.js";

/**
 * The running calls of a dispatcher.
 *
 * @example
 * ```ts
 * const running = new RunningCalls();
 * running.add(call);
 * running.cancelSession("3q2+7w"); // 1
 * ```
 */
export class RunningCalls {
  private readonly active = new IntrusiveList<HandlerCall>();
  private readonly bySession = new Map<string, Set<HandlerCall>>();

  /** How many calls run. */
  get size(): number {
    return this.active.size;
  }

  add(call: HandlerCall): void {
    this.active.add(call);
    if (call.sessionId === null) return;
    let calls = this.bySession.get(call.sessionId);
    if (calls === undefined) {
      calls = new Set();
      this.bySession.set(call.sessionId, calls);
    }
    calls.add(call);
  }

  /** Forgets `call`; false when it was not running (already forgotten). */
  delete(call: HandlerCall): boolean {
    if (!this.active.delete(call)) return false;
    if (call.sessionId !== null) {
      const calls = this.bySession.get(call.sessionId);
      if (calls !== undefined) {
        calls.delete(call);
        if (calls.size === 0) this.bySession.delete(call.sessionId);
      }
    }
    return true;
  }

  /** Cancels every call of a session (source `disconnect`); returns how many were running. */
  cancelSession(sessionId: string): number {
    const calls = this.bySession.get(sessionId);
    if (calls === undefined) return 0;
    for (const call of [...calls]) call.cancelWith("disconnect", "session terminated");
    return calls.size;
  }

  /** Aborts every running call's handle with `reason`. */
  abortAll(reason: RequestCancelledError): void {
    for (const call of this.active.toArray()) call.handle.abort(reason);
  }
}
