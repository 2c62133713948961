/**
 * Method dispatch for the 2025 era (conduit-behavior.md §2.2): every request method is tracked
 * under the scope fixed before dispatch, runs, then is untracked and its row cleared. Answers go
 * through a {@link ResponseSink}, so the same dispatcher serves any transport.
 */
import type { CancellationRegistry } from "../cancellation/index.js";
import type { RequestHandle, RequestId } from "../cancellation/types.js";
import { type CancellationSource, ErrorCode, RequestCancelledError } from "../errors.js";
import type { Principal } from "../identity/index.js";
import { resolvePoolOptions, type WorkerPoolOptions } from "../isolation/pool-options.js";
import { WorkerPool } from "../isolation/worker-pool.js";
import { reflectText } from "../reflect.js";
import { processCancelledNotification } from "./cancelled-notification.js";
import type { Tool } from "./define-tool.js";
import {
  errorResponseJson,
  internalErrorJson,
  isPlainObject,
  type JsonRpcNotification,
  type JsonRpcRequest,
  successResponseJson,
} from "./json-rpc.js";
import { isLoggingLevel, type LoggingLevel } from "./logging.js";
import { META_SERVER_INFO, type PresentedParamHeaders } from "./modern-envelope.js";
import { checkParamHeaders } from "./param-headers.js";
import type { ResponseSink } from "./response-sink.js";
import { ToolCall, type ToolCallHost, type ToolOutcome } from "./tool-call.js";
import {
  ALL_PROTOCOL_VERSIONS,
  isSupportedProtocolVersion,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "./versions.js";

/** Who sent a request: fixed once by the transport, before dispatch. */
export interface RequestMeta {
  /** `session:…` > `principal:…` > `ip:…` (identity/scopeOf). */
  readonly scope: string;
  readonly principal: Principal | null;
  /** The validated session id, or null. */
  readonly sessionId: string | null;
  /** The session's `logging/setLevel` threshold, or null (send every level). */
  readonly logLevel: LoggingLevel | null;
}

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
  ): Promise<SessionCreation>;
  setLogLevel(sessionId: string, level: LoggingLevel): Promise<void>;
}

/** Receives the outcome of every tool call (metrics). */
export interface DispatchObserver {
  toolCall(tool: string, outcome: ToolOutcome): void;
}

/** What {@link Dispatcher} takes. */
export interface DispatcherOptions {
  readonly name: string;
  readonly version: string;
  readonly tools: readonly Tool[];
  readonly registry: CancellationRegistry;
  readonly streamCancelTimeoutMs: number;
  readonly cancelOnDisconnect: boolean;
  readonly observer?: DispatchObserver | null;
  readonly sessions?: SessionHooks | null;
  /** Options of the worker pool that isolated tools run in (created on the first isolated call). */
  readonly workerPool?: WorkerPoolOptions;
  /** `ttlMs` of the cacheable modern results (`server/discover`, `tools/list`). Default 60 000. */
  readonly cacheTtlMs?: number;
  /** `instructions` of `server/discover`, when given. */
  readonly instructions?: string;
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

/** Methods of the 2025 era this server answers; anything else is -32601. */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "logging/setLevel",
]);

const EMPTY_RESULT = "{}";
const STORE_FULL: SessionCreation = { id: null, refused: "full" };
const TOO_MANY_SESSIONS =
  "Too many sessions for this client; end one (DELETE) or let one expire, then retry.";
/** A session quota frees when one of the creator's sessions ends or idles out: not within 1 s. */
const SESSION_RETRY_AFTER: Readonly<Record<string, string>> = { "retry-after": "60" };
const PARAMS_NOT_OBJECT = "params must be an object";
const noop = (): void => {};

/**
 * Dispatches 2025-era requests and notifications.
 *
 * @example
 * ```ts
 * const dispatcher = new Dispatcher({ name: "demo", version: "1.0.0", tools: [echo], registry,
 *   streamCancelTimeoutMs: 5000, cancelOnDisconnect: true });
 * await dispatcher.handleRequest(message, meta, sink);
 * ```
 */
export class Dispatcher implements ToolCallHost {
  readonly streamCancelTimeoutMs: number;
  readonly cancelOnDisconnect: boolean;
  private readonly registry: CancellationRegistry;
  private readonly tools: ReadonlyMap<string, Tool>;
  private readonly observer: DispatchObserver | null;
  private readonly sessions: SessionHooks | null;
  /** `tools/list` never changes: its result is serialised once. */
  private readonly toolsListJson: string;
  /** The constant tail of every initialize result. */
  private readonly initializeTail: string;
  private readonly active = new Set<ToolCall>();
  private readonly bySession = new Map<string, Set<ToolCall>>();
  /** Modern results, serialised once: they never change while the server runs. */
  private readonly discoverJson: string;
  private readonly modernToolsListJson: string;
  private readonly poolOptions: WorkerPoolOptions;
  private pool: WorkerPool | null = null;
  private poolClosed = false;

