/**
 * `createMcpServer` options: their public types, and {@link resolveOptions}, which reads them with
 * the declared schemas of option-declarations.ts (what each accepts, its default, its
 * description: docs/reference/options.md is generated from them). Every bad value throws
 * {@link InvalidOptionError} at construction, so a misconfiguration fails at start-up and never
 * mid-request.
 */

import type { CancellationRegistry } from "../cancellation/index.js";
import type { ChangeFeed } from "../changes/index.js";
import { InvalidOptionError } from "../errors.js";
import type { AuthOptions, ServerCardOptions } from "../http/index.js";
import type { TrustProxyOption } from "../identity/index.js";
import type { WorkerPoolOptions } from "../isolation/pool-options.js";
import { readOptions } from "../option-schema.js";
import type { InputRequiredOptions, ServerRequestOptions } from "../protocol/asking/index.js";
import type {
  Extension,
  Icon,
  Prompt,
  Resource,
  ResourceTemplate,
  Tool,
} from "../protocol/index.js";
import type { TaskOptions } from "../protocol/tasks/index.js";
import type { RateLimitOptions, RateLimitPlan } from "../rate-limits/index.js";
import type { SessionStore } from "../sessions/index.js";
// The files themselves, not telemetry/index.js: these declarations must not reach the optional
// @opentelemetry/api's types.
import type { HandlerErrorHook } from "../telemetry/error-reporter.js";
import type { TracerProviderLike } from "../telemetry/tracer-provider.js";
import { FLAT_ALIASES, PACKAGE_VERSION, SERVER_OPTIONS } from "./option-declarations.js";

export { PACKAGE_VERSION };

/**
 * Session options (2025-era `Mcp-Session-Id`). Defaults and details: docs/reference/options.md.
 */
export interface SessionOptions {
  /** Most sessions held at once; at the bound the largest creating scope's oldest goes. */
  readonly maxSessions?: number;
  /** Most sessions one creating scope may hold; beyond, `initialize` gets 429. */
  readonly maxSessionsPerScope?: number;
  /** Most bytes of session records one creating scope may hold (default memory store). */
  readonly maxSessionBytesPerScope?: number;
  /** Most bytes of session records held in all (evicts, never refuses). */
  readonly maxSessionBytes?: number;
  /** Idle time after which the janitor removes a session (ms). */
  readonly ttlMs?: number;
  /** A custom store (e.g. shared); default a `MemorySessionStore` of `maxSessions`. */
  readonly store?: SessionStore;
  /** Most resource URIs one session may subscribe to. */
  readonly maxSubscriptionsPerSession?: number;
  /** Most resource subscriptions one bucket may hold across its sessions. */
  readonly maxSubscriptionsPerScope?: number;
  /** Most bytes of URIs one bucket's subscriptions may hold. */
  readonly maxSubscriptionBytesPerScope?: number;
  /** Most resource subscriptions held in all on this process (drops, never refuses). */
  readonly maxSubscriptions?: number;
  /** Most bytes of URIs held in all. */
  readonly maxSubscriptionBytes?: number;
}

/** `http`: the HTTP endpoint and what it lets in. Defaults: docs/reference/options.md. */
export interface HttpOptions {
  /** The MCP endpoint path (default `/mcp`). */
  readonly path?: string;
  /** Refuse (400) requests other than initialize without a session; needs `sessions`. */
  readonly requireSession?: boolean;
  /** Browser origins allowed (exact `scheme://host[:port]`). */
  readonly allowedOrigins?: readonly string[];
  /** Which peers may set `X-Forwarded-For` (hop count or CIDR list). Default: trust nothing. */
  readonly trustProxy?: TrustProxyOption;
  /** A 2025-era client disconnect cancels its request (default true). */
  readonly cancelOnDisconnect?: boolean;
  /** Serve `GET /metrics` (Prometheus text). */
  readonly metrics?: boolean;
  /** `GET /metrics` needs the same credentials as the MCP endpoint; needs `auth`. */
  readonly metricsAuth?: boolean;
}

