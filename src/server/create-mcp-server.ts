/**
 * `createMcpServer`: wires the options into a registry, a dispatcher, a session store, the
 * worker pool of isolated tools and the node:http listener, and owns the lifecycle (listen,
 * graceful close).
 */

import type { Server } from "node:http";
import { CancellationRegistry } from "../cancellation/index.js";
import { type ChangeEvent, type ChangeFeed, MemoryChangeFeed } from "../changes/index.js";
import { InvalidOptionError, RequestCancelledError } from "../errors.js";
import {
  ConnectionBounds,
  createAuthenticator,
  createFetchHandler,
  createNodeListener,
  createRequestCore,
  type ExchangeLimits,
  type FetchHandler,
  isLoopbackListenHost,
  type NodeRequestListener,
  OriginPolicy,
  Readiness,
  ServerMetrics,
  SessionStreams,
  serverCardJson,
} from "../http/index.js";
import { parseTrustProxy } from "../identity/index.js";
import type { ResourceServer } from "../identity/oauth/index.js";
import { resolvePoolOptions } from "../isolation/pool-options.js";
import { WorkerPool } from "../isolation/worker-pool.js";
import {
  type InputRequiredOptions,
  type InputRequiredSettings,
  inputRequiredSettings,
  serverRequestSettings,
} from "../protocol/asking/index.js";
import {
  ALL_PROTOCOL_VERSIONS,
  ChangeListeners,
  Dispatcher,
  type PrimitiveCollection,
  type Prompt,
  type ResourceCollection,
  ResourceSubscriptions,
  type ResourceTemplate,
  ScopeLimiter,
  type SessionHooks,
  type Tool,
} from "../protocol/index.js";
import {
  notifySessionStream,
  notifyTaskListeners,
  sessionOfScope,
} from "../protocol/tasks/index.js";
import type { RateLimitPlan } from "../rate-limits/index.js";
import type { Reachability } from "../reachability.js";
import { nodeBuiltin } from "../runtime.js";
import {
  MemorySessionStore,
  mintSessionId,
  SessionJanitor,
  type SessionStore,
} from "../sessions/index.js";
import {
  combineObservers,
  createTracing,
  ErrorReporter,
  loadOpenTelemetry,
} from "../telemetry/index.js";
import { createHttpServer, LISTEN_FEATURE, listenOn } from "./http-listener.js";
import type { ConcurrencySnapshot, ListenAddress, McpServer } from "./mcp-server.js";
import { type McpServerOptions, PACKAGE_VERSION, resolveOptions } from "./options.js";
import { registerTransportCore } from "./transport-core.js";

// The adapters name the server type from here.
export type { ConcurrencySnapshot, ListenAddress, McpServer } from "./mcp-server.js";

/**
 * Creates a server. Throws InvalidOptionError for a bad option.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { createMcpServer, defineTool } from "conduit-mcp";
 *
 * const sleep = defineTool({
 *   name: "sleep",
 *   input: z.object({ ms: z.number().int().min(0).max(600_000) }),
 *   handler: async ({ ms }, ctx) => {
 *     await new Promise((resolve) => setTimeout(resolve, ms, undefined, { signal: ctx.signal }));
 *     return `slept ${ms} ms`;
 *   },
 * });
 * const server = createMcpServer({ tools: [sleep], sessions: true });
 * console.log((await server.listen({ port: 3000 })).url);
 * ```
 */
export function createMcpServer(options: McpServerOptions = {}): McpServer {
  return new ConduitMcpServer(options);
}

