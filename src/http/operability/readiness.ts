/**
 * `GET /ready`: whether this node should get new work. Not ready (503) while it drains (close()
 * began: SIGTERM in the CLI) or while a shared store cannot reach its service (Redis), ready
 * (200) otherwise. `/health` stays liveness: 200 while the process answers at all.
 *
 * The stores' state is read from their connection events ({@link Reachability}), never by a
 * command per probe, so `/ready` turns 503 as soon as a connection drops and costs nothing. The
 * node logs one line when its stores lose Redis and one when all of them have it back.
 */
import type { Reachability } from "../../reachability.js";
import type { ResponseHeaders, ResponseTarget } from "../transport.js";
import { writeJson } from "../write-response.js";

/** What `/ready` says: ready, draining (closing), or a store's service unreachable. */
export type ReadyState = "ready" | "draining" | "unavailable";

/** Options of {@link Readiness}. */
export interface ReadinessOptions {
  /** The shared stores' reachability (none for a node on memory stores). */
  readonly sources: readonly Reachability[];
  /** True once the server began to close. */
  readonly draining: () => boolean;
  /** Receives the outage and recovery lines. */
  readonly log: (line: string) => void;
  /** The clock for the outage's length in the recovery line. Default `Date.now`. */
  readonly now?: () => number;
}

const BODY: Readonly<Record<ReadyState, string>> = {
  ready: '{"status":"ready"}',
  draining: '{"status":"draining"}',
  unavailable: '{"status":"unavailable"}',
};
const RETRY: ResponseHeaders = Object.freeze({ "retry-after": "1" });

/**
 * @example
 * ```ts
 * const readiness = new Readiness({ sources: [store.reachability], draining: () => closing, log: console.warn });
 * readiness.state; // "ready"
 * readiness.answer(target); // 200 {"status":"ready"}
 * readiness.stop();
 * ```
 */
export class Readiness {
  private readonly options: ReadinessOptions;
  private readonly now: () => number;
  private readonly unsubscribe: Array<() => void>;
  /** When the stores lost their service (a line was logged), else null. */
  private lostAt: number | null = null;

  constructor(options: ReadinessOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.unsubscribe = options.sources.map((source) =>
      source.onReachabilityChange(() => this.changed()),
    );
  }

  /** The state now. */
  get state(): ReadyState {
    if (this.options.draining()) return "draining";
    return this.reachable() ? "ready" : "unavailable";
  }

  /** Answers a `GET`/`HEAD /ready`: 200 when ready, else 503 with `Retry-After`. */
  answer(target: ResponseTarget): void {
    const state = this.state;
    if (state === "ready") writeJson(target, 200, BODY.ready);
    else writeJson(target, 503, BODY[state], RETRY);
  }

  /** Stops hearing the stores (the server closed). */
  stop(): void {
    for (const stop of this.unsubscribe.splice(0)) stop();
  }

  /** True while every shared store reaches its service (always, on memory stores). */
  get storesReachable(): boolean {
    return this.reachable();
  }

  private reachable(): boolean {
    return this.options.sources.every((source) => source.reachable);
  }

  /** A store's connection changed: one line when the first drops, one when the last is back. */
  private changed(): void {
    const reachable = this.reachable();
    if (!reachable && this.lostAt === null) {
      this.lostAt = this.now();
      this.say(
        "conduit-mcp: Redis unreachable: not ready (GET /ready answers 503) until every store has it back",
      );
    } else if (reachable && this.lostAt !== null) {
      const seconds = ((this.now() - this.lostAt) / 1_000).toFixed(1);
      this.lostAt = null;
      this.say(
        `conduit-mcp: Redis reachable again after ${seconds} s: ready (GET /ready answers 200)`,
      );
    }
  }

  private say(line: string): void {
    try {
      this.options.log(line);
    } catch {
      // A broken logger must not break the stores' connection handling.
    }
  }
}
