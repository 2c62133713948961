/**
 * Method dispatch for both protocol eras. Every request is tracked in the cancellation registry
 * under the scope fixed before dispatch, runs, then is untracked and its row cleared. Methods live
 * in an open table ({@link Dispatcher.defineMethod}), each saying which era serves it; answers go
 * through a {@link ResponseSink}, so the same dispatcher serves any transport.
 *
 * Wire rules: MCP 2025-11-25 (https://modelcontextprotocol.io/specification/2025-11-25) and
 * 2026-07-28 (https://modelcontextprotocol.io/specification/2026-07-28): tools, resources,
 * prompts, completion, pagination and (2026-07-28) caching.
 */
import type { CancellationRegistry, TrackOptions } from "../cancellation/index.js";
import type { RequestHandle, RequestId } from "../cancellation/types.js";
import { type CancellationSource, ErrorCode, RequestCancelledError } from "../errors.js";
import type { WorkerPool } from "../isolation/worker-pool.js";
import { isLoggingLevel, type LoggingLevel } from "../logging-levels.js";
import { reflectText } from "../reflect.js";
import {
  ASKING_METHODS,
  askableCapabilities,
  CallBinding,
  type ClientAsker,
  type InputRequiredSettings,
  inputRequiredSettings,
  openInputRound,
  replyOf,
  ServerRequestAsker,
  type ServerRequestSettings,
  serverRequestSettings,
} from "./asking/index.js";
import type { Icon, Prompt, RequestInfo, RequestMeta, VisibilityContext } from "./calls/index.js";
import {
  accessOf,
  HANDLED,
  HandlerCall,
  type HandlerCallHost,
  type HandlerEnd,
  type HandlerInfo,
  type HandlerInvocation,
  type HandlerResult,
  type ListedItem,
  PrimitiveCollection,
  processCancelledNotification,
  type ToolOutcome,
} from "./calls/index.js";
import {
  type CompletionRequest,
  completionResult,
  NO_COMPLETIONS,
  parseCompletionRequest,
} from "./completion/index.js";
import type { Resource, ResourceTemplate } from "./resources/index.js";
import { isResourceUri, ResourceCollection, toContents } from "./resources/index.js";
import type { ResourceSubscriptions } from "./subscriptions/index.js";
import {
  acknowledgedFilter,
  type ChangeListener,
  type ChangeListeners,
  parseListenFilter,
  SUBSCRIPTION_ID_KEY,
} from "./subscriptions/index.js";
import {
  BeforeTaskInvocation,
  missingTasksExtension,
  notifyTaskListener,
  prepareThenRun,
  TASKS_EXTENSION,
  type TaskAnswer,
  type TaskOptions,
  type TaskRequest,
  TaskService,
  taskStateKey,
} from "./tasks/index.js";
import type { TaskSupport, Tool } from "./tools/index.js";
import type { ResponseSink } from "./wire/index.js";
import {
  ALL_PROTOCOL_VERSIONS,
  cancelledResponseJson,
  checkParamHeaders,
  errorResponseJson,
  IntrusiveList,
  internalErrorJson,
  isPlainObject,
  isSupportedProtocolVersion,
  type JsonRpcNotification,
  type JsonRpcRequest,
  ListCursors,
  type ListKind,
  META_SERVER_INFO,
  type PresentedParamHeaders,
  SUPPORTED_PROTOCOL_VERSIONS,
  successResponseJson,
} from "./wire/index.js";

export type { RequestInfo, RequestMeta } from "./calls/index.js";

/**
 * What {@link SessionHooks.create} resolves: the new session's id, or why none was created —
 * `"scope-full"` (the creating scope holds its quota: 429) or `"full"` (503).
 */
export type SessionCreation =
  | { readonly id: string }
  | { readonly id: null; readonly refused: "full" | "scope-full" };

/** Session operations the protocol needs (the transport owns the store). */
export interface SessionHooks {
  /** Mints and stores a session created by `creatorScope` (the `initialize`'s scope). */
  create(
    principalId: string | null,
    protocolVersion: string,
    creatorScope: string,
    /** What the client declared it can be asked (server-requests.ts `askableCapabilities`). */
    clientCapabilities: string,
  ): Promise<SessionCreation>;
  setLogLevel(sessionId: string, level: LoggingLevel): Promise<void>;
}

/**
 * Told about every handler invocation (tools, resource reads, prompt gets, completions): its
 * start, and its end with outcome, error and cancellation source. Every member is optional.
 * Observers must not throw; what they throw is ignored.
 */
export interface DispatchObserver {
  /** A tool call ended (metrics per tool). */
  toolCall?(tool: string, outcome: ToolOutcome): void;
  /**
   * A handler is about to run. When the observers have `requestStarted`, only for handlers of
   * requests one of them follows.
   */
  handlerStarted?(info: HandlerInfo): void;
  /** A handler ended (answered, failed, was cancelled, or was abandoned: `killed`). */
  handlerEnded?(info: HandlerInfo, end: HandlerEnd): void;
  /**
   * A request (any method) is about to run. May return a sink standing in for `sink` (it must
   * forward every member) to see how the request's exchange ends: tracing ends its span there.
   * An observer that returns none does not follow the request: its handler's
   * {@link HandlerInfo.request} is then null.
   */
  requestStarted?(info: RequestInfo, sink: ResponseSink): ResponseSink | undefined;
  /**
   * Whether `requestStarted` may follow a request at this moment; false lets the dispatcher skip
   * the request's info and the call altogether (tracing says false while no SDK is registered).
   * Absent: always true.
   */
  followsRequests?(): boolean;
  /**
   * Runs the user's handler (`run`) inside the observer's context: tracing makes its span active.
   * When the observers have `requestStarted`, only for handlers of requests one of them follows.
   */
  runHandler?(info: HandlerInfo, run: () => unknown): unknown;
}

/** The server's identity as `initialize` and `server/discover` publish it (MCP `Implementation`). */
export interface ServerIdentity {
  readonly name: string;
  readonly version: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly icons?: readonly Icon[] | undefined;
  readonly websiteUrl?: string | undefined;
}

/** What {@link Dispatcher} takes. */
export interface DispatcherOptions extends ServerIdentity {
  readonly tools?: readonly Tool[] | undefined;
  readonly resources?: readonly Resource[] | undefined;
  readonly resourceTemplates?: readonly ResourceTemplate[] | undefined;
  readonly prompts?: readonly Prompt[] | undefined;
  readonly registry: CancellationRegistry;
  readonly streamCancelTimeoutMs: number;
  readonly cancelOnDisconnect: boolean;
  readonly observer?: DispatchObserver | null | undefined;
  readonly sessions?: SessionHooks | null | undefined;
  /** The server's worker pool for isolated tools, created by its owner on first use. */
  readonly workerPool?: (() => WorkerPool) | undefined;
  /** `ttlMs` of the cacheable 2026-07-28 results. Default 60 000. */
  readonly cacheTtlMs?: number | undefined;
  /** `instructions` of `initialize` and `server/discover`, when given. */
  readonly instructions?: string | undefined;
  /** Items per list page. Default 100. */
  readonly pageSize?: number | undefined;
  /** HMAC key of list cursors, shared by every node (absent: a random key per process). */
  readonly cursorSecret?: string | Uint8Array | undefined;
  /** Longest resource URI a request may name. Default 8 192 characters. */
  readonly maxUriLength?: number | undefined;
  /** Sealing and bounds of input-required results (default: a random key per process). */
  readonly inputRequired?: InputRequiredSettings | undefined;
  /** Asking the client on 2025-era requests (default: a memory table, 5 min timeout). */
  readonly serverRequests?: ServerRequestSettings | undefined;
  /** Longest value one template variable may match. Default 1 024 characters. */
  readonly maxTemplateValueLength?: number | undefined;
  /**
   * The `WWW-Authenticate` value of a 403 answer to a caller lacking an item's scopes (RFC 6750
   * §3.1). Default: `Bearer error="insufficient_scope", scope="…"`.
   */
  readonly insufficientScopeChallenge?: ((scopes: readonly string[]) => string) | undefined;
  /**
   * The resource subscription table, when subscriptions are served (2025-era sessions): then
   * `resources.subscribe` is advertised and `resources/subscribe`/`unsubscribe` are answered.
   */
  readonly subscriptions?: ResourceSubscriptions | null | undefined;
  /**
   * Tasks (task-service.ts): options, or `false` to serve none (a tool's `task` is then ignored
   * and the tasks capability not advertised). Default: served, with a memory store.
   */
  readonly tasks?: TaskOptions | false | undefined;
  /**
   * The 2026-07-28 `subscriptions/listen` table: when given, `subscriptions/listen` is served and
   * `server/discover` advertises `listChanged` and `resources.subscribe`.
   */
  readonly listeners?: ChangeListeners | null | undefined;
}