/** `limits`: how much one scope, and everybody together, may hold. Defaults: docs/reference/options.md. */
export interface LimitOptions {
  /** Largest accepted body in bytes; 413 beyond. */
  readonly maxBodyBytes?: number;
  /** Most requests one scope may have running at once; beyond, 429. */
  readonly maxConcurrentRequestsPerScope?: number;
  /** Most requests running at once over all scopes (evicts from the largest scope). */
  readonly maxConcurrentRequests?: number;
  /** Most request-scoped SSE streams one scope may hold. */
  readonly maxOpenStreamsPerScope?: number;
  /** Most bytes of request bodies one scope may have the server reading at once; beyond, 429. */
  readonly maxBodyBytesInFlightPerScope?: number;
  /** Most bytes of request bodies read at once over all scopes (evicts from the largest scope). */
  readonly maxBodyBytesInFlight?: number;
  /** Most bytes an SSE stream may buffer for a client that does not read it. */
  readonly maxStreamBufferBytes?: number;
  /** Most connections open at once, all clients (listen()). */
  readonly maxConnections?: number;
  /** Most connections one client bucket may hold open at once (listen()). */
  readonly maxConnectionsPerBucket?: number;
  /** Longest URI a `resources/read` may name. */
  readonly maxUriLength?: number;
  /** Longest value one resource template variable may match. */
  readonly maxTemplateValueLength?: number;
  /** Most `subscriptions/listen` streams one scope may hold open. */
  readonly maxListenersPerScope?: number;
  /** Most `subscriptions/listen` streams open on this process in all. */
  readonly maxListeners?: number;
  /** Most URIs one `subscriptions/listen` may name. */
  readonly maxListenUris?: number;
  /** Most bytes of `subscriptions/listen` filters one scope may hold open. */
  readonly maxListenBytesPerScope?: number;
  /** Most bytes of `subscriptions/listen` filters open on this process (ends, never refuses). */
  readonly maxListenBytes?: number;
}

/** `timeouts`: the clocks of the HTTP door and of a call's end, in ms. Defaults: docs/reference/options.md. */
export interface TimeoutOptions {
  /** Time a client has to send its request headers (408 beyond). */
  readonly headersTimeoutMs?: number;
  /** Time a client has to send its whole request; at least `headersTimeoutMs`. */
  readonly requestTimeoutMs?: number;
  /** Total time a request body may take to arrive; 0 disables. */
  readonly bodyTimeoutMs?: number;
  /** How long a cancelled tool may keep running before it is abandoned. */
  readonly streamCancelTimeoutMs?: number;
  /** Default deadline of a tool's run, for tools without a `timeoutMs` of their own. */
  readonly toolTimeoutMs?: number;
  /** Interval of `: keepalive` comments on open SSE streams; 0 disables. */
  readonly keepAliveMs?: number;
  /** How long an idle keep-alive connection stays open (listen()). */
  readonly keepAliveTimeoutMs?: number;
  /** How long close() lets running requests finish before aborting them. */
  readonly closeGraceMs?: number;
  /** How long close() first serves on, not ready, before it stops admitting (default 0). */
  readonly closeDelayMs?: number;
}

/** `lists`: paging and caching hints of results. Defaults: docs/reference/options.md. */
export interface ListOptions {
  /** Items per page of the list methods. */
  readonly pageSize?: number;
  /** HMAC key (at least 32 bytes) sealing list cursors; share it between nodes. */
  readonly cursorSecret?: string | Uint8Array;
  /** `ttlMs` caching hint on 2026-07-28 discover, list and read results. */
  readonly cacheTtlMs?: number;
}

/**
 * The flat spellings of the grouped options, kept for a deprecation period: each is the member
 * of the same name of `http`, `limits`, `timeouts` or `lists`. Giving both spellings of one
 * option is refused.
 */
