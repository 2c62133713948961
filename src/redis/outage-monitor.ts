/**
 * Tracks whether Redis is reachable and reports each outage once: one log line and one
 * `conduit-mcp:store:outage` event when it goes down, one event when it comes back — never one per
 * request (issue 5, "Faults").
 */
import { channels } from "../diagnostics.js";

/** Message of `conduit-mcp:store:outage`. */
export interface StoreOutageMessage {
  readonly store: "redis";
  readonly state: "down" | "up";
  readonly error?: string;
}

/**
 * Up/down state machine with edge-triggered reporting.
 *
 * @example
 * ```ts
 * const monitor = new OutageMonitor(console.warn);
 * monitor.down(new Error("ECONNREFUSED")); // logs once, publishes { state: "down" }
 * monitor.down(new Error("ECONNREFUSED")); // silent
 * monitor.up();                            // publishes { state: "up" }
 * ```
 */
export class OutageMonitor {
  private outage = false;
  private readonly logger: (message: string) => void;

  constructor(logger: (message: string) => void) {
    this.logger = logger;
  }

  /** Whether an outage is in progress. */
  get isDown(): boolean {
    return this.outage;
  }

  /** Reports the start of an outage, once. */
  down(error: unknown): void {
    if (this.outage) return;
    this.outage = true;
    const text = describeError(error);
    try {
      this.logger(
        `conduit-mcp: Redis cancellation store unreachable (${text}); failing open: requests are served, local cancellation still works, cross-node cancellation resumes when Redis is back`,
      );
    } catch {
      // A broken logger must not break request handling.
    }
    if (channels.storeOutage.hasSubscribers) {
      channels.storeOutage.publish({ store: "redis", state: "down", error: text });
    }
  }

  /** Reports the end of an outage, once. */
  up(): void {
    if (!this.outage) return;
    this.outage = false;
    if (channels.storeOutage.hasSubscribers) {
      channels.storeOutage.publish({ store: "redis", state: "up" });
    }
  }
}

/** A short, single-line description of an error, never throwing. */
export function describeError(error: unknown): string {
  let text: string;
  try {
    text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } catch {
    text = "unknown error";
  }
  return text.replace(/\s+/g, " ").slice(0, 200);
}
