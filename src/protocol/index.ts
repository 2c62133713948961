/**
 * The protocol layer: JSON-RPC shapes, era classification, dispatch, tools and their context
 * (DESIGN.md, "Layers"). Transport-agnostic: answers go through a {@link ResponseSink}.
 *
 * @example
 * ```ts
 * import { defineTool } from "conduit-mcp";
 * import { z } from "zod";
 * const echo = defineTool({ name: "echo", input: z.object({ text: z.string() }), handler: ({ text }) => text });
 * ```
 */
export { processCancelledNotification } from "./cancelled-notification.js";
export {
  type ArgumentCheck,
  type ArgumentIssue,
  type ContentBlock,
  defineTool,
  type JsonSchemaObject,
  type Tool,
  type ToolAnnotations,
  type ToolArgs,
  type ToolDefinition,
  type ToolResult,
} from "./define-tool.js";
export {
  Dispatcher,
  type DispatcherOptions,
  type DispatchObserver,
  type ModernRequestInfo,
  type RequestMeta,
  type SessionHooks,
} from "./dispatcher.js";
export { classifyEra, type EraClassification } from "./era.js";
export {
  type ClassifiedMessage,
  cancelledResponseJson,
  classifyMessage,
  errorResponseJson,
  internalErrorJson,
  isPlainObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  notificationJson,
  successResponseJson,
} from "./json-rpc.js";
export {
  isLoggingLevel,
  LOGGING_LEVELS,
  type LoggingLevel,
  loggingLevelRank,
} from "./logging.js";
export {
  checkModernRequest,
  decodeHeaderValue,
  META_CLIENT_CAPABILITIES,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  META_SERVER_INFO,
  type ModernEnvelope,
  type ModernHeaders,
  missingEnvelopeJson,
  modernClaim,
  type PresentedParamHeaders,
  presentedParamHeaders,
} from "./modern-envelope.js";
export { checkParamHeaders, type ParamHeader, paramHeadersOf } from "./param-headers.js";
export {
  type CheckedPrimitiveFields,
  checkPrimitiveFields,
  type Icon,
  type PrimitiveFields,
  type Prompt,
  type VisibilityContext,
} from "./primitive.js";
export type { ResponseSink, SinkListener } from "./response-sink.js";
export { ToolCall, type ToolCallHost, type ToolOutcome } from "./tool-call.js";
export type { ToolContext } from "./tool-context.js";
export {
  ALL_PROTOCOL_VERSIONS,
  isSupportedProtocolVersion,
  looksModernVersion,
  MODERN_PROTOCOL_VERSIONS,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "./versions.js";