/** What a validated 2026-07-28 envelope tells the dispatcher (see modern-envelope.ts). */
export interface ModernRequestInfo {
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  /**
   * The request's `Mcp-Param-*` headers, checked against the tool's `x-mcp-header` ones; absent
   * when the request did not come over HTTP (other transports may ignore the annotations).
   */
  readonly paramHeaders?: PresentedParamHeaders;
}

/** One request as a method sees it: already tracked; answered through {@link Dispatcher.answer}. */
export interface MethodRequest {
  readonly id: RequestId | null;
  readonly params: Readonly<Record<string, unknown>> | undefined;
  readonly meta: RequestMeta;
  readonly sink: ResponseSink;
  readonly handle: RequestHandle;
  /** The 2026-07-28 envelope's facts, or null for a 2025-era request. */
  readonly modern: ModernRequestInfo | null;
  /** What observers were told about the request; null when none asked. */
  readonly info: RequestInfo | null;
  /**
   * The promise of the handler call the request was handed to (set by the dispatcher), else
   * null. A method returning exactly it needs no -32603 fallback: `HandlerCall.run` never rejects.
   */
  call: Promise<void> | null;
}

/** One entry of the method table. */
export interface MethodDefinition {
  /** Which era serves it: the 2025 session/JSON-RPC era, 2026-07-28, or both. */
  readonly eras: "2025" | "2026" | "both";
  /** Handles the request; must answer (or hand it to a handler call). */
  run(request: MethodRequest): Promise<void>;
}

/**
 * Most list and resource changes a `subscriptions/listen` keeps while its tasks are read, before
 * its acknowledgement (later ones in that window are dropped, as before the listener existed).
 */
const MAX_EARLY_CHANGES = 64;
const EMPTY_RESULT = "{}";
const STORE_FULL: SessionCreation = { id: null, refused: "full" };
const TOO_MANY_SESSIONS =
  "Too many sessions for this client; end one (DELETE) or let one expire, then retry.";
/** A session quota frees when one of the creator's sessions ends or idles out: not within 1 s. */
const SESSION_RETRY_AFTER: Readonly<Record<string, string>> = { "retry-after": "60" };
const PARAMS_NOT_OBJECT = "params must be an object";
const noop = (): void => {};
/** The promise of a request answered at once (handled.ts). */
const DONE: Promise<void> = HANDLED;

/**
 * Dispatches requests and notifications of both eras.
 *
 * @example
 * ```ts
 * const dispatcher = new Dispatcher({ name: "demo", version: "1.0.0", tools: [echo], registry,
 *   streamCancelTimeoutMs: 5000, cancelOnDisconnect: true });
 * await dispatcher.handleRequest(message, meta, sink);
 * ```
 */
export class Dispatcher implements HandlerCallHost {
  readonly streamCancelTimeoutMs: number;
  readonly cancelOnDisconnect: boolean;
  /** The served tools, changeable while serving. */
  readonly tools: PrimitiveCollection<Tool>;
  /** The served direct resources (keyed by URI). */
  readonly resources: ResourceCollection;
  /** The served resource templates (keyed by URI template). */
  readonly resourceTemplates: PrimitiveCollection<ResourceTemplate>;
  /** The served prompts. */
  readonly prompts: PrimitiveCollection<Prompt>;
  /** HandlerCallHost: set by {@link abortAll} for a shutdown. */
  shuttingDown = false;
  private readonly registry: CancellationRegistry;
  private observer: DispatchObserver | null;
  private readonly sessions: SessionHooks | null;
  private readonly methods = new Map<string, MethodDefinition>();
  private readonly cursors: ListCursors;
  private readonly pageSize: number;
  private readonly cacheTtlMs: number;
  private readonly maxUriLength: number;
  private readonly maxTemplateValueLength: number;
  private readonly challenge: (scopes: readonly string[]) => string;
  private readonly pool: (() => WorkerPool) | null;
  private readonly asking: InputRequiredSettings;
  /** 2025-era asks: the node's table of requests waiting for a client's answer, and bounds. */
  readonly serverRequests: ServerRequestSettings;
  /** The constant tail of every initialize result. */
  private readonly initializeTail: string;
  private readonly discoverJson: string;
  private readonly active = new IntrusiveList<HandlerCall>();
  private readonly bySession = new Map<string, Set<HandlerCall>>();
  private readonly subscriptions: ResourceSubscriptions | null;
  /** The tasks of this server, or null when they are not served. */
  readonly tasks: TaskService | null;
  private readonly listeners: ChangeListeners | null;

  constructor(options: DispatcherOptions) {
    this.registry = options.registry;
    this.streamCancelTimeoutMs = options.streamCancelTimeoutMs;
    this.cancelOnDisconnect = options.cancelOnDisconnect;
    this.observer = options.observer ?? null;
    this.sessions = options.sessions ?? null;
    this.pool = options.workerPool ?? null;
    this.asking = options.inputRequired ?? inputRequiredSettings();
    this.serverRequests = options.serverRequests ?? serverRequestSettings();
    this.cursors = new ListCursors(options.cursorSecret);
    this.pageSize = options.pageSize ?? 100;
    this.cacheTtlMs = options.cacheTtlMs ?? 60_000;
    this.maxUriLength = options.maxUriLength ?? 8_192;
    this.maxTemplateValueLength = options.maxTemplateValueLength ?? 1_024;
    this.challenge = options.insufficientScopeChallenge ?? defaultChallenge;
    this.tools = new PrimitiveCollection<Tool>({
      list: "tools",
      keyOf: (tool) => tool.name,
      isItem: isTool,
      what: "a defineTool() result",
      items: options.tools,
    });
    this.resources = new ResourceCollection({
      list: "resources",
      keyOf: (resource) => resource.uri,
      isItem: isResource,
      what: "a defineResource() result",
      items: options.resources,
    });
    this.resourceTemplates = new PrimitiveCollection<ResourceTemplate>({
      list: "resourceTemplates",
      keyOf: (template) => template.uriTemplate,
      isItem: isResourceTemplate,
      what: "a defineResourceTemplate() result",
      items: options.resourceTemplates,
    });
    this.prompts = new PrimitiveCollection<Prompt>({
      list: "prompts",
      keyOf: (prompt) => prompt.name,
      isItem: isPrompt,
      what: "a definePrompt() result",
      items: options.prompts,
    });

    this.subscriptions = options.subscriptions ?? null;
    this.listeners = options.listeners ?? null;
    this.resources.serveSubscriptions(this.subscriptions);
    this.tasks =
      options.tasks === false
        ? null
        : new TaskService({
            registry: this.registry,
            cursors: this.cursors,
            pageSize: this.pageSize,
            options: options.tasks,
            serverRequests: this.serverRequests,
          });
    // List changes reach 2025-era sessions on their GET stream, so they are announced only where
    // sessions (and so GET streams) are served.
    const sessionsListen = this.subscriptions !== null;
    const serverInfo = serverInfoOf(options);
    const instructions =
      options.instructions === undefined
        ? ""
        : `,"instructions":${JSON.stringify(options.instructions)}`;
    this.initializeTail = `"capabilities":${JSON.stringify({
      tools: { listChanged: sessionsListen },
      resources:
        this.subscriptions === null
          ? { listChanged: false }
          : { subscribe: true, listChanged: true },
      prompts: { listChanged: sessionsListen },
      completions: {},
      logging: {},
      // 2025-11-25, Tasks, "Server Capabilities".
      ...(this.tasks === null
        ? {}
        : { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }),
    })},"serverInfo":${JSON.stringify(serverInfo)}${instructions}`;
    // server/discover is the same for every caller: cached "public".
    const discover: Record<string, unknown> = {
      resultType: "complete",
      supportedVersions: ALL_PROTOCOL_VERSIONS,
      capabilities: {
        ...(this.listeners === null
          ? { tools: {}, resources: {}, prompts: {} }
          : {
              tools: { listChanged: true },
              resources: { subscribe: true, listChanged: true },
              prompts: { listChanged: true },
            }),
        completions: {},
        logging: {},
        // SEP-2663, "Capability Negotiation": the extension, never a `tasks` capability.
        ...(this.tasks === null ? {} : { extensions: { [TASKS_EXTENSION]: {} } }),
      },
      _meta: { [META_SERVER_INFO]: serverInfo },
      ttlMs: this.cacheTtlMs,
      cacheScope: "public",
    };
    if (options.instructions !== undefined) discover.instructions = options.instructions;
    this.discoverJson = JSON.stringify(discover);
    this.defineBuiltInMethods();
    if (this.tasks !== null) this.defineTaskMethods(this.tasks);
  }

