/**
 * What an isolated tool sees inside its worker thread: the same shape as the server's
 * `ToolContext` minus `principal` (a class instance would not survive structured cloning), so a
 * handler written for one runs in the other when it needs no principal.
 */
import type { RequestId } from "../cancellation/types.js";
import type { LoggingLevel } from "../logging-levels.js";

/**
 * The worker-side context of one isolated call.
 *
 * @example
 * ```ts
 * export function crunch(args: { n: number }, ctx: IsolatedToolContext): number {
 *   let sum = 0;
 *   for (let i = 0; i < args.n && !ctx.cancelled(); i++) sum += i;
 *   return sum;
 * }
 * ```
 */
export interface IsolatedToolContext {
  /**
   * Aborts when the main thread forwards the request's cancellation. Its `reason` is a
   * `RequestCancelledError` rebuilt in the worker when the main thread's reason was one.
   */
  readonly signal: AbortSignal;
  /**
   * Synchronous check for CPU-bound loops: it also takes a cancel the main thread posted while
   * the loop never yielded, aborting `signal` at that moment.
   */
  cancelled(): boolean;
  /** The client's JSON-RPC id, or null. */
  readonly requestId: RequestId | null;
  /** The tenant scope of the request. */
  readonly scope: string;
  /** Forwarded to the main thread, which passes it to `ToolContext.progress`. Resolves at once. */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** Forwarded to the main thread, which passes it to `ToolContext.log`. `data` must be cloneable. */
  log(level: LoggingLevel, data: unknown): Promise<void>;
}

/**
 * The shape of an isolated tool's exported function. Its result must be structured-cloneable
 * (a string or an MCP `CallToolResult` is).
 *
 * @example
 * ```ts
 * export const sum: IsolatedToolFunction<{ a: number; b: number }> = ({ a, b }) => String(a + b);
 * ```
 */
export type IsolatedToolFunction<Args = Record<string, unknown>> = (
  args: Args,
  ctx: IsolatedToolContext,
) => unknown;