  constructor(options: DispatcherOptions) {
    this.registry = options.registry;
    this.streamCancelTimeoutMs = options.streamCancelTimeoutMs;
    this.cancelOnDisconnect = options.cancelOnDisconnect;
    this.observer = options.observer ?? null;
    this.sessions = options.sessions ?? null;
    const tools = new Map<string, Tool>();
    for (const tool of options.tools) tools.set(tool.name, tool);
    this.tools = tools;
    this.toolsListJson = JSON.stringify({ tools: options.tools.map((tool) => tool.descriptor) });
    this.initializeTail = `"capabilities":${JSON.stringify({
      tools: { listChanged: false },
      logging: {},
    })},"serverInfo":${JSON.stringify({ name: options.name, version: options.version })}`;
    // Checked now so that a bad pool option fails at start-up, not at the first isolated call.
    this.poolOptions = options.workerPool ?? {};
    resolvePoolOptions(this.poolOptions);
    // Caching hints (SEP-2549): the tool list is the same for every client → "public".
    const ttlMs = options.cacheTtlMs ?? 60_000;
    const discover: Record<string, unknown> = {
      resultType: "complete",
      supportedVersions: ALL_PROTOCOL_VERSIONS,
      capabilities: { tools: {}, logging: {} },
      _meta: { [META_SERVER_INFO]: { name: options.name, version: options.version } },
      ttlMs,
      cacheScope: "public",
    };
    if (options.instructions !== undefined) discover.instructions = options.instructions;
    this.discoverJson = JSON.stringify(discover);
    this.modernToolsListJson = JSON.stringify({
      resultType: "complete",
      tools: options.tools.map((tool) => tool.descriptor),
      ttlMs,
      cacheScope: "public",
    });
  }

  /** Tool calls currently running (not yet settled or abandoned). */
  get activeCalls(): number {
    return this.active.size;
  }

  /**
   * Handles one request; the answer (or the ending of a cancelled exchange) goes to `sink`.
   * Never rejects.
   */
  async handleRequest(
    message: JsonRpcRequest,
    meta: RequestMeta,
    sink: ResponseSink,
  ): Promise<void> {
    const { method, id } = message;
    if (!KNOWN_METHODS.has(method)) {
      sink.respond(
        errorResponseJson(id, ErrorCode.MethodNotFound, `Method not found: ${reflectText(method)}`),
      );
      return;
    }
    if ("params" in message && !isPlainObject(message.params)) {
      sink.respond(errorResponseJson(id, ErrorCode.InvalidParams, PARAMS_NOT_OBJECT));
      return;
    }
    let handle: RequestHandle;
    try {
      handle = await this.registry.track(
        id,
        meta.scope,
        method === "tools/call" ? { lifetime: sink.lifetime } : undefined,
      );
    } catch {
      sink.respond(internalErrorJson(id));
      return;
    }
    const params = message.params as Record<string, unknown> | undefined;
    try {
      switch (method) {
        case "tools/call":
          return await this.callTool(params, id, meta, sink, handle);
        case "ping":
          return await this.finish(
            handle,
            id,
            meta.scope,
            sink,
            successResponseJson(id, EMPTY_RESULT),
          );
        case "tools/list":
          return await this.finish(
            handle,
            id,
            meta.scope,
            sink,
            successResponseJson(id, this.toolsListJson),
          );
        case "initialize":
          return await this.initialize(params, id, meta, sink, handle);
        default:
          return await this.setLogLevel(params, id, meta, sink, handle);
      }
    } catch {
      await this.finish(handle, id, meta.scope, sink, internalErrorJson(id));
    }
  }