  /**
   * Replaces the observer (the server adds tracing once its optional API has loaded); requests
   * already running keep reporting to the one they started with where they hold it.
   */
  setObserver(observer: DispatchObserver | null): void {
    this.observer = observer;
  }

  /** Handler invocations currently running (not yet settled or abandoned). */
  get activeCalls(): number {
    return this.active.size;
  }

  /**
   * Adds (or replaces) a method. Methods of the spec that this library serves are defined at
   * construction; others (e.g. subscriptions, tasks) are added the same way.
   *
   * @example
   * ```ts
   * dispatcher.defineMethod("ping", { eras: "2025", run: (r) => dispatcher.answer(r, successResponseJson(r.id, "{}")) });
   * ```
   */
  defineMethod(method: string, definition: MethodDefinition): void {
    this.methods.set(method, definition);
  }

  /**
   * Handles one 2025-era request; the answer (or the ending of a cancelled exchange) goes to
   * `sink`. Never rejects.
   */
  handleRequest(message: JsonRpcRequest, meta: RequestMeta, sink: ResponseSink): Promise<void> {
    // Not async: the run's own promise is handed back, so no suspended frame is held per call.
    const { method, id } = message;
    const definition = this.methods.get(method);
    if (definition === undefined || definition.eras === "2026") {
      sink.respond(
        errorResponseJson(id, ErrorCode.MethodNotFound, `Method not found: ${reflectText(method)}`),
      );
      return DONE;
    }
    if ("params" in message && !isPlainObject(message.params)) {
      sink.respond(errorResponseJson(id, ErrorCode.InvalidParams, PARAMS_NOT_OBJECT));
      return DONE;
    }
    return this.run(definition, message, meta, sink, null, { lifetime: sink.lifetime });
  }

  /**
   * Handles one 2026-07-28 request whose envelope and headers already passed the checks of
   * modern-envelope.ts; a method this era does not have (`ping`, `initialize`…) is 404 / -32601.
   * Never rejects.
   */
  handleModernRequest(
    message: JsonRpcRequest,
    meta: RequestMeta,
    sink: ResponseSink,
    info: ModernRequestInfo,
  ): Promise<void> {
    const { method, id } = message;
    const definition = this.methods.get(method);
    if (definition === undefined || definition.eras === "2025") {
      sink.respond(
        errorResponseJson(id, ErrorCode.MethodNotFound, `Method not found: ${reflectText(method)}`),
        404,
      );
      return DONE;
    }
    return this.run(definition, message, meta, sink, info, modernTrackOptions(sink));
  }

  /**
   * Answers a tracked request: untrack, write, then clear the row (the answer is not delayed by
   * the clear). `headers` go on a plain JSON answer only.
   */
  async answer(
    request: MethodRequest,
    json: string,
    status = 200,
    headers?: Readonly<Record<string, string>>,
  ): Promise<void> {
    try {
      await this.registry.untrack(request.handle);
    } catch {
      // The janitor's sweep removes an entry a failing store kept.
    }
    request.sink.respond(json, status, headers);
    if (request.handle.requestId !== null) {
      this.registry.clear(request.id, request.meta.scope).catch(noop);
    }
  }

  /** Answers a successful result object, adding `resultType` for 2026-07-28. */
  answerResult(request: MethodRequest, result: Readonly<Record<string, unknown>>): Promise<void> {
    const body = request.modern === null ? result : { ...result, resultType: "complete" };
    return this.answer(request, successResponseJson(request.id, JSON.stringify(body)));
  }

  /** Answers a JSON-RPC error. */
  answerError(
    request: MethodRequest,
    code: number,
    message: string,
    data?: unknown,
    status = 200,
  ): Promise<void> {
    return this.answer(request, errorResponseJson(request.id, code, message, data), status);
  }

  /**
   * Handles one notification from `scope`: resolves null when accepted or ignored (202), or the
   * JSON text of an error to send. Only `notifications/cancelled` does anything.
   */
  handleNotification(message: JsonRpcNotification, scope: string): Promise<string | null> {
    if (message.method !== "notifications/cancelled") return Promise.resolve(null);
    return processCancelledNotification(message, scope, this.registry);
  }

  /**
   * Handles a client's JSON-RPC response (its answer to a server request) from `scope`: handed
   * to the waiting ask when the id waits for an answer of that scope, here or (through the bus)
   * on the node that asked; ignored otherwise. Resolves once delivered, forwarded or dropped;
   * never rejects. The transport answers 202 whatever happened (nothing is learnt).
   */
  async handleResponse(message: Readonly<Record<string, unknown>>, scope: string): Promise<void> {
    const reply = replyOf(message);
    if (reply === null) return;
    try {
      await this.serverRequests.table.route(scope, message.id, reply);
    } catch {
      // A bus that breaks its promise not to reject: the answer is lost, the ask times out.
    }
  }

  /**
   * Cancels every handler running in a session (its `DELETE`); resolves how many were running.
   *
   * @example
   * ```ts
   * dispatcher.cancelSession("3q2+7w");
   * ```
   */
  cancelSession(sessionId: string): number {
    this.subscriptions?.dropSession(sessionId);
    // Its tasks too (README, "Tasks"): a disconnect does not end a task, closing its session
    // does. Marked first, so they read why; the registry then aborts their runs with the calls.
    this.tasks?.cancelSession(sessionId).catch(noop);
    void this.registry.cancelScope(`session:${sessionId}`, "session terminated", "disconnect");
    const calls = this.bySession.get(sessionId);
    if (calls === undefined) return 0;
    for (const call of [...calls]) call.cancelWith("disconnect", "session terminated");
    return calls.size;
  }

  /** Aborts every running handler of this dispatcher (shutdown); writes no rows. */
  abortAll(reason: RequestCancelledError = new RequestCancelledError("shutdown")): void {
    // Calls aborted for a shutdown answer "Server is shutting down", not "Request cancelled".
    if (reason.source === "shutdown") this.shuttingDown = true;
    for (const call of this.active.toArray()) call.handle.abort(reason);
  }