class ConduitMcpServer implements McpServer {
  readonly handler: NodeRequestListener;
  readonly fetch: FetchHandler;
  readonly registry: CancellationRegistry;
  readonly tools: PrimitiveCollection<Tool>;
  readonly resources: ResourceCollection;
  readonly resourceTemplates: PrimitiveCollection<ResourceTemplate>;
  readonly prompts: PrimitiveCollection<Prompt>;
  private readonly ownsRegistry: boolean;
  private readonly dispatcher: Dispatcher;
  private readonly originPolicy: OriginPolicy;
  private readonly metrics: ServerMetrics | null;
  private readonly sessionStore: SessionStore | null;
  private readonly ownsSessionStore: boolean;
  private readonly janitor: SessionJanitor | null;
  /** The sessions' standalone GET streams (sessions on), else null. */
  private readonly streams: SessionStreams | null;
  /** The 2025-era resource subscriptions (sessions on), else null. */
  private readonly subscriptions: ResourceSubscriptions | null;
  /** The open 2026-07-28 `subscriptions/listen` streams. */
  private readonly listeners: ChangeListeners;
  private readonly changeFeed: ChangeFeed;
  private readonly ownsChangeFeed: boolean;
  private readonly rateLimits: RateLimitPlan | null;
  /** Stops hearing the feed and the collections (close). */
  private readonly unhook: (() => void)[] = [];
  private readonly closeGraceMs: number;
  private readonly closeDelayMs: number;
  private readonly headersTimeoutMs: number;
  private readonly requestTimeoutMs: number;
  private readonly keepAliveTimeoutMs: number;
  /** The connection bounds of the server listen() starts. */
  private readonly connections: ConnectionBounds;
  private readonly limits: ExchangeLimits;
  /** The worker pool of isolated tools: the server's, created on the first isolated call. */
  private pool: WorkerPool | null = null;
  private httpServer: Server | null = null;
  private closing = false;
  /** True from the first moment of close(): `/ready` says draining while closeDelayMs runs. */
  private leaving = false;
  private closed: Promise<void> | null = null;
  private readonly readiness: Readiness;
  /** Settles once tracing is on, or known to be unavailable (never rejects). */
  private readonly tracingReady: Promise<void>;

