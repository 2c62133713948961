/**
 * The periodic cleanup: the backstop for rows the inline `clear` missed (a cancel racing the
 * request's completion) and handles that died without `untrack`. The next sweep is scheduled
 * only once one has finished, so a slow store never gets overlapping sweeps; the timer is unref'd.
 */
import { channels } from "../diagnostics.js";
import { OPTION, readOption } from "../option-schema.js";

/** Options of {@link CancellationJanitor}. */
export interface CancellationJanitorOptions {
  /** One sweep; resolves with the number of expired rows removed. */
  readonly sweep: () => Promise<number>;
  /** Time between the end of one sweep and the start of the next. Default 60 000 ms. */
  readonly intervalMs?: number;
  /**
   * Called with the error of a failed sweep (e.g. the store is unreachable). The janitor keeps
   * running either way. Default: ignore (the store reports its own outages).
   */
  readonly onError?: (error: unknown) => void;
}

/** Default janitor interval: 1 min (docs/cancellation.md, "The cancellation registry"). */
export const DEFAULT_JANITOR_INTERVAL_MS = 60_000;

/**
 * Runs `sweep` every `intervalMs`, the first one interval after `start()`, and publishes
 * `conduit-mcp:cancellation:janitor` `{ removed }` after each successful sweep.
 */
export class CancellationJanitor {
  /** The configured interval in ms. */
  readonly intervalMs: number;
  private readonly sweep: () => Promise<number>;
  private readonly onError: (error: unknown) => void;
  private timer: NodeJS.Timeout | undefined;
  private started = false;

  constructor(options: CancellationJanitorOptions) {
    this.intervalMs = readOption(
      OPTION.intervalMs,
      "janitorIntervalMs",
      options.intervalMs,
      DEFAULT_JANITOR_INTERVAL_MS,
    );
    this.sweep = options.sweep;
    this.onError = options.onError ?? ignore;
  }

  /** Whether the janitor is started and not stopped. */
  get running(): boolean {
    return this.started;
  }

  /** Schedules the first sweep one interval from now. Calling it again while running does nothing. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.schedule();
  }

  /** Cancels the pending sweep; a sweep already running finishes but schedules nothing. Idempotent. */
  stop(): void {
    this.started = false;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /**
   * Runs one sweep now (outside the schedule) and publishes its result. Resolves with the number
   * removed, or `null` when the sweep failed (the error goes to `onError`); never rejects.
   */
  async runOnce(): Promise<number | null> {
    let removed: number;
    try {
      const result = await this.sweep();
      // A store answering something other than a count must not break the diagnostics message.
      removed = Number.isSafeInteger(result) ? result : 0;
    } catch (error) {
      try {
        this.onError(error);
      } catch {
        // A throwing error hook must not kill the janitor either.
      }
      return null;
    }
    if (channels.cancellationJanitor.hasSubscribers) {
      channels.cancellationJanitor.publish({ removed });
    }
    return removed;
  }

  private schedule(): void {
    const timer = setTimeout(() => this.tick(), this.intervalMs);
    timer.unref();
    this.timer = timer;
  }

  private tick(): void {
    this.timer = undefined;
    void this.runOnce().then(() => {
      if (this.started && this.timer === undefined) this.schedule();
    });
  }
}

function ignore(): void {}
