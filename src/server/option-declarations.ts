/**
 * The declared schemas of `createMcpServer`'s options: for every option, what it accepts, its
 * default and its description, in one place. {@link resolveOptions} reads options with them and
 * `npm run docs:options` writes docs/reference/options.md from them; a test fails when an option
 * has no description or the reference is stale. To add an option, declare it here (CONTRIBUTING.md,
 * "Options").
 */
import { z } from "zod";

import { CancellationRegistry } from "../cancellation/index.js";
import type { ChangeFeed } from "../changes/index.js";
import { InvalidOptionError } from "../errors.js";
import type { AuthOptions, ServerCardOptions } from "../http/index.js";
import { resolvePoolOptions, type WorkerPoolOptions } from "../isolation/pool-options.js";
import {
  customOption,
  integerBetween,
  OPTION,
  option,
  optionGroup,
  optionKind,
  readOptions,
} from "../option-schema.js";
import type { InputRequiredOptions, ServerRequestOptions } from "../protocol/asking/index.js";
import {
  checkPrimitiveFields,
  DEFAULT_MAX_LISTEN_BYTES,
  DEFAULT_MAX_LISTEN_BYTES_PER_SCOPE,
  DEFAULT_MAX_SUBSCRIPTION_BYTES,
  DEFAULT_MAX_SUBSCRIPTION_BYTES_PER_SCOPE,
  DEFAULT_MAX_SUBSCRIPTIONS,
  DEFAULT_MAX_SUBSCRIPTIONS_PER_SCOPE,
  DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION,
  type Extension,
  type Icon,
  isExtensionId,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from "../protocol/index.js";
import type { TaskOptions } from "../protocol/tasks/index.js";
import { type RateLimitOptions, RateLimitPlan } from "../rate-limits/index.js";
import {
  DEFAULT_MAX_SESSION_BYTES,
  DEFAULT_MAX_SESSION_BYTES_PER_SCOPE,
  type SessionStore,
} from "../sessions/index.js";
import { type HandlerErrorHook, logHandlerError } from "../telemetry/error-reporter.js";
import type { TracerProviderLike } from "../telemetry/tracer-provider.js";

/** The package version (the server's default `version`); test/runtimes keeps it equal to package.json's. */
export const PACKAGE_VERSION = "0.1.0";

const PATH = /^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/;

/** What `sessions: { … }` declares (`sessions: true` is every default). */
export const SESSION_OPTIONS = {
  maxSessions: option(OPTION.nonNegativeLimit, {
    default: 100_000,
    description:
      "Most sessions held at once. At the bound a new session evicts the least recently used session of the creating scope that holds the most (never refused for it).",
  }),
  maxSessionsPerScope: option(OPTION.positiveInteger, {
    default: 64,
    description:
      "Most sessions one creating scope (the principal, else the client's IP bucket) may hold; beyond, `initialize` is refused: HTTP 429, `Retry-After: 60`, JSON-RPC -32000.",
  }),
  maxSessionBytesPerScope: option(OPTION.nonNegativeLimit, {
    default: DEFAULT_MAX_SESSION_BYTES_PER_SCOPE,
    description:
      "Most bytes of session records one creating scope may hold (each record: its texts, UTF-8, plus 512; docs/tenancy.md); beyond, `initialize` is refused as for `maxSessionsPerScope`. Applies to the default memory store (a custom `store` has its own options).",
  }),
  maxSessionBytes: option(OPTION.nonNegativeLimit, {
    default: DEFAULT_MAX_SESSION_BYTES,
    description:
      "Most bytes of session records held in all; at the bound the least recently created sessions of the creating scope holding the most bytes are evicted (never a refusal).",
  }),
  ttlMs: option(OPTION.positiveInteger, {
    default: 30 * 60_000,
    description: "Idle time after which the janitor removes a session (ms).",
  }),
  store: customOption<SessionStore>({
    accepts: "a SessionStore",
    default: "a MemorySessionStore of maxSessions",
    description:
      "Where sessions are kept; `RedisSessionStore` (`conduit-mcp/redis`) shares them between nodes.",
    read: (value, name) => {
      const store = value as Partial<SessionStore> | null | undefined;
      if (
        store !== undefined &&
        (typeof store !== "object" || store === null || typeof store.get !== "function")
      ) {
        throw new InvalidOptionError(name, "a SessionStore", value);
      }
      return store;
    },
  }),
  maxSubscriptionsPerSession: option(OPTION.nonNegativeLimit, {
    default: DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION,
    description:
      "Most resource URIs one session may subscribe to (`resources/subscribe`); beyond, the request gets JSON-RPC -32000.",
  }),
  maxSubscriptionsPerScope: option(OPTION.positiveInteger, {
    default: DEFAULT_MAX_SUBSCRIPTIONS_PER_SCOPE,
    description:
      "Most resource subscriptions one bucket (the principal, else the client's IP bucket) may hold across all its sessions; beyond, JSON-RPC -32000.",
  }),
  maxSubscriptionBytesPerScope: option(OPTION.positiveInteger, {
    default: DEFAULT_MAX_SUBSCRIPTION_BYTES_PER_SCOPE,
    description: "Most bytes of URIs (UTF-8) one bucket's subscriptions may hold.",
  }),
  maxSubscriptions: option(OPTION.nonNegativeLimit, {
    default: DEFAULT_MAX_SUBSCRIPTIONS,
    description:
      "Most resource subscriptions held in all on this process; at it, the oldest subscription of the bucket holding the most is dropped (never a refusal).",
  }),
  maxSubscriptionBytes: option(OPTION.positiveInteger, {
    default: DEFAULT_MAX_SUBSCRIPTION_BYTES,
    description: "Most bytes of URIs held in all; over it, the bucket holding the most bytes pays.",
  }),
} satisfies z.ZodRawShape;

/** `http`: the HTTP endpoint and what it lets in. */
export const HTTP_OPTIONS = {
  path: option(
    optionKind(
      z
        .string()
        .regex(PATH)
        .refine((path) => path !== "/health" && path !== "/ready" && path !== "/metrics"),
      'a URL path starting with "/" (not /health, /ready or /metrics)',
    ),
    { default: "/mcp", description: "The MCP endpoint path." },
  ),
  requireSession: option(OPTION.boolean, {
    default: false,
    description:
      "Refuse (400) requests other than `initialize` without a session. Needs `sessions`.",
  }),
  allowedOrigins: customOption<readonly string[]>({
    accepts: "an array of origin strings",
    default: "none (loopback origins only, on loopback)",
    description: "Browser origins allowed (exact `scheme://host[:port]`).",
    read: (value, name) => {
      if (value !== undefined && !Array.isArray(value)) {
        throw new InvalidOptionError(name, "an array of origin strings", value);
      }
      return value;
    },
  }),
  trustProxy: customOption<number | string | readonly string[]>({
    accepts: "a hop count, or a CIDR list (string or array)",
    default: "trust nothing",
    description:
      "Which peers may set `X-Forwarded-For`: a hop count or the proxies' addresses / CIDR ranges (also `loopback`, `linklocal`, `uniquelocal`).",
    // Checked by parseTrustProxy when the server is built (src/identity/trust-proxy.ts).
    read: (value) => value,
  }),
  cancelOnDisconnect: option(OPTION.boolean, {
    default: true,
    description: "A 2025-era client's disconnect cancels its request.",
  }),
  metrics: option(OPTION.boolean, {
    default: false,
    description: "Serve `GET /metrics` (Prometheus text).",
  }),
  metricsAuth: option(OPTION.boolean, {
    default: false,
    description: "`GET /metrics` needs the same credentials as the MCP endpoint. Needs `auth`.",
  }),
} satisfies z.ZodRawShape;

/** `limits`: how much one scope, and everybody together, may hold. */
export const LIMIT_OPTIONS = {
  maxBodyBytes: option(OPTION.positiveInteger, {
    default: 1_048_576,
    description:
      "Largest accepted request body in bytes; 413 beyond. Also the largest stdio message.",
  }),
  maxConcurrentRequestsPerScope: option(OPTION.positiveInteger, {
    default: 64,
    description:
      'Most requests one scope (session > principal > client IP bucket; an IPv6 /64 is one bucket) may have running at once. Beyond, a request is refused at once: HTTP 429, `Retry-After: 1`, JSON-RPC -32000 "Too many concurrent requests". Notifications are never refused (a cancel is how a scope at its bound frees a unit).',
  }),
  maxConcurrentRequests: option(OPTION.positiveInteger, {
    default: 10_000,
    description:
      "Most requests running at once over all scopes. It never refuses a scope under its own bound: reaching it takes the unit of the oldest request of the scope holding the most and closes that request's connection (its call is cancelled as on a disconnect).",
  }),
  maxOpenStreamsPerScope: option(OPTION.positiveInteger, {
    default: 32,
    description:
      "Most request-scoped SSE streams one scope may hold. Beyond, a call from a client that also accepts JSON is answered with one JSON body (its progress and log notifications dropped); a client accepting only SSE gets 429.",
  }),
  maxBodyBytesInFlightPerScope: option(OPTION.positiveInteger, {
    default: undefined,
    shown: "8 × maxBodyBytes (8 MiB)",
    description:
      'Most bytes of request bodies one scope (principal, else client IP bucket: an IPv4 address, an IPv6 /64) may have the server reading at once, counted at their declared length (`maxBodyBytes` when none) until parsed; a body that came whole with its headers is not counted. Beyond, the request is refused before its body is read: HTTP 429, `Retry-After: 1`, JSON-RPC -32000 "Too many request bytes in flight". At least `maxBodyBytes`.',
  }),
  maxBodyBytesInFlight: option(OPTION.positiveInteger, {
    default: undefined,
    shown: "64 × maxBodyBytes (64 MiB)",
    description:
      "Most bytes of request bodies the server reads at once over all scopes. It never refuses a scope under its own budget: reaching it closes the connection of the oldest body being read by the scope holding the most bytes (503 only when there is none). At least `maxBodyBytes`.",
  }),
  maxStreamBufferBytes: option(OPTION.positiveInteger, {
    default: 1_048_576,
    description:
      "Most bytes an SSE stream may have buffered for a client that does not read it; beyond, the stream is cut and the call cancelled as on a disconnect.",
  }),
  maxConnections: option(OPTION.positiveInteger, {
    default: 10_000,
    description:
      "Most connections open at once, all clients (listen()). Never refuses: reaching it closes one connection of the client bucket holding the most (an idle one first, else its oldest).",
  }),
  maxConnectionsPerBucket: option(OPTION.positiveInteger, {
    default: 128,
    description:
      "Most connections one client bucket (an IPv4 address, an IPv6 /64) may hold open at once (listen()); beyond, a new one is closed at once. A peer trusted by `trustProxy` is not held to it.",
  }),
  maxUriLength: option(integerBetween(64, 1_048_576), {
    default: 8_192,
    description: "Longest URI a `resources/read` may name; longer is -32602.",
  }),
  maxTemplateValueLength: option(integerBetween(1, 1_048_576), {
    default: 1_024,
    description: "Longest value one resource template variable may match; longer is -32602.",
  }),
  maxListenersPerScope: option(OPTION.nonNegativeLimit, {
    default: 8,
    description:
      "Most 2026-07-28 `subscriptions/listen` streams one scope (principal, else client IP bucket) may hold open; beyond, -32000.",
  }),
  maxListeners: option(OPTION.nonNegativeLimit, {
    default: 10_000,
    description: "Most `subscriptions/listen` streams open on this process in all; beyond, -32000.",
  }),
  maxListenBytesPerScope: option(OPTION.positiveInteger, {
    default: DEFAULT_MAX_LISTEN_BYTES_PER_SCOPE,
    description:
      "Most bytes of `subscriptions/listen` filters one scope (principal, else client IP bucket) may hold open (each listener: its URIs, task ids and subscription id, UTF-8, plus 1 024; docs/tenancy.md); beyond, -32000.",
  }),
  maxListenBytes: option(OPTION.positiveInteger, {
    default: DEFAULT_MAX_LISTEN_BYTES,
    description:
      "Most bytes of `subscriptions/listen` filters open on this process; at the bound the oldest listener of the scope holding the most bytes is ended (its listen answered `complete`), never a refusal.",
  }),
  maxListenUris: option(OPTION.nonNegativeInteger, {
    default: 64,
    description:
      "Most URIs one `subscriptions/listen` may name in `resourceSubscriptions`; beyond, -32602.",
  }),
} satisfies z.ZodRawShape;

/** `timeouts`: every clock of the HTTP door and of a call's end, in ms. */
export const TIMEOUT_OPTIONS = {
  headersTimeoutMs: option(OPTION.timerMs, {
    default: 10_000,
    description:
      "Time a client has to send its complete request headers (node's `server.headersTimeout`, set by listen()); beyond, 408 and the connection closes. A connection that sends nothing is closed after it too.",
  }),
  requestTimeoutMs: option(OPTION.timerMs, {
    default: undefined,
    shown: "30000 (at least headersTimeoutMs)",
    description:
      "Time a client has to send its complete request, headers and body (node's `server.requestTimeout`, set by listen()); beyond, 408 and the connection closes. Running calls are not affected. At least `headersTimeoutMs`.",
  }),
  bodyTimeoutMs: option(OPTION.timerOrZeroMs, {
    default: 10_000,
    description:
      "Total time a request body may take to arrive once reading began (a client trickling a byte at a time never resets it); beyond, 408. Applies to `handler` under any server. 0 disables.",
  }),
  streamCancelTimeoutMs: option(OPTION.timerOrZeroMs, {
    default: 5_000,
    description: "How long a cancelled tool may keep running before it is abandoned.",
  }),
  toolTimeoutMs: option(OPTION.timerMs, {
    default: undefined,
    shown: "none (a tool runs until it ends or is cancelled)",
    description:
      'Default deadline of a tool\'s run, for tools without a `timeoutMs` of their own; past it the call is cancelled with source `timeout` and answered with a tool error (docs/limits.md, "Deadlines").',
  }),
  keepAliveMs: option(OPTION.timerOrZeroMs, {
    default: 15_000,
    description: "Interval of `: keepalive` comments on open SSE streams; 0 disables.",
  }),
  keepAliveTimeoutMs: option(OPTION.timerMs, {
    default: 65_000,
    description:
      "How long an idle keep-alive connection stays open (node's `server.keepAliveTimeout`, set by listen()); longer than common load balancers' idle timeouts (60 s), so the balancer closes idle connections first.",
  }),
  closeGraceMs: option(OPTION.timerOrZeroMs, {
    default: 5_000,
    description: "How long close() lets running requests finish before aborting them.",
  }),
  closeDelayMs: option(OPTION.timerOrZeroMs, {
    default: 0,
    shown: "0 (stop admitting at once)",
    description:
      'How long close() first keeps serving everything while `GET /ready` answers 503 `draining`, before it stops admitting: the time a load balancer\'s readiness check needs to take the node out of rotation, so no request races the closing listener (docs/deploy.md, "Drain").',
  }),
} satisfies z.ZodRawShape;

/** `lists`: paging and caching hints of list results. */
export const LIST_OPTIONS = {
  pageSize: option(integerBetween(1, 10_000), {
    default: 100,
    description:
      "Items per page of `tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`.",
  }),
  cursorSecret: customOption<string | Uint8Array>({
    accepts: "a string or bytes of at least 32 bytes",
    default: "random per process",
    description:
      "HMAC key sealing list cursors. Give every node behind one load balancer the same key so a cursor from one node pages on another.",
    read: (value, name) => {
      if (
        value !== undefined &&
        !(
          (typeof value === "string" || value instanceof Uint8Array) &&
          Buffer.byteLength(value) >= 32
        )
      ) {
        throw new InvalidOptionError(name, "a string or bytes of at least 32 bytes", "(hidden)");
      }
      return value;
    },
  }),
  cacheTtlMs: option(OPTION.timerOrZeroMs, {
    default: 60_000,
    description:
      "`ttlMs` caching hint on 2026-07-28 `server/discover`, list and `resources/read` results (a resource's own `ttlMs` wins).",
  }),
} satisfies z.ZodRawShape;

/** The served definitions: checked when the server's collections are built from them. */
function definitions<T>(what: string, description: string) {
  return customOption<readonly T[]>({
    accepts: `an array of ${what} results`,
    default: "none",
    description,
    read: (value, name) => {
      if (value !== undefined && !Array.isArray(value)) {
        throw new InvalidOptionError(name, `an array of ${what} results`, value);
      }
      return value ?? [];
    },
  });
}

/** An object option checked by the module that builds from it, when the server is built. */
function builtLater<T>(doc: { accepts: string; default: string; description: string }) {
  return customOption<T>({ ...doc, read: (value) => value });
}

/**
 * Every option of `createMcpServer`, top level first then the groups. The members of `http`,
 * `limits`, `timeouts` and `lists` are also read at the top level under the same name, a
 * deprecated spelling ({@link FLAT_ALIASES}).
 */
export const SERVER_OPTIONS = z.object({
  name: option(OPTION.label, { default: "conduit-mcp", description: "`serverInfo.name`." }),
  version: option(OPTION.label, {
    default: undefined,
    shown: "the package version",
    description: "`serverInfo.version`.",
  }),
  title: option(OPTION.text, {
    default: undefined,
    description: "`serverInfo.title`: a display name.",
  }),
  description: option(OPTION.text, {
    default: undefined,
    description: "`serverInfo.description`.",
  }),
  icons: customOption<readonly Icon[]>({
    accepts: 'an array of { src, mimeType?, sizes?: string[], theme?: "light" | "dark" }',
    default: "none",
    description: "`serverInfo.icons`.",
    read: (value) => {
      checkPrimitiveFields("server", { name: "server", icons: value } as never);
      return value;
    },
  }),
  websiteUrl: option(
    optionKind(
      z.string().refine((url) => /^https?:\/\//.test(url) && URL.canParse(url)),
      "an http(s) URL",
    ),
    { default: undefined, description: "`serverInfo.websiteUrl`." },
  ),
  instructions: option(OPTION.text, {
    default: undefined,
    description: "`instructions` of `initialize` and `server/discover`: how to use the server.",
  }),
  serverCard: customOption<ServerCardOptions>({
    accepts: "an object: { name, description?, url?, repository? }",
    default: "none",
    description:
      "Serve an MCP Server Card (experimental: the current SEP-2127 draft) at `<path>/server-card` and `/.well-known/mcp/server-card.json`; `name` is reverse-DNS (`com.example/server`), `url` the endpoint's public URL.",
    read: (value) => value,
  }),
  tools: customOption<readonly Tool[]>({
    accepts: "an array of defineTool() results",
    default: "none",
    description: "The tools served (names must be unique); `server.tools` changes them later.",
    read: readTools,
  }),
  resources: definitions<Resource>(
    "defineResource()",
    "Direct resources served (URIs must be unique); `server.resources` changes them later.",
  ),
  resourceTemplates: definitions<ResourceTemplate>(
    "defineResourceTemplate()",
    "Resource templates served (URI templates must be unique).",
  ),
  prompts: definitions<Prompt>(
    "definePrompt()",
    "Prompts served (names must be unique); `server.prompts` changes them later.",
  ),
  extensions: customOption<readonly Extension[]>({
    accepts: "an array of defineExtension results",
    default: "none",
    description:
      "Extensions served (`defineExtension`): declared in `server/discover` and `initialize` capabilities, their methods served like built-in ones.",
    read: readExtensions,
  }),
  sessions: customOption<boolean | Record<string, unknown>>({
    accepts: "a boolean or an object of the session options below",
    default: "off (stateless)",
    description:
      "`true` or the session options to issue `Mcp-Session-Id` on `initialize` (2025-11-25 sessions); see the `sessions.*` options.",
    read: (value, name) => {
      if (value === undefined || value === false) return null;
      if (value === true) return readOptions(z.object(SESSION_OPTIONS), {}, { prefix: `${name}.` });
      if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        return readOptions(z.object(SESSION_OPTIONS), value, { prefix: `${name}.` });
      }
      throw new InvalidOptionError(name, "a boolean or { maxSessions?, ttlMs?, store? }", value);
    },
  }),
  auth: builtLater<AuthOptions>({
    accepts: "an object: { tokens?, oauth?, verify? }",
    default: "off",
    description:
      "Bearer tokens (secrets of at least 16 bytes), an OAuth 2.1 resource server (`oauth`) and/or a verify hook; 401 with a `WWW-Authenticate` challenge when configured and none authenticates.",
  }),
  registry: customOption<CancellationRegistry>({
    accepts: "a CancellationRegistry",
    default: "a new one the server owns and closes",
    description: "A cancellation registry to share (the caller closes it).",
    read: (value, name) => {
      if (value !== undefined && !(value instanceof CancellationRegistry)) {
        throw new InvalidOptionError(name, "a CancellationRegistry", value);
      }
      return value;
    },
  }),
  http: optionGroup(HTTP_OPTIONS, "The HTTP endpoint and what it lets in."),
  limits: optionGroup(LIMIT_OPTIONS, "How much one scope, and everybody together, may hold."),
  timeouts: optionGroup(TIMEOUT_OPTIONS, "The clocks of the HTTP door and of a call's end (ms)."),
  lists: optionGroup(LIST_OPTIONS, "Paging and caching hints of results."),
  inputRequired: builtLater<InputRequiredOptions>({
    accepts: "an object: { keys?, ttlMs?, maxStateBytes?, maxInputResponses?, maxResponseBytes? }",
    default: "a random key per process, flows of at most 10 minutes",
    description:
      "Asking the client on 2026-07-28 requests (`ctx.elicit`, `ctx.sample`, `ctx.roots`): the keys sealing `requestState` (share them between nodes) and the bounds.",
  }),
  serverRequests: builtLater<ServerRequestOptions>({
    accepts: "an object: { timeoutMs?, maxPerScope?, max?, unknownCapabilities?, bus? }",
    default: "timeout 5 min, 16 asks per scope, 10 000 in all, refuse unknown capabilities, no bus",
    description:
      "Asking the client on 2025-11-25 requests (requests sent on the call's SSE stream): the timeout, the asks waiting per scope and in all, the rule where capabilities are unknown, and the bus carrying answers between nodes.",
  }),
  workerPool: customOption<WorkerPoolOptions>({
    accepts:
      "WorkerPool options: { maxWorkers?, maxQueue?, maxWorkersPerScope?, maxQueuePerScope?, idleTimeoutMs?, resourceLimits? }",
    default: "maxWorkers cores - 1 (at least 1), maxQueue 1000, idleTimeoutMs 30000",
    description:
      "The worker pool isolated tools run in (created on the first isolated call, closed by close()).",
    read: (value) => {
      if (value === undefined) return {};
      resolvePoolOptions(value as WorkerPoolOptions);
      return value;
    },
  }),
  tasks: builtLater<TaskOptions | false>({
    accepts: "false or task options: { store?, maxTasksPerScope?, maxTasks?, maxResultBytes?, … }",
    default: "a memory store; 100 tasks per scope, 10 000 in all",
    description:
      "Tools declared with `task` run as tasks: the store and the bounds (`maxTasksPerScope` is the only bound that refuses, 429 / -32000). `false` serves no tasks and advertises no tasks capability.",
  }),
  rateLimits: customOption<RateLimitOptions | false>({
    accepts: "false or rate limit options: { perScope?, methods?, tools?, store? }",
    default: "off (only the concurrency bounds apply)",
    description:
      'Per-tenant rate limits: token buckets per principal (else per client IP bucket, an IPv6 /64 being one; never per session), for every request (`perScope`), per method (`methods`) and per tool (`tools`), each one rate or one per scope kind (`{ principal, ip }`); `store` shares them across nodes (`RedisRateLimitStore`). A refused request gets 429, `Retry-After` and -32000 (docs/limits.md, "Rate limits").',
    read: (value) => RateLimitPlan.from(value as RateLimitOptions | false | undefined),
  }),
  requestHeaders: customOption<readonly string[]>({
    accepts: "an array of at most 64 HTTP header names (any case)",
    default: "none",
    description:
      'Request headers a handler may read in `ctx.request.headers` (names in lower case, a repeated header\'s values joined with ", "); `ctx.request` always carries the method, the path and the client\'s address. `Authorization`, `Proxy-Authorization` and `Cookie` are refused: credentials never reach handlers (docs/limits.md, "The request view").',
    read: (value) => readRequestHeaders(value),
  }),
  changeFeed: customOption<ChangeFeed>({
    accepts: "a ChangeFeed (MemoryChangeFeed, RedisChangeFeed)",
    default: "a MemoryChangeFeed (this process only)",
    description:
      "Where list changes and resource updates are told, so that every node's listeners hear a change made on any node, once each. A feed passed here is not closed by close().",
    read: (value, name) => {
      const feed = value as Partial<ChangeFeed> | null | undefined;
      if (
        feed !== undefined &&
        (typeof feed !== "object" ||
          feed === null ||
          typeof feed.publish !== "function" ||
          typeof feed.onChange !== "function")
      ) {
        throw new InvalidOptionError(
          name,
          "a ChangeFeed (MemoryChangeFeed, RedisChangeFeed)",
          value,
        );
      }
      return feed;
    },
  }),
  onError: customOption<HandlerErrorHook | false>({
    accepts: "a function (error, context) or false",
    default: "one line on stderr, no stack",
    description:
      "Called once for every handler that throws or returns a value that cannot be sent, with the error and who called what; the client gets only -32603 (or the tool's `isError` result). `false` silences it.",
    read: (value, name) => {
      if (value === undefined) return logHandlerError;
      if (value === false) return null;
      if (typeof value !== "function") {
        throw new InvalidOptionError(name, "a function (error, context) or false", value);
      }
      return value;
    },
  }),
  tracing: customOption<boolean | { readonly tracerProvider?: TracerProviderLike }>({
    accepts: "a boolean or { tracerProvider? }",
    default: "true",
    description:
      "OpenTelemetry spans, one per request and one per handler, when the optional peer `@opentelemetry/api` is installed: `true` (the global tracer provider), `{ tracerProvider }` or `false` (off: the API is not even loaded).",
    read: readTracing,
  }),
});

/** The groups whose members are also accepted at the top level (deprecated spelling). */
const GROUPS = {
  http: HTTP_OPTIONS,
  limits: LIMIT_OPTIONS,
  timeouts: TIMEOUT_OPTIONS,
  lists: LIST_OPTIONS,
};

/** Deprecated flat name → its grouped path (`maxBodyBytes` → `limits.maxBodyBytes`). */
export const FLAT_ALIASES: ReadonlyMap<string, string> = new Map(
  Object.entries(GROUPS).flatMap(([group, shape]) =>
    Object.keys(shape).map((key) => [key, `${group}.${key}`] as const),
  ),
);

function readTools(value: unknown, name: string): readonly Tool[] {
  const tools = value ?? [];
  if (!Array.isArray(tools))
    throw new InvalidOptionError(name, "an array of defineTool() results", tools);
  const names = new Set<string>();
  for (const tool of tools as readonly unknown[]) {
    const t = tool as Partial<Tool> | null;
    if (
      typeof t !== "object" ||
      t === null ||
      typeof t.name !== "string" ||
      typeof t.checkArguments !== "function" ||
      typeof t.handler !== "function"
    ) {
      throw new InvalidOptionError(`${name}[]`, "a defineTool() result", tool);
    }
    if (names.has(t.name)) throw new InvalidOptionError(name, "tools with unique names", t.name);
    names.add(t.name);
  }
  return tools as readonly Tool[];
}

function readExtensions(value: unknown, name: string): readonly Extension[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw new InvalidOptionError(name, "an array of defineExtension results", value);
  }
  for (const extension of value as readonly unknown[]) {
    const e = extension as Partial<Extension> | null;
    if (
      typeof e !== "object" ||
      e === null ||
      !Object.isFrozen(e) ||
      !isExtensionId(e.id) ||
      typeof e.methods !== "object"
    ) {
      throw new InvalidOptionError(`${name}[]`, "what defineExtension returned", extension);
    }
  }
  return value as readonly Extension[];
}

