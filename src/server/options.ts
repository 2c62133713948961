/**
 * `createMcpServer` options, their documented defaults, and their validation. Every bad value
 * throws {@link InvalidOptionError} at construction, so a misconfiguration fails at start-up and
 * never mid-request.
 */

import { CancellationRegistry } from "../cancellation/index.js";
import type { ChangeFeed } from "../changes/index.js";
import { InvalidOptionError } from "../errors.js";
import type { AuthOptions } from "../http/index.js";
import type { TrustProxyOption } from "../identity/index.js";
import { resolvePoolOptions, type WorkerPoolOptions } from "../isolation/pool-options.js";
import { OPTION, readOption } from "../option-schema.js";
import type { InputRequiredOptions, ServerRequestOptions } from "../protocol/asking/index.js";
import {
  DEFAULT_MAX_LISTEN_BYTES,
  DEFAULT_MAX_LISTEN_BYTES_PER_SCOPE,
  DEFAULT_MAX_SUBSCRIPTION_BYTES,
  DEFAULT_MAX_SUBSCRIPTION_BYTES_PER_SCOPE,
  DEFAULT_MAX_SUBSCRIPTIONS,
  DEFAULT_MAX_SUBSCRIPTIONS_PER_SCOPE,
  DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION,
  type Extension,
  type Icon,
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
// The files themselves, not telemetry/index.js: these declarations must not reach the optional
// @opentelemetry/api's types.
import { type HandlerErrorHook, logHandlerError } from "../telemetry/error-reporter.js";
import type { TracerProviderLike } from "../telemetry/tracer-provider.js";

/** Session options (2025-era `Mcp-Session-Id`). */
export interface SessionOptions {
  /**
   * Most sessions held at once. At the bound a new session evicts the least recently used
   * session of the creating scope that holds the most (never refused for it). Default 100 000.
   */
  readonly maxSessions?: number;
  /**
   * Most sessions one creating scope (the principal, else the client's IP bucket) may hold;
   * beyond, `initialize` is refused: HTTP 429, `Retry-After: 60`, JSON-RPC -32000. Default 64.
   */
  readonly maxSessionsPerScope?: number;
  /**
   * Most bytes of session records one creating scope may hold (each record: its texts, UTF-8,
   * plus 512; docs/tenancy.md); beyond, `initialize` is refused as for `maxSessionsPerScope`.
   * Default 256 KiB. Applies to the default memory store (a custom `store` has its own options).
   */
  readonly maxSessionBytesPerScope?: number;
  /**
   * Most bytes of session records held in all; at the bound the least recently created sessions
   * of the creating scope holding the most bytes are evicted (never a refusal). Default 64 MiB.
   */
  readonly maxSessionBytes?: number;
  /** Idle time after which the janitor removes a session. Default 30 min. */
  readonly ttlMs?: number;
  /** A custom store (e.g. shared); default a {@link MemorySessionStore} of `maxSessions`. */
  readonly store?: SessionStore;
  /**
   * Most resource URIs one session may subscribe to (`resources/subscribe`); beyond, the
   * request gets JSON-RPC -32000. Default 64.
   */
  readonly maxSubscriptionsPerSession?: number;
  /**
   * Most resource subscriptions one bucket (the principal, else the client's IP bucket) may hold
   * across all its sessions; beyond, the request gets JSON-RPC -32000. Default 256.
   */
  readonly maxSubscriptionsPerScope?: number;
  /** Most bytes of URIs one bucket's subscriptions may hold (UTF-8). Default 1 MiB. */
  readonly maxSubscriptionBytesPerScope?: number;
  /**
   * Most resource subscriptions held in all on this process; at it, the oldest subscription of
   * the bucket holding the most is dropped (never a refusal). Default 100 000.
   */
  readonly maxSubscriptions?: number;
  /** Most bytes of URIs held in all; over it, the bucket holding the most bytes pays. Default 32 MiB. */
  readonly maxSubscriptionBytes?: number;
}

/**
 * Options of {@link createMcpServer}. All optional.
 *
 * @example
 * ```ts
 * const options: McpServerOptions = { tools: [echo], sessions: true, auth: { tokens: { s3cret: "alice" } } };
 * ```
 */
export interface McpServerOptions {
  /** `serverInfo.name`. Default `"conduit-mcp"`. */
  readonly name?: string;
  /** `serverInfo.version`. Default the package version. */
  readonly version?: string;
  /** The tools served (names must be unique). Default none; `server.tools` changes them later. */
  readonly tools?: readonly Tool[];
  /** Direct resources served (URIs must be unique). Default none; see `server.resources`. */
  readonly resources?: readonly Resource[];
  /** Resource templates served (URI templates must be unique). Default none. */
  readonly resourceTemplates?: readonly ResourceTemplate[];
  /** Prompts served (names must be unique). Default none; see `server.prompts`. */
  readonly prompts?: readonly Prompt[];
  /**
   * Extensions served (`defineExtension`): declared in `server/discover` and `initialize`
   * capabilities, their methods served like built-in ones. Default none.
   */
  readonly extensions?: readonly Extension[];
  /** `serverInfo.title`: a display name. Default none. */
  readonly title?: string;
  /** `serverInfo.description`. Default none. */
  readonly description?: string;
  /** `serverInfo.icons`. Default none. */
  readonly icons?: readonly Icon[];
  /** `serverInfo.websiteUrl` (an `http(s):` URL). Default none. */
  readonly websiteUrl?: string;
  /** `instructions` of `initialize` and `server/discover`: how to use the server. Default none. */
  readonly instructions?: string;
  /** Items per page of `tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`. Default 100. */
  readonly pageSize?: number;
  /**
   * HMAC key (at least 32 bytes) sealing list cursors. Give every node behind one load balancer
   * the same key so a cursor from one node pages on another. Default: random per process.
   */
  readonly cursorSecret?: string | Uint8Array;
  /**
   * Asking the client on 2026-07-28 requests (`ctx.elicit`, `ctx.sample`, `ctx.roots`): the keys
   * sealing `requestState` (share them between nodes) and the bounds. Default: a random key per
   * process, flows of at most 10 minutes. docs/asking-the-client.md.
   */
  readonly inputRequired?: InputRequiredOptions;
  /**
   * Asking the client on 2025-11-25 requests (`ctx.elicit`, `ctx.sample`, `ctx.roots` send
   * requests on the call's SSE stream): timeout (default 5 min), asks waiting per scope (16) and
   * in all (10 000), the rule where capabilities are unknown (`"refuse"`), and the bus carrying
   * answers between nodes (none). docs/asking-the-client.md.
   */
  readonly serverRequests?: ServerRequestOptions;
  /** Longest URI a `resources/read` may name; longer is -32602. Default 8 192. */
  readonly maxUriLength?: number;
  /** Longest value one resource template variable may match; longer is -32602. Default 1 024. */
  readonly maxTemplateValueLength?: number;
  /** A registry to share (the caller closes it); default a new one the server owns and closes. */
  readonly registry?: CancellationRegistry;
  /** The MCP endpoint path. Default `"/mcp"`. */
  readonly path?: string;
  /** `true` or options to issue `Mcp-Session-Id` on initialize. Default off (stateless). */
  readonly sessions?: boolean | SessionOptions;
  /** Refuse (400) requests other than initialize without a session. Default false; needs sessions. */
  readonly requireSession?: boolean;
  /**
   * Bearer tokens (secrets of at least 16 bytes), an OAuth 2.1 resource server (`oauth`) and/or
   * a verify hook; 401 with a `WWW-Authenticate` challenge when configured and none
   * authenticates. Default off.
   */
  readonly auth?: AuthOptions;
  /** Which peers may set `X-Forwarded-For` (hop count or CIDR list). Default: trust nothing. */
  readonly trustProxy?: TrustProxyOption;
  /** Browser origins allowed (exact `scheme://host[:port]`). Default none (loopback origins only on loopback). */
  readonly allowedOrigins?: readonly string[];
  /** Largest accepted body in bytes; 413 beyond. Default 1 048 576. */
  readonly maxBodyBytes?: number;
  /**
   * Most requests one scope may have running at once — the scope the
   * cancellation uses: session > principal > client IP bucket (an IPv6 /64 is one bucket).
   * Beyond it a request is refused at once: HTTP 429, `Retry-After: 1`, JSON-RPC -32000
   * "Too many concurrent requests" with the request's id. Notifications are never refused (a
   * cancel is how a scope at its bound frees a unit). Default 64.
   */
  readonly maxConcurrentRequestsPerScope?: number;
  /**
   * Most request-scoped SSE streams one scope may hold (a `tools/call`, `resources/read` or
   * `prompts/get` whose client accepts `text/event-stream` holds one while it runs). Beyond it a call from a client that also
   * accepts JSON still runs and is answered with one JSON body (its progress and log
   * notifications are dropped); a client accepting only SSE is refused with 429. Default 32.
   */
  readonly maxOpenStreamsPerScope?: number;
  /**
   * Most requests running at once over all scopes, so memory stays bounded. It never refuses a
   * scope under its own bound: reaching it takes the unit of the oldest request of the scope
   * holding the most and closes that request's connection (its call is cancelled as on a
   * disconnect). Default 10 000.
   */
  readonly maxConcurrentRequests?: number;
  /**
   * Time a client has to send its complete request headers (node's `server.headersTimeout`,
   * set by listen()); beyond it node answers 408 and closes the connection. Default 10 000 ms.
   */
  readonly headersTimeoutMs?: number;
  /**
   * Time a client has to send its complete request, headers and body (node's
   * `server.requestTimeout`, set by listen()); beyond it 408 and the connection closes. Running
   * tool calls are not affected: the clock stops once the request has arrived. At least
   * `headersTimeoutMs`. Default 30 000 ms.
   */
  readonly requestTimeoutMs?: number;
  /**
   * Total time a request body may take to arrive once reading began (a client trickling a byte
   * at a time never resets it); beyond it 408 and the connection closes. Applies to `handler`
   * under any server. 0 disables. Default 10 000 ms.
   */
  readonly bodyTimeoutMs?: number;
  /** A 2025-era client disconnect cancels its request. Default true. */
  readonly cancelOnDisconnect?: boolean;
  /** How long a cancelled tool may keep running before it is abandoned. Default 5 000 ms. */
  readonly streamCancelTimeoutMs?: number;
  /**
   * Default deadline of a tool's run in ms (1 to 2^31 − 1), for tools without a `timeoutMs` of
   * their own; past it the call is cancelled with source `timeout` and answered with a tool error
   * (docs/limits.md, "Deadlines"). Default: none (a tool runs until it ends or is cancelled).
   */
  readonly toolTimeoutMs?: number;
  /**
   * Per-tenant rate limits: token buckets per principal (else per client IP bucket, an IPv6 /64
   * being one; never per session), for every request (`perScope`), per method (`methods`) and per
   * tool (`tools`), each one rate or one per scope kind (`{ principal, ip }`); `store` shares them
   * across nodes (`RedisRateLimitStore`). A refused request gets 429, `Retry-After` and -32000
   * (docs/limits.md, "Rate limits"). Default: off (only the concurrency bounds apply).
   */
  readonly rateLimits?: RateLimitOptions | false;
  /** Interval of `: keepalive` comments on open SSE streams; 0 disables. Default 15 000 ms. */
  readonly keepAliveMs?: number;
  /** How long close() lets running requests finish before aborting them. Default 5 000 ms. */
  readonly closeGraceMs?: number;
  /**
   * Most bytes an SSE stream may have buffered for a client that does not read it; beyond, the
   * stream is cut and the call cancelled as on a disconnect. Default 1 048 576.
   */
  readonly maxStreamBufferBytes?: number;
  /**
   * How long an idle keep-alive connection stays open (node's `server.keepAliveTimeout`, set by
   * listen()). Longer than common load balancers' idle timeouts (60 s), so the balancer closes
   * idle connections first and never sends on one the server is closing. Default 65 000 ms.
   */
  readonly keepAliveTimeoutMs?: number;
  /**
   * Most connections open at once, all clients (listen()). A memory backstop that never
   * refuses: reaching it closes one connection of the client bucket holding the most (an idle
   * one first, else its oldest), so a client holding fewer than the largest buckets can always
   * connect. Default 10 000.
   */
  readonly maxConnections?: number;
  /**
   * Most connections one client bucket (an IPv4 address, an IPv6 /64) may hold open at once
   * (listen()); beyond, a new one is closed at once. Checked before `maxConnections`. A peer
   * trusted by `trustProxy` is not held to it (bound it at the proxy). Default 128: room for
   * `maxConcurrentRequestsPerScope` calls over HTTP/1.1 plus the connections that cancel them.
   */
  readonly maxConnectionsPerBucket?: number;
  /** Serve `GET /metrics` (Prometheus text). Default false. */
  readonly metrics?: boolean;
  /** `GET /metrics` needs the same credentials as the MCP endpoint (needs `auth`). Default false. */
  readonly metricsAuth?: boolean;
  /**
   * The worker pool isolated tools run in (created on the first isolated call, closed by
   * close()). Defaults: `maxWorkers` = cores - 1 (at least 1), `maxQueue` 1 000 (beyond →
   * -32000 "Server busy"), `idleTimeoutMs` 30 000.
   */
  readonly workerPool?: WorkerPoolOptions;
  /**
   * `ttlMs` caching hint on 2026-07-28 `server/discover`, list and `resources/read` results (a
   * resource's own `ttlMs` wins). Default 60 000.
   */
  readonly cacheTtlMs?: number;
  /**
   * Tools declared with `task` run as tasks (docs/tasks.md): the store (default memory),
   * `maxTasksPerScope` (100: the only bound that refuses, 429 / -32000), `maxTasks` (10 000),
   * `maxResultBytes` (1 MiB), `maxTaskBytesPerScope` (8 MiB), `maxTaskBytes` (128 MiB), `defaultTtlMs`
   * (1 h), `maxTtlMs` (24 h), `pollIntervalMs` (1 000),
   * `sweepIntervalMs` (60 000). `false` serves no tasks and advertises no tasks capability.
   */
  readonly tasks?: TaskOptions | false;
  /**
   * Where list changes and resource updates are told, so that every node's listeners hear a
   * change made on any node, once each (docs/subscriptions.md "Listening for changes"). Default: a
   * `MemoryChangeFeed` (this process only); `RedisChangeFeed` from `conduit-mcp/redis` joins
   * nodes. A feed passed here is not closed by close().
   */
  readonly changeFeed?: ChangeFeed;
  /**
   * Most 2026-07-28 `subscriptions/listen` streams one scope (principal, else client IP bucket)
   * may hold open; beyond, -32000. Default 8.
   */
  readonly maxListenersPerScope?: number;
  /** Most `subscriptions/listen` streams open on this process in all; beyond, -32000. Default 10 000. */
  readonly maxListeners?: number;
  /** Most URIs one `subscriptions/listen` may name in `resourceSubscriptions`; beyond, -32602. Default 64. */
  readonly maxListenUris?: number;
  /**
   * Most bytes of `subscriptions/listen` filters one scope (principal, else client IP bucket) may
   * hold open (each listener: its URIs, task ids and subscription id, UTF-8, plus 1 024;
   * docs/tenancy.md); beyond, -32000. Default 256 KiB.
   */
  readonly maxListenBytesPerScope?: number;
  /**
   * Most bytes of `subscriptions/listen` filters open on this process; at the bound the oldest
   * listener of the scope holding the most bytes is ended (its listen answered `complete`), never
   * a refusal. Default 16 MiB.
   */
  readonly maxListenBytes?: number;
  /**
   * Called once for every handler (tool, resource or template read, prompt get, completer) that
   * throws or returns a value that cannot be sent, with the error and who called what
   * (docs/errors.md, "Errors the operator can see"); the client gets only -32603 (or the tool's `isError`
   * result). Not called for a cancelled or killed handler. `false` silences it (the
   * `conduit-mcp:tool:error` channel still publishes). Default: one line on stderr, no stack.
   */
  readonly onError?: HandlerErrorHook | false;
  /**
   * OpenTelemetry spans, one per request and one per handler (docs/tracing.md), when
   * the optional peer `@opentelemetry/api` is installed: `true` (spans from the global tracer
   * provider), `{ tracerProvider }` (from that provider) or `false` (off: the API is not even
   * loaded). Spans start once the API has loaded; `listen()` waits for it. Default true.
   */
  readonly tracing?: boolean | { readonly tracerProvider?: TracerProviderLike };
}

/** Options after validation, with defaults applied. */
export interface ResolvedOptions {
  readonly name: string;
  readonly version: string;
  readonly tools: readonly Tool[];
  readonly registry: CancellationRegistry | undefined;
  readonly path: string;
  readonly sessions: {
    readonly maxSessions: number;
    readonly maxSessionsPerScope: number;
    readonly maxSessionBytesPerScope: number;
    readonly maxSessionBytes: number;
    readonly ttlMs: number;
    readonly store: SessionStore | undefined;
    readonly maxSubscriptionsPerSession: number;
    readonly maxSubscriptionsPerScope: number;
    readonly maxSubscriptionBytesPerScope: number;
    readonly maxSubscriptions: number;
    readonly maxSubscriptionBytes: number;
  } | null;
  readonly requireSession: boolean;
  readonly auth: AuthOptions | undefined;
  readonly trustProxy: TrustProxyOption;
  readonly allowedOrigins: readonly string[] | undefined;
  readonly maxBodyBytes: number;
  readonly maxConcurrentRequestsPerScope: number;
  readonly maxOpenStreamsPerScope: number;
  readonly maxConcurrentRequests: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly cancelOnDisconnect: boolean;
  readonly streamCancelTimeoutMs: number;
  readonly toolTimeoutMs: number | null;
  /** null: no rate limits. */
  readonly rateLimits: RateLimitPlan | null;
  readonly keepAliveMs: number;
  readonly closeGraceMs: number;
  readonly maxStreamBufferBytes: number;
  readonly keepAliveTimeoutMs: number;
  readonly maxConnections: number;
  readonly maxConnectionsPerBucket: number;
  readonly metrics: boolean;
  readonly metricsAuth: boolean;
  readonly workerPool: WorkerPoolOptions;
  readonly cacheTtlMs: number;
  readonly changeFeed: ChangeFeed | undefined;
  readonly maxListenersPerScope: number;
  readonly maxListeners: number;
  readonly maxListenUris: number;
  readonly maxListenBytesPerScope: number;
  readonly maxListenBytes: number;
  readonly onError: HandlerErrorHook | null;
  /** null: tracing off. */
  readonly tracing: { readonly tracerProvider: TracerProviderLike | undefined } | null;
}

/** Documented defaults. */
export const DEFAULTS = Object.freeze({
  name: "conduit-mcp",
  path: "/mcp",
  maxSessions: 100_000,
  maxSessionsPerScope: 64,
  sessionTtlMs: 30 * 60_000,
  maxBodyBytes: 1_048_576,
  maxConcurrentRequestsPerScope: 64,
  maxOpenStreamsPerScope: 32,
  maxConcurrentRequests: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  bodyTimeoutMs: 10_000,
  cancelOnDisconnect: true,
  streamCancelTimeoutMs: 5_000,
  keepAliveMs: 15_000,
  closeGraceMs: 5_000,
  maxStreamBufferBytes: 1_048_576,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 10_000,
  maxConnectionsPerBucket: 128,
  cacheTtlMs: 60_000,
  maxListenersPerScope: 8,
  maxListeners: 10_000,
  maxListenUris: 64,
  maxListenBytesPerScope: DEFAULT_MAX_LISTEN_BYTES_PER_SCOPE,
  maxListenBytes: DEFAULT_MAX_LISTEN_BYTES,
  maxSessionBytesPerScope: DEFAULT_MAX_SESSION_BYTES_PER_SCOPE,
  maxSessionBytes: DEFAULT_MAX_SESSION_BYTES,
});

/**
 * The package version (the server's default `version`). A constant rather than a read of
 * package.json, so the entry needs no node:module (docs/runtimes.md);
 * test/runtimes/package-version.test.ts keeps it equal to package.json's.
 */
export const PACKAGE_VERSION = "0.1.0";

const PATH = /^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/;

/**
 * Validates options and applies defaults.
 *
 * @example
 * ```ts
 * resolveOptions({ tools: [] }).path; // "/mcp"
 * ```
 */
export function resolveOptions(options: McpServerOptions): ResolvedOptions {
  if (typeof options !== "object" || options === null) {
    throw new InvalidOptionError("options", "an object", options);
  }
  const tools = options.tools ?? [];
  if (!Array.isArray(tools))
    throw new InvalidOptionError("tools", "an array of defineTool() results", tools);
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
      throw new InvalidOptionError("tools[]", "a defineTool() result", tool);
    }
    if (names.has(t.name)) throw new InvalidOptionError("tools", "tools with unique names", t.name);
    names.add(t.name);
  }
  const name = optionalString(options.name, "name") ?? DEFAULTS.name;
  const version = optionalString(options.version, "version") ?? PACKAGE_VERSION;
  if (options.registry !== undefined && !(options.registry instanceof CancellationRegistry)) {
    throw new InvalidOptionError("registry", "a CancellationRegistry", options.registry);
  }
  const path = options.path ?? DEFAULTS.path;
  if (
    typeof path !== "string" ||
    !PATH.test(path) ||
    path === "/health" ||
    path === "/ready" ||
    path === "/metrics"
  ) {
    throw new InvalidOptionError(
      "path",
      'a URL path starting with "/" (not /health, /ready or /metrics)',
      path,
    );
  }

  let sessions: ResolvedOptions["sessions"] = null;
  const s = options.sessions;
  if (s === true) {
    sessions = {
      maxSessions: DEFAULTS.maxSessions,
      maxSessionsPerScope: DEFAULTS.maxSessionsPerScope,
      maxSessionBytesPerScope: DEFAULTS.maxSessionBytesPerScope,
      maxSessionBytes: DEFAULTS.maxSessionBytes,
      ttlMs: DEFAULTS.sessionTtlMs,
      store: undefined,
      maxSubscriptionsPerSession: DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION,
      maxSubscriptionsPerScope: DEFAULT_MAX_SUBSCRIPTIONS_PER_SCOPE,
      maxSubscriptionBytesPerScope: DEFAULT_MAX_SUBSCRIPTION_BYTES_PER_SCOPE,
      maxSubscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
      maxSubscriptionBytes: DEFAULT_MAX_SUBSCRIPTION_BYTES,
    };
  } else if (typeof s === "object" && s !== null && !Array.isArray(s)) {
    const maxSessions = readOption(
      OPTION.nonNegativeLimit,
      "sessions.maxSessions",
      s.maxSessions,
      DEFAULTS.maxSessions,
    );
    const maxSessionsPerScope = positiveInteger(
      s.maxSessionsPerScope,
      "sessions.maxSessionsPerScope",
      DEFAULTS.maxSessionsPerScope,
    );
    const ttlMs = readOption(
      OPTION.positiveInteger,
      "sessions.ttlMs",
      s.ttlMs,
      DEFAULTS.sessionTtlMs,
    );
    const store = s.store;
    if (
      store !== undefined &&
      (typeof store !== "object" || store === null || typeof store.get !== "function")
    ) {
      throw new InvalidOptionError("sessions.store", "a SessionStore", store);
    }
    const maxSubscriptionsPerSession = readOption(
      OPTION.nonNegativeLimit,
      "sessions.maxSubscriptionsPerSession",
      s.maxSubscriptionsPerSession,
      DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION,
    );
    const maxSubscriptions = readOption(
      OPTION.nonNegativeLimit,
      "sessions.maxSubscriptions",
      s.maxSubscriptions,
      DEFAULT_MAX_SUBSCRIPTIONS,
    );
    sessions = {
      maxSessions,
      maxSessionsPerScope,
      maxSessionBytesPerScope: readOption(
        OPTION.nonNegativeLimit,
        "sessions.maxSessionBytesPerScope",
        s.maxSessionBytesPerScope,
        DEFAULTS.maxSessionBytesPerScope,
      ),
      maxSessionBytes: readOption(
        OPTION.nonNegativeLimit,
        "sessions.maxSessionBytes",
        s.maxSessionBytes,
        DEFAULTS.maxSessionBytes,
      ),
      ttlMs,
      store,
      maxSubscriptionsPerSession,
      maxSubscriptionsPerScope: readOption(
        OPTION.positiveInteger,
        "sessions.maxSubscriptionsPerScope",
        s.maxSubscriptionsPerScope,
        DEFAULT_MAX_SUBSCRIPTIONS_PER_SCOPE,
      ),
      maxSubscriptionBytesPerScope: readOption(
        OPTION.positiveInteger,
        "sessions.maxSubscriptionBytesPerScope",
        s.maxSubscriptionBytesPerScope,
        DEFAULT_MAX_SUBSCRIPTION_BYTES_PER_SCOPE,
      ),
      maxSubscriptions,
      maxSubscriptionBytes: readOption(
        OPTION.positiveInteger,
        "sessions.maxSubscriptionBytes",
        s.maxSubscriptionBytes,
        DEFAULT_MAX_SUBSCRIPTION_BYTES,
      ),
    };
  } else if (s !== undefined && s !== false) {
    throw new InvalidOptionError("sessions", "a boolean or { maxSessions?, ttlMs?, store? }", s);
  }
  const requireSession = optionalBoolean(options.requireSession, "requireSession") ?? false;
  if (requireSession && sessions === null) {
    throw new InvalidOptionError("requireSession", "used together with sessions", requireSession);
  }
  const headersTimeoutMs = positiveTimer(
    options.headersTimeoutMs,
    "headersTimeoutMs",
    DEFAULTS.headersTimeoutMs,
  );
  const requestTimeoutMs = positiveTimer(
    options.requestTimeoutMs,
    "requestTimeoutMs",
    Math.max(DEFAULTS.requestTimeoutMs, headersTimeoutMs),
  );
  // node refuses a headers timeout longer than the request timeout; so do we, at construction.
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new InvalidOptionError(
      "requestTimeoutMs",
      `at least headersTimeoutMs (${headersTimeoutMs})`,
      requestTimeoutMs,
    );
  }
  const allowedOrigins = options.allowedOrigins;
  if (allowedOrigins !== undefined && !Array.isArray(allowedOrigins)) {
    throw new InvalidOptionError("allowedOrigins", "an array of origin strings", allowedOrigins);
  }
  const metricsAuth = optionalBoolean(options.metricsAuth, "metricsAuth") ?? false;
  if (metricsAuth && options.auth === undefined) {
    throw new InvalidOptionError("metricsAuth", "used together with auth", metricsAuth);
  }
  return {
    name,
    version,
    tools,
    registry: options.registry,
    path,
    sessions,
    requireSession,
    auth: options.auth,
    trustProxy: options.trustProxy,
    allowedOrigins,
    maxBodyBytes: positiveInteger(options.maxBodyBytes, "maxBodyBytes", DEFAULTS.maxBodyBytes),
    maxConcurrentRequestsPerScope: positiveInteger(
      options.maxConcurrentRequestsPerScope,
      "maxConcurrentRequestsPerScope",
      DEFAULTS.maxConcurrentRequestsPerScope,
    ),
    maxOpenStreamsPerScope: positiveInteger(
      options.maxOpenStreamsPerScope,
      "maxOpenStreamsPerScope",
      DEFAULTS.maxOpenStreamsPerScope,
    ),
    maxConcurrentRequests: positiveInteger(
      options.maxConcurrentRequests,
      "maxConcurrentRequests",
      DEFAULTS.maxConcurrentRequests,
    ),
    headersTimeoutMs,
    requestTimeoutMs,
    bodyTimeoutMs: timerOrZero(options.bodyTimeoutMs, "bodyTimeoutMs", DEFAULTS.bodyTimeoutMs),
    cancelOnDisconnect:
      optionalBoolean(options.cancelOnDisconnect, "cancelOnDisconnect") ??
      DEFAULTS.cancelOnDisconnect,
    streamCancelTimeoutMs: timerOrZero(
      options.streamCancelTimeoutMs,
      "streamCancelTimeoutMs",
      DEFAULTS.streamCancelTimeoutMs,
    ),
    toolTimeoutMs: readOption(OPTION.timerMs, "toolTimeoutMs", options.toolTimeoutMs, null),
    rateLimits: RateLimitPlan.from(options.rateLimits),
    keepAliveMs: timerOrZero(options.keepAliveMs, "keepAliveMs", DEFAULTS.keepAliveMs),
    closeGraceMs: timerOrZero(options.closeGraceMs, "closeGraceMs", DEFAULTS.closeGraceMs),
    maxStreamBufferBytes: positiveInteger(
      options.maxStreamBufferBytes,
      "maxStreamBufferBytes",
      DEFAULTS.maxStreamBufferBytes,
    ),
    keepAliveTimeoutMs: positiveTimer(
      options.keepAliveTimeoutMs,
      "keepAliveTimeoutMs",
      DEFAULTS.keepAliveTimeoutMs,
    ),
    maxConnections: positiveInteger(
      options.maxConnections,
      "maxConnections",
      DEFAULTS.maxConnections,
    ),
    maxConnectionsPerBucket: positiveInteger(
      options.maxConnectionsPerBucket,
      "maxConnectionsPerBucket",
      DEFAULTS.maxConnectionsPerBucket,
    ),
    metrics: optionalBoolean(options.metrics, "metrics") ?? false,
    metricsAuth,
    workerPool: checkWorkerPool(options.workerPool),
    cacheTtlMs: timerOrZero(options.cacheTtlMs, "cacheTtlMs", DEFAULTS.cacheTtlMs),
    changeFeed: changeFeedOption(options.changeFeed),
    maxListenersPerScope: readOption(
      OPTION.nonNegativeLimit,
      "maxListenersPerScope",
      options.maxListenersPerScope,
      DEFAULTS.maxListenersPerScope,
    ),
    maxListeners: readOption(
      OPTION.nonNegativeLimit,
      "maxListeners",
      options.maxListeners,
      DEFAULTS.maxListeners,
    ),
    maxListenUris: readOption(
      OPTION.nonNegativeInteger,
      "maxListenUris",
      options.maxListenUris,
      DEFAULTS.maxListenUris,
    ),
    maxListenBytesPerScope: readOption(
      OPTION.positiveInteger,
      "maxListenBytesPerScope",
      options.maxListenBytesPerScope,
      DEFAULTS.maxListenBytesPerScope,
    ),
    maxListenBytes: readOption(
      OPTION.positiveInteger,
      "maxListenBytes",
      options.maxListenBytes,
      DEFAULTS.maxListenBytes,
    ),
    onError: errorHook(options.onError),
    tracing: tracingOption(options.tracing),
  };
}