  /** HandlerCallHost: a 2025-era call's asker, made on its first ask. */
  serverAsker(
    sink: ResponseSink,
    scope: string,
    capabilities: Readonly<Record<string, unknown>> | null,
  ): ClientAsker {
    return new ServerRequestAsker(this.serverRequests, sink, scope, capabilities);
  }

  /** HandlerCallHost: the server's pool for isolated tools. */
  workerPool(): WorkerPool {
    if (this.pool === null) throw new Error("conduit-mcp: no worker pool was given");
    return this.pool();
  }

  /** HandlerCallHost: cancels one call's handle; resolves whether a row was written. */
  async cancelHandle(
    handle: RequestHandle,
    reason: string,
    source: CancellationSource,
  ): Promise<boolean> {
    const result = await this.registry.cancelHandle(handle, reason, source);
    return result.ok;
  }

  /**
   * HandlerCallHost: forgets the call, then untracks and clears (never rejects). Not async: both
   * are done at once with the memory store; with another, only the clear's promise is waited for.
   */
  release(call: HandlerCall): Promise<void> {
    if (!this.active.delete(call)) return DONE;
    if (call.sessionId !== null) {
      const calls = this.bySession.get(call.sessionId);
      if (calls !== undefined) {
        calls.delete(call);
        if (calls.size === 0) this.bySession.delete(call.sessionId);
      }
    }
    // Untracked at once; the row cleared at once too with the memory store (finish never
    // rejects: a store outage leaves what is left to the janitor's sweep).
    return this.registry.finish(call.handle, call.requestId, call.scope) ?? DONE;
  }

  /** HandlerCallHost: runs the handler, inside the observer's context if it has one. */
  invoke(call: HandlerCall): unknown {
    const observer = this.observer;
    if (observer?.runHandler === undefined || unfollowed(observer, call)) {
      return call.invocation.invoke(call);
    }
    return observer.runHandler(call.info, () => call.invocation.invoke(call));
  }

  /** HandlerCallHost. */
  started(call: HandlerCall): void {
    const observer = this.observer;
    if (observer?.handlerStarted === undefined || unfollowed(observer, call)) return;
    try {
      observer.handlerStarted(call.info);
    } catch {
      // An observer's failure is its own.
    }
  }

  /** HandlerCallHost. */
  ended(call: HandlerCall, end: HandlerEnd): void {
    const observer = this.observer;
    if (observer === null) return;
    try {
      if (call.invocation.method === "tools/call")
        observer.toolCall?.(call.invocation.name, end.outcome);
      observer.handlerEnded?.(call.info, end);
    } catch {
      // An observer's failure is its own.
    }
  }

  /**
   * Tracks the request, runs its method, answers -32603 if tracking failed or the method itself
   * threw. Not async: with the memory store the handle is there at once, and the method starts
   * in this turn (no promise and no microtask hop of its own).
   */
  private run(
    definition: MethodDefinition,
    message: JsonRpcRequest,
    meta: RequestMeta,
    sink: ResponseSink,
    modern: ModernRequestInfo | null,
    trackOptions: TrackOptions,
  ): Promise<void> {
    const { id } = message;
    let tracked: RequestHandle | Promise<RequestHandle>;
    try {
      tracked = this.registry.trackNow(id, meta.scope, trackOptions);
    } catch {
      sink.respond(internalErrorJson(id));
      return DONE;
    }
    if (tracked instanceof Promise) {
      return tracked.then(
        (handle) => this.runTracked(definition, message, meta, sink, modern, handle),
        () => sink.respond(internalErrorJson(id)),
      );
    }
    return this.runTracked(definition, message, meta, sink, modern, tracked);
  }

  /** Runs a tracked request's method (see {@link run}). */
  private runTracked(
    definition: MethodDefinition,
    message: JsonRpcRequest,
    meta: RequestMeta,
    sink: ResponseSink,
    modern: ModernRequestInfo | null,
    handle: RequestHandle,
  ): Promise<void> {
    const { id } = message;
    const params = message.params as Record<string, unknown> | undefined;
    let info: RequestInfo | null = null;
    let answerSink = sink;
    const observer = this.observer;
    if (observer?.requestStarted !== undefined && observer.followsRequests?.() !== false) {
      info = {
        method: message.method,
        requestId: id,
        params,
        meta,
        protocolEra: modern === null ? "2025-11-25" : "2026-07-28",
        handle,
      };
      try {
        answerSink = observer.requestStarted(info, sink) ?? sink;
      } catch {
        // An observer's failure is its own.
      }
      // Followed by no observer (tracing without a recording SDK, say): the running call does not
      // keep what nobody will look up.
      if (answerSink === sink) info = null;
    }
    const request: MethodRequest = {
      id,
      params,
      meta,
      sink: answerSink,
      handle,
      modern,
      info,
      call: null,
    };
    // The method's promise is returned, not awaited: this frame ends here instead of staying
    // suspended for as long as the handler runs. A throw or rejection still answers -32603.
    let running: Promise<void>;
    try {
      running = definition.run(request);
    } catch {
      return this.answer(request, internalErrorJson(id));
    }
    // The call's own promise never rejects: no fallback, and a waiting call does not keep its
    // request alive through one. (Marked on the request, not in a WeakSet: a weak collection's
    // write barrier and its sweep at every scavenge cost more than the field.)
    if (running === request.call) return running;
    return running.then(undefined, () => this.answer(request, internalErrorJson(id)));
  }

  /**
   * Starts a handler call for a tracked request; `detached` (a task's run) answers into the
   * task's sink under the task's handle instead, and asks through the task's asker.
   */
  private startCall(
    request: MethodRequest,
    invocation: HandlerInvocation,
    progressToken?: string | number,
    detached?: {
      readonly sink: ResponseSink;
      readonly handle: RequestHandle;
      readonly asker: ClientAsker | null;
    },
  ): Promise<void> {
    const { meta } = request;
    let round: ClientAsker | null = null;
    let serverAsks: Readonly<Record<string, unknown>> | null | undefined;
    if (detached !== undefined) {
      // A task's answer goes to the store; its asks park the task (task-asker.ts, task-outbox.ts).
      round = detached.asker;
    } else if (request.modern === null) {
      if (ASKING_METHODS.has(invocation.method)) {
        // 2025 era: asks go to the client as requests on this call's stream; the asker is made
        // on the first ask (serverAsker).
        serverAsks = meta.clientCapabilities ?? null;
      }
    } else if (ASKING_METHODS.has(invocation.method)) {
      // The arguments' digest is a SHA-256 over their canonical JSON: computed only when a
      // requestState is opened or sealed, never for a call that does not ask.
      const binding = new CallBinding(
        invocation.method,
        invocation.name,
        meta.scope,
        request.params?.arguments,
      );
      const opened = openInputRound(
        request.params,
        this.asking,
        binding,
        request.modern.clientCapabilities,
      );
      if (typeof opened === "string") {
        return this.answerError(request, ErrorCode.InvalidParams, opened);
      }
      round = opened;
    }
    const call = new HandlerCall({
      host: this,
      invocation,
      handle: detached?.handle ?? request.handle,
      sink: detached?.sink ?? request.sink,
      requestId: request.id,
      scope: meta.scope,
      principal: meta.principal,
      progressToken,
      logLevel: meta.logLevel,
      sessionId: meta.sessionId,
      modern: request.modern !== null,
      request: request.info,
      asker: round,
      serverAsks,
    });
    this.active.add(call);
    if (meta.sessionId !== null) {
      let calls = this.bySession.get(meta.sessionId);
      if (calls === undefined) {
        calls = new Set();
        this.bySession.set(meta.sessionId, calls);
      }
      calls.add(call);
    }
    const running = call.run();
    if (detached === undefined) request.call = running;
    return running;
  }

