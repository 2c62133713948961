/**
 * The protocol layer: JSON-RPC shapes, era classification, dispatch, tools and their context
 * (docs/architecture.md, "Layers"). Transport-agnostic: answers go through a {@link ResponseSink}.
 *
 * @example
 * ```ts
 * import { defineTool } from "conduit-mcp";
 * import { z } from "zod";
 * const echo = defineTool({ name: "echo", input: z.object({ text: z.string() }), handler: ({ text }) => text });
 * ```
 */

export {
  isLoggingLevel,
  LOGGING_LEVELS,
  type LoggingLevel,
  loggingLevelRank,
} from "../logging-levels.js";
export {
  ACQUIRED,
  type AskOptions,
  askableCapabilities,
  type ClientReply,
  capabilitiesOf,
  type ElicitResult,
  type ElicitSchema,
  type ElicitValue,
  type Evictable,
  GLOBAL_LIMIT,
  InputPending,
  type InputRequiredOptions,
  type LimitOutcome,
  PendingServerRequests,
  type PendingServerRequestsOptions,
  type ReplyWaiter,
  type Root,
  type RootsResult,
  replyOf,
  type SampleRequest,
  type SampleResult,
  type SamplingContent,
  type SamplingMessage,
  SCOPE_LIMIT,
  ScopeLimiter,
  type ScopeLimiterOptions,
  type ServerReplyBus,
  ServerRequestAsker,
  type ServerRequestOptions,
  type ServerRequestSettings,
  serverRequestSettings,
} from "./asking/index.js";
export type { ToolContext } from "./calls/index.js";
export {
  accessOf,
  type CheckedPrimitiveFields,
  type CollectionChange,
  checkPrimitiveFields,
  HandlerCall,
  type HandlerCallHost,
  type HandlerCallOptions,
  type HandlerEnd,
  type HandlerInfo,
  type HandlerInvocation,
  type HandlerOutcome,
  type HandlerResult,
  type Icon,
  type ItemAccess,
  type ListedItem,
  type ListPage,
  PrimitiveCollection,
  type PrimitiveFields,
  type Prompt,
  type ProtocolEra,
  processCancelledNotification,
  type ToolOutcome,
  type VisibilityContext,
} from "./calls/index.js";
export {
  type CompletionRef,
  type CompletionRequest,
  MAX_COMPLETION_VALUES,
} from "./completion/index.js";
export {
  Dispatcher,
  type DispatcherOptions,
  type DispatchObserver,
  type MethodDefinition,
  type MethodRequest,
  type ModernRequestInfo,
  type RequestInfo,
  type RequestMeta,
  type ServerIdentity,
  type SessionCreation,
  type SessionHooks,
} from "./dispatcher.js";
export {
  definePrompt,
  type PromptArgs,
  type PromptCompleter,
  type PromptContent,
  type PromptDefinition,
  type PromptMessage,
  type PromptResult,
  type PromptReturn,
} from "./prompts/index.js";
export type {
  BlobResourceContents,
  ResourceContents,
  ResourceReadValue,
  TextResourceContents,
} from "./resources/index.js";
export {
  defineResource,
  defineResourceTemplate,
  type ReadCaching,
  type Resource,
  type ResourceAnnotations,
  ResourceCollection,
  type ResourceDefinition,
  type ResourceFieldsBase,
  type ResourceTemplate,
  type ResourceTemplateDefinition,
  type VariableCompleter,
} from "./resources/index.js";
export {
  ChangeListeners,
  DEFAULT_MAX_LISTEN_URIS,
  DEFAULT_MAX_LISTENERS,
  DEFAULT_MAX_LISTENERS_PER_SCOPE,
  DEFAULT_MAX_SUBSCRIPTIONS,
  DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION,
  ResourceSubscriptions,
  type SessionDelivery,
  type SubscribeOutcome,
} from "./subscriptions/index.js";
export { TASK_DEFAULTS, type TaskOptions } from "./tasks/index.js";
export {
  type ArgumentCheck,
  type ArgumentIssue,
  type ContentBlock,
  defineTool,
  type JsonSchemaObject,
  type TaskSupport,
  type Tool,
  type ToolAnnotations,
  type ToolArgs,
  type ToolDefinition,
  type ToolResult,
  type ToolReturn,
} from "./tools/index.js";
export type { ResponseSink, SinkListener } from "./wire/index.js";
export {
  ALL_PROTOCOL_VERSIONS,
  type ClassifiedMessage,
  cancelledResponseJson,
  checkModernRequest,
  checkParamHeaders,
  classifyEra,
  classifyMessage,
  decodeHeaderValue,
  type EraClassification,
  errorResponseJson,
  inlineModernHeaders,
  internalErrorJson,
  isPlainObject,
  isSupportedProtocolVersion,
  type JsonRpcNotification,
  type JsonRpcRequest,
  ListCursors,
  type ListKind,
  looksModernVersion,
  META_CLIENT_CAPABILITIES,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  META_SERVER_INFO,
  MODERN_PROTOCOL_VERSIONS,
  type ModernEnvelope,
  type ModernHeaders,
  missingEnvelopeJson,
  modernClaim,
  notificationJson,
  type ParamHeader,
  type PresentedParamHeaders,
  paramHeadersOf,
  presentedParamHeaders,
  SUPPORTED_PROTOCOL_VERSIONS,
  successResponseJson,
} from "./wire/index.js";
