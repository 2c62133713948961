/**
 * The node:http request listener: routing (`/mcp`, `/health`, `/metrics`), Host/Origin checks,
 * auth, negotiation, the bounded body, classification, sessions, the scope, then the dispatcher
 * (DESIGN.md, "A request's way"). Everything from the network is hostile: the listener never
 * throws, never reflects a header, never leaks internals.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";

import type { CancellationRegistry } from "../cancellation/index.js";
import { ErrorCode } from "../errors.js";
import {
  clientAddress,
  type Principal,
  principalId,
  scopeOf,
  TRUST_NONE,
  type TrustProxy,
} from "../identity/index.js";
import {
  type ClassifiedMessage,
  checkModernRequest,
  classifyEra,
  classifyMessage,
  type Dispatcher,
  errorResponseJson,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type LoggingLevel,
  looksModernVersion,
  missingEnvelopeJson,
  modernClaim,
} from "../protocol/index.js";
import { isWellFormedSessionId, type SessionStore } from "../sessions/index.js";
import type { Authenticator } from "./authenticate.js";
import { type ExchangeLimits, HttpExchange } from "./exchange.js";
import { methodLabel, type ServerMetrics } from "./metrics.js";
import { ACCEPTS_JSON, ACCEPTS_SSE, acceptedMediaTypes, isJsonContentType } from "./negotiation.js";
import type { OriginPolicy } from "./origin-policy.js";
import { BODY_TIMEOUT, BODY_TOO_LARGE, declaredTooLarge, readBody } from "./read-body.js";
import { ACQUIRED, type LimitOutcome, SCOPE_LIMIT } from "./scope-limiter.js";
import { failResponse, writeEmpty, writeJson } from "./write-response.js";

/** Everything the listener needs, resolved once by the server. */
export interface EndpointConfig {
  readonly path: string;
  readonly dispatcher: Dispatcher;
  readonly registry: CancellationRegistry;
  readonly sessions: { readonly store: SessionStore; readonly required: boolean } | null;
  readonly authenticate: Authenticator | null;
  readonly trustProxy: TrustProxy;
  readonly originPolicy: OriginPolicy;
  readonly maxBodyBytes: number;
  /** Total time a body may take to arrive once reading began; 408 beyond. 0 = no limit. */
  readonly bodyTimeoutMs: number;
  /** Per-scope (and global) counters of running requests and of request-scoped SSE streams. */
  readonly limits: ExchangeLimits;
  readonly keepAliveMs: number;
  readonly metrics: ServerMetrics | null;
  /** True once close() began: new requests get 503. */
  readonly closing: () => boolean;
}

const HEALTH_JSON = '{"status":"ok"}';
const SESSION_NOT_FOUND = errorResponseJson(
  null,
  ErrorCode.InvalidRequest,
  "Session not found. Send an initialize request to create a new session.",
);
const SESSION_REQUIRED = errorResponseJson(
  null,
  ErrorCode.InvalidRequest,
  "Mcp-Session-Id header required. Send an initialize request to obtain one.",
);
const UNAUTHORIZED = errorResponseJson(null, ErrorCode.ServerError, "Unauthorized");
const FORBIDDEN = errorResponseJson(
  null,
  ErrorCode.ServerError,
  "Forbidden: Host or Origin not allowed",
);
const TOO_LARGE = errorResponseJson(null, ErrorCode.InvalidRequest, "Request body too large");
const BODY_TIMED_OUT = errorResponseJson(null, ErrorCode.InvalidRequest, "Request body timeout");
const TOO_MANY = "Too many concurrent requests";
const BAD_CONTENT_TYPE = errorResponseJson(
  null,
  ErrorCode.InvalidRequest,
  "Unsupported Media Type: Content-Type must be application/json",
);
const NOT_ACCEPTABLE = errorResponseJson(
  null,
  ErrorCode.InvalidRequest,
  "Not Acceptable: the client must accept application/json or text/event-stream",
);
const PARSE_ERROR = errorResponseJson(null, ErrorCode.ParseError, "Parse error");
const METHOD_NOT_ALLOWED = errorResponseJson(null, ErrorCode.ServerError, "Method not allowed.");
const SHUTTING_DOWN = errorResponseJson(null, ErrorCode.InternalError, "Server is shutting down");
const INVALID_REQUEST = "Invalid JSON-RPC 2.0 request";