  /**
   * Handles one 2026-07-28 request whose envelope and headers already passed the ladder
   * (modern-envelope.ts): `server/discover`, `tools/list`, `tools/call`; anything else — `ping`
   * and `initialize` included, which the modern era removed — is 404 / -32601 (B.3). Never
   * rejects.
   */
  async handleModernRequest(
    message: JsonRpcRequest,
    meta: RequestMeta,
    sink: ResponseSink,
    info: ModernRequestInfo,
  ): Promise<void> {
    const { method, id } = message;
    // Constant answers are not tracked: nothing can cancel them (a modern client cancels by
    // closing its stream, and these are written at once).
    if (method === "server/discover")
      return sink.respond(successResponseJson(id, this.discoverJson));
    if (method === "tools/list") {
      return sink.respond(successResponseJson(id, this.modernToolsListJson));
    }
    if (method !== "tools/call") {
      return sink.respond(
        errorResponseJson(id, ErrorCode.MethodNotFound, `Method not found: ${reflectText(method)}`),
        404,
      );
    }
    let handle: RequestHandle;
    try {
      handle = await this.registry.track(id, meta.scope, {
        lifetime: sink.lifetime,
        notifiable: false,
      });
    } catch {
      sink.respond(internalErrorJson(id));
      return;
    }
    try {
      await this.callTool(
        message.params as Record<string, unknown>,
        id,
        meta,
        sink,
        handle,
        info.clientCapabilities,
        info.paramHeaders ?? null,
      );
    } catch {
      await this.finish(handle, id, meta.scope, sink, internalErrorJson(id));
    }
  }

  /** @internal ToolCallHost: the pool isolated tools run in, created on first use. */
  workerPool(): WorkerPool {
    if (this.pool === null) {
      this.pool = new WorkerPool(this.poolOptions);
      // A pool asked for after close() is closed at once: its tasks are refused, not leaked.
      if (this.poolClosed) void this.pool.close();
    }
    return this.pool;
  }

