/**
 * Method dispatch for both protocol eras. Every request is tracked in the cancellation registry
 * under the scope fixed before dispatch, runs, then is untracked and its row cleared. Methods live
 * in a table filled by the features served ({@link ProtocolFeature}: tools, resources, prompts,
 * completion, subscriptions, tasks, the lifecycle), each method saying which era serves it; the
 * dispatcher keeps the routing, the era rules and the error ladder. Answers go through a
 * {@link ResponseSink}, so the same dispatcher serves any transport.
 *
 * Wire rules: MCP 2025-11-25 (https://modelcontextprotocol.io/specification/2025-11-25) and
 * 2026-07-28 (https://modelcontextprotocol.io/specification/2026-07-28).
 */
import type { CancellationRegistry, TrackOptions } from "../cancellation/index.js";
import type { RequestHandle } from "../cancellation/types.js";
import { type CancellationSource, ErrorCode, RequestCancelledError } from "../errors.js";
import type { WorkerPool } from "../isolation/worker-pool.js";
import { reflectText } from "../reflect.js";
import {
  type AskerScope,
  type ClientAsker,
  type InputRequiredSettings,
  inputRequiredSettings,
  replyOf,
  ServerRequestAsker,
  type ServerRequestSettings,
  serverRequestSettings,
} from "./asking/index.js";
import {
  bucketOf,
  callAsking,
  type DetachedRun,
  type DispatchObserver,
  HANDLED,
  HandlerCall,
  type HandlerCallHost,
  type HandlerEnd,
  type HandlerInvocation,
  type MethodDefinition,
  type MethodHolds,
  type MethodHost,
  type MethodRequest,
  type ModernRequestInfo,
  type PrimitiveCollection,
  type Prompt,
  type ProtocolFeature,
  processCancelledNotification,
  type RequestInfo,
  type RequestMeta,
  RunningCalls,
  snapshotView,
} from "./calls/index.js";
import type { DispatcherOptions } from "./dispatcher-options.js";
import type { LifecycleFeature } from "./lifecycle.js";
import type { ResourceCollection, ResourceTemplate } from "./resources/index.js";
import { serverFeatures } from "./server-features.js";
import type { ResourceSubscriptions } from "./subscriptions/index.js";
import type { TaskService } from "./tasks/index.js";
import type { Tool } from "./tools/index.js";
import {
  errorResponseJson,
  internalErrorJson,
  isPlainObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type ResponseSink,
  successResponseJson,
} from "./wire/index.js";

export type {
  DispatchObserver,
  MethodDefinition,
  MethodRequest,
  ModernRequestInfo,
  RequestInfo,
  RequestMeta,
  RequestView,
  RequestViewSource,
} from "./calls/index.js";
export type { DispatcherOptions } from "./dispatcher-options.js";
export type { ServerIdentity, SessionCreation, SessionHooks } from "./lifecycle.js";

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
export class Dispatcher implements HandlerCallHost, MethodHost {
  readonly streamCancelTimeoutMs: number;
  readonly toolTimeoutMs: number | null;
  readonly cancelOnDisconnect: boolean;
  /** The served tools, changeable while serving. */
  readonly tools: PrimitiveCollection<Tool>;
  /** The served direct resources (keyed by URI). */
  readonly resources: ResourceCollection;
  /** The served resource templates (keyed by URI template). */
  readonly resourceTemplates: PrimitiveCollection<ResourceTemplate>;
  /** The served prompts. */
  readonly prompts: PrimitiveCollection<Prompt>;
  /** The tasks of this server, or null when they are not served. */
  readonly tasks: TaskService | null;
  /** 2025-era asks: the node's table of requests waiting for a client's answer, and bounds. */
  readonly serverRequests: ServerRequestSettings;
  /** HandlerCallHost: set by {@link abortAll} for a shutdown. */
  shuttingDown = false;
  private readonly registry: CancellationRegistry;
  private observer: DispatchObserver | null;
  private readonly methods = new Map<string, MethodDefinition>();
  /** Which feature defined each method of the table (two may not define one). */
  private readonly owners = new Map<string, string>();
  private readonly features: ProtocolFeature[] = [];
  private readonly lifecycle: LifecycleFeature;
  private readonly challenge: (scopes: readonly string[]) => string;
  private readonly pool: (() => WorkerPool) | null;
  private readonly asking: InputRequiredSettings;
  private readonly running = new RunningCalls();
  private readonly subscriptions: ResourceSubscriptions | null;