function readTracing(
  value: unknown,
  name: string,
): { readonly tracerProvider: TracerProviderLike | undefined } | null {
  if (value === undefined || value === true) return { tracerProvider: undefined };
  if (value === false) return null;
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const provider = (value as { tracerProvider?: unknown }).tracerProvider;
    if (provider === undefined) return { tracerProvider: undefined };
    if (
      typeof provider === "object" &&
      provider !== null &&
      typeof (provider as TracerProviderLike).getTracer === "function"
    ) {
      return { tracerProvider: provider as TracerProviderLike };
    }
    throw new InvalidOptionError(`${name}.tracerProvider`, "a TracerProvider", provider);
  }
  throw new InvalidOptionError(name, "a boolean or { tracerProvider? }", value);
}

/** RFC 9110, section 5.1: a field name is a token. */
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
/** Credentials: never shown to handlers, even when listed. */
const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
]);
const MAX_REQUEST_HEADERS = 64;

/** The `requestHeaders` option: header names, lower-cased, without repeats; credentials refused. */
function readRequestHeaders(value: unknown): readonly string[] {
  if (value === undefined) return Object.freeze([]);
  if (!Array.isArray(value) || value.length > MAX_REQUEST_HEADERS) {
    throw new InvalidOptionError(
      "requestHeaders",
      `an array of at most ${MAX_REQUEST_HEADERS} header names`,
      value,
    );
  }
  const names = new Set<string>();
  for (const name of value) {
    if (typeof name !== "string" || !FIELD_NAME.test(name)) {
      throw new InvalidOptionError("requestHeaders", "HTTP header names (RFC 9110 tokens)", name);
    }
    const lower = name.toLowerCase();
    if (CREDENTIAL_HEADERS.has(lower)) {
      throw new InvalidOptionError(
        "requestHeaders",
        "header names other than Authorization, Proxy-Authorization and Cookie (credentials never reach handlers: read the caller from ctx.principal)",
        name,
      );
    }
    names.add(lower);
  }
  return Object.freeze([...names]);
}