  /** Terminates the worker pool's threads (server shutdown); idempotent. */
  async closeWorkerPool(): Promise<void> {
    this.poolClosed = true;
    await this.pool?.close();
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
   * Cancels every tool call of a session (its `DELETE`); resolves how many were running.
   *
   * @example
   * ```ts
   * dispatcher.cancelSession("3q2+7w");
   * ```
   */
  cancelSession(sessionId: string): number {
    const calls = this.bySession.get(sessionId);
    if (calls === undefined) return 0;
    for (const call of [...calls]) call.cancelWith("disconnect", "session terminated");
    return calls.size;
  }

  /** Aborts every running call of this dispatcher (shutdown); writes no rows. */
  abortAll(reason: RequestCancelledError = new RequestCancelledError("shutdown")): void {
    for (const call of [...this.active]) call.handle.abort(reason);
  }

  /** @internal ToolCallHost: cancels one call's handle; resolves whether a row was written. */
  async cancelHandle(
    handle: RequestHandle,
    reason: string,
    source: CancellationSource,
  ): Promise<boolean> {
    const result = await this.registry.cancelHandle(handle, reason, source);
    return result.ok;
  }

  /** @internal ToolCallHost: forgets the call, then untracks and clears (never rejects). */
  async release(call: ToolCall): Promise<void> {
    if (!this.active.delete(call)) return;
    if (call.sessionId !== null) {
      const calls = this.bySession.get(call.sessionId);
      if (calls !== undefined) {
        calls.delete(call);
        if (calls.size === 0) this.bySession.delete(call.sessionId);
      }
    }
    try {
      await this.registry.untrack(call.handle);
      if (call.handle.requestId !== null) await this.registry.clear(call.requestId, call.scope);
    } catch {
      // A store outage must not escape; the janitor's sweep removes what is left.
    }
  }

  /** @internal ToolCallHost. */
  outcome(tool: string, outcome: ToolOutcome): void {
    this.observer?.toolCall(tool, outcome);
  }

  private async callTool(
    params: Record<string, unknown> | undefined,
    id: RequestId | null,
    meta: RequestMeta,
    sink: ResponseSink,
    handle: RequestHandle,
    clientCapabilities: Readonly<Record<string, unknown>> | null = null,
    paramHeaders: PresentedParamHeaders | null = null,
  ): Promise<void> {
    const name = params?.name;
    const tool = typeof name === "string" ? this.tools.get(name) : undefined;
    if (tool === undefined) {
      const json = errorResponseJson(
        id,
        ErrorCode.InvalidParams,
        `Unknown tool: ${reflectText(name)}`,
      );
      return this.finish(handle, id, meta.scope, sink, json);
    }
    if (clientCapabilities !== null && tool.requiredClientCapabilities !== null) {
      const missing = missingCapabilities(tool.requiredClientCapabilities, clientCapabilities);
      if (missing !== null) {
        const json = errorResponseJson(
          id,
          ErrorCode.MissingCapability,
          `Missing required client capability: ${Object.keys(missing).join(", ")}`,
          { requiredCapabilities: missing },
        );
        return this.finish(handle, id, meta.scope, sink, json, 400);
      }
    }
    if (paramHeaders !== null && tool.paramHeaders.length > 0) {
      // 2026-07-28 only: headers an intermediary may have routed on must agree with the body.
      const mismatch = checkParamHeaders(tool.paramHeaders, params?.arguments, paramHeaders);
      if (mismatch !== null) {
        const json = errorResponseJson(id, ErrorCode.HeaderMismatch, mismatch);
        return this.finish(handle, id, meta.scope, sink, json, 400);
      }
    }
    const check = tool.checkArguments(params?.arguments);
    if (!check.ok) {
      const json = errorResponseJson(id, ErrorCode.InvalidParams, "Parameter validation failed", {
        errors: check.issues,
      });
      return this.finish(handle, id, meta.scope, sink, json);
    }
    const requestMeta = params?._meta;
    let progressToken: string | number | undefined;
    if (isPlainObject(requestMeta)) {
      const token = requestMeta.progressToken;
      if (typeof token === "string" || typeof token === "number") progressToken = token;
    }
    const call = new ToolCall(
      this,
      tool,
      handle,
      sink,
      id,
      meta.scope,
      meta.principal,
      progressToken,
      meta.logLevel,
      meta.sessionId,
      clientCapabilities !== null,
    );
    this.active.add(call);
    if (meta.sessionId !== null) {
      let calls = this.bySession.get(meta.sessionId);
      if (calls === undefined) {
        calls = new Set();
        this.bySession.set(meta.sessionId, calls);
      }
      calls.add(call);
    }
    await call.run(check.args);
  }

  private async initialize(
    params: Record<string, unknown> | undefined,
    id: RequestId | null,
    meta: RequestMeta,
    sink: ResponseSink,
    handle: RequestHandle,
  ): Promise<void> {
    const version = params?.protocolVersion;
    if (typeof version !== "string") {
      const json = errorResponseJson(
        id,
        ErrorCode.InvalidParams,
        `protocolVersion must be a string, got: ${reflectText(version, 40)}`,
      );
      return this.finish(handle, id, meta.scope, sink, json);
    }
    if (!isSupportedProtocolVersion(version)) {
      const requested = reflectText(version, 40);
      const json = errorResponseJson(
        id,
        ErrorCode.InvalidRequest,
        `Unsupported protocol version: ${requested}. Supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`,
        { supported: SUPPORTED_PROTOCOL_VERSIONS, requested },
      );
      return this.finish(handle, id, meta.scope, sink, json);
    }
    if (this.sessions !== null && meta.sessionId === null) {
      let created: SessionCreation;
      try {
        created = await this.sessions.create(meta.principal?.id ?? null, version, meta.scope);
      } catch {
        created = STORE_FULL;
      }
      if (created.id === null && created.refused === "scope-full") {
        // The creator's own quota, not the server's: 429, like the per-scope request bound.
        const json = errorResponseJson(id, ErrorCode.ServerError, TOO_MANY_SESSIONS);
        return this.finish(handle, id, meta.scope, sink, json, 429, SESSION_RETRY_AFTER);
      }
      const sessionId = created.id;
      if (sessionId === null) {
        const json = errorResponseJson(
          id,
          ErrorCode.InternalError,
          "Session store unavailable; the server cannot accept new sessions right now.",
        );
        return this.finish(handle, id, meta.scope, sink, json, 503);
      }
      sink.setSessionId(sessionId);
    }
    const result = `{"protocolVersion":${JSON.stringify(version)},${this.initializeTail}}`;
    return this.finish(handle, id, meta.scope, sink, successResponseJson(id, result));
  }

  private async setLogLevel(
    params: Record<string, unknown> | undefined,
    id: RequestId | null,
    meta: RequestMeta,
    sink: ResponseSink,
    handle: RequestHandle,
  ): Promise<void> {
    const level = params?.level;
    if (!isLoggingLevel(level)) {
      const json = errorResponseJson(
        id,
        ErrorCode.InvalidParams,
        `Invalid log level: ${reflectText(level, 40)}`,
      );
      return this.finish(handle, id, meta.scope, sink, json);
    }
    // Without sessions nothing is remembered between requests (stateless): accepted, no effect.
    if (this.sessions !== null && meta.sessionId !== null) {
      await this.sessions.setLogLevel(meta.sessionId, level);
    }
    return this.finish(handle, id, meta.scope, sink, successResponseJson(id, EMPTY_RESULT));
  }

  /** Untrack, answer, then clear the row (the seed's `finally` order; the answer is not delayed by the clear). */
  private async finish(
    handle: RequestHandle,
    id: RequestId | null,
    scope: string,
    sink: ResponseSink,
    json: string,
    status = 200,
    headers?: Readonly<Record<string, string>>,
  ): Promise<void> {
    try {
      await this.registry.untrack(handle);
    } catch {
      // The janitor's sweep removes an entry a failing store kept.
    }
    sink.respond(json, status, headers);
    if (handle.requestId !== null) this.registry.clear(id, scope).catch(noop);
  }
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
