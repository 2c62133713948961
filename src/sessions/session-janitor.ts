/**
 * Periodic removal of idle sessions (by default: idle for 30 min,
 * every minute). The timer is unref'd so it never keeps the process alive.
 */
import type { SessionStore } from "./session-store.js";

/**
 * A running janitor; `stop()` is idempotent.
 *
 * @example
 * ```ts
 * const janitor = new SessionJanitor(store, 30 * 60_000, 60_000);
 * janitor.stop();
 * ```
 */
export class SessionJanitor {
  private timer: NodeJS.Timeout | undefined;
  private readonly store: SessionStore;
  private readonly ttlMs: number;
  private readonly clock: () => number;

  constructor(
    store: SessionStore,
    ttlMs: number,
    intervalMs: number,
    clock: () => number = Date.now,
  ) {
    this.store = store;
    this.ttlMs = ttlMs;
    this.clock = clock;
    store.idleTtl?.(ttlMs);
    this.timer = setInterval(() => void this.sweep(), intervalMs);
    this.timer.unref();
  }

  /** One pass; resolves how many sessions were removed (0 on a store failure). */
  async sweep(): Promise<number> {
    try {
      return await this.store.cleanup(this.ttlMs, this.clock());
    } catch {
      return 0;
    }
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
