/**
 * The two error families of conduit-mcp (CONTRIBUTING.md, "Conventions"):
 *
 * - **Wire errors** carry a numeric JSON-RPC code and go to the client. {@link ErrorCode} lists
 *   every code this library sends.
 * - **Local errors** are classes with a stable string `code`, thrown or returned inside the
 *   process. They are never serialised to the wire as they are: their message may name internals.
 *
 * @example
 * ```ts
 * import { ErrorCode, InvalidOptionError } from "conduit-mcp";
 * if (code === ErrorCode.RequestCancelled) console.log("the tool was cancelled");
 * throw new InvalidOptionError("maxRows", "a positive integer or Infinity", -1);
 * ```
 */

/** JSON-RPC 2.0 and MCP error codes used by conduit-mcp. */
export const ErrorCode = {
  /** Invalid JSON (JSON-RPC 2.0). */
  ParseError: -32700,
  /** Not a valid JSON-RPC request; session errors (JSON-RPC 2.0). */
  InvalidRequest: -32600,
  /** Unknown method (JSON-RPC 2.0). */
  MethodNotFound: -32601,
  /** Bad params, unknown tool, invalid requestId (JSON-RPC 2.0). */
  InvalidParams: -32602,
  /** An exception inside the server; details are never sent (JSON-RPC 2.0). */
  InternalError: -32603,
  /** Generic server error: tool failure, cancellation quota (conduit convention). */
  ServerError: -32000,
  /** Resource not found (MCP 2025-11-25). */
  ResourceNotFound: -32002,
  /** An HTTP header disagrees with the body (MCP 2026-07-28, SEP-2243). */
  HeaderMismatch: -32020,
  /** The request needs a client capability it did not declare (MCP 2026-07-28). */
  MissingCapability: -32021,
  /** The requested protocol version is not supported (MCP 2026-07-28). */
  UnsupportedProtocolVersion: -32022,
  /** The request was cancelled: a 2025-era JSON exchange's answer (docs/protocol-eras.md). */
  RequestCancelled: -32800,
} as const;

/** One of the numeric codes in {@link ErrorCode}. */
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Stable string codes of local errors; safe to switch on, never change between versions. */
export type ConduitErrorCode =
  | "CONDUIT_ERR_INVALID_OPTION"
  | "CONDUIT_ERR_REQUEST_CANCELLED"
  | "CONDUIT_ERR_STORE_CLOSED"
  | "CONDUIT_ERR_STORE_UNAVAILABLE"
  | "CONDUIT_ERR_TOOL_KILLED"
  | "CONDUIT_ERR_TOOL_FAILED"
  | "CONDUIT_ERR_POOL_FULL"
  | "CONDUIT_ERR_POOL_CLOSED"
  | "CONDUIT_ERR_INVALID_PARAMS"
  | "CONDUIT_ERR_CANNOT_ASK_CLIENT"
  | "CONDUIT_ERR_CLIENT_REQUEST_FAILED"
  | "CONDUIT_ERR_UNSUPPORTED_RUNTIME";

/** Base class of every local error: a stable `code`, a `name` and an optional `cause`. */
export class ConduitError extends Error {
  readonly code: ConduitErrorCode;