  constructor(input: McpServerOptions) {
    const options = resolveOptions(input);
    // Constructed first: each throws InvalidOptionError before anything starts.
    const trustProxy = parseTrustProxy(options.trustProxy);
    const authenticate = createAuthenticator(options.auth);
    this.originPolicy = new OriginPolicy(options.allowedOrigins);

    this.ownsRegistry = options.registry === undefined;
    this.registry = options.registry ?? new CancellationRegistry();
    this.closeGraceMs = options.closeGraceMs;
    this.closeDelayMs = options.closeDelayMs;
    this.headersTimeoutMs = options.headersTimeoutMs;
    this.requestTimeoutMs = options.requestTimeoutMs;
    this.keepAliveTimeoutMs = options.keepAliveTimeoutMs;
    this.connections = new ConnectionBounds({
      maxConnections: options.maxConnections,
      maxConnectionsPerBucket: options.maxConnectionsPerBucket,
      trustProxy,
    });
    // Every request holds a unit of the scope it comes from (principal or IP bucket), which
    // carries the global bound; session requests and streams are subsets of those requests.
    this.limits = {
      // The global bound makes room from the largest scope rather than refusing a scope under
      // its own bound (docs/server-options.md).
      requests: new ScopeLimiter(
        options.maxConcurrentRequestsPerScope,
        options.maxConcurrentRequests,
        { evict: true },
      ),
      sessionRequests: new ScopeLimiter(
        options.maxConcurrentRequestsPerScope,
        Number.POSITIVE_INFINITY,
      ),
      streams: new ScopeLimiter(options.maxOpenStreamsPerScope, Number.POSITIVE_INFINITY),
    };
    this.metrics = options.metrics
      ? new ServerMetrics(
          options.tools.map((tool) => tool.name),
          options.extensions.flatMap((extension) => Object.keys(extension.methods)),
        )
      : null;
    this.metrics?.subscribe();

    let hooks: SessionHooks | null = null;
    let subscriptions: ResourceSubscriptions | null = null;
    if (options.sessions !== null) {
      this.streams = new SessionStreams({
        keepAliveMs: options.keepAliveMs,
        maxBufferedBytes: options.maxStreamBufferBytes,
      });
      subscriptions = new ResourceSubscriptions({
        maxPerSession: options.sessions.maxSubscriptionsPerSession,
        maxPerScope: options.sessions.maxSubscriptionsPerScope,
        maxBytesPerScope: options.sessions.maxSubscriptionBytesPerScope,
        maxTotal: options.sessions.maxSubscriptions,
        maxBytes: options.sessions.maxSubscriptionBytes,
      });
      const streams = this.streams;
      subscriptions.setDelivery((sessionId, json, uri) => {
        // The session's GET stream may be open on another node (its POSTs and its GET can
        // land anywhere behind a load balancer): a shared feed passes the update on to it.
        if (!streams.send(sessionId, json) && this.changeFeed.shared) {
          this.changeFeed.publish({ type: "forward", sessionId, uri });
        }
      });
      const store =
        options.sessions.store ??
        new MemorySessionStore({
          maxSessions: options.sessions.maxSessions,
          maxSessionsPerScope: options.sessions.maxSessionsPerScope,
          maxSessionBytesPerScope: options.sessions.maxSessionBytesPerScope,
          maxSessionBytes: options.sessions.maxSessionBytes,
        });
      this.sessionStore = store;
      this.ownsSessionStore = options.sessions.store === undefined;
      // A session ended by the store (idle expiry, eviction; a shared store: on any node) takes
      // its stream, its subscriptions and its running tasks (docs/tasks.md), as a DELETE does.
      const table = subscriptions;
      store.onEnded?.((id) => {
        table.dropSession(id);
        streams.close(id);
        this.dispatcher.tasks?.cancelSession(id).catch(() => {
          // The task store failed (an outage): those tasks run on, as after a DELETE during one.
        });
      });
      const ttlMs = options.sessions.ttlMs;
      this.janitor = new SessionJanitor(store, ttlMs, Math.min(ttlMs, 60_000));
      hooks = {
        async create(principalId, protocolVersion, creatorScope, clientCapabilities) {
          const id = mintSessionId();
          const now = Date.now();
          const outcome = await store.create({
            id,
            principalId,
            creatorScope,
            protocolVersion,
            createdAt: now,
            lastSeenAt: now,
            logLevel: null,
            clientCapabilities,
          });
          return outcome === "created" ? { id } : { id: null, refused: outcome };
        },
        async setLogLevel(sessionId, level) {
          await store.setLogLevel(sessionId, level);
        },
      };
    } else {
      this.sessionStore = null;
      this.ownsSessionStore = false;
      this.janitor = null;
      this.streams = null;
    }

    this.subscriptions = subscriptions;
    this.listeners = new ChangeListeners({
      maxPerScope: options.maxListenersPerScope,
      maxTotal: options.maxListeners,
      maxUris: options.maxListenUris,
      maxBytesPerScope: options.maxListenBytesPerScope,
      maxBytes: options.maxListenBytes,
    });
    this.ownsChangeFeed = options.changeFeed === undefined;
    this.rateLimits = options.rateLimits;
    this.changeFeed = options.changeFeed ?? new MemoryChangeFeed();

    // Checked now so that a bad pool option fails at start-up, not at the first isolated call.
    const poolOptions = options.workerPool;
    resolvePoolOptions(poolOptions);
    const reporter = new ErrorReporter(options.onError);
    this.dispatcher = new Dispatcher({
      name: options.name,
      version: options.version,
      title: options.title,
      description: options.description,
      icons: options.icons,
      websiteUrl: options.websiteUrl,
      instructions: options.instructions,
      cursorSecret: options.cursorSecret,
      inputRequired: inputRequiredOf(options.inputRequired),
      serverRequests: serverRequestSettings(options.serverRequests),
      pageSize: options.pageSize,
      maxUriLength: options.maxUriLength,
      maxTemplateValueLength: options.maxTemplateValueLength,
      tools: options.tools,
      resources: options.resources,
      resourceTemplates: options.resourceTemplates,
      prompts: options.prompts,
      extensions: options.extensions,
      registry: this.registry,
      streamCancelTimeoutMs: options.streamCancelTimeoutMs,
      toolTimeoutMs: options.toolTimeoutMs,
      cancelOnDisconnect: options.cancelOnDisconnect,
      observer: combineObservers([this.metrics, reporter]),
      sessions: hooks,
      subscriptions,
      listeners: this.listeners,
      workerPool: () => {
        if (this.pool === null) {
          this.pool = new WorkerPool(poolOptions);
          // A pool asked for after close() is closed at once: its tasks are refused, not leaked.
          if (this.closing) void this.pool.close();
        }
        return this.pool;
      },
      cacheTtlMs: options.cacheTtlMs,
      tasks: options.tasks,
      // MCP 2025-11-25 "Runtime Insufficient Scope Errors": the 403 names the metadata too.
      insufficientScopeChallenge:
        authenticate?.resourceServer === undefined || authenticate.resourceServer === null
          ? undefined
          : authenticate.resourceServer.insufficientScopeChallenge,
    });
    // Tracing joins the observers once the optional API has loaded; without it nothing changes.
    const tracing = options.tracing;
    this.tracingReady =
      tracing === null
        ? Promise.resolve()
        : loadOpenTelemetry().then((api) => {
            if (api === null || this.closing) return;
            const tracer = createTracing(api, tracing.tracerProvider, PACKAGE_VERSION);
            this.dispatcher.setObserver(combineObservers([this.metrics, reporter, tracer]));
          });
    this.tools = this.dispatcher.tools;
    this.resources = this.dispatcher.resources;
    this.resourceTemplates = this.dispatcher.resourceTemplates;
    this.prompts = this.dispatcher.prompts;
    this.hookChanges();
    // GET /ready: not ready while closing, or while a shared store has lost its service.
    this.readiness = new Readiness({
      sources: [
        this.registry.store.reachability,
        this.sessionStore?.reachability,
        this.changeFeed.reachability,
        this.dispatcher.tasks?.store.reachability,
        this.dispatcher.serverRequests.table.bus?.reachability,
      ].filter((source): source is Reachability => source !== undefined),
      draining: () => this.leaving,
      log: (line) => console.warn(line),
    });
    this.metrics?.attach({
      registry: this.registry,
      limits: this.limits,
      readiness: this.readiness,
      sessions: this.sessionStore,
      tasks: this.dispatcher.tasks?.store ?? null,
      listeners: this.listeners,
      streams: this.streams,
      pendingAsks: this.dispatcher.serverRequests.table,
    });
    const core = createRequestCore({
      readiness: this.readiness,
      path: options.path,
      dispatcher: this.dispatcher,
      registry: this.registry,
      sessions:
        this.sessionStore === null
          ? null
          : { store: this.sessionStore, required: options.requireSession },
      authenticate,
      trustProxy,
      originPolicy: this.originPolicy,
      maxBodyBytes: options.maxBodyBytes,
      bodyBudget: {
        perScope: options.maxBodyBytesInFlightPerScope,
        total: options.maxBodyBytesInFlight,
      },
      bodyTimeoutMs: options.bodyTimeoutMs,
      limits: this.limits,
      keepAliveMs: options.keepAliveMs,
      maxStreamBufferBytes: options.maxStreamBufferBytes,
      metrics: this.metrics,
      metricsAuth: options.metricsAuth,
      streams: this.streams,
      closing: () => this.closing,
      rateLimits: options.rateLimits,
      requestHeaders: options.requestHeaders,
      serverCard:
        options.serverCard === undefined
          ? null
          : serverCardJson(options.serverCard, {
              version: options.version,
              title: options.title,
              description: options.description,
              websiteUrl: options.websiteUrl,
              icons: options.icons,
              supportedProtocolVersions: ALL_PROTOCOL_VERSIONS,
            }),
    });
    this.resourceServer = authenticate?.resourceServer ?? null;
    // Two doors over one core: every step, bound and timeout is shared.
    // listen()'s server counts each request on its connection (connection bounds).
    this.handler = createNodeListener(core, this.connections);
    this.fetch = createFetchHandler(core);
    this.path = options.path;
    // The other doors (stdio, framework adapters) drive the same core under the same bounds.
    registerTransportCore(this, {
      dispatcher: this.dispatcher,
      request: core,
      registry: this.registry,
      requests: this.limits.requests,
      maxMessageBytes: options.maxBodyBytes,
      closing: () => this.closing,
    });
  }

