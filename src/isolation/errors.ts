/**
 * Local errors of the worker pool. {@link ToolKilledError} uses the existing
 * `CONDUIT_ERR_TOOL_KILLED` code; the others carry codes that `ConduitErrorCode` in
 * `src/errors.ts` does not list yet, so they extend {@link IsolationError} until the lead moves
 * them there (DESIGN.md, "Conventions": every local error class belongs in one `errors.ts`).
 * None of them is ever written to the wire as it is: the server maps them to JSON-RPC codes.
 *
 * @example
 * ```ts
 * try {
 *   await pool.run(handler, args);
 * } catch (error) {
 *   if (error instanceof ToolKilledError) console.log("worker terminated");
 * }
 * ```
 */
import { ConduitError } from "../errors.js";

/** Stable string codes of the pool errors not (yet) in `ConduitErrorCode`. */
export type IsolationErrorCode =
  | "CONDUIT_ERR_TOOL_FAILED"
  | "CONDUIT_ERR_POOL_FULL"
  | "CONDUIT_ERR_POOL_CLOSED";

/**
 * Base of the pool errors whose codes are not in `ConduitErrorCode`: the same shape as
 * `ConduitError` (stable `code`, `name`, `cause`).
 *
 * @example
 * ```ts
 * if (error instanceof IsolationError && error.code === "CONDUIT_ERR_POOL_FULL") retryLater();
 * ```
 */
export class IsolationError extends Error {
  readonly code: IsolationErrorCode;

  constructor(code: IsolationErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/**
 * An isolated tool's worker thread was terminated (`task.kill()` at the stream cancel timeout,
 * or `pool.close()`), so the run ends without a result (issue 4, "Stream cancel timeout").
 *
 * @example
 * ```ts
 * const task = pool.start(handler, args);
 * task.kill();
 * await task.result.catch((e) => e instanceof ToolKilledError); // true
 * ```
 */
export class ToolKilledError extends ConduitError {
  constructor() {
    super(
      "CONDUIT_ERR_TOOL_KILLED",
      "the isolated tool was killed: its worker thread was terminated",
    );
  }
}

/**
 * An isolated tool failed: it threw (or rejected), or its worker died under it (uncaught
 * exception, `process.exit`, out of memory under `resourceLimits`). The tool's own error is the
 * `cause`, rebuilt from its name, message and stack: for local logs only, never for the wire
 * (DESIGN.md: "Never leak internals"); the server answers -32603.
 *
 * @example
 * ```ts
 * if (error instanceof IsolatedToolError && error.crashed) console.log("worker died", error.exitCode);
 * ```
 */
export class IsolatedToolError extends IsolationError {
  /** True when the worker thread died rather than the tool throwing. */
  readonly crashed: boolean;
  /** The worker's exit code when it died, else null. */
  readonly exitCode: number | null;

  constructor(crashed: boolean, exitCode: number | null, cause: unknown) {
    super(
      "CONDUIT_ERR_TOOL_FAILED",
      crashed
        ? `the isolated tool's worker thread died (exit code ${exitCode})`
        : "the isolated tool failed",
      { cause },
    );
    this.crashed = crashed;
    this.exitCode = exitCode;
  }
}

/**
 * Every worker is busy and the queue holds `maxQueue` tasks: the run is refused at once rather
 * than queued without bound.
 *
 * @example
 * ```ts
 * if (error instanceof WorkerPoolFullError) answerServerBusy();
 * ```
 */
export class WorkerPoolFullError extends IsolationError {
  constructor(maxQueue: number) {
    super(
      "CONDUIT_ERR_POOL_FULL",
      `the worker pool is busy and its queue is full (${maxQueue} tasks)`,
    );
  }
}

/**
 * The pool was closed: a queued task is dropped, a new one refused.
 *
 * @example
 * ```ts
 * await pool.close();
 * await pool.run(handler, args); // rejects with WorkerPoolClosedError
 * ```
 */
export class WorkerPoolClosedError extends IsolationError {
  constructor() {
    super("CONDUIT_ERR_POOL_CLOSED", "the worker pool is closed");
  }
}