  constructor(code: ConduitErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/**
 * An option given to a constructor or factory has a bad value. Thrown at construction so a
 * misconfiguration fails at start-up, never mid-request.
 */
export class InvalidOptionError extends ConduitError {
  readonly option: string;

  constructor(option: string, expected: string, got: unknown) {
    super(
      "CONDUIT_ERR_INVALID_OPTION",
      `option ${option} must be ${expected}; got ${describe(got)}`,
    );
    this.option = option;
  }
}

/** Longest message of an {@link InvalidParamsError} sent to a client; longer ones are cut. */
export const MAX_INVALID_PARAMS_MESSAGE = 512;

/**
 * Thrown by a handler to refuse its caller's parameters with a message meant for the client — the
 * one error whose message goes on the wire. A `resources/read`, `prompts/get` or
 * `completion/complete` handler's refusal is JSON-RPC -32602 Invalid params; a tool's is a
 * result with `isError: true`, as MCP 2025-11-25 treats input validation errors as tool execution
 * errors (https://modelcontextprotocol.io/specification/2025-11-25/server/tools#error-handling).
 * Any other thrown error reaches the client only as -32603 "Internal error".
 *
 * @example
 * ```ts
 * if (!/^\d+$/.test(variables.ms ?? "")) throw new InvalidParamsError("ms must be an integer");
 * ```
 */
export class InvalidParamsError extends ConduitError {
  constructor(message: string) {
    super("CONDUIT_ERR_INVALID_PARAMS", String(message).slice(0, MAX_INVALID_PARAMS_MESSAGE));
  }
}

/**
 * `ctx.elicit`, `ctx.sample` or `ctx.roots` cannot ask the client on this request: a 2025-11-25
 * request (server-to-client requests are not offered yet), a method that cannot carry an
 * input-required result, or (subclass {@link MissingClientCapabilityError}) a client that did not
 * declare the capability. A handler may catch it and go on without the answer; uncaught, a tool
 * answers an `isError` result with this message, other methods -32603.
 *
 * @example
 * ```ts
 * try {
 *   const answer = await ctx.elicit("Proceed?", { type: "object", properties: { ok: { type: "boolean" } } });
 * } catch (error) {
 *   if (!(error instanceof CannotAskClientError)) throw error;
 *   return "Cannot confirm with the user here; nothing was done.";
 * }
 * ```
 */
export class CannotAskClientError extends ConduitError {
  constructor(
    message = "The client cannot be asked for input on this request",
    code: ConduitErrorCode = "CONDUIT_ERR_CANNOT_ASK_CLIENT",
  ) {
    super(code, message);
  }
}

/**
 * The client did not declare the capability an ask needs (MCP 2026-07-28: "Servers MUST NOT send
 * an inputRequests that the client has not declared support for in its capabilities",
 * https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr). Uncaught, the
 * request answers -32021 with `data.requiredCapabilities` (HTTP 400), as
 * https://modelcontextprotocol.io/specification/2026-07-28/basic/index#meta asks.
 */
export class MissingClientCapabilityError extends CannotAskClientError {
  /** The capabilities the ask needed, as a ClientCapabilities object (e.g. `{ elicitation: {} }`). */
  readonly requiredCapabilities: Readonly<Record<string, object>>;

  constructor(requiredCapabilities: Readonly<Record<string, object>>) {
    super(
      `The client did not declare the ${Object.keys(requiredCapabilities).join(", ")} capability`,
    );
    this.requiredCapabilities = requiredCapabilities;
  }
}

/**
 * A request the server sent the client (2025-11-25 `elicitation/create`, `sampling/createMessage`,
 * `roots/list`) did not bring a usable answer: the client answered with a JSON-RPC error
 * (`"error-response"`, its code in `clientCode`), with a result of the wrong shape
 * (`"invalid-response"`), not within the timeout (`"timeout"`), or the call already has as many
 * questions outstanding as its scope may (`"too-many"`). A handler may catch it; uncaught, a tool
 * answers an `isError` result with this message (never the client's own text).
 *
 * @example
 * ```ts
 * try {
 *   await ctx.elicit("Proceed?", schema);
 * } catch (error) {
 *   if (error instanceof ClientRequestFailedError && error.reason === "timeout") return "No answer.";
 *   throw error;
 * }
 * ```
 */
export class ClientRequestFailedError extends CannotAskClientError {
  /** What went wrong. */
  readonly reason: "error-response" | "invalid-response" | "timeout" | "too-many";
  /** The client's JSON-RPC error code, for `"error-response"`; else null. */
  readonly clientCode: number | null;

  constructor(
    reason: ClientRequestFailedError["reason"],
    message: string,
    clientCode: number | null = null,
  ) {
    super(message, "CONDUIT_ERR_CLIENT_REQUEST_FAILED");
    this.reason = reason;
    this.clientCode = clientCode;
  }
}

/**
 * Why a request's signal aborted: the client's `notifications/cancelled`, its disconnect, server
 * shutdown, a library call, or the tool's deadline (`timeoutMs`, docs/limits.md).
 */
export type CancellationSource = "notification" | "disconnect" | "shutdown" | "library" | "timeout";

/**
 * The `reason` of every request's `AbortSignal` once it aborts: says which cause fired
 * (one signal merges every cause: docs/architecture.md, "A request's way").
 *
 * @example
 * ```ts
 * ctx.signal.addEventListener("abort", () => {
 *   const why = ctx.signal.reason as RequestCancelledError;
 *   console.log(why.source, why.reason);
 * });
 * ```
 */
export class RequestCancelledError extends ConduitError {
  /** Which cause aborted the request. */
  readonly source: CancellationSource;
  /** The sanitised reason the client gave, if any. */
  readonly reason: string | null;

  constructor(source: CancellationSource, reason: string | null = null) {
    super("CONDUIT_ERR_REQUEST_CANCELLED", `request cancelled (${source})`);
    this.source = source;
    this.reason = reason;
  }
}

/** The store was closed; no further operation is possible. */
export class StoreClosedError extends ConduitError {
  constructor() {
    super("CONDUIT_ERR_STORE_CLOSED", "the cancellation store is closed");
  }
}

/**
 * A shared store that fails closed (the Redis task store) could not reach its backend within its
 * command timeout: the operation did not happen and may be retried. Not a wire error: the caller
 * answers the client with an internal error, never this text.
 *
 * @example
 * ```ts
 * try { await tasks.get(scope, id); } catch (e) { if (e instanceof TaskStoreUnavailableError) retryLater(); }
 * ```
 */
export class TaskStoreUnavailableError extends ConduitError {
  constructor() {
    super("CONDUIT_ERR_STORE_UNAVAILABLE", "the task store is unavailable (Redis unreachable)");
  }
}

/**
 * An isolated tool's worker thread was terminated (`task.kill()` at the stream cancel timeout,
 * or `pool.close()`), so the run ends without a result (docs/architecture.md, "Abandon vs kill").
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
 * (internals never leak); the server answers -32603.
 *
 * @example
 * ```ts
 * if (error instanceof IsolatedToolError && error.crashed) console.log("worker died", error.exitCode);
 * ```
 */
export class IsolatedToolError extends ConduitError {
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
export class WorkerPoolFullError extends ConduitError {
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
export class WorkerPoolClosedError extends ConduitError {
  constructor() {
    super("CONDUIT_ERR_POOL_CLOSED", "the worker pool is closed");
  }
}

/**
 * A feature that needs a Node.js built-in module (worker threads, a listening socket, stdio) was
 * used on a runtime that does not have it, e.g. Cloudflare Workers (docs/runtimes.md). The
 * message names the runtime, the feature and what to use instead.
 */
export class UnsupportedRuntimeError extends ConduitError {
  /** The runtime, as `currentRuntime()` names it: `"workerd"`, `"unknown"`, … */
  readonly runtime: string;
  /** The feature that cannot work there, e.g. `"isolated tools"`. */
  readonly feature: string;

  constructor(feature: string, runtime: string, instead: string) {
    super(
      "CONDUIT_ERR_UNSUPPORTED_RUNTIME",
      `conduit-mcp: ${feature} cannot work on ${runtimeLabel(runtime)}; ${instead}`,
    );
    this.runtime = runtime;
    this.feature = feature;
  }
}

function runtimeLabel(runtime: string): string {
  if (runtime === "workerd") return "Cloudflare Workers (workerd)";
  if (runtime === "unknown") return "this runtime";
  return runtime;
}

/** Renders an option value for an error message without ever throwing. */
function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.slice(0, 80));
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
    return String(value);
  }
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}