  private readonly path: string;
  private readonly resourceServer: ResourceServer | null;

  concurrency(): ConcurrencySnapshot {
    return {
      requests: this.limits.requests.total,
      streams: this.limits.streams.total,
      scopes: this.limits.requests.scopes,
      listeners: this.listeners.size,
      subscriptions: this.subscriptions?.size ?? 0,
      connections: this.connections.counts().open,
    };
  }

  /**
   * Every change to a collection, and every `resources.updated(uri)`, goes to the change feed;
   * whatever the feed hears (from this node or another) goes to this node's listeners: 2026-07-28
   * `subscriptions/listen` streams, and 2025-era GET streams (list changes to every open one,
   * resource updates to the sessions subscribed).
   */
  private hookChanges(): void {
    const feed = this.changeFeed;
    const announce = (list: "tools" | "prompts" | "resources") => () =>
      feed.publish({ type: "list", list });
    this.unhook.push(
      this.tools.onChanged(announce("tools")),
      this.prompts.onChanged(announce("prompts")),
      this.resources.onChanged(announce("resources")),
      // Templates are part of what a client lists as resources.
      this.resourceTemplates.onChanged(announce("resources")),
      feed.onChange((event) => this.deliverChange(event)),
    );
    // Task status changes reach the `subscriptions/listen` streams that named the task
    // (task-notifications.ts): a terminal status is announced by the task store to every node
    // already; a run parking or resuming is known only here, so it goes through the feed.
    const tasks = this.dispatcher.tasks;
    if (tasks !== null) {
      this.unhook.push(
        tasks.onStatusChange((taskId, scope, everywhere) => {
          if (everywhere) this.deliverChange({ type: "task", taskId, scope });
          else feed.publish({ type: "task", taskId, scope });
        }),
      );
    }
    this.resources.routeUpdates((uri) => {
      const here = (this.subscriptions?.subscribersOf(uri) ?? 0) + this.listeners.listenersOf(uri);
      feed.publish({ type: "updated", uri });
      return here;
    });
  }