  private defineBuiltInMethods(): void {
    this.defineMethod("initialize", { eras: "2025", run: (r) => this.initialize(r) });
    this.defineMethod("ping", {
      eras: "2025",
      run: (r) => this.answer(r, successResponseJson(r.id, EMPTY_RESULT)),
    });
    this.defineMethod("logging/setLevel", { eras: "2025", run: (r) => this.setLogLevel(r) });
    this.defineMethod("server/discover", {
      eras: "2026",
      run: (r) => this.answer(r, successResponseJson(r.id, this.discoverJson)),
    });
    this.defineMethod("tools/list", {
      eras: "both",
      run: (r) => this.list(r, this.tools, "tools"),
    });
    this.defineMethod("tools/call", { eras: "both", run: (r) => this.callTool(r) });
    this.defineMethod("resources/list", {
      eras: "both",
      run: (r) => this.list(r, this.resources, "resources"),
    });
    this.defineMethod("resources/templates/list", {
      eras: "both",
      run: (r) => this.list(r, this.resourceTemplates, "resourceTemplates"),
    });
    this.defineMethod("resources/read", { eras: "both", run: (r) => this.readResource(r) });
    this.defineMethod("prompts/list", {
      eras: "both",
      run: (r) => this.list(r, this.prompts, "prompts"),
    });
    this.defineMethod("prompts/get", { eras: "both", run: (r) => this.getPrompt(r) });
    this.defineMethod("completion/complete", { eras: "both", run: (r) => this.complete(r) });
    if (this.listeners !== null) {
      const table = this.listeners;
      this.defineMethod("subscriptions/listen", {
        eras: "2026",
        run: (r) => this.listen(r, table),
      });
    }
    if (this.subscriptions !== null) {
      // 2025-era only: the 2026-07-28 revision removed these RPCs (subscriptions/listen).
      const table = this.subscriptions;
      this.defineMethod("resources/subscribe", {
        eras: "2025",
        run: (r) => this.subscription(r, table, true),
      });
      this.defineMethod("resources/unsubscribe", {
        eras: "2025",
        run: (r) => this.subscription(r, table, false),
      });
    }
  }

  /**
   * `subscriptions/listen` (2026-07-28 basic/patterns/subscriptions,
   * https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions): a
   * long-lived stream. The acknowledgement goes first, then every change the filter asked for,
   * each tagged with the request id as subscription id. Resolves when the stream ends: the
   * client closed it (or sent `notifications/cancelled`, on stdio), or it was cut for not
   * reading (no response then), or the server shuts down (a `complete` result, then the end).
   * The request holds its scope's request and stream units while it lasts.
   */
  private listen(request: MethodRequest, table: ChangeListeners): Promise<void> {
    let filter = parseListenFilter(request.params?.notifications, table.maxUris, this.maxUriLength);
    if (typeof filter === "string") {
      return this.answerError(request, ErrorCode.InvalidParams, filter);
    }
    const { sink, handle } = request;
    if (!sink.streamable || request.id === null) {
      return this.answerError(
        request,
        ErrorCode.InvalidRequest,
        "subscriptions/listen needs a stream: accept text/event-stream.",
      );
    }
    // SEP-2663, "Task Status Notifications": task ids need the extension declared (-32021).
    const tasks = filter.taskIds.length > 0 ? this.tasks : null;
    if (
      tasks !== null &&
      !TaskService.declaresExtension(request.modern?.clientCapabilities ?? {})
    ) {
      return this.answerTask(request, missingTasksExtension(request.id));
    }
    if (tasks === null) filter = { ...filter, taskIds: [] };
    const requested = filter;
    const subscriptionIdJson = JSON.stringify(request.id);
    return new Promise<void>((resolve) => {
      let done = false;
      const finish = (graceful: boolean): void => {
        if (done) return;
        done = true;
        table.remove(listener);
        sink.setListener(null);
        handle.setAbortListener(null);
        if (graceful) {
          void this.answer(
            request,
            successResponseJson(
              request.id,
              `{"resultType":"complete","_meta":{"${SUBSCRIPTION_ID_KEY}":${subscriptionIdJson}}}`,
            ),
          ).then(resolve, resolve);
          return;
        }
        // Ended by the client (or cut): no response, the stream just ends.
        sink.cancel(EMPTY_RESULT);
        this.registry.untrack(handle).then(
          () => resolve(),
          () => resolve(),
        );
        if (handle.requestId !== null)
          this.registry.clear(request.id, request.meta.scope).catch(noop);
      };
      // Changes heard before the acknowledgement is sent (it goes first), sent right after it.
      let early: string[] | null = [];
      const listener: ChangeListener = {
        scope: request.meta.scope,
        filter: requested,
        subscriptionIdJson,
        taskStatuses: new Map(),
        heldTasks: tasks === null ? null : new Set(),
        send: (json) => {
          if (sink.ended) finish(false);
          else if (early === null) void sink.notify(json);
          else if (early.length < MAX_EARLY_CHANGES) early.push(json);
        },
        complete: () => finish(true),
      };
      // Added before any task is read: the bounds refuse first, and a task that changes while
      // its state is read is heard (held until the acknowledgement, then read again).
      const refused = table.add(listener);
      if (refused !== null) {
        done = true;
        void this.answerError(
          request,
          ErrorCode.ServerError,
          refused === "scope-full"
            ? `Too many subscriptions/listen streams for this client (at most ${table.maxPerScope}); close one first.`
            : "Too many subscriptions/listen streams on this server; retry later.",
        ).then(resolve, resolve);
        return;
      }
      // A hang-up, a cut for not reading, or a cancel frees the listener at once.
      sink.setListener({ onDisconnect: () => finish(false) });
      handle.setAbortListener({ handleEvent: () => finish(false) });
      const acknowledge = (): void => {
        if (done) return;
        // Only the caller's own tasks are acknowledged (another scope's id is left out, as an
        // unknown one); the others stay named but are never told (task-notifications.ts).
        const acknowledged = { ...requested, taskIds: [...listener.taskStatuses.keys()] };
        void sink.notify(
          `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"${SUBSCRIPTION_ID_KEY}":${subscriptionIdJson}},"notifications":${JSON.stringify(acknowledgedFilter(acknowledged))}}}`,
        );
        for (const json of early ?? []) void sink.notify(json);
        early = null;
        if (sink.ended) {
          finish(false);
          return;
        }
        const held = listener.heldTasks;
        listener.heldTasks = null;
        if (tasks === null || held === null) return;
        for (const taskId of held) void notifyTaskListener(listener, tasks.store, taskId);
      };
      if (tasks === null) {
        acknowledge();
        return;
      }
      tasks.visible(request.meta.scope, requested.taskIds).then(
        (visible) => {
          for (const task of visible) listener.taskStatuses.set(task.taskId, taskStateKey(task));
          acknowledge();
        },
        () => {
          // The task store failed (an outage): answered as any method that threw.
          if (done) return;
          done = true;
          table.remove(listener);
          sink.setListener(null);
          handle.setAbortListener(null);
          void this.answer(request, internalErrorJson(request.id)).then(resolve, resolve);
        },
      );
    });
  }