function changeFeedOption(value: unknown): ChangeFeed | undefined {
  if (value === undefined) return undefined;
  const feed = value as Partial<ChangeFeed> | null;
  if (
    typeof feed !== "object" ||
    feed === null ||
    typeof feed.publish !== "function" ||
    typeof feed.onChange !== "function"
  ) {
    throw new InvalidOptionError(
      "changeFeed",
      "a ChangeFeed (MemoryChangeFeed, RedisChangeFeed)",
      value,
    );
  }
  return feed as ChangeFeed;
}

function tracingOption(value: unknown): ResolvedOptions["tracing"] {
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
    throw new InvalidOptionError("tracing.tracerProvider", "a TracerProvider", provider);
  }
  throw new InvalidOptionError("tracing", "a boolean or { tracerProvider? }", value);
}

function errorHook(value: unknown): HandlerErrorHook | null {
  if (value === undefined) return logHandlerError;
  if (value === false) return null;
  if (typeof value !== "function") {
    throw new InvalidOptionError("onError", "a function (error, context) or false", value);
  }
  return value as HandlerErrorHook;
}

/** Pool options are checked by the pool's own rules, here at construction. */
function checkWorkerPool(value: WorkerPoolOptions | undefined): WorkerPoolOptions {
  if (value === undefined) return {};
  resolvePoolOptions(value);
  return value;
}

function optionalString(value: unknown, option: string): string | undefined {
  return readOption(OPTION.label, option, value, undefined);
}

function optionalBoolean(value: unknown, option: string): boolean | undefined {
  return readOption(OPTION.boolean, option, value, undefined);
}

function positiveInteger(value: unknown, option: string, fallback: number): number {
  return readOption(OPTION.positiveInteger, option, value, fallback);
}

/** A timeout that must be on (node's server timeouts: 0 would disable the protection). */
function positiveTimer(value: unknown, option: string, fallback: number): number {
  return readOption(OPTION.timerMs, option, value, fallback);
}

/** A timer delay where 0 switches the timer off. */
function timerOrZero(value: unknown, option: string, fallback: number): number {
  return readOption(OPTION.timerOrZeroMs, option, value, fallback);
}
