/**
 * The request core: routing (`/mcp`, `/health`, `/ready`, `/metrics`), Host/Origin checks, auth,
 * negotiation, admission under the scope's bounds, the bounded body, classification, sessions,
 * then the dispatcher — as named steps over the transport-neutral request of transport.ts, so
 * that every door (node:http in node-door.ts, a web `fetch` handler) shares them.
 *
 * Everything from the network is hostile: the core never throws at the transport, never
 * reflects a header, never leaks internals, and refuses what it can before reading a body.
 * See docs/architecture.md for a request's way through the layers.
 */
import type { IncomingHttpHeaders } from "node:http";

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
  ACQUIRED,
  type LimitOutcome,
  SCOPE_LIMIT,
  ScopeLimiter,
} from "../protocol/asking/index.js";
import { HANDLED } from "../protocol/calls/index.js";
import {
  type ClassifiedMessage,
  capabilitiesOf,
  checkModernRequest,
  classifyEra,
  classifyMessage,
  type Dispatcher,
  errorResponseJson,
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
import { BODY_TIMEOUT, BODY_TOO_LARGE, declaredTooLarge } from "./read-body.js";
import type { Readiness } from "./readiness.js";
import type { SessionStreams } from "./session-streams.js";
import type { BodyOutcome, RequestInput, ResponseHeaders, ResponseTarget } from "./transport.js";
import { writeEmpty, writeJson, writeText } from "./write-response.js";

/** Everything the core needs, resolved once by the server. */
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
  /** Most bytes an SSE stream may have waiting for a slow client before it is cut. */
  readonly maxStreamBufferBytes: number;
  readonly metrics: ServerMetrics | null;
  /** `GET /metrics` needs the same credentials as the endpoint (when auth is on). */
  readonly metricsAuth?: boolean;
  /**
   * The sessions' standalone GET streams, when served (sessions on): else GET is answered 405.
   */
  readonly streams?: SessionStreams | null;
  /** True once close() began: new requests get 503. */
  readonly closing: () => boolean;
  /** Answers `GET /ready` (readiness.ts); without it the path is not served. */
  readonly readiness?: Readiness;
}