  constructor(options: DispatcherOptions) {
    this.registry = options.registry;
    this.streamCancelTimeoutMs = options.streamCancelTimeoutMs;
    this.toolTimeoutMs = options.toolTimeoutMs ?? null;
    this.cancelOnDisconnect = options.cancelOnDisconnect;
    this.observer = options.observer ?? null;
    this.pool = options.workerPool ?? null;
    this.asking = options.inputRequired ?? inputRequiredSettings();
    this.serverRequests = options.serverRequests ?? serverRequestSettings();
    this.challenge = options.insufficientScopeChallenge ?? defaultChallenge;
    this.subscriptions = options.subscriptions ?? null;
    const served = serverFeatures(options, {
      host: this,
      registry: this.registry,
      serverRequests: this.serverRequests,
    });
    this.tasks = served.tasks?.service ?? null;
    this.tools = served.tools.tools;
    this.resources = served.resources.resources;
    this.resourceTemplates = served.resources.resourceTemplates;
    this.prompts = served.prompts.prompts;
    this.lifecycle = served.lifecycle;
    for (const feature of served.all) this.register(feature);
  }

  /**
   * Serves a feature: its methods join the table, and its capabilities what `initialize` and
   * `server/discover` publish from now on. A method another feature already defines is refused.
   */
  register(feature: ProtocolFeature): void {
    if (this.features.some((served) => served.id === feature.id)) {
      throw new Error(`conduit-mcp: ${feature.id} is already served`);
    }
    for (const method of Object.keys(feature.methods)) {
      const owner = this.owners.get(method);
      if (owner !== undefined) {
        throw new Error(
          `conduit-mcp: ${feature.id} defines ${method}, already defined by ${owner}`,
        );
      }
    }
    for (const [method, definition] of Object.entries(feature.methods)) {
      this.owners.set(method, feature.id);
      this.methods.set(method, definition);
    }
    this.features.push(feature);
    this.lifecycle.serve(this.features);
  }

  /**
   * The extensions a 2025-era client's `initialize` may declare and have kept with its session or
   * connection (`askableCapabilities`' second argument).
   */
  get extensionIds(): ReadonlySet<string> {
    return this.lifecycle.extensionIds;
  }

  /**
   * What a running request of `method` holds besides its request unit (its definition's `holds`;
   * `"request"` for a method not served): a transport gives a `"stream"` method its stream unit
   * and SSE stream when the client accepts one.
   *
   * @example
   * ```ts
   * dispatcher.holds("tools/call"); // "stream"
   * dispatcher.holds("ping"); // "request"
   * ```
   */
  holds(method: string): MethodHolds {
    return this.methods.get(method)?.holds ?? "request";
  }

  /**
   * Adds (or replaces) one method outside any feature (it advertises no capability).
   *
   * @example
   * ```ts
   * dispatcher.defineMethod("example/hello", { eras: "2025", run: (r) => dispatcher.answer(r, successResponseJson(r.id, "{}")) });
   * ```
   */
  defineMethod(method: string, definition: MethodDefinition): void {
    this.methods.set(method, definition);
  }

  /**
   * Replaces the observer (the server adds tracing once its optional API has loaded); requests
   * already running keep reporting to the one they started with where they hold it.
   */
  setObserver(observer: DispatchObserver | null): void {
    this.observer = observer;
  }

  /** HandlerCallHost: whether an observer may read a call's start (its duration). */
  get observed(): boolean {
    return this.observer !== null;
  }

  /** Handler invocations currently running (not yet settled or abandoned). */
  get activeCalls(): number {
    return this.running.size;
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
      sink.respond(errorResponseJson(id, ErrorCode.InvalidParams, "params must be an object"));
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
    // Tied to its exchange, and never reachable by a `notifications/cancelled` (that era
    // cancels by closing the stream).
    return this.run(definition, message, meta, sink, info, {
      lifetime: sink.lifetime,
      notifiable: false,
    });
  }

  /** MethodHost: untrack, write, then clear the row (the answer is not delayed by the clear). */
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

  /** MethodHost. */
  answerResult(request: MethodRequest, result: Readonly<Record<string, unknown>>): Promise<void> {
    const body = request.modern === null ? result : { ...result, resultType: "complete" };
    return this.answer(request, successResponseJson(request.id, JSON.stringify(body)));
  }

  /** MethodHost. */
  answerError(
    request: MethodRequest,
    code: number,
    message: string,
    data?: unknown,
    status = 200,
  ): Promise<void> {
    return this.answer(request, errorResponseJson(request.id, code, message, data), status);
  }

  /** MethodHost. */
  forbidden(request: MethodRequest, scopes: readonly string[]): Promise<void> {
    return this.answer(
      request,
      errorResponseJson(request.id, ErrorCode.InvalidRequest, "Insufficient scope", {
        requiredScopes: scopes,
      }),
      403,
      { "www-authenticate": this.challenge(scopes) },
    );
  }

