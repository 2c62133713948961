/**
 * conduit-mcp: Model Context Protocol tools over HTTP for Node.js, statelessly, with cooperative
 * cancellation that is scoped per tenant and bounded against abuse.
 *
 * This root entry never imports the Redis store: it lives behind `conduit-mcp/redis` so that
 * `ioredis` stays an optional peer dependency (test/package-entry.test.ts).
 *
 * Only what a user needs is exported here, each group with the reason it is public (its API
 * report is etc/conduit-mcp.api.md); internals (option defaults tables, settings after
 * validation, codecs, helpers) are imported by the library from their own modules.
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

// Serving from Express, Fastify or any fetch-style host, and calling the server in-process.
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
// Cancellation: the registry a deployment may share between servers, and the store contract a
// shared store implements (the Redis one is in `conduit-mcp/redis`).
export {
  CancellationRegistry,
  type CancellationRegistryOptions,
  type CancellationRow,
  type CancellationStore,
  type CancelResult,
  type CleanupResult,
  type HandleLifetime,
  MemoryCancellationStore,
  type MemoryCancellationStoreOptions,
  type RecordOutcome,
  type RemoteCancellation,
  type RequestHandle,
  type RequestId,
  type TrackOptions,
} from "./cancellation/index.js";
// Change feeds: the `changeFeed` option's contract and its single-process implementation.
export {
  type ChangedList,
  type ChangeEvent,
  type ChangeFeed,
  MemoryChangeFeed,
} from "./changes/index.js";
// Diagnostics channels: their names, and the messages a subscriber receives.
export {
  type CancellationCleanupMessage,
  type CancellationJanitorMessage,
  ChannelName,
  type ConnectionClosedMessage,
  type HandlerKind,
  type RequestCancelledMessage,
  type ToolErrorMessage,
  type ToolKilledMessage,
} from "./diagnostics.js";
// Errors a caller may catch or a handler may throw, and the JSON-RPC codes.
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
  UnsupportedRuntimeError,
  WorkerPoolClosedError,
  WorkerPoolFullError,
} from "./errors.js";
// Types of the `auth` option and of the request handlers `McpServer` returns.
export type {
  AuthOptions,
  FetchHandler,
  FetchOptions,
  NodeRequestListener,
  NodeShapedRequest,
  ServerCardOptions,
} from "./http/index.js";
// Who calls: the principal an `auth.verify` hook returns, and the `trustProxy` option.
export {
  createPrincipal,
  type Principal,
  type PrincipalFields,
  type TrustProxyOption,
} from "./identity/index.js";
// The `auth.oauth` option (OAuth 2.1 resource server).
export type {
  IntrospectionOptions,
  OAuthOptions,
} from "./identity/oauth/index.js";
// Tools run in worker threads, and the `workerPool` option.
export {
  type IsolatedHandler,
  type IsolatedToolContext,
  type IsolatedToolFunction,
  isolatedHandler,
  type WorkerPoolOptions,
} from "./isolation/index.js";
// Defining tools, resources, prompts and extensions, what their handlers receive and return, and the
// options of asking the client and of tasks.
// MCP Apps (SEP-1865): an HTML view served as a `ui://` resource, and the tool metadata naming it.
export {
  APPS_EXTENSION,
  type AppCsp,
  type AppDefinition,
  type AppPermission,
  type AppToolMetaOptions,
  type AppToolVisibility,
  type AskOptions,
  appsExtension,
  type BlobResourceContents,
  type ClientReply,
  type CollectionChange,
  type ContentBlock,
  defineApp,
  defineExtension,
  definePrompt,
  defineResource,
  defineResourceTemplate,
  defineSkill,
  type ElicitResult,
  type ElicitSchema,
  type ElicitValue,
  type Extension,
  type ExtensionDefinition,
  type ExtensionMethod,
  type ExtensionRequest,
  type Icon,
  InputPending,
  type InputRequiredOptions,
  type JsonObject,
  type JsonSchemaObject,
  type ListedItem,
  type ListedResource,
  type ListKind,
  LOGGING_LEVELS,
  type LoggingLevel,
  MAX_APP_CSP_ORIGINS,
  MAX_APP_HTML_BYTES,
  MCP_APP_MIME_TYPE,
  type McpApp,
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
  SKILLS_EXTENSION,
  type Skill,
  type SkillDefinition,
  type SkillFile,
  type SkillsExtension,
  type SkillsExtensionOptions,
  type StandardSchemaWithJson,
  skillsExtension,
  type TaskOptions,
  type TaskSupport,
  type TemplateLister,
  type TemplateListPage,
  type TextResourceContents,
  type ToolAnnotations,
  type ToolArgs,
  type ToolReturn,
  type VariableCompleter,
  type VisibilityContext,
  withJsonSchema,
} from "./protocol/index.js";
// Rate limits: the `rateLimits` option, its store contract and the single-process store (the
// Redis one is in `conduit-mcp/redis`).
export {
  type AppliedRate,
  MemoryRateLimitStore,
  type MemoryRateLimitStoreOptions,
  type Rate,
  type RateLimitOptions,
  type RateLimitStore,
  type RateRule,
} from "./rate-limits/index.js";
// What `GET /ready` reads from a shared store.
export type { Reachability } from "./reachability.js";
// The server itself, its options, and stdio serving.
export {
  type ConcurrencySnapshot,
  createMcpServer,
  type DeprecatedFlatOptions,
  defineTool,
  type HttpOptions,
  type LimitOptions,
  type ListenAddress,
  type ListOptions,
  type McpServer,
  type McpServerOptions,
  type SessionOptions,
  type StdioOptions,
  type StdioServing,
  serveStdio,
  type TimeoutOptions,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from "./server/index.js";
// Sessions (2025-11-25 `Mcp-Session-Id`): the store contract and its memory implementation.
export {
  MemorySessionStore,
  type MemorySessionStoreOptions,
  type SessionCreateOutcome,
  type SessionRecord,
  type SessionStore,
} from "./sessions/index.js";
// Tasks: the store contract and its memory implementation.
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
// The `onError` option, and its default (to call from a hook that also logs elsewhere).
export {
  type HandlerErrorContext,
  type HandlerErrorHook,
  logHandlerError,
} from "./telemetry/error-reporter.js";
// The `tracing.tracerProvider` option, typed without loading @opentelemetry/api.
export type { TracerProviderLike } from "./telemetry/tracer-provider.js";
