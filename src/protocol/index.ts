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
export { processCancelledNotification } from "./cancelled-notification.js";
export {
  ChangeListeners,
  DEFAULT_MAX_LISTEN_URIS,
  DEFAULT_MAX_LISTENERS,
  DEFAULT_MAX_LISTENERS_PER_SCOPE,
} from "./change-listeners.js";
export {
  type CompletionRef,
  type CompletionRequest,
  MAX_COMPLETION_VALUES,
} from "./completion.js";
export {
  definePrompt,
  type PromptArgs,
  type PromptCompleter,
  type PromptContent,
  type PromptDefinition,
  type PromptMessage,
  type PromptResult,
  type PromptReturn,
} from "./define-prompt.js";
export {
  defineResource,
  type ReadCaching,
  type Resource,
  type ResourceAnnotations,
  type ResourceDefinition,
  type ResourceFieldsBase,
} from "./define-resource.js";
export {
  defineResourceTemplate,
  type ResourceTemplate,
  type ResourceTemplateDefinition,
  type VariableCompleter,
} from "./define-resource-template.js";
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
} from "./define-tool.js";
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
export { classifyEra, type EraClassification } from "./era.js";
export {
  HandlerCall,
  type HandlerCallHost,
  type HandlerCallOptions,
  type HandlerEnd,
  type HandlerInfo,
  type HandlerInvocation,
  type HandlerOutcome,
  type HandlerResult,
  type ProtocolEra,
  type ToolOutcome,
} from "./handler-call.js";
export {
  type AskOptions,
  type ElicitResult,
  type ElicitSchema,
  type ElicitValue,
  InputPending,
  type InputRequiredOptions,
  type Root,
  type RootsResult,
  type SampleRequest,
  type SampleResult,
  type SamplingContent,
  type SamplingMessage,
} from "./input-required.js";
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
export { ListCursors, type ListKind } from "./list-cursor.js";
export {
  checkModernRequest,
  decodeHeaderValue,
  inlineModernHeaders,
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
  type ClientReply,
  PendingServerRequests,
  type PendingServerRequestsOptions,
  type ReplyWaiter,
  replyOf,
  type ServerReplyBus,
} from "./pending-server-requests.js";
export {
  type CheckedPrimitiveFields,
  checkPrimitiveFields,
  type Icon,
  type PrimitiveFields,
  type Prompt,
  type VisibilityContext,
} from "./primitive.js";
export {
  accessOf,
  type CollectionChange,
  type ItemAccess,
  type ListedItem,
  type ListPage,
  PrimitiveCollection,
} from "./primitive-collection.js";
export { ResourceCollection } from "./resource-collection.js";
export type {
  BlobResourceContents,
  ResourceContents,
  ResourceReadValue,
  TextResourceContents,
} from "./resource-contents.js";
export {
  DEFAULT_MAX_SUBSCRIPTIONS,
  DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION,
  ResourceSubscriptions,
  type SessionDelivery,
  type SubscribeOutcome,
} from "./resource-subscriptions.js";
export type { ResponseSink, SinkListener } from "./response-sink.js";
export {
  ACQUIRED,
  GLOBAL_LIMIT,
  type LimitOutcome,
  SCOPE_LIMIT,
  ScopeLimiter,
} from "./scope-limiter.js";
export {
  askableCapabilities,
  capabilitiesOf,
  ServerRequestAsker,
  type ServerRequestOptions,
  type ServerRequestSettings,
  serverRequestSettings,
} from "./server-requests.js";
export { TASK_DEFAULTS, type TaskOptions } from "./task-service.js";
export type { ToolContext } from "./tool-context.js";
export {
  ALL_PROTOCOL_VERSIONS,
  isSupportedProtocolVersion,
  looksModernVersion,
  MODERN_PROTOCOL_VERSIONS,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "./versions.js";