  /** MethodHost: the stream just ends; resolves once untracked, the row cleared behind. */
  async endUnanswered(request: MethodRequest): Promise<void> {
    const { handle } = request;
    request.sink.cancel("{}");
    const untracked = this.registry.untrack(handle);
    if (handle.requestId !== null) this.registry.clear(request.id, request.meta.scope).catch(noop);
    try {
      await untracked;
    } catch {
      // The janitor's sweep removes an entry a failing store kept.
    }
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
    // Its tasks too (docs/tasks.md): a disconnect does not end a task, closing its session
    // does. Marked first, so they read why; the registry then aborts their runs with the calls.
    this.tasks?.cancelSession(sessionId).catch(noop);
    void this.registry.cancelScope(`session:${sessionId}`, "session terminated", "disconnect");
    return this.running.cancelSession(sessionId);
  }

  /** Aborts every running handler of this dispatcher (shutdown); writes no rows. */
  abortAll(reason: RequestCancelledError = new RequestCancelledError("shutdown")): void {
    // Calls aborted for a shutdown answer "Server is shutting down", not "Request cancelled".
    if (reason.source === "shutdown") this.shuttingDown = true;
    this.running.abortAll(reason);
  }

  /** HandlerCallHost: a 2025-era call's asker, made on its first ask. */
  serverAsker(
    sink: ResponseSink,
    who: AskerScope,
    capabilities: Readonly<Record<string, unknown>> | null,
  ): ClientAsker {
    return new ServerRequestAsker(this.serverRequests, sink, who, capabilities);
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
    if (!this.running.delete(call)) return DONE;
    // Untracked at once; the row cleared at once too with the memory store (finish never
    // rejects: a store outage leaves what is left to the janitor's sweep). A call that answers
    // its own request clears its handle's key; a task's run (its handle is the task's) the
    // request's.
    const finished = call.detached
      ? this.registry.finish(call.handle, call.requestId, call.scope)
      : this.registry.finishTracked(call.handle);
    return finished ?? DONE;
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
    // An end that concerns no observer builds no info and reads no clock.
    if (observer.wantsEnd?.(end.outcome, call.requestInfo !== null) === false) return;
    try {
      // A call that started before any observer was set (tracing joins once loaded) read no
      // clock: its duration is unknown, reported as 0.
      const seconds = call.startedAt === 0 ? 0 : (performance.now() - call.startedAt) / 1000;
      if (call.invocation.method === "tools/call")
        observer.toolCall?.(call.invocation.name, end.outcome, seconds);
      observer.handlerEnded?.(call.info, end, seconds);
    } catch {
      // An observer's failure is its own.
    }
  }

  /**
   * MethodHost: starts a handler call for a tracked request; `detached` (a task's run) answers
   * into the task's sink under the task's handle instead, and asks through the task's asker.
   */
  startCall(
    request: MethodRequest,
    invocation: HandlerInvocation,
    progressToken?: string | number,
    detached?: DetachedRun,
  ): Promise<void> {
    const asking = callAsking({ request, invocation, settings: this.asking, detached });
    if (typeof asking === "string") {
      return this.answerError(request, ErrorCode.InvalidParams, asking);
    }
    const { meta } = request;
    const call = new HandlerCall({
      host: this,
      invocation,
      handle: detached?.handle ?? request.handle,
      sink: detached?.sink ?? request.sink,
      requestId: request.id,
      scope: meta.scope,
      bucket: bucketOf(meta) ?? undefined,
      principal: meta.principal,
      progressToken,
      logLevel: meta.logLevel,
      sessionId: meta.sessionId,
      modern: request.modern !== null,
      request: request.info,
      asker: asking.asker,
      serverAsks: asking.serverAsks,
      detached: detached !== undefined,
      view: detached === undefined ? meta.view : snapshotView(meta.view),
    });
    this.running.add(call);
    const running = call.run();
    if (detached === undefined) request.call = running;
    return running;
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
      const problem = definition.checkParams?.(params) ?? null;
      running =
        problem === null
          ? definition.run(request)
          : this.answerError(request, ErrorCode.InvalidParams, problem);
    } catch {
      return this.answer(request, internalErrorJson(id));
    }
    // The call's own promise never rejects: no fallback, and a waiting call does not keep its
    // request alive through one. (Marked on the request, not in a WeakSet: a weak collection's
    // write barrier and its sweep at every scavenge cost more than the field.)
    if (running === request.call) return running;
    return running.then(undefined, () => this.answer(request, internalErrorJson(id)));
  }
}

/** A call whose request the observers were offered (`requestStarted`) and none follows. */
function unfollowed(observer: DispatchObserver, call: HandlerCall): boolean {
  return call.requestInfo === null && observer.requestStarted !== undefined;
}

function defaultChallenge(scopes: readonly string[]): string {
  return `Bearer error="insufficient_scope", scope="${scopes.join(" ")}"`;
}