export interface DeprecatedFlatOptions {
  /** @deprecated Use `http.path`. */
  readonly path?: string;
  /** @deprecated Use `http.requireSession`. */
  readonly requireSession?: boolean;
  /** @deprecated Use `http.allowedOrigins`. */
  readonly allowedOrigins?: readonly string[];
  /** @deprecated Use `http.trustProxy`. */
  readonly trustProxy?: TrustProxyOption;
  /** @deprecated Use `http.cancelOnDisconnect`. */
  readonly cancelOnDisconnect?: boolean;
  /** @deprecated Use `http.metrics`. */
  readonly metrics?: boolean;
  /** @deprecated Use `http.metricsAuth`. */
  readonly metricsAuth?: boolean;
  /** @deprecated Use `limits.maxBodyBytes`. */
  readonly maxBodyBytes?: number;
  /** @deprecated Use `limits.maxConcurrentRequestsPerScope`. */
  readonly maxConcurrentRequestsPerScope?: number;
  /** @deprecated Use `limits.maxConcurrentRequests`. */
  readonly maxConcurrentRequests?: number;
  /** @deprecated Use `limits.maxOpenStreamsPerScope`. */
  readonly maxOpenStreamsPerScope?: number;
  /** @deprecated Use `limits.maxBodyBytesInFlightPerScope`. */
  readonly maxBodyBytesInFlightPerScope?: number;
  /** @deprecated Use `limits.maxBodyBytesInFlight`. */
  readonly maxBodyBytesInFlight?: number;
  /** @deprecated Use `limits.maxStreamBufferBytes`. */
  readonly maxStreamBufferBytes?: number;
  /** @deprecated Use `limits.maxConnections`. */
  readonly maxConnections?: number;
  /** @deprecated Use `limits.maxConnectionsPerBucket`. */
  readonly maxConnectionsPerBucket?: number;
  /** @deprecated Use `limits.maxUriLength`. */
  readonly maxUriLength?: number;
  /** @deprecated Use `limits.maxTemplateValueLength`. */
  readonly maxTemplateValueLength?: number;
  /** @deprecated Use `limits.maxListenersPerScope`. */
  readonly maxListenersPerScope?: number;
  /** @deprecated Use `limits.maxListeners`. */
  readonly maxListeners?: number;
  /** @deprecated Use `limits.maxListenUris`. */
  readonly maxListenUris?: number;
  /** @deprecated Use `limits.maxListenBytesPerScope`. */
  readonly maxListenBytesPerScope?: number;
  /** @deprecated Use `limits.maxListenBytes`. */
  readonly maxListenBytes?: number;
  /** @deprecated Use `timeouts.headersTimeoutMs`. */
  readonly headersTimeoutMs?: number;
  /** @deprecated Use `timeouts.requestTimeoutMs`. */
  readonly requestTimeoutMs?: number;
  /** @deprecated Use `timeouts.bodyTimeoutMs`. */
  readonly bodyTimeoutMs?: number;
  /** @deprecated Use `timeouts.streamCancelTimeoutMs`. */
  readonly streamCancelTimeoutMs?: number;
  /** @deprecated Use `timeouts.toolTimeoutMs`. */
  readonly toolTimeoutMs?: number;
  /** @deprecated Use `timeouts.keepAliveMs`. */
  readonly keepAliveMs?: number;
  /** @deprecated Use `timeouts.keepAliveTimeoutMs`. */
  readonly keepAliveTimeoutMs?: number;
  /** @deprecated Use `timeouts.closeGraceMs`. */
  readonly closeGraceMs?: number;
  /** @deprecated Use `timeouts.closeDelayMs` (the flat spelling exists as for every grouped option). */
  readonly closeDelayMs?: number;
  /** @deprecated Use `lists.pageSize`. */
  readonly pageSize?: number;
  /** @deprecated Use `lists.cursorSecret`. */
  readonly cursorSecret?: string | Uint8Array;
  /** @deprecated Use `lists.cacheTtlMs`. */
  readonly cacheTtlMs?: number;
}