  private deliverChange(event: ChangeEvent): void {
    if (this.closing) return;
    if (event.type === "forward") {
      this.streams?.send(event.sessionId, resourceUpdatedJson(event.uri));
      return;
    }
    if (event.type === "task") {
      const tasks = this.dispatcher.tasks;
      if (tasks === null) return;
      tasks.heard(event.taskId);
      void notifyTaskListeners(this.listeners, tasks.store, event);
      // A 2025-era session's task: its GET stream, when this node holds it.
      const sessionId = sessionOfScope(event.scope);
      const streams = this.streams;
      if (sessionId !== null && streams?.has(sessionId)) {
        void notifySessionStream(tasks.store, event, (json) => streams.send(sessionId, json));
      }
      return;
    }
    this.listeners.deliver(event);
    if (event.type === "updated") this.subscriptions?.updated(event.uri);
    else
      this.streams?.broadcast(
        `{"jsonrpc":"2.0","method":"notifications/${event.list}/list_changed"}`,
      );
  }

  async listen(options: { host?: string; port?: number } = {}): Promise<ListenAddress> {
    // Spans from the very first request, when tracing is available.
    await this.tracingReady;
    return this.startListening(options);
  }

  private startListening(options: { host?: string; port?: number }): Promise<ListenAddress> {
    const host = options.host ?? "127.0.0.1";
    const port = options.port ?? 0;
    if (this.httpServer !== null || this.closing) {
      return Promise.reject(new Error("conduit-mcp: listen() was already called"));
    }
    // First, so that nothing changes where listen() cannot work.
    let http: typeof import("node:http");
    try {
      http = nodeBuiltin<typeof import("node:http")>("node:http", LISTEN_FEATURE);
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.resourceServer?.resource === null && !isLoopbackListenHost(host)) {
      // The audience tokens must name cannot be guessed from a public bind address (a proxy or
      // a TLS terminator usually stands in front), and must never come from a Host header.
      return Promise.reject(
        new InvalidOptionError(
          "auth.oauth.resource",
          "set when listening on a non-loopback address (the public URL of the endpoint)",
          undefined,
        ),
      );
    }
    // Bound to loopback: only loopback Host/Origin headers (DNS-rebinding protection).
    this.originPolicy.loopbackOnly = isLoopbackListenHost(host);
    const server = createHttpServer(http, {
      handler: this.handler,
      connections: this.connections,
      headersTimeoutMs: this.headersTimeoutMs,
      requestTimeoutMs: this.requestTimeoutMs,
      keepAliveTimeoutMs: this.keepAliveTimeoutMs,
    });
    this.httpServer = server;
    return listenOn(server, { host, port, path: this.path }).then(
      (address) => {
        // Default resource (RFC 8707 audience) on loopback: the URL the server is reached at.
        this.resourceServer?.useDefaultResource(address.url);
        return address;
      },
      (error: unknown) => {
        this.httpServer = null;
        throw error;
      },
    );
  }