/** The transport-neutral request core. */
export interface RequestCore {
  /**
   * Answers one request on `target`; settles once the answer is complete (a stream: once it has
   * ended). Rejects only on a bug (the door then answers 500).
   */
  handle(input: RequestInput, target: ResponseTarget): Promise<void>;
  /**
   * Whether a request for `path` (no query string) is one the core answers when it routes by
   * path: the endpoint, `/health`, `/metrics` when metrics are on, the OAuth metadata documents
   * when OAuth is on. A door mounted among other
   * routes (Express `app.use`) passes the others on.
   */
  serves(path: string): boolean;
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

/** The protected resource metadata is public (RFC 9728 §3): browser clients may read it. */
const METADATA_HEADERS: ResponseHeaders = Object.freeze({
  "access-control-allow-origin": "*",
  "cache-control": "max-age=300",
});
const RETRY_SOON: ResponseHeaders = Object.freeze({ "retry-after": "1" });

/**
 * A scope at its request bound may still send small messages — a `notifications/cancelled` is
 * how it frees a unit — at most this many at once, each at most {@link NOTICE_BYTES} (declared
 * up front); a request among them is refused once read. Bounds what a scope over its bound can
 * make the server buffer.
 */
const NOTICES_PER_SCOPE = 8;
const NOTICES_TOTAL = 1_024;
const NOTICE_BYTES = 4_096;

/**
 * Requests whose handler may run long and report progress: answered on an SSE stream when the
 * client accepts one (2025-11-25 basic/transports "Sending Messages to the Server",
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/transports).
 */
const STREAMED_METHODS: ReadonlySet<string> = new Set([
  "tools/call",
  "resources/read",
  "prompts/get",
]);

/** The promise of a request answered at once (handled.ts). */
const DONE: Promise<void> = HANDLED;
/** What `post` awaits for its principal when there is no authentication. */
const NO_PRINCIPAL: Promise<null> = Promise.resolve(null);

/** Returned by a step that answered (refused) the request itself. */
const ANSWERED: unique symbol = Symbol("conduit-mcp.answered");
type Answered = typeof ANSWERED;

/**
 * The unit a POST holds from before its body is read: a request unit of the scope it comes
 * from, or — for a scope at its bound — a notice unit (small messages only).
 */
interface Admission {
  readonly origin: string;
  /** A notice unit, not a request unit: only a notification may follow. */
  readonly notice: boolean;
  /** Why the scope's request unit was refused (for a request read on a notice unit). */
  readonly refusal: LimitOutcome;
  /** Set once an exchange took the unit over (it gives it back when the request settles). */
  handedOver: boolean;
}

/** The session a 2025-era request presented, once validated. */
interface SessionContext {
  readonly sessionId: string | null;
  readonly logLevel: LoggingLevel | null;
  /** What its client declared it can be asked; null when unknown (no session). */
  readonly clientCapabilities: Readonly<Record<string, unknown>> | null;
}
/** A request or a notification, classified. */
type JsonRpcMessage = Extract<ClassifiedMessage, { kind: "request" | "notification" }>;
/** A message the core goes on with. */
type Classified = Exclude<ClassifiedMessage, { kind: "invalid" }>;

const NO_SESSION: SessionContext = Object.freeze({
  sessionId: null,
  logLevel: null,
  clientCapabilities: null,
});

/**
 * Builds the request core.
 *
 * @example
 * ```ts
 * const core = createRequestCore(config);
 * http.createServer(createNodeListener(core)).listen(3000);
 * ```
 */
export function createRequestCore(config: EndpointConfig): RequestCore {
  const { path, dispatcher, sessions, authenticate, metrics, originPolicy, limits, readiness } =
    config;
  const recorder = metrics === null ? null : metrics.recordRequest;
  const streams = sessions === null ? null : (config.streams ?? null);
  const allowHeader =
    sessions === null ? "POST" : streams === null ? "POST, DELETE" : "GET, POST, DELETE";
  const notices = new ScopeLimiter(NOTICES_PER_SCOPE, NOTICES_TOTAL);
  /** The anonymous scope of a connection, when it depends only on the connection. */
  const connectionScopes = new WeakMap<object, string>();

  /** A whole answer, counted in the metrics. */
  function reply(
    target: ResponseTarget,
    status: number,
    json: string,
    method: string | null,
    headers?: ResponseHeaders,
  ): void {
    recorder?.(methodLabel(method), status);
    writeJson(target, status, json, null, headers);
  }

  /** A refusal before the body was read: the body is never read (the connection may close). */
  function refuseUnread(
    input: RequestInput,
    target: ResponseTarget,
    status: number,
    json: string,
    headers?: ResponseHeaders,
  ): Answered {
    input.body.skip();
    reply(target, status, json, null, headers);
    return ANSWERED;
  }

  /** 202 with no body: an accepted (or deliberately dropped) notification. */
  function accepted(target: ResponseTarget, method: string): void {
    recorder?.(methodLabel(method), 202);
    writeEmpty(target, 202);
  }

  /** 429 (scope bound) or 503 (global bound), with `Retry-After` and the request's id. */
  function refuseBusy(
    target: ResponseTarget,
    outcome: LimitOutcome,
    id: JsonRpcRequest["id"] | null,
    method: string | null,
  ): void {
    const json = errorResponseJson(id, ErrorCode.ServerError, TOO_MANY);
    reply(target, outcome === SCOPE_LIMIT ? 429 : 503, json, method, RETRY_SOON);
  }

  /**
   * The `ip:` scope of a request without principal (nor session). It depends only on the
   * connection unless a trusted proxy's X-Forwarded-For is read, so it is computed once per
   * connection: keep-alive clients pay for address parsing once, not per request.
   */
  function anonymousScope(input: RequestInput): string {
    // No address to vouch for: `X-Forwarded-For` cannot be checked against a peer either.
    if (input.remoteAddress === undefined && input.fallbackScope !== undefined) {
      return input.fallbackScope;
    }
    const forwarded = input.headers["x-forwarded-for"];
    const perConnection =
      input.connection !== null && (forwarded === undefined || config.trustProxy === TRUST_NONE);
    if (perConnection) {
      const cached = connectionScopes.get(input.connection as object);
      if (cached !== undefined) return cached;
    }
    const address = clientAddress(input.remoteAddress, forwarded, config.trustProxy) ?? null;
    const scope = scopeOf({ sessionId: null, principal: null, address });
    if (perConnection) connectionScopes.set(input.connection as object, scope);
    return scope;
  }

  /** The scope a request comes from: its principal, else its client's IP bucket. */
  function originScope(input: RequestInput, principal: Principal | null): string {
    return principalId(principal) === null
      ? anonymousScope(input)
      : scopeOf({ sessionId: null, principal, address: null });
  }

  /**
   * Step: the principal (null without auth), or the refusal before the body is read: 400
   * (malformed credentials), 401 (none, or a bad token), 403 (a scope the server requires),
   * 503 (the authorization server unreachable: fail closed), each with its challenge.
   */
  async function authenticated(
    input: RequestInput,
    target: ResponseTarget,
  ): Promise<Principal | null | Answered> {
    if (authenticate === null) return null;
    const decision = await authenticate(input);
    if (decision.ok) return decision.principal;
    const headers: Record<string, string> = {};
    if (decision.challenge !== null) headers["www-authenticate"] = decision.challenge;
    if (decision.status === 503) headers["retry-after"] = "5";
    const code = decision.status === 400 ? ErrorCode.InvalidRequest : ErrorCode.ServerError;
    const json = errorResponseJson(null, code, decision.message);
    return refuseUnread(input, target, decision.status, json, headers);
  }

  /** Step: what the client accepts, or 415 / 406 / 413 before the body is read. */
  function negotiated(input: RequestInput, target: ResponseTarget): number | Answered {
    const headers = input.headers;
    if (!isJsonContentType(single(headers["content-type"]))) {
      return refuseUnread(input, target, 415, BAD_CONTENT_TYPE);
    }
    const accepts = acceptedMediaTypes(single(headers.accept));
    if (accepts === 0) return refuseUnread(input, target, 406, NOT_ACCEPTABLE);
    if (declaredTooLarge(single(headers["content-length"]), config.maxBodyBytes)) {
      return refuseUnread(input, target, 413, TOO_LARGE);
    }
    return accepts;
  }

  /**
   * Step: admission under the origin scope's bounds, before the body is read. A scope at its
   * bound gets a notice unit for a small declared body (a cancel can still get through), else
   * 429 (its own bound) or 503 (the global one) at once, the body unread.
   */
  function admitted(
    input: RequestInput,
    target: ResponseTarget,
    origin: string,
  ): Admission | Answered {
    const outcome = limits.requests.tryAcquire(origin);
    if (outcome === ACQUIRED)
      return { origin, notice: false, refusal: ACQUIRED, handedOver: false };
    const length = Number(single(input.headers["content-length"]));
    if (length <= NOTICE_BYTES && notices.tryAcquire(origin) === ACQUIRED) {
      return { origin, notice: true, refusal: outcome, handedOver: false };
    }
    input.body.skip();
    refuseBusy(target, outcome, null, null);
    return ANSWERED;
  }

  function giveBack(admission: Admission): void {
    if (admission.handedOver) return;
    if (admission.notice) notices.release(admission.origin);
    else limits.requests.release(admission.origin);
  }

  /**
   * Step: the body, parsed and classified; or 413 / 408 / 400, or nothing if the client left.
   * A body that has all arrived is taken at once (no promise); otherwise it is waited for.
   */
  function readMessage(
    input: RequestInput,
    target: ResponseTarget,
  ): Classified | Answered | Promise<Classified | Answered> {
    const body = input.body.readNow?.(config.maxBodyBytes);
    if (body !== undefined) return parseMessage(target, body);
    return input.body.read(config.maxBodyBytes, config.bodyTimeoutMs).then(
      (read) => parseMessage(target, read),
      () => ANSWERED, // the client went away mid-body: nobody to answer
    );
  }

  /** The body's message, classified; or 413 / 408 / 400. */
  function parseMessage(target: ResponseTarget, body: BodyOutcome): Classified | Answered {
    if (body === BODY_TOO_LARGE || body === BODY_TIMEOUT) {
      // The rest of the body is never read: the connection closes after the answer.
      target.closeAfterAnswer();
      reply(
        target,
        body === BODY_TOO_LARGE ? 413 : 408,
        body === BODY_TOO_LARGE ? TOO_LARGE : BODY_TIMED_OUT,
        null,
      );
      return ANSWERED;
    }
    let parsed: unknown;
    if (!Buffer.isBuffer(body)) {
      parsed = body.parsed; // parsed by the host framework already
    } else {
      try {
        parsed = JSON.parse(body.toString("utf8"));
      } catch {
        reply(target, 400, PARSE_ERROR, null);
        return ANSWERED;
      }
    }
    const classified = classifyMessage(parsed);
    if (classified.kind === "invalid") {
      const json = errorResponseJson(classified.id, ErrorCode.InvalidRequest, INVALID_REQUEST);
      reply(target, 400, json, null);
      return ANSWERED;
    }
    return classified;
  }

  /**
   * Step (2025 era): a presented session must exist and belong to this principal (404), and
   * one is required when the server says so (400). Without sessions, or without a presented
   * id, it is known at once (no promise).
   */
  function sessionOf(
    input: RequestInput,
    target: ResponseTarget,
    classified: ClassifiedMessage,
    principal: Principal | null,
    method: string | null,
  ): SessionContext | Answered | Promise<SessionContext | Answered> {
    if (sessions === null) return NO_SESSION;
    const presented = single(input.headers["mcp-session-id"]);
    if (presented === undefined) {
      if (sessions.required && !isInitialize(classified)) {
        reply(target, 400, SESSION_REQUIRED, method);
        return ANSWERED;
      }
      return NO_SESSION;
    }
    if (!isWellFormedSessionId(presented)) {
      reply(target, 404, SESSION_NOT_FOUND, method);
      return ANSWERED;
    }
    return sessions.store.get(presented).then((session) => {
      if (session === undefined || session.principalId !== principalId(principal)) {
        reply(target, 404, SESSION_NOT_FOUND, method);
        return ANSWERED;
      }
      const declared = session.clientCapabilities;
      return {
        sessionId: presented,
        logLevel: session.logLevel as LoggingLevel | null,
        clientCapabilities: typeof declared === "string" ? capabilitiesOf(declared) : null,
      };
    });
  }

  /**
   * Step: the exchange of an admitted request. A session's request also takes a unit of the
   * session's own scope; a handler request (a tool call, resource read or prompt, which may run
   * long and report progress) whose client accepts SSE takes a stream unit — without
   * one the call still runs when the client accepts JSON (one JSON body, its notifications
   * dropped) and is refused when it accepts only SSE. The exchange takes the admission over.
   */
  function opened(
    input: RequestInput,
    target: ResponseTarget,
    admission: Admission,
    sessionScope: string | null,
    request: JsonRpcRequest,
    accepts: number,
  ): HttpExchange | null {
    if (admission.notice) {
      // Read on a notice unit: the scope is at its bound, and this is a request.
      refuseBusy(target, admission.refusal, request.id, request.method);
      return null;
    }
    if (sessionScope !== null) {
      const outcome = limits.sessionRequests.tryAcquire(sessionScope);
      if (outcome !== ACQUIRED) {
        refuseBusy(target, outcome, request.id, request.method);
        return null;
      }
    }
    const scope = sessionScope ?? admission.origin;
    let sse = (accepts & ACCEPTS_SSE) !== 0;
    let stream: string | null = null;
    if (sse && STREAMED_METHODS.has(request.method)) {
      if (limits.streams.tryAcquire(scope) === ACQUIRED) stream = scope;
      else if ((accepts & ACCEPTS_JSON) === 0) {
        if (sessionScope !== null) limits.sessionRequests.release(sessionScope);
        refuseBusy(target, SCOPE_LIMIT, request.id, request.method);
        return null;
      } else sse = false;
    }
    const exchange = new HttpExchange({
      target,
      closed: input.closed,
      jsonAccepted: (accepts & ACCEPTS_JSON) !== 0,
      sseAccepted: sse,
      keepAliveMs: config.keepAliveMs,
      maxBufferedBytes: config.maxStreamBufferBytes,
      recorder,
      method: methodLabel(request.method),
    });
    exchange.hold(limits, { origin: admission.origin, session: sessionScope, stream });
    admission.handedOver = true;
    return exchange;
  }

  async function post(input: RequestInput, target: ResponseTarget): Promise<void> {
    if (config.closing()) {
      target.closeAfterAnswer();
      refuseUnread(input, target, 503, SHUTTING_DOWN, RETRY_SOON);
      return;
    }
    // One turn of the event loop's microtasks in either case: node's parser delivers a body that
    // came with its headers right after the request event, so it has all arrived when the body is
    // read below and is taken at once (readMessage).
    const principal =
      authenticate === null ? await NO_PRINCIPAL : await authenticated(input, target);
    if (principal === ANSWERED) return;
    // The rest is not in this async function: its suspended state stays small (the await above is
    // its only one). Already handled: nothing is returned, so this function's promise does not
    // have to adopt another one (a thenable job and its reactions per request).
    const handled = admitAndDispatch(input, target, principal);
    if (handled !== HANDLED) return handled;
  }

  /** A POST once its principal is known: negotiation, admission, the body, then its era's way. */
  function admitAndDispatch(
    input: RequestInput,
    target: ResponseTarget,
    principal: Principal | null,
  ): Promise<void> | undefined {
    const accepts = negotiated(input, target);
    if (accepts === ANSWERED) return;
    const admission = admitted(input, target, originScope(input, principal));
    if (admission === ANSWERED) return;
    let read: ReturnType<typeof readMessage>;
    try {
      read = readMessage(input, target);
    } catch (error) {
      giveBack(admission);
      throw error;
    }
    if (!(read instanceof Promise)) {
      return dispatchMessage(input, target, read, principal, accepts, admission);
    }
    return read.then(
      (classified) => dispatchMessage(input, target, classified, principal, accepts, admission),
      (error: unknown) => {
        giveBack(admission);
        throw error;
      },
    );
  }

  /**
   * A read message, to its era's handling. An exchange holds the admission then and gives it back
   * itself; otherwise it is given back once the message is handled, however that ends. Returned
   * rather than awaited, so no frame stays suspended while a call runs.
   */
  function dispatchMessage(
    input: RequestInput,
    target: ResponseTarget,
    classified: Classified | Answered,
    principal: Principal | null,
    accepts: number,
    admission: Admission,
  ): Promise<void> | undefined {
    let handled: Promise<void> | undefined;
    try {
      if (classified === ANSWERED) return;
      if (classified.kind === "response") {
        handled = answered(input, target, classified, principal, admission);
      } else if (modernClaim(classified.message.params) !== undefined) {
        // The era, decided once, body first: a `_meta` protocolVersion claim makes the request
        // modern, whatever else it carries (an `Mcp-Session-Id` is ignored).
        handled = modern(input, target, classified, principal, accepts, admission);
      } else {
        handled = legacy(input, target, classified, principal, accepts, admission);
      }
    } finally {
      if (handled === undefined) giveBack(admission);
    }
    if (handled === undefined || admission.handedOver) return handled;
    return handled.then(
      () => giveBack(admission),
      (error: unknown) => {
        giveBack(admission);
        throw error;
      },
    );
  }

  /**
   * A client's answer to a server request (2025-11-25 elicitation, sampling, roots): from the
   * scope the call would have (session > principal > IP bucket), routed to the waiting ask here
   * or on another node; 202 whether anyone waited or not, so nothing is learnt from it.
   */
  async function answered(
    input: RequestInput,
    target: ResponseTarget,
    classified: Extract<ClassifiedMessage, { kind: "response" }>,
    principal: Principal | null,
    admission: Admission,
  ): Promise<void> {
    const lookup = sessionOf(input, target, classified, principal, null);
    const session = lookup instanceof Promise ? await lookup : lookup;
    if (session === ANSWERED) return;
    const scope =
      session.sessionId === null
        ? admission.origin
        : scopeOf({ sessionId: session.sessionId, principal: null, address: null });
    await dispatcher.handleResponse(classified.message, scope);
    recorder?.("none", 202);
    writeEmpty(target, 202);
  }

  /**
   * A 2025-era message (or one whose era the headers reject). Undefined when it was answered at
   * once; otherwise the promise of its handling.
   */
  function legacy(
    input: RequestInput,
    target: ResponseTarget,
    classified: JsonRpcMessage,
    principal: Principal | null,
    accepts: number,
    admission: Admission,
  ): Promise<void> | undefined {
    const method = classified.message.method;
    const headerVersion = single(input.headers["mcp-protocol-version"]);
    const era = classifyEra(headerVersion);
    if (era.era === "rejected") {
      // A modern version in the header but no claim in the body: a modern message missing its
      // envelope, not a 2025 one. Checked only here, so the 2025 path pays nothing for it.
      if (headerVersion !== undefined && looksModernVersion(headerVersion)) {
        if (classified.kind === "notification") accepted(target, method);
        else reply(target, 400, missingEnvelopeJson(classified.message.id), method);
        return;
      }
      reply(target, era.status, era.json, method);
      return;
    }
    const session = sessionOf(input, target, classified, principal, method);
    if (session instanceof Promise) {
      return session.then((found) =>
        found === ANSWERED
          ? undefined
          : inSession(input, target, classified, principal, accepts, admission, found),
      );
    }
    if (session === ANSWERED) return;
    return inSession(input, target, classified, principal, accepts, admission, session);
  }

  /** A 2025-era message once its session (or none) is known. */
  function inSession(
    input: RequestInput,
    target: ResponseTarget,
    classified: JsonRpcMessage,
    principal: Principal | null,
    accepts: number,
    admission: Admission,
    session: SessionContext,
  ): Promise<void> | undefined {
    const method = classified.message.method;
    // The scope, fixed once before dispatch: session > principal > client IP bucket.
    const sessionScope =
      session.sessionId === null
        ? null
        : scopeOf({ sessionId: session.sessionId, principal: null, address: null });
    const scope = sessionScope ?? admission.origin;

    if (classified.kind === "notification") {
      // Answered at once; a cancel flood is bounded by the registry's per-scope row quota.
      return dispatcher.handleNotification(classified.message, scope).then((error) => {
        if (error === null) return accepted(target, method);
        // A refused notification is answered 200 with the error.
        return reply(target, 200, error, method);
      });
    }
    const request = classified.message;
    const exchange = opened(input, target, admission, sessionScope, request, accepts);
    if (exchange === null) return;
    return settled(exchange, () =>
      dispatcher.handleRequest(
        request,
        {
          scope,
          principal,
          sessionId: session.sessionId,
          logLevel: session.logLevel,
          clientCapabilities: session.clientCapabilities,
          headers: input.headers,
        },
        exchange,
      ),
    );
  }

  /**
   * Runs the dispatcher for an exchange and gives the exchange's slots back once that settles
   * (or throws), either way. Chained rather than awaited: the caller's frame ends instead of staying
   * suspended for as long as the call runs.
   */
  function settled(exchange: HttpExchange, run: () => Promise<void>): Promise<void> {
    let running: Promise<void>;
    try {
      running = run();
    } catch (error) {
      exchange.releaseSlots();
      throw error;
    }
    if (running === HANDLED) {
      // Answered before the dispatcher returned: the slots go back now, nothing to wait for.
      exchange.releaseSlots();
      return HANDLED;
    }
    return running.then(
      () => exchange.releaseSlots(),
      (error: unknown) => {
        exchange.releaseSlots();
        throw error;
      },
    );
  }

  /**
   * A 2026-07-28 message. Notifications are answered 202 and dropped (the revision defines none
   * over HTTP: closing the stream is the cancel). Requests climb the error ladder
   * (modern-envelope.ts), then run without a session: the scope is the principal, else the
   * client's IP bucket. Undefined when it was answered at once.
   */
  function modern(
    input: RequestInput,
    target: ResponseTarget,
    classified: JsonRpcMessage,
    principal: Principal | null,
    accepts: number,
    admission: Admission,
  ): Promise<void> | undefined {
    const method = classified.message.method;
    if (classified.kind !== "request") {
      accepted(target, method);
      return;
    }
    const request = classified.message;
    const headers = input.headers;
    const envelope = checkModernRequest(request, {
      protocolVersion: single(headers["mcp-protocol-version"]),
      method: single(headers["mcp-method"]),
      name: single(headers["mcp-name"]),
      // Read (and built by Node) only for a tool that declares x-mcp-header parameters.
      distinct: input,
    });
    if (!envelope.ok) {
      reply(target, envelope.status, envelope.json, method);
      return;
    }
    const exchange = opened(input, target, admission, null, request, accepts);
    if (exchange === null) return;
    // A long modern call gets its stream (and keep-alive comments) even before any progress.
    if (STREAMED_METHODS.has(method)) exchange.keepAliveWhilePending();
    return settled(exchange, () =>
      dispatcher.handleModernRequest(
        request,
        {
          scope: admission.origin,
          principal,
          sessionId: null,
          logLevel: envelope.logLevel,
          headers: input.headers,
        },
        exchange,
        envelope,
      ),
    );
  }

  /** `DELETE`: ends the caller's session and cancels its calls. */
  async function remove(input: RequestInput, target: ResponseTarget): Promise<void> {
    if (sessions === null) {
      refuseUnread(input, target, 405, METHOD_NOT_ALLOWED, { allow: allowHeader });
      return;
    }
    const principal = await authenticated(input, target);
    if (principal === ANSWERED) return;
    input.body.skip();
    const presented = single(input.headers["mcp-session-id"]);
    if (presented === undefined) return reply(target, 400, SESSION_REQUIRED, null);
    const session = isWellFormedSessionId(presented)
      ? await sessions.store.get(presented)
      : undefined;
    if (session === undefined || session.principalId !== principalId(principal)) {
      return reply(target, 404, SESSION_NOT_FOUND, null);
    }
    await sessions.store.delete(presented);
    // Ending the session cancels its in-flight requests, its subscriptions and its stream.
    dispatcher.cancelSession(presented);
    streams?.close(presented);
    recorder?.("none", 204);
    writeEmpty(target, 204);
  }

  /**
   * `GET`: opens the caller's standalone SSE stream (2025-11-25 basic/transports "Listening for
   * Messages from the Server"). Only for a session of the caller's own principal (404 as for a
   * POST otherwise): no client can attach to another's stream.
   */
  async function listen(input: RequestInput, target: ResponseTarget): Promise<void> {
    if (sessions === null || streams === null) {
      refuseUnread(input, target, 405, METHOD_NOT_ALLOWED, { allow: allowHeader });
      return;
    }
    if (config.closing()) {
      target.closeAfterAnswer();
      refuseUnread(input, target, 503, SHUTTING_DOWN, RETRY_SOON);
      return;
    }
    const principal = await authenticated(input, target);
    if (principal === ANSWERED) return;
    input.body.skip();
    if ((acceptedMediaTypes(single(input.headers.accept)) & ACCEPTS_SSE) === 0) {
      return reply(target, 406, NOT_ACCEPTABLE, null);
    }
    const presented = single(input.headers["mcp-session-id"]);
    if (presented === undefined) return reply(target, 400, SESSION_REQUIRED, null);
    const session = isWellFormedSessionId(presented)
      ? await sessions.store.get(presented)
      : undefined;
    if (session === undefined || session.principalId !== principalId(principal)) {
      return reply(target, 404, SESSION_NOT_FOUND, null);
    }
    // A stream unit of the caller's scope, held while the stream is open: streams of sessions
    // a store ended without telling (a shared store) stay bounded per tenant.
    const origin = originScope(input, principal);
    const outcome = limits.streams.tryAcquire(origin);
    if (outcome !== ACQUIRED) return refuseBusy(target, outcome, null, null);
    recorder?.("none", 200);
    // Settled when the stream ends, not when it opens: the fetch door and the framework adapters
    // end their response when the request core's promise settles.
    const ended = new Promise<void>((resolve) => {
      streams.open(presented, target, input.closed, () => {
        limits.streams.release(origin);
        resolve();
      });
    });
    // The session may have ended (on any node) between the read above and the stream opening:
    // its onEnded then found no stream to close. A second read after opening closes the gap; a
    // store that fails to answer leaves the stream to the client and the keep-alives.
    const store = sessions.store;
    store.get(presented).then(
      (current) => {
        if (current === undefined) streams.close(presented);
      },
      () => undefined,
    );
    return ended;
  }

  /** Not async: the endpoint's step hands back its own promise (no extra promise per request). */
  function handle(input: RequestInput, target: ResponseTarget): Promise<void> {
    try {
      if (input.path === path || input.endpoint === true) return endpoint(input, target);
      return elsewhere(input, target);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** A request for the endpoint. */
  function endpoint(input: RequestInput, target: ResponseTarget): Promise<void> {
    if (!originPolicy.allows(input.headers as IncomingHttpHeaders)) {
      refuseUnread(input, target, 403, FORBIDDEN);
      return DONE;
    }
    switch (input.method) {
      case "POST":
        return post(input, target);
      case "DELETE":
        return remove(input, target);
      case "GET":
        return listen(input, target);
      default:
        refuseUnread(input, target, 405, METHOD_NOT_ALLOWED, { allow: allowHeader });
        return DONE;
    }
  }

  /** Any other path: `/health`, `/ready`, the OAuth metadata, `/metrics`, else 404. */
  async function elsewhere(input: RequestInput, target: ResponseTarget): Promise<void> {
    const route = input.path;
    const headers = input.headers as IncomingHttpHeaders;
    if (route === "/health" && (input.method === "GET" || input.method === "HEAD")) {
      input.body.skip();
      return writeJson(target, 200, HEALTH_JSON);
    }
    if (route === "/ready" && readiness && (input.method === "GET" || input.method === "HEAD")) {
      input.body.skip();
      return readiness.answer(target);
    }
    const resourceServer = authenticate?.resourceServer ?? null;
    if (resourceServer !== null && (input.method === "GET" || input.method === "HEAD")) {
      const document = resourceServer.metadataFor(route, path);
      if (document !== null) {
        input.body.skip();
        return writeJson(target, 200, document, null, METADATA_HEADERS);
      }
    }
    if (route === "/metrics" && metrics !== null && input.method === "GET") {
      if (!originPolicy.allows(headers)) {
        refuseUnread(input, target, 403, FORBIDDEN);
        return;
      }
      // Optional: the same credentials as the endpoint (README "Production auth").
      if (config.metricsAuth === true && (await authenticated(input, target)) === ANSWERED) return;
      input.body.skip();
      const text = await metrics.render(config.registry);
      return writeText(target, 200, text, "text/plain; version=0.0.4; charset=utf-8");
    }
    input.body.skip();
    writeText(target, 404, "Not found");
  }

  function serves(route: string): boolean {
    if (route === path || route === "/health") return true;
    if (route === "/ready") return readiness !== undefined;
    if (route === "/metrics") return metrics !== null;
    const resourceServer = authenticate?.resourceServer ?? null;
    return resourceServer !== null && resourceServer.metadataFor(route, path) !== null;
  }

  return { handle, serves };
}

function isInitialize(classified: ClassifiedMessage): boolean {
  return classified.kind === "request" && classified.message.method === "initialize";
}

/** A repeated header arrives as an array; only a single value is meaningful here. */
function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