/**
 * Options of {@link createMcpServer}. All optional; what each accepts, its default and what it
 * does: docs/reference/options.md (generated from the declared schemas).
 *
 * @example
 * ```ts
 * const options: McpServerOptions = {
 *   tools: [echo],
 *   sessions: true,
 *   auth: { tokens: { s3cret: "alice" } },
 *   limits: { maxConcurrentRequestsPerScope: 16 },
 *   timeouts: { closeGraceMs: 10_000 },
 * };
 * ```
 */
export interface McpServerOptions extends DeprecatedFlatOptions {
  /** `serverInfo.name`. Default `"conduit-mcp"`. */
  readonly name?: string;
  /** `serverInfo.version`. Default the package version. */
  readonly version?: string;
  /** `serverInfo.title`: a display name. */
  readonly title?: string;
  /** `serverInfo.description`. */
  readonly description?: string;
  /** `serverInfo.icons`. */
  readonly icons?: readonly Icon[];
  /** `serverInfo.websiteUrl` (an `http(s):` URL). */
  readonly websiteUrl?: string;
  /** `instructions` of `initialize` and `server/discover`: how to use the server. */
  readonly instructions?: string;
  /**
   * Serve an MCP Server Card (experimental, the current SEP-2127 draft) at
   * `<path>/server-card` and `/.well-known/mcp/server-card.json`: `{ name, description?, url?,
   * repository? }`. Default none.
   */
  readonly serverCard?: ServerCardOptions;
  /** The tools served (names must be unique); `server.tools` changes them later. */
  readonly tools?: readonly Tool[];
  /** Direct resources served (URIs must be unique); see `server.resources`. */
  readonly resources?: readonly Resource[];
  /** Resource templates served (URI templates must be unique). */
  readonly resourceTemplates?: readonly ResourceTemplate[];
  /** Prompts served (names must be unique); see `server.prompts`. */
  readonly prompts?: readonly Prompt[];
  /** Extensions served (`defineExtension`). Default none. */
  readonly extensions?: readonly Extension[];
  /** `true` or options to issue `Mcp-Session-Id` on initialize. Default off (stateless). */
  readonly sessions?: boolean | SessionOptions;
  /** Bearer tokens, an OAuth 2.1 resource server and/or a verify hook. Default off. */
  readonly auth?: AuthOptions;
  /** A registry to share (the caller closes it); default a new one the server owns and closes. */
  readonly registry?: CancellationRegistry;
  /** The HTTP endpoint and what it lets in. */
  readonly http?: HttpOptions;
  /** How much one scope, and everybody together, may hold. */
  readonly limits?: LimitOptions;
  /** The clocks of the HTTP door and of a call's end (ms). */
  readonly timeouts?: TimeoutOptions;
  /** Paging and caching hints of results. */
  readonly lists?: ListOptions;
  /** Asking the client on 2026-07-28 requests: `requestState` keys and bounds. */
  readonly inputRequired?: InputRequiredOptions;
  /** Asking the client on 2025-11-25 requests: timeout, bounds, capability rule, bus. */
  readonly serverRequests?: ServerRequestOptions;
  /** The worker pool isolated tools run in. */
  readonly workerPool?: WorkerPoolOptions;
  /** Task options, or `false` to serve no tasks. */
  readonly tasks?: TaskOptions | false;
  /** Per-tenant rate limits (token buckets per principal or IP bucket, method, tool). Default off. */
  readonly rateLimits?: RateLimitOptions | false;
  /**
   * Request headers a handler may read in `ctx.request.headers`; never `Authorization`,
   * `Proxy-Authorization` or `Cookie` (refused). Default none.
   */
  readonly requestHeaders?: readonly string[];
  /** Where list changes and resource updates are told (default this process only). */
  readonly changeFeed?: ChangeFeed;
  /** Hears handlers that fail; `false` silences it. Default one line on stderr. */
  readonly onError?: HandlerErrorHook | false;
  /** OpenTelemetry spans (when `@opentelemetry/api` is installed). Default true. */
  readonly tracing?: boolean | { readonly tracerProvider?: TracerProviderLike };
}