  close(): Promise<void> {
    this.closed ??= this.shutdown();
    return this.closed;
  }

  private async shutdown(): Promise<void> {
    // First, with a delay: not ready, yet serving everything, until the load balancer has moved
    // new work to other nodes; a request that reached the listener as it closed would be lost.
    this.leaving = true;
    if (this.closeDelayMs > 0) await delay(this.closeDelayMs);
    this.closing = true;
    const server = this.httpServer;
    const serverClosed =
      server === null
        ? Promise.resolve()
        : new Promise<void>((resolve) => server.close(() => resolve()));
    server?.closeIdleConnections();
    // Standalone streams carry no call to wait for: they end now. Listen streams end gracefully
    // (2026-07-28 subscriptions, "Graceful Closure": a complete result, then the end).
    for (const stop of this.unhook.splice(0)) stop();
    this.resources.routeUpdates(null);
    this.streams?.closeAll();
    this.listeners.completeAll();
    // Grace: running calls may finish on their own.
    const deadline = Date.now() + this.closeGraceMs;
    while (this.dispatcher.activeCalls > 0 && Date.now() < deadline) {
      await delay(Math.min(10, Math.max(1, deadline - Date.now())));
    }
    // Then every remaining call is aborted; its exchange ends at once (-32800 or stream end).
    this.dispatcher.abortAll(new RequestCancelledError("shutdown"));
    this.dispatcher.tasks?.close();
    this.dispatcher.serverRequests.table.shutdown();
    // Isolated tools still running after the abort are terminated with their threads.
    await this.pool?.close();
    await delay(10);
    server?.closeAllConnections();
    await serverClosed;
    this.janitor?.stop();
    this.readiness.stop();
    this.metrics?.unsubscribe();
    if (this.ownsSessionStore) await this.sessionStore?.close();
    if (this.ownsChangeFeed) await this.changeFeed.close();
    if (this.rateLimits?.ownsStore === true) await this.rateLimits.store.close();
    if (this.ownsRegistry) await this.registry.close();
  }
}

function resourceUpdatedJson(uri: string): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    method: "notifications/resources/updated",
    params: { uri },
  });
}

/** The `inputRequired` option, checked (a bad value throws InvalidOptionError naming it). */
function inputRequiredOf(option: InputRequiredOptions | undefined): InputRequiredSettings {
  if (option !== undefined && (typeof option !== "object" || option === null)) {
    throw new InvalidOptionError("inputRequired", "an object", option);
  }
  if (option?.keys !== undefined && !Array.isArray(option.keys)) {
    throw new InvalidOptionError("inputRequired.keys", "an array of keys", "(hidden)");
  }
  try {
    return inputRequiredSettings(option);
  } catch (error) {
    // The message names the member and the rule, never a key.
    throw new InvalidOptionError("inputRequired", (error as Error).message, "(hidden)");
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
