/**
 * What the operator sees of the server at work: failed handlers (`onError` and the
 * `conduit-mcp:tool:error` channel) and the observers the dispatcher reports to.
 *
 * @example
 * ```ts
 * import { createMcpServer, logHandlerError } from "conduit-mcp";
 * createMcpServer({ tools, onError: (error, ctx) => logHandlerError(error, ctx) });
 * ```
 */

export { combineObservers } from "./combine-observers.js";
export {
  ErrorReporter,
  formatHandlerError,
  type HandlerErrorContext,
  type HandlerErrorHook,
  logHandlerError,
} from "./error-reporter.js";
export { type ApiImporter, loadOpenTelemetry } from "./load-otel.js";
export type { TracerProviderLike } from "./tracer-provider.js";
export { createTracing } from "./tracing.js";