/** Options after validation, with defaults applied. */
export interface ResolvedOptions {
  readonly name: string;
  readonly version: string;
  readonly title: string | undefined;
  readonly description: string | undefined;
  readonly icons: readonly Icon[] | undefined;
  readonly websiteUrl: string | undefined;
  readonly instructions: string | undefined;
  readonly serverCard: ServerCardOptions | undefined;
  readonly tools: readonly Tool[];
  readonly resources: readonly Resource[];
  readonly resourceTemplates: readonly ResourceTemplate[];
  readonly prompts: readonly Prompt[];
  readonly extensions: readonly Extension[];
  readonly inputRequired: InputRequiredOptions | undefined;
  readonly serverRequests: ServerRequestOptions | undefined;
  readonly tasks: TaskOptions | false | undefined;
  readonly pageSize: number;
  readonly cursorSecret: string | Uint8Array | undefined;
  readonly maxUriLength: number;
  readonly maxTemplateValueLength: number;
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
  readonly maxBodyBytesInFlightPerScope: number;
  readonly maxBodyBytesInFlight: number;
  readonly maxConcurrentRequestsPerScope: number;
  readonly maxOpenStreamsPerScope: number;
  readonly maxConcurrentRequests: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly cancelOnDisconnect: boolean;
  readonly streamCancelTimeoutMs: number;
  /** null: no server-wide deadline. */
  readonly toolTimeoutMs: number | null;
  /** null: no rate limits. */
  readonly rateLimits: RateLimitPlan | null;
  /** Lower case, without repeats. */
  readonly requestHeaders: readonly string[];
  readonly keepAliveMs: number;
  readonly closeGraceMs: number;
  readonly closeDelayMs: number;
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

/**
 * Validates options and applies defaults, reading every option with its declared schema. A
 * deprecated flat name is read as its grouped option, and an error names it as given.
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
  const { grouped, names } = groupFlatOptions(options);
  const read = readOptions(SERVER_OPTIONS, grouped, { names }) as unknown as Declared;
  const name = (path: string): string => names.get(path) ?? path;
  const { http, limits, timeouts, lists } = read;
  const sessions = read.sessions as ResolvedOptions["sessions"];
  if (http.requireSession && sessions === null) {
    throw new InvalidOptionError(name("http.requireSession"), "used together with sessions", true);
  }
  // node refuses a headers timeout longer than the request timeout; so do we, at construction.
  const requestTimeoutMs =
    timeouts.requestTimeoutMs ?? Math.max(REQUEST_TIMEOUT_MS, timeouts.headersTimeoutMs);
  if (requestTimeoutMs < timeouts.headersTimeoutMs) {
    throw new InvalidOptionError(
      name("timeouts.requestTimeoutMs"),
      `at least headersTimeoutMs (${timeouts.headersTimeoutMs})`,
      requestTimeoutMs,
    );
  }
  if (http.metricsAuth && read.auth === undefined) {
    throw new InvalidOptionError(name("http.metricsAuth"), "used together with auth", true);
  }
  const bodyBudget = (path: string, given: number | undefined, times: number): number => {
    // A budget below one body would refuse every body of the largest size, whoever sends it.
    if (given !== undefined && given < limits.maxBodyBytes) {
      throw new InvalidOptionError(
        name(path),
        `at least maxBodyBytes (${limits.maxBodyBytes})`,
        given,
      );
    }
    return given ?? times * limits.maxBodyBytes;
  };
  return {
    ...http,
    ...limits,
    ...timeouts,
    ...lists,
    maxBodyBytesInFlightPerScope: bodyBudget(
      "limits.maxBodyBytesInFlightPerScope",
      limits.maxBodyBytesInFlightPerScope,
      8,
    ),
    maxBodyBytesInFlight: bodyBudget(
      "limits.maxBodyBytesInFlight",
      limits.maxBodyBytesInFlight,
      64,
    ),
    requestTimeoutMs,
    toolTimeoutMs: timeouts.toolTimeoutMs ?? null,
    name: read.name,
    version: read.version ?? PACKAGE_VERSION,
    title: read.title,
    description: read.description,
    icons: read.icons,
    websiteUrl: read.websiteUrl,
    instructions: read.instructions,
    serverCard: read.serverCard as ServerCardOptions | undefined,
    tools: read.tools,
    resources: read.resources,
    resourceTemplates: read.resourceTemplates,
    prompts: read.prompts,
    extensions: read.extensions,
    registry: read.registry,
    sessions,
    auth: read.auth,
    inputRequired: read.inputRequired,
    serverRequests: read.serverRequests,
    workerPool: read.workerPool,
    tasks: read.tasks,
    rateLimits: read.rateLimits,
    requestHeaders: read.requestHeaders ?? [],
    changeFeed: read.changeFeed,
    onError: read.onError,
    tracing: read.tracing,
  };
}

/** The default of `timeouts.requestTimeoutMs` when `headersTimeoutMs` is not longer. */
const REQUEST_TIMEOUT_MS = 30_000;

/** What readOptions returns for {@link SERVER_OPTIONS}, as typed as resolveOptions needs it. */
type Declared = Omit<
  ResolvedOptions,
  | "sessions"
  | "requestTimeoutMs"
  | "version"
  | keyof HttpOptions
  | keyof LimitOptions
  | keyof ListOptions
  | keyof TimeoutOptions
> & {
  readonly version: string | undefined;
  readonly sessions: unknown;
  readonly http: Required<Omit<HttpOptions, "allowedOrigins" | "trustProxy">> &
    Pick<ResolvedOptions, "allowedOrigins" | "trustProxy">;
  readonly limits: Required<LimitOptions>;
  readonly timeouts: Required<Omit<TimeoutOptions, "requestTimeoutMs" | "toolTimeoutMs">> & {
    readonly requestTimeoutMs: number | undefined;
    readonly toolTimeoutMs: number | undefined;
  };
  readonly lists: Required<Omit<ListOptions, "cursorSecret">> & {
    readonly cursorSecret: string | Uint8Array | undefined;
  };
};

/**
 * Options with every deprecated flat name moved into its group (`maxBodyBytes` →
 * `limits.maxBodyBytes`), and the name each grouped path was given under. Giving both spellings
 * of one option is refused, so which one counts is never a guess.
 *
 * @example
 * ```ts
 * groupFlatOptions({ maxBodyBytes: 10 }).grouped; // { limits: { maxBodyBytes: 10 } }
 * ```
 */
export function groupFlatOptions(options: McpServerOptions): {
  readonly grouped: McpServerOptions;
  readonly names: ReadonlyMap<string, string>;
} {
  const grouped: Record<string, unknown> = { ...options };
  const names = new Map<string, string>();
  for (const [flat, path] of FLAT_ALIASES) {
    const value = grouped[flat];
    delete grouped[flat];
    if (value === undefined) continue;
    const [group, key] = path.split(".") as [string, string];
    const members = grouped[group];
    // A group that is not an object is refused by its own check, naming it.
    if (members !== undefined && (typeof members !== "object" || members === null)) continue;
    if ((members as Record<string, unknown> | undefined)?.[key] !== undefined) {
      throw new InvalidOptionError(flat, `left out when ${path} is given (the same option)`, value);
    }
    grouped[group] = { ...(members as object | undefined), [key]: value };
    names.set(path, flat);
  }
  return { grouped: grouped as McpServerOptions, names };
}