/** Where a connection keeps its anonymous scope (see `anonymousScope`). */
const IP_SCOPE = Symbol("conduit-mcp.ipScope");
type ScopedSocket = Socket & { [IP_SCOPE]?: string };

/**
 * Builds the request listener.
 *
 * @example
 * ```ts
 * const listener = createRequestListener(config);
 * http.createServer(listener).listen(3000);
 * ```
 */
export function createRequestListener(
  config: EndpointConfig,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { path, dispatcher, sessions, authenticate, metrics, originPolicy, limits } = config;
  const recorder = metrics === null ? null : metrics.recordRequest;
  const allowHeader = sessions === null ? "POST" : "POST, DELETE";

  /** A whole answer, counted in the metrics. */
  function reply(res: ServerResponse, status: number, json: string, method: string | null): void {
    recorder?.(methodLabel(method), status);
    writeJson(res, status, json);
  }

  /**
   * The `ip:` scope of a request without session or principal. It depends only on the socket
   * unless a trusted proxy's X-Forwarded-For is read, so it is computed once per connection and
   * kept on the socket: keep-alive clients pay for address parsing once, not per request.
   */
  function anonymousScope(req: IncomingMessage): string {
    const forwarded = req.headers["x-forwarded-for"];
    const perSocket = forwarded === undefined || config.trustProxy === TRUST_NONE;
    if (perSocket) {
      const cached = (req.socket as ScopedSocket)[IP_SCOPE];
      if (cached !== undefined) return cached;
    }
    const address = clientAddress(req.socket.remoteAddress, forwarded, config.trustProxy) ?? null;
    const scope = scopeOf({ sessionId: null, principal: null, address });
    if (perSocket) (req.socket as ScopedSocket)[IP_SCOPE] = scope;
    return scope;
  }

  async function authenticated(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<Principal | null | false> {
    if (authenticate === null) return null;
    const principal = await authenticate(req);
    if (principal !== null) return principal;
    res.setHeader("www-authenticate", "Bearer");
    reply(res, 401, UNAUTHORIZED, null);
    return false;
  }

  async function post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (config.closing()) {
      res.setHeader("connection", "close");
      return reply(res, 503, SHUTTING_DOWN, null);
    }
    const principal = await authenticated(req, res);
    if (principal === false) return;
    const headers = req.headers;
    if (!isJsonContentType(headers["content-type"])) return reply(res, 415, BAD_CONTENT_TYPE, null);
    const accepts = acceptedMediaTypes(headers.accept);
    if (accepts === 0) return reply(res, 406, NOT_ACCEPTABLE, null);
    if (declaredTooLarge(headers["content-length"], config.maxBodyBytes)) {
      // Refused before reading: the connection is closed rather than drained.
      res.setHeader("connection", "close");
      return reply(res, 413, TOO_LARGE, null);
    }
    let body: Buffer | typeof BODY_TOO_LARGE | typeof BODY_TIMEOUT;
    try {
      body = await readBody(req, config.maxBodyBytes, config.bodyTimeoutMs);
    } catch {
      return; // the client went away mid-body: nobody to answer
    }
    if (body === BODY_TOO_LARGE) {
      // The rest of the body is never read: the connection closes after the answer.
      res.setHeader("connection", "close");
      return reply(res, 413, TOO_LARGE, null);
    }
    if (body === BODY_TIMEOUT) {
      // A client trickling its body is cut off (issue 6): 408, then the connection closes.
      res.setHeader("connection", "close");
      return reply(res, 408, BODY_TIMED_OUT, null);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      return reply(res, 400, PARSE_ERROR, null);
    }
    const classified = classifyMessage(parsed);
    if (classified.kind === "invalid") {
      return reply(
        res,
        400,
        errorResponseJson(classified.id, ErrorCode.InvalidRequest, INVALID_REQUEST),
        null,
      );
    }
    if (classified.kind === "response") {
      // conduit-mcp sends no requests to clients: a response is accepted and ignored.
      recorder?.("none", 202);
      return writeEmpty(res, 202);
    }
    const method = classified.message.method;
    // Era, decided once, body first (mcp-protocol.md B.8): a `_meta` protocolVersion claim makes
    // the request modern, whatever else it carries (an `Mcp-Session-Id` is ignored, B.3).
    if (modernClaim(classified.message.params) !== undefined) {
      return modern(
        req,
        res,
        classified.message,
        classified.kind === "request",
        principal,
        accepts,
      );
    }
    const headerVersion = single(headers["mcp-protocol-version"]);
    const era = classifyEra(headerVersion);
    if (era.era === "rejected") {
      // A modern version in the header but no claim in the body: a modern message missing its
      // envelope (C.4), not a 2025 one. Checked only here, so the 2025 path pays nothing for it.
      if (headerVersion !== undefined && looksModernVersion(headerVersion)) {
        if (classified.kind === "notification") return accepted(res, method);
        return reply(res, 400, missingEnvelopeJson(classified.message.id), method);
      }
      return reply(res, era.status, era.json, method);
    }

    // Sessions (2025 era): a presented id must exist and belong to this principal.
    let sessionId: string | null = null;
    let logLevel: LoggingLevel | null = null;
    if (sessions !== null) {
      const presented = single(headers["mcp-session-id"]);
      if (presented !== undefined) {
        const session = isWellFormedSessionId(presented)
          ? await sessions.store.get(presented)
          : undefined;
        if (session === undefined || session.principalId !== principalId(principal)) {
          return reply(res, 404, SESSION_NOT_FOUND, method);
        }
        sessionId = presented;
        logLevel = session.logLevel as LoggingLevel | null;
      } else if (sessions.required && !isInitialize(classified)) {
        return reply(res, 400, SESSION_REQUIRED, method);
      }
    }

    // The scope, fixed once before dispatch: session > principal > client IP bucket.
    const scope =
      sessionId === null && principalId(principal) === null
        ? anonymousScope(req)
        : scopeOf({ sessionId, principal, address: null });

    if (classified.kind === "notification") {
      // Notifications are never refused by the concurrency bounds: a cancel is how a client at
      // its bound (or a server at the global one) frees units. Each is answered at once, and a
      // cancel flood is bounded by the registry's per-scope row cap (conduit-behavior.md §1.5).
      const error = await dispatcher.handleNotification(classified.message, scope);
      if (error === null) {
        recorder?.(methodLabel(method), 202);
        return writeEmpty(res, 202);
      }
      // conduit-behavior.md 8.3 #59: a refused notification is answered 200 with the error.
      return reply(res, 200, error, method);
    }

    const request = classified.message;
    const exchange = admit(res, scope, request, accepts);
    if (exchange === null) return;
    try {
      await dispatcher.handleRequest(request, { scope, principal, sessionId, logLevel }, exchange);
    } finally {
      exchange.released();
    }
  }

  /**
   * Admission under the scope's bounds (issue 6, "Abuse"): one request unit of the scope, and
   * for a `tools/call` whose client accepts SSE one stream unit too. Without a stream unit the
   * call still runs when the client accepts JSON — answered with one JSON body, its
   * notifications dropped — and is refused when it accepts only SSE. Refusals are at once:
   * 429 (the scope's bound) or 503 (the global bound), `Retry-After: 1`, -32000 with the id.
   */
  function admit(
    res: ServerResponse,
    scope: string,
    request: JsonRpcRequest,
    accepts: number,
  ): HttpExchange | null {
    const admitted = limits.requests.tryAcquire(scope);
    if (admitted !== ACQUIRED) {
      refuse(res, admitted, request.id, request.method);
      return null;
    }
    let sse = (accepts & ACCEPTS_SSE) !== 0;
    let stream = false;
    if (sse && request.method === "tools/call") {
      stream = limits.streams.tryAcquire(scope) === ACQUIRED;
      if (!stream) {
        if ((accepts & ACCEPTS_JSON) === 0) {
          limits.requests.release(scope);
          refuse(res, SCOPE_LIMIT, request.id, request.method);
          return null;
        }
        sse = false;
      }
    }
    const exchange = new HttpExchange(
      res,
      (accepts & ACCEPTS_JSON) !== 0,
      sse,
      config.keepAliveMs,
      recorder === null ? null : recorder,
      methodLabel(request.method),
    );
    exchange.hold(limits, scope, stream);
    return exchange;
  }

  /** 429 (scope bound) or 503 (global bound), with `Retry-After` and the request's id. */
  function refuse(
    res: ServerResponse,
    outcome: LimitOutcome,
    id: JsonRpcRequest["id"] | null,
    method: string,
  ): void {
    res.setHeader("retry-after", "1");
    reply(
      res,
      outcome === SCOPE_LIMIT ? 429 : 503,
      errorResponseJson(id, ErrorCode.ServerError, TOO_MANY),
      method,
    );
  }

  /** 202 with no body: an accepted (or deliberately dropped) notification. */
  function accepted(res: ServerResponse, method: string): void {
    recorder?.(methodLabel(method), 202);
    writeEmpty(res, 202);
  }

  /**
   * A 2026-07-28 message. Notifications are answered 202 and dropped (the revision defines none
   * over HTTP: closing the stream is the cancel, B.4). Requests climb the error ladder
   * (modern-envelope.ts), then run without a session: the scope is the principal, else the
   * client's IP bucket (DESIGN.md, "Request model").
   */
  async function modern(
    req: IncomingMessage,
    res: ServerResponse,
    message: JsonRpcRequest | JsonRpcNotification,
    isRequest: boolean,
    principal: Principal | null,
    accepts: number,
  ): Promise<void> {
    const method = message.method;
    if (!isRequest) return accepted(res, method);
    const request = message as JsonRpcRequest;
    const headers = req.headers;
    const envelope = checkModernRequest(request, {
      protocolVersion: single(headers["mcp-protocol-version"]),
      method: single(headers["mcp-method"]),
      name: single(headers["mcp-name"]),
      all: req.headersDistinct,
    });
    if (!envelope.ok) return reply(res, envelope.status, envelope.json, method);
    const scope =
      principalId(principal) === null
        ? anonymousScope(req)
        : scopeOf({ sessionId: null, principal, address: null });
    const exchange = admit(res, scope, request, accepts);
    if (exchange === null) return;
    // A long modern call gets its stream (and keep-alive comments) even before any progress.
    if (method === "tools/call") exchange.keepAliveWhilePending();
    try {
      await dispatcher.handleModernRequest(
        request,
        { scope, principal, sessionId: null, logLevel: envelope.logLevel },
        exchange,
        envelope,
      );
    } finally {
      exchange.released();
    }
  }

  async function remove(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (sessions === null) {
      res.setHeader("allow", allowHeader);
      return reply(res, 405, METHOD_NOT_ALLOWED, null);
    }
    const principal = await authenticated(req, res);
    if (principal === false) return;
    const presented = single(req.headers["mcp-session-id"]);
    if (presented === undefined) return reply(res, 400, SESSION_REQUIRED, null);
    const session = isWellFormedSessionId(presented)
      ? await sessions.store.get(presented)
      : undefined;
    if (session === undefined || session.principalId !== principalId(principal)) {
      return reply(res, 404, SESSION_NOT_FOUND, null);
    }
    await sessions.store.delete(presented);
    // Ending the session cancels its in-flight requests (conduit-mcp's addition to the original).
    dispatcher.cancelSession(presented);
    recorder?.("none", 204);
    writeEmpty(res, 204);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? "/";
    const query = url.indexOf("?");
    const route = query === -1 ? url : url.slice(0, query);
    if (route === path) {
      if (!originPolicy.allows(req.headers)) return reply(res, 403, FORBIDDEN, null);
      switch (req.method) {
        case "POST":
          return post(req, res);
        case "DELETE":
          return remove(req, res);
        default:
          // No standalone GET stream (issue 3): 405, as mcp-protocol.md A.3 allows.
          res.setHeader("allow", allowHeader);
          return reply(res, 405, METHOD_NOT_ALLOWED, null);
      }
    }
    if (route === "/health" && (req.method === "GET" || req.method === "HEAD")) {
      return writeJson(res, 200, HEALTH_JSON);
    }
    if (route === "/metrics" && metrics !== null && req.method === "GET") {
      if (!originPolicy.allows(req.headers)) return writeJson(res, 403, FORBIDDEN);
      const text = await metrics.render(config.registry);
      res.writeHead(200, {
        "content-type": "text/plain; version=0.0.4; charset=utf-8",
        "content-length": Buffer.byteLength(text),
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      });
      res.end(text);
      return;
    }
    res.writeHead(404, {
      "content-type": "text/plain; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    });
    res.end("Not found");
  }

  return function conduitMcpListener(req: IncomingMessage, res: ServerResponse): void {
    try {
      handle(req, res).catch(() => failResponse(res));
    } catch {
      failResponse(res);
    }
  };
}

function isInitialize(classified: ClassifiedMessage): boolean {
  return classified.kind === "request" && classified.message.method === "initialize";
}

/** A repeated header arrives as an array; only a single value is meaningful here. */
function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
