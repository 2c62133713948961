/**
 * What a tool sees of its request. One `AbortSignal` merges every cause of cancellation: a
 * matching `notifications/cancelled` from the same scope, a client disconnect, the end of the
 * session, server shutdown
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation). Its `reason` is a
 * `RequestCancelledError` saying which.
 */
import type { RequestId } from "../cancellation/types.js";
import type { Principal } from "../identity/index.js";
import type { LoggingLevel } from "../logging-levels.js";

/**
 * The per-call context handed to a tool handler.
 *
 * @example
 * ```ts
 * defineTool({
 *   name: "count",
 *   handler: async (_args, ctx) => {
 *     for (let i = 1; i <= 10 && !ctx.cancelled(); i++) await ctx.progress(i, 10);
 *     return "done";
 *   },
 * });
 * ```
 */
export interface ToolContext {
  /** Aborts once the request is cancelled, for whatever cause; never un-aborts. */
  readonly signal: AbortSignal;
  /** Synchronous check of `signal.aborted`, for CPU-bound loops between slices. */
  cancelled(): boolean;
  /** The client's JSON-RPC id, as it sent it. */
  readonly requestId: RequestId | null;
  /** The tenant scope the request runs in (`session:…`, `principal:…` or `ip:…`). */
  readonly scope: string;
  /** The authenticated principal, or null without auth. */
  readonly principal: Principal | null;
  /**
   * Sends `notifications/progress` when the request carried `_meta.progressToken` and the
   * client accepts a stream; otherwise (or once cancelled) does nothing. Values that do not
   * increase are dropped (MCP 2025-11-25, progress: "MUST increase").
   */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /**
   * Sends `notifications/message` related to the request when the client accepts a stream and
   * the level passes the session's `logging/setLevel` threshold; otherwise does nothing.
   */
  log(level: LoggingLevel, data: unknown): Promise<void>;
}
