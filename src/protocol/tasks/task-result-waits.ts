/**
 * The `tasks/result` waits of one node (2025-11-25): each waits for the next change of its task,
 * announced by the store or by a run of this node, and re-reads the store at least every
 * {@link RESULT_RECHECK_MS} in case an announcement was lost.
 */

/**
 * A wait re-reads the store this often, in case a change announcement was lost, and to see a
 * question asked on another node when no shared change feed told this one.
 */
const RESULT_RECHECK_MS = 1_000;

/**
 * The waits, by task id.
 *
 * @example
 * ```ts
 * const waits = new ResultWaits();
 * const woke = await waits.next(taskId, request.signal); // false: the request was cancelled
 * waits.wake(taskId); // from a change announcement
 * ```
 */
export class ResultWaits {
  /** Task id → wake-up functions. */
  private readonly waiters = new Map<string, Set<() => void>>();

  /**
   * Resolves true at the task's next {@link wake} (or after {@link RESULT_RECHECK_MS}), false
   * when `signal` aborts first.
   */
  next(taskId: string, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      let set = this.waiters.get(taskId);
      if (set === undefined) {
        set = new Set();
        this.waiters.set(taskId, set);
      }
      const waiting = set;
      const done = (woke: boolean): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        waiting.delete(wake);
        if (waiting.size === 0 && this.waiters.get(taskId) === waiting) this.waiters.delete(taskId);
        resolve(woke);
      };
      const wake = (): void => done(true);
      const onAbort = (): void => done(false);
      const timer = setTimeout(wake, RESULT_RECHECK_MS);
      timer.unref();
      signal.addEventListener("abort", onAbort, { once: true });
      waiting.add(wake);
    });
  }

  /** Wakes the waits on the task: it may have changed. */
  wake(taskId: string): void {
    const waiting = this.waiters.get(taskId);
    if (waiting !== undefined) for (const wake of [...waiting]) wake();
  }

  /** Wakes every wait (the service closes: each re-reads once and ends with its request). */
  wakeAll(): void {
    for (const wake of [...this.waiters.values()].flatMap((set) => [...set])) wake();
  }
}
