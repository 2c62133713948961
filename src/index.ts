/**
 * conduit-mcp: Model Context Protocol tools over HTTP for Node.js, statelessly, with cooperative
 * cancellation that is scoped per tenant and bounded against abuse.
 *
 * This root entry never imports the Redis store: it lives behind `conduit-mcp/redis` so that
 * `ioredis` stays an optional peer dependency (test/package-entry.test.ts).
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { createMcpServer, defineTool } from "conduit-mcp";
 *
 * const sleep = defineTool({
 *   name: "sleep",
 *   description: "Waits, unless cancelled",
 *   input: z.object({ ms: z.number().int().min(0).max(60_000) }),
 *   handler: async ({ ms }, ctx) => {
 *     await new Promise((resolve) => setTimeout(resolve, ms, undefined, { signal: ctx.signal }));
 *     return `slept ${ms} ms`;
 *   },
 * });
 * const server = createMcpServer({ tools: [sleep] });
 * const { url } = await server.listen({ port: 3000 });
 * ```
 */

export {
  type ExpressMiddleware,
  type ExpressRequestLike,
  expressHandler,
  type FastifyHandler,
  type FastifyReplyLike,
  type FastifyRequestLike,
  fastifyHandler,
  type InProcessFetch,
  inProcessFetch,
} from "./adapters/index.js";
export {
  CancellationRegistry,
  type CancellationRegistryOptions,
  type CancellationRow,
  type CancellationStore,
  type CancelResult,
  type CleanupResult,
  DEFAULT_MAX_ROWS,
  DEFAULT_MAX_ROWS_PER_SCOPE,
  DEFAULT_TTL_MS,
  type HandleLifetime,
  MemoryCancellationStore,
  type MemoryCancellationStoreOptions,
  type RecordOutcome,
  type RemoteCancellation,
  type RequestHandle,
  type RequestId,
  type TrackOptions,
} from "./cancellation/index.js";
export {
  type ChangedList,
  type ChangeEvent,
  type ChangeFeed,
  MemoryChangeFeed,
} from "./changes/index.js";
export {
  type CancellationCleanupMessage,
  type CancellationJanitorMessage,
  ChannelName,
  channels,
  type HandlerKind,
  type RequestCancelledMessage,
  type ToolErrorMessage,
  type ToolKilledMessage,
} from "./diagnostics.js";
export {
  type CancellationSource,
  CannotAskClientError,
  ClientRequestFailedError,
  ConduitError,
  type ConduitErrorCode,
  ErrorCode,
  type ErrorCodeValue,
  InvalidOptionError,
  InvalidParamsError,
  IsolatedToolError,
  MissingClientCapabilityError,
  RequestCancelledError,
  StoreClosedError,
  TaskStoreUnavailableError,
  ToolKilledError,
  WorkerPoolClosedError,
  WorkerPoolFullError,
} from "./errors.js";
export type {
  AuthOptions,
  FetchHandler,
  FetchOptions,
  NodeRequestListener,
  NodeShapedRequest,
} from "./http/index.js";
export {
  createPrincipal,
  type Principal,
  type PrincipalFields,
  type TrustProxyOption,
} from "./identity/index.js";
export {
  type IntrospectionOptions,
  OAUTH_DEFAULTS,
  type OAuthOptions,
} from "./identity/oauth/index.js";
export {
  type IsolatedHandler,
  type IsolatedToolContext,
  type IsolatedToolFunction,
  isolatedHandler,
  type WorkerPoolOptions,
} from "./isolation/index.js";
export {
  type AskOptions,
  type BlobResourceContents,
  type ClientReply,
  type CollectionChange,
  type ContentBlock,
  definePrompt,
  defineResource,
  defineResourceTemplate,
  type ElicitResult,
  type ElicitSchema,
  type ElicitValue,
  type HandlerEnd,
  type HandlerInfo,
  type HandlerOutcome,
  type Icon,
  InputPending,
  type InputRequiredOptions,
  type JsonSchemaObject,
  type ListedItem,
  type ListKind,
  LOGGING_LEVELS,
  type LoggingLevel,
  type ParamHeader,
  type PrimitiveCollection,
  type PrimitiveFields,
  type Prompt,
  type PromptArgs,
  type PromptCompleter,
  type PromptContent,
  type PromptDefinition,
  type PromptMessage,
  type PromptResult,
  type PromptReturn,
  type ProtocolEra,
  type ReadCaching,
  type RequestInfo,
  type RequestMeta,
  type Resource,
  type ResourceAnnotations,
  type ResourceCollection,
  type ResourceContents,
  type ResourceDefinition,
  type ResourceFieldsBase,
  type ResourceReadValue,
  type ResourceTemplate,
  type ResourceTemplateDefinition,
  type Root,
  type RootsResult,
  type SampleRequest,
  type SampleResult,
  type SamplingContent,
  type SamplingMessage,
  type ServerReplyBus,
  type ServerRequestOptions,
  type TaskOptions,
  type TaskSupport,
  type TextResourceContents,
  type ToolAnnotations,
  type ToolArgs,
  type ToolReturn,
  type VariableCompleter,
  type VisibilityContext,
} from "./protocol/index.js";
export type { Reachability } from "./reachability.js";
export {
  type ConcurrencySnapshot,
  createMcpServer,
  DEFAULTS,
  defineTool,
  type ListenAddress,
  type McpServer,
  type McpServerOptions,
  type SessionOptions,
  type StdioOptions,
  type StdioServing,
  serveStdio,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from "./server/index.js";
export {
  MemorySessionStore,
  type MemorySessionStoreOptions,
  type SessionCreateOutcome,
  type SessionRecord,
  type SessionStore,
} from "./sessions/index.js";
export {
  type CancelTaskOutcome,
  type CreateTaskOutcome,
  type EvictedTask,
  type FinishTaskOutcome,
  type ListTasksOptions,
  MemoryTaskStore,
  type MemoryTaskStoreOptions,
  type NewTask,
  type TaskChange,
  type TaskOutcome,
  type TaskPage,
  type TaskRecord,
  type TaskStatus,
  type TaskStore,
  type TaskSweepResult,
  type TaskUpdate,
  type TerminalTaskStatus,
} from "./tasks/index.js";
export {
  type HandlerErrorContext,
  type HandlerErrorHook,
  logHandlerError,
} from "./telemetry/error-reporter.js";
export type { TracerProviderLike } from "./telemetry/tracer-provider.js";