  /**
   * `resources/subscribe` / `resources/unsubscribe` (2025-11-25 server/resources
   * "Subscriptions"): a session's own table entry; any URI may be named (a resource may be
   * served later, or be a template's match). Needs a session: updates go to its GET stream.
   */
  private subscription(
    request: MethodRequest,
    table: ResourceSubscriptions,
    subscribe: boolean,
  ): Promise<void> {
    const uri = request.params?.uri;
    if (typeof uri !== "string" || uri.length === 0 || uri.length > this.maxUriLength) {
      return this.answerError(request, ErrorCode.InvalidParams, "uri must be a non-empty string");
    }
    const { sessionId } = request.meta;
    if (sessionId === null) {
      return this.answerError(
        request,
        ErrorCode.InvalidRequest,
        "Subscriptions need a session: send initialize first and present its Mcp-Session-Id.",
      );
    }
    if (!subscribe) {
      table.unsubscribe(sessionId, uri);
      return this.answer(request, successResponseJson(request.id, EMPTY_RESULT));
    }
    const outcome = table.subscribe(sessionId, uri);
    if (outcome !== "subscribed") {
      return this.answerError(
        request,
        ErrorCode.ServerError,
        outcome === "session-full"
          ? "Too many subscriptions for this session; unsubscribe from one first."
          : "Too many subscriptions on this server; retry later.",
      );
    }
    return this.answer(request, successResponseJson(request.id, EMPTY_RESULT));
  }

  /**
   * One page of a list, as the caller may see it (MCP pagination; 2026-07-28 caching hints:
   * `private` when what is listed depends on the caller).
   */
  private list<T extends ListedItem>(
    request: MethodRequest,
    collection: PrimitiveCollection<T>,
    field: ListKind,
  ): Promise<void> {
    const { scope } = request.meta;
    const cursor = request.params?.cursor;
    let after: string | null = null;
    if (cursor !== undefined) {
      after = this.cursors.open(field, scope, cursor);
      if (after === null)
        return this.answerError(request, ErrorCode.InvalidParams, "Invalid cursor");
    }
    const page = collection.page(visibilityOf(request.meta), after, this.pageSize);
    if (page === null) return this.answerError(request, ErrorCode.InvalidParams, "Invalid cursor");
    const result: Record<string, unknown> = {
      [field]: page.items.map((item) => item.descriptor),
    };
    if (page.lastKey !== null) result.nextCursor = this.cursors.seal(field, scope, page.lastKey);
    if (request.modern !== null) {
      result.ttlMs = this.cacheTtlMs;
      result.cacheScope = collection.dependsOnCaller ? "private" : "public";
    }
    return this.answerResult(request, result);
  }

  /**
   * An item that exists but is forbidden by its scopes: 403 with a challenge naming them
   * (RFC 6750 §3.1 `insufficient_scope`).
   */
  private forbidden(request: MethodRequest, scopes: readonly string[]): Promise<void> {
    return this.answer(
      request,
      errorResponseJson(request.id, ErrorCode.InvalidRequest, "Insufficient scope", {
        requiredScopes: scopes,
      }),
      403,
      { "www-authenticate": this.challenge(scopes) },
    );
  }

  // Not async (nor are readResource, getPrompt, complete): the handler call's own promise is
  // handed back as is, so a running call holds no extra promise for this step; a throw here is
  // answered -32603 by run(), as a rejection would be.
  private callTool(request: MethodRequest): Promise<void> {
    const { params, modern } = request;
    const name = params?.name;
    const tool = typeof name === "string" ? this.tools.get(name) : undefined;
    const access = tool === undefined ? "hidden" : accessOf(tool, visibilityOf(request.meta));
    if (tool === undefined || access === "hidden") {
      // MCP 2025-11-25 tools, "Error Handling": an unknown tool is a protocol error.
      return this.answerError(
        request,
        ErrorCode.InvalidParams,
        `Unknown tool: ${reflectText(name)}`,
      );
    }
    if (access === "forbidden") return this.forbidden(request, tool.scopes);
    if (modern !== null && tool.requiredClientCapabilities !== null) {
      const missing = missingCapabilities(
        tool.requiredClientCapabilities,
        modern.clientCapabilities,
      );
      if (missing !== null) {
        return this.answerError(
          request,
          ErrorCode.MissingCapability,
          `Missing required client capability: ${Object.keys(missing).join(", ")}`,
          { requiredCapabilities: missing },
          400,
        );
      }
    }
    // The presented headers are picked out only here, for a tool that declares some.
    if (tool.paramHeaders.length > 0 && modern?.paramHeaders !== undefined) {
      // 2026-07-28 only: headers an intermediary may have routed on must agree with the body.
      const mismatch = checkParamHeaders(tool.paramHeaders, params?.arguments, modern.paramHeaders);
      if (mismatch !== null) {
        return this.answerError(request, ErrorCode.HeaderMismatch, mismatch, undefined, 400);
      }
    }
    if (params?.arguments !== undefined && !isPlainObject(params.arguments)) {
      // Not a CallToolRequest at all (its schema says an object): a protocol error.
      return this.answerError(request, ErrorCode.InvalidParams, "arguments must be an object");
    }
    const check = tool.checkArguments(params?.arguments);
    if (!check.ok) {
      // MCP 2025-11-25 tools: input validation errors are tool execution errors (`isError`), so
      // the model can read what is wrong and retry.
      const text = `Invalid arguments: ${check.issues
        .map((issue) => (issue.path === "" ? issue.message : `${issue.path}: ${issue.message}`))
        .join("; ")}`;
      return this.answerResult(request, { content: [{ type: "text", text }], isError: true });
    }
    const invocation = new ToolInvocation(tool, check.args);
    if (
      this.tasks !== null &&
      (tool.taskSupport !== "forbidden" || (modern === null && params?.task !== undefined))
    ) {
      return this.callAsTask(request, invocation, tool.taskSupport);
    }
    return this.startCall(request, invocation, progressTokenOf(params));
  }

  /**
   * A `tools/call` of a task-supporting tool, or a 2025-era one carrying `params.task`: a task
   * when the client asks for one (2025: `params.task`; 2026-07-28: the tasks extension declared),
   * else a plain call, or a refusal (task-service.ts). The task's run gets a progress token of
   * its own, so progress reaches the task's status message even when the client sent none.
   */
  private async callAsTask(
    request: MethodRequest,
    invocation: ToolInvocation,
    support: TaskSupport,
  ): Promise<void> {
    const tasks = this.tasks as TaskService;
    const { params } = request;
    const taskRequest = {
      id: request.id,
      params,
      scope: request.meta.scope,
      modern: request.modern?.clientCapabilities ?? null,
      declared: request.meta.clientCapabilities ?? null,
    };
    const decision = tasks.decide(taskRequest, support);
    if (decision.kind === "sync")
      return this.startCall(request, invocation, progressTokenOf(params));
    if (decision.kind === "refuse") return this.answerTask(request, decision.answer);
    if (request.modern !== null && invocation.tool.beforeTask !== null) {
      // Ask first, then become a task (before-task.ts): `beforeTask` runs as this request's
      // call, through input_required rounds; the task is created once it has returned.
      const phase = new BeforeTaskInvocation(invocation.tool, invocation.args, (prepared, call) =>
        this.createTask(
          request,
          { ...taskRequest, signal: call.signal },
          invocation.with(prepared),
        ),
      );
      return this.startCall(request, phase, progressTokenOf(params));
    }
    return this.answerTask(request, await this.createTask(request, taskRequest, invocation));
  }

  /** Creates the task of a `tools/call` and starts `invocation` as its detached run. */
  private createTask(
    request: MethodRequest,
    taskRequest: Omit<TaskRequest, "signal"> & { readonly signal?: AbortSignal },
    invocation: ToolInvocation,
  ): Promise<TaskAnswer> {
    return (this.tasks as TaskService).create(taskRequest, (sink, handle, asker) => {
      void this.startCall(request, invocation, progressTokenOf(request.params) ?? 0, {
        sink,
        handle,
        asker,
      });
    });
  }

  /** Answers what a task method resolved; null means the request's exchange already ended. */
  private answerTask(request: MethodRequest, answer: TaskAnswer | null): Promise<void> {
    if (answer === null) return this.answer(request, cancelledResponseJson(request.id));
    return this.answer(request, answer.json, answer.status, answer.headers);
  }

