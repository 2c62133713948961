/**
 * Tracks whether Redis is reachable and reports each outage once: one log line naming the store
 * and one `conduit-mcp:store:outage` event when it goes down, one event when it comes back — never
 * one per request.
 */
import { channels } from "../../diagnostics.js";

/** Message of `conduit-mcp:store:outage`. */
export interface StoreOutageMessage {
  readonly store: "redis";
  /** Which store lost Redis: the cancellation, session or task store, or the reply bus. */
  readonly part: OutagePart;
  readonly state: "down" | "up";
  readonly error?: string;
}

/** The store an {@link OutageMonitor} speaks for. */
export type OutagePart = "cancellation" | "sessions" | "tasks" | "replies" | "changes" | "rates";

/** What each store does while Redis is away, for its one outage line. */
const CONSEQUENCE: Readonly<Record<OutagePart, string>> = {
  cancellation:
    "Redis cancellation store unreachable (%s); failing open: requests are served, local cancellation still works, cross-node cancellation resumes when Redis is back",
  replies:
    "Redis reply bus unreachable (%s); failing open: a client's answer that reaches another node than the one that asked is dropped (that ask times out) until Redis is back",
  sessions:
    "Redis session store unreachable (%s); sessions created or seen on this node are served from its local copy, new sessions are kept there and written to Redis when it is back",
  tasks:
    "Redis task store unreachable (%s); failing closed: tasks cannot be created, read or cancelled until it is back (clients get an error and retry), status and results of tasks running here are written when it is back",
  changes:
    "Redis change feed unreachable (%s); list changes and resource updates reach this node's listeners only until Redis is back",
  rates:
    "Redis rate-limit store unreachable (%s); failing open: each node applies the rate limits alone, from its own memory, until Redis is back",
};

/**
 * Up/down state machine with edge-triggered reporting.
 *
 * @example
 * ```ts
 * const monitor = new OutageMonitor(console.warn, "cancellation");
 * monitor.down(new Error("ECONNREFUSED")); // logs once, publishes { state: "down" }
 * monitor.down(new Error("ECONNREFUSED")); // silent
 * monitor.up();                            // publishes { state: "up" }
 * ```
 */
export class OutageMonitor {
  private outage = false;
  private readonly logger: (message: string) => void;
  private readonly part: OutagePart;

  constructor(logger: (message: string) => void, part: OutagePart) {
    this.logger = logger;
    this.part = part;
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
      this.logger(`conduit-mcp: ${CONSEQUENCE[this.part].replace("%s", () => text)}`);
    } catch {
      // A broken logger must not break request handling.
    }
    if (channels.storeOutage.hasSubscribers) {
      channels.storeOutage.publish({ store: "redis", part: this.part, state: "down", error: text });
    }
  }

  /** Reports the end of an outage, once. */
  up(): void {
    if (!this.outage) return;
    this.outage = false;
    if (channels.storeOutage.hasSubscribers) {
      channels.storeOutage.publish({ store: "redis", part: this.part, state: "up" });
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
