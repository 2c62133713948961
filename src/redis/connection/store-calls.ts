/**
 * How a node store (the cancellation and task stores) sends one command to Redis: never while the
 * connection is not ready (no buffering), bounded by `commandTimeoutMs`, and a failure told apart:
 * an outage (the connection, a timeout, or a reply that means "Redis cannot serve now") is reported
 * once through the store's {@link OutageMonitor}; a reply error no retry will fix (a script fault)
 * is logged once per text. Either way the call resolves the caller's fallback, so each store
 * decides for itself whether it fails open or closed.
 */
import type { ChainableCommander } from "ioredis";
import { StoreClosedError } from "../../errors.js";
import { bounded } from "./bounded.js";
import type { RedisClient } from "./connection.js";
import { describeError, type OutageMonitor } from "./outage-monitor.js";

/** Reply errors that mean "Redis cannot serve now" (an outage), not "this call is wrong". */
const OUTAGE_REPLY =
  /^(LOADING|READONLY|CLUSTERDOWN|MASTERDOWN|BUSY|TRYAGAIN|NOREPLICAS|MOVED|ASK)\b/;
/** Distinct script faults logged per store: a bounded set, one line each. */
const MAX_REPORTED_FAULTS = 20;

/** Options of {@link StoreCalls}. */
export interface StoreCallsOptions {
  /** The command connection (its scripts defined on it). */
  readonly client: RedisClient;
  /** Upper bound on one call (ms, already validated). */
  readonly timeoutMs: number;
  /** Where outages are reported. */
  readonly monitor: OutageMonitor;
  /** Receives the line of a script fault. */
  readonly logger: (message: string) => void;
  /** The line logged for a script fault, given the error's one-line description. */
  readonly faultLine: (description: string) => string;
  /** Whether the store is closed: a call then throws {@link StoreClosedError}. */
  readonly isClosed: () => boolean;
  /**
   * Redis answered again after an outage on a connection that never dropped (e.g. after a
   * stall): what the store catches up on (its lease, what it kept meanwhile).
   */
  readonly onBack: () => void;
}

/**
 * Sends a store's commands under one policy; `S` is the store's scripts, as ioredis
 * `defineCommand` added them to the client.
 *
 * @example
 * ```ts
 * const calls = new StoreCalls<TaskScripts>({ client, timeoutMs, monitor, logger, faultLine, isClosed, onBack });
 * const size = await calls.run((c) => c.scard(key), 0); // 0 while Redis is away
 * ```
 */
export class StoreCalls<S> {
  private readonly options: StoreCallsOptions;
  private readonly reportedFaults = new Set<string>();

  constructor(options: StoreCallsOptions) {
    this.options = options;
  }

  /** Runs `op`; `fallback` when it was not sent or failed (see the module comment). */
  async run<T, F>(op: (client: RedisClient & S) => Promise<T>, fallback: F): Promise<T | F> {
    const { client, monitor } = this.options;
    if (this.options.isClosed()) throw new StoreClosedError();
    if (client.status !== "ready") return fallback;
    try {
      const result = await bounded(op(client as RedisClient & S), this.options.timeoutMs);
      if (monitor.isDown) {
        monitor.up();
        this.options.onBack();
      }
      return result;
    } catch (error) {
      this.fault(error);
      return fallback;
    }
  }

  /** An outage (reported once), or a reply error no retry will fix (reported once per text). */
  private fault(error: unknown): void {
    const name = error instanceof Error ? error.name : "";
    const message = error instanceof Error ? error.message : "";
    if (name === "ReplyError" && !OUTAGE_REPLY.test(message)) {
      const text = describeError(error);
      if (this.reportedFaults.has(text) || this.reportedFaults.size >= MAX_REPORTED_FAULTS) return;
      this.reportedFaults.add(text);
      try {
        this.options.logger(this.options.faultLine(text));
      } catch {
        // A broken logger must not break request handling.
      }
      return;
    }
    this.options.monitor.down(error);
  }
}

/**
 * Sends a pipeline and resolves its replies; rejects with the first command's error (each
 * command of a pipeline runs on its own, so those before it were run).
 */
export async function execAll(pipeline: ChainableCommander): Promise<unknown[]> {
  const replies = await pipeline.exec();
  if (replies === null) throw new Error("pipeline not answered");
  return replies.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}