  /** The request as a task method sees it. */
  private taskRequest(request: MethodRequest): TaskRequest {
    return {
      id: request.id,
      params: request.params,
      scope: request.meta.scope,
      modern: request.modern?.clientCapabilities ?? null,
      signal: request.handle.signal,
      send: request.sink.streamable ? (json) => request.sink.notify(json) : null,
    };
  }

  /** The `tasks/*` methods (task-service.ts), when tasks are served. */
  private defineTaskMethods(tasks: TaskService): void {
    const serve = (run: (r: TaskRequest) => Promise<TaskAnswer | null>) => {
      return async (request: MethodRequest) =>
        this.answerTask(request, await run(this.taskRequest(request)));
    };
    this.defineMethod("tasks/get", { eras: "both", run: serve((r) => tasks.get(r)) });
    this.defineMethod("tasks/cancel", { eras: "both", run: serve((r) => tasks.cancel(r)) });
    // 2025-11-25 only: SEP-2663 removed tasks/result and tasks/list (-32601 in 2026-07-28).
    this.defineMethod("tasks/result", { eras: "2025", run: serve((r) => tasks.result(r)) });
    this.defineMethod("tasks/list", { eras: "2025", run: serve((r) => tasks.list(r)) });
    this.defineMethod("tasks/update", { eras: "2026", run: serve((r) => tasks.update(r)) });
  }

  private readResource(request: MethodRequest): Promise<void> {
    const uri = request.params?.uri;
    if (!isResourceUri(uri, this.maxUriLength)) {
      return this.answerError(
        request,
        ErrorCode.InvalidParams,
        `uri must be an absolute RFC 3986 URI of at most ${this.maxUriLength} characters`,
      );
    }
    const ctx = visibilityOf(request.meta);
    const resource = this.resources.get(uri);
    if (resource !== undefined) {
      const access = accessOf(resource, ctx);
      if (access === "forbidden") return this.forbidden(request, resource.scopes);
      if (access === "allowed") {
        return this.startCall(
          request,
          new ReadInvocation(this, resource, uri, null),
          progressTokenOf(request.params),
        );
      }
    }
    for (const template of this.resourceTemplates.values()) {
      const access = accessOf(template, ctx);
      if (access === "hidden") continue;
      const match = template.match(uri, this.maxTemplateValueLength);
      if (!match.ok) {
        if (!match.tooLong) continue;
        return this.answerError(
          request,
          ErrorCode.InvalidParams,
          `A template variable is longer than ${this.maxTemplateValueLength} characters`,
        );
      }
      if (access === "forbidden") return this.forbidden(request, template.scopes);
      return this.startCall(
        request,
        new ReadInvocation(this, template, uri, match.variables),
        progressTokenOf(request.params),
      );
    }
    // MCP 2026-07-28 resources, "Error Handling": -32602 with the URI; 2025-11-25: -32002.
    const code = request.modern === null ? ErrorCode.ResourceNotFound : ErrorCode.InvalidParams;
    return this.answerError(request, code, "Resource not found", { uri });
  }

  /** @internal The caching hints of a read's result. */
  readCaching(item: Resource | ResourceTemplate): { ttlMs: number; cacheScope: string } {
    const dependsOnCaller = item.visible !== null || item.scopes.length > 0;
    return {
      ttlMs: item.ttlMs ?? this.cacheTtlMs,
      cacheScope: dependsOnCaller ? "private" : item.cacheScope,
    };
  }

  private getPrompt(request: MethodRequest): Promise<void> {
    const { params } = request;
    const name = params?.name;
    const prompt = typeof name === "string" ? this.prompts.get(name) : undefined;
    const access = prompt === undefined ? "hidden" : accessOf(prompt, visibilityOf(request.meta));
    if (prompt === undefined || access === "hidden") {
      return this.answerError(
        request,
        ErrorCode.InvalidParams,
        `Unknown prompt: ${reflectText(name)}`,
      );
    }
    if (access === "forbidden") return this.forbidden(request, prompt.scopes);
    const check = prompt.checkArguments(params?.arguments ?? {});
    if (!check.ok) {
      return this.answerError(request, ErrorCode.InvalidParams, "Invalid prompt arguments", {
        errors: check.issues,
      });
    }
    return this.startCall(
      request,
      new PromptInvocation(prompt, check.args),
      progressTokenOf(params),
    );
  }

  private complete(request: MethodRequest): Promise<void> {
    const parsed = parseCompletionRequest(request.params);
    if (typeof parsed === "string")
      return this.answerError(request, ErrorCode.InvalidParams, parsed);
    const ctx = visibilityOf(request.meta);
    const { ref } = parsed;
    if (ref.type === "ref/prompt") {
      const prompt = this.prompts.get(ref.name);
      const access = prompt === undefined ? "hidden" : accessOf(prompt, ctx);
      if (prompt === undefined || access === "hidden") {
        return this.answerError(
          request,
          ErrorCode.InvalidParams,
          `Unknown prompt: ${reflectText(ref.name)}`,
        );
      }
      if (access === "forbidden") return this.forbidden(request, prompt.scopes);
      return this.startCall(request, new CompleteInvocation(parsed, ctx, prompt, null));
    }
    const template = this.resourceTemplates.get(ref.uri);
    const access = template === undefined ? "hidden" : accessOf(template, ctx);
    if (template === undefined || access === "hidden") {
      return this.answerError(
        request,
        ErrorCode.InvalidParams,
        `Unknown resource template: ${reflectText(ref.uri)}`,
      );
    }
    if (access === "forbidden") return this.forbidden(request, template.scopes);
    if (!template.variables.includes(parsed.argument.name)) {
      return this.answerError(
        request,
        ErrorCode.InvalidParams,
        `Unknown template variable: ${reflectText(parsed.argument.name)}`,
      );
    }
    return this.startCall(request, new CompleteInvocation(parsed, ctx, null, template));
  }

  private async initialize(request: MethodRequest): Promise<void> {
    const { params, meta, sink } = request;
    const version = params?.protocolVersion;
    if (typeof version !== "string") {
      return this.answerError(
        request,
        ErrorCode.InvalidParams,
        `protocolVersion must be a string, got: ${reflectText(version, 40)}`,
      );
    }
    if (!isSupportedProtocolVersion(version)) {
      const requested = reflectText(version, 40);
      return this.answerError(
        request,
        ErrorCode.InvalidRequest,
        `Unsupported protocol version: ${requested}. Supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`,
        { supported: SUPPORTED_PROTOCOL_VERSIONS, requested },
      );
    }
    if (this.sessions !== null && meta.sessionId === null) {
      let created: SessionCreation;
      try {
        created = await this.sessions.create(
          meta.principal?.id ?? null,
          version,
          meta.scope,
          askableCapabilities(params?.capabilities),
        );
      } catch {
        created = STORE_FULL;
      }
      if (created.id === null && created.refused === "scope-full") {
        // The creator's own quota, not the server's: 429, like the per-scope request bound.
        return this.answer(
          request,
          errorResponseJson(request.id, ErrorCode.ServerError, TOO_MANY_SESSIONS),
          429,
          SESSION_RETRY_AFTER,
        );
      }
      const sessionId = created.id;
      if (sessionId === null) {
        return this.answerError(
          request,
          ErrorCode.InternalError,
          "Session store unavailable; the server cannot accept new sessions right now.",
          undefined,
          503,
        );
      }
      sink.setSessionId(sessionId);
    }
    const result = `{"protocolVersion":${JSON.stringify(version)},${this.initializeTail}}`;
    return this.answer(request, successResponseJson(request.id, result));
  }

  private async setLogLevel(request: MethodRequest): Promise<void> {
    const level = request.params?.level;
    if (!isLoggingLevel(level)) {
      return this.answerError(
        request,
        ErrorCode.InvalidParams,
        `Invalid log level: ${reflectText(level, 40)}`,
      );
    }
    // Without sessions nothing is remembered between requests (stateless): accepted, no effect.
    const { sessionId } = request.meta;
    if (this.sessions !== null && sessionId !== null) {
      await this.sessions.setLogLevel(sessionId, level);
    }
    return this.answer(request, successResponseJson(request.id, EMPTY_RESULT));
  }
}

