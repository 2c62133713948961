/**
 * What a tool sees of its request. One `AbortSignal` merges every cause of cancellation: a
 * matching `notifications/cancelled` from the same scope, a client disconnect, the end of the
 * session, server shutdown
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/cancellation). Its `reason` is a
 * `RequestCancelledError` saying which.
 */

import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { RequestId } from "../../cancellation/types.js";
import type { Principal } from "../../identity/index.js";
import type { LoggingLevel } from "../../logging-levels.js";
import type {
  AskOptions,
  ElicitResult,
  ElicitSchema,
  ElicitValue,
  RootsResult,
  SampleRequest,
  SampleResult,
} from "../asking/index.js";
import type { RequestView } from "./request-info.js";

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
   * The HTTP request that brought the call, read-only: method, path, client address and the
   * headers the server's `requestHeaders` option allows (default none; never `Authorization`).
   * Null on stdio. A task's run sees the view of the request that created the task, taken then
   * (docs/limits.md, "The request view").
   */
  readonly request: RequestView | null;
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
  /**
   * Asks the user, through the client, to fill a form (`elicitation/create`, form mode; MCP
   * 2026-07-28 elicitation). `schema` is a Standard Schema of an object (zod 3 or 4, Valibot,
   * ArkType…: docs/schemas.md) whose JSON Schema is the flat object of primitive properties the
   * spec allows, or that JSON Schema object itself. Resolves with the user's `ElicitResult`
   * (`accept` with `content`, `decline`, `cancel`); with a library schema the accepted `content`
   * is what the schema outputs, typed so. Rejects with a TypeError naming the property when the
   * schema is not such a form, with `MissingClientCapabilityError` when the client did not
   * declare elicitation, `CannotAskClientError` where the client cannot be asked. On a
   * 2026-07-28 request the request first answers `input_required` and the handler runs again
   * with the answer (docs/asking-the-client.md).
   */
  elicit<S extends StandardSchemaV1>(
    message: string,
    schema: S,
    options?: AskOptions,
  ): Promise<ElicitResult<StandardSchemaV1.InferOutput<S>>>;
  elicit(
    message: string,
    schema: ElicitSchema,
    options?: AskOptions,
  ): Promise<ElicitResult<Record<string, ElicitValue>>>;
  /** Asks the user to open `url` (URL mode elicitation; needs the client's `elicitation.url`). */
  elicitUrl(message: string, url: string, options?: AskOptions): Promise<ElicitResult<undefined>>;
  /**
   * Asks the client's model for a completion (`sampling/createMessage`; MCP 2026-07-28
   * sampling, deprecated by the spec but served). `tools`/`toolChoice` need `sampling.tools`.
   */
  sample(request: SampleRequest, options?: AskOptions): Promise<SampleResult>;
  /** Asks the client for its roots (`roots/list`; MCP 2026-07-28 roots, deprecated but served). */
  roots(options?: AskOptions): Promise<RootsResult>;
  /**
   * The value the handler saved with {@link ToolContext.saveState} in the previous round of this
   * request (sealed in its `requestState`), or undefined in the first round.
   */
  readonly savedState: unknown;
  /**
   * Saves a JSON-serialisable value for the next round, should this run end `input_required`:
   * the handler reads it back from `ctx.savedState` instead of redoing the work.
   */
  saveState(value: unknown): void;
}