/**
 * How a 2026-07-28 request is tracked: tied to its exchange, and never reachable by a
 * `notifications/cancelled` (that era cancels by closing the stream).
 */
function modernTrackOptions(sink: ResponseSink): TrackOptions {
  return { lifetime: sink.lifetime, notifiable: false };
}

/** A call whose request the observers were offered (`requestStarted`) and none follows. */
function unfollowed(observer: DispatchObserver, call: HandlerCall): boolean {
  return call.request === null && observer.requestStarted !== undefined;
}

function visibilityOf(meta: RequestMeta): VisibilityContext {
  return { principal: meta.principal, scope: meta.scope };
}

function progressTokenOf(
  params: Readonly<Record<string, unknown>> | undefined,
): string | number | undefined {
  const meta = params?._meta;
  if (!isPlainObject(meta)) return undefined;
  const token = meta.progressToken;
  return typeof token === "string" || typeof token === "number" ? token : undefined;
}

function defaultChallenge(scopes: readonly string[]): string {
  return `Bearer error="insufficient_scope", scope="${scopes.join(" ")}"`;
}

function serverInfoOf(identity: ServerIdentity): Record<string, unknown> {
  const info: Record<string, unknown> = { name: identity.name, version: identity.version };
  if (identity.title !== undefined) info.title = identity.title;
  if (identity.description !== undefined) info.description = identity.description;
  if (identity.icons !== undefined) info.icons = identity.icons;
  if (identity.websiteUrl !== undefined) info.websiteUrl = identity.websiteUrl;
  return info;
}

/** A `tools/call`: the handler (or its isolated worker) with validated arguments. */
class ToolInvocation implements HandlerInvocation {
  readonly method = "tools/call";
  readonly kind = "tool";
  readonly name: string;
  /**
   * @param prepared - what the tool's `beforeTask` returned in its own phase (before-task.ts),
   *   boxed; null when it has not run (it then runs just before the handler).
   */
  constructor(
    readonly tool: Tool,
    readonly args: unknown,
    private readonly prepared: { readonly value: unknown } | null = null,
  ) {
    this.name = tool.name;
  }
  /** The same call, `beforeTask` done: the handler gets `value`. */
  with(value: unknown): ToolInvocation {
    return new ToolInvocation(this.tool, this.args, { value });
  }
  invoke(ctx: HandlerCall): unknown {
    const { tool } = this;
    if (tool.isolatedHandler !== null) return ctx.runIsolated(tool.isolatedHandler, this.args);
    if (tool.beforeTask === null) return tool.handler(this.args as never, ctx, undefined as never);
    if (this.prepared === null) return prepareThenRun(tool, this.args, ctx);
    return tool.handler(this.args as never, ctx, this.prepared.value as never);
  }
  toResult(value: unknown): HandlerResult {
    return this.tool.toResult(value);
  }
}

/** A `resources/read` of a direct resource (`variables` null) or of a template's match. */
class ReadInvocation implements HandlerInvocation {
  readonly method = "resources/read";
  readonly kind: "resource" | "resource-template";
  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly item: Resource | ResourceTemplate,
    readonly name: string,
    private readonly variables: Readonly<Record<string, string>> | null,
  ) {
    this.kind = variables === null ? "resource" : "resource-template";
  }
  invoke(ctx: HandlerCall): unknown {
    if (this.variables === null) return (this.item as Resource).read({ uri: this.name }, ctx);
    return (this.item as ResourceTemplate).read({ uri: this.name, variables: this.variables }, ctx);
  }
  toResult(value: unknown, modern: boolean): HandlerResult {
    const contents = toContents(value, { uri: this.name, mimeType: this.item.mimeType });
    if (contents === null) {
      return { ok: false, error: new TypeError("a resource read returned no valid contents") };
    }
    const result: Record<string, unknown> = { contents };
    if (modern) Object.assign(result, this.dispatcher.readCaching(this.item));
    return { ok: true, result };
  }
}

/** A `prompts/get`. */
class PromptInvocation implements HandlerInvocation {
  readonly method = "prompts/get";
  readonly kind = "prompt";
  readonly name: string;
  constructor(
    private readonly prompt: Prompt,
    private readonly args: Record<string, string>,
  ) {
    this.name = prompt.name;
  }
  invoke(ctx: HandlerCall): unknown {
    return this.prompt.get(this.args, ctx);
  }
  toResult(value: unknown): HandlerResult {
    const result = this.prompt.toResult(value);
    return result.ok
      ? { ok: true, result: result.result }
      : { ok: false, error: new TypeError(result.message) };
  }
}

/** A `completion/complete` for a prompt argument or a template variable. */
class CompleteInvocation implements HandlerInvocation {
  readonly method = "completion/complete";
  readonly kind = "completion";
  readonly name: string;
  constructor(
    private readonly request: CompletionRequest,
    private readonly ctx: VisibilityContext,
    private readonly prompt: Prompt | null,
    private readonly template: ResourceTemplate | null,
  ) {
    this.name = prompt !== null ? prompt.name : (template as ResourceTemplate).uriTemplate;
  }
  invoke(): unknown {
    const { argument, context } = this.request;
    if (this.prompt !== null) {
      return this.prompt.complete(argument.name, argument.value, context, this.ctx) ?? NO_VALUES;
    }
    const completer = (this.template as ResourceTemplate).completer(argument.name);
    return completer === null
      ? NO_VALUES
      : completer(argument.value, { arguments: context }, this.ctx);
  }
  toResult(value: unknown): HandlerResult {
    if (value === NO_VALUES) return { ok: true, result: NO_COMPLETIONS as Record<string, unknown> };
    const result = completionResult(value);
    return result === null
      ? { ok: false, error: new TypeError("a completer returned something other than strings") }
      : { ok: true, result };
  }
}

const NO_VALUES: readonly string[] = Object.freeze([]);

function isTool(value: unknown): value is Tool {
  return (
    isPlainObject(value) &&
    typeof value.name === "string" &&
    isPlainObject(value.descriptor) &&
    typeof value.checkArguments === "function" &&
    typeof value.toResult === "function" &&
    typeof value.handler === "function"
  );
}

function isResource(value: unknown): value is Resource {
  return (
    isPlainObject(value) &&
    typeof value.uri === "string" &&
    isPlainObject(value.descriptor) &&
    typeof value.read === "function"
  );
}

function isResourceTemplate(value: unknown): value is ResourceTemplate {
  return (
    isPlainObject(value) &&
    typeof value.uriTemplate === "string" &&
    isPlainObject(value.descriptor) &&
    typeof value.match === "function" &&
    typeof value.read === "function"
  );
}

function isPrompt(value: unknown): value is Prompt {
  return (
    isPlainObject(value) &&
    typeof value.name === "string" &&
    isPlainObject(value.descriptor) &&
    Array.isArray(value.scopes) &&
    typeof value.checkArguments === "function" &&
    typeof value.get === "function" &&
    typeof value.toResult === "function" &&
    typeof value.complete === "function"
  );
}

/**
 * The required capabilities a client did not declare, as a ClientCapabilities object (the shape
 * -32021's `data.requiredCapabilities` has), or null when every one is declared.
 */
function missingCapabilities(
  required: Readonly<Record<string, object>>,
  declared: Readonly<Record<string, unknown>>,
): Record<string, object> | null {
  let missing: Record<string, object> | null = null;
  for (const name of Object.keys(required)) {
    if (isPlainObject(declared[name])) continue;
    missing ??= {};
    missing[name] = required[name] as object;
  }
  return missing;
}
