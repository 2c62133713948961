/**
 * OpenTelemetry spans (docs/tracing.md): one SERVER span per request and one INTERNAL
 * span per handler invocation (tool, resource or template read, prompt get, completer), a
 * {@link DispatchObserver} that exists only once `@opentelemetry/api` has loaded.
 *
 * Names and attributes follow the OpenTelemetry semantic conventions for MCP
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/, "Server"): span name
 * `{mcp.method.name} {target}` with the tool or prompt name as target, `mcp.method.name`,
 * `jsonrpc.request.id`, `mcp.protocol.version`, `mcp.session.id`, `mcp.resource.uri`,
 * `gen_ai.tool.name`, `gen_ai.prompt.name`, `gen_ai.operation.name` = `execute_tool`,
 * `rpc.response.status_code`, `error.type` (the JSON-RPC code, or `tool_error` for an `isError`
 * tool result). A tool's handler span is the GenAI `execute_tool {gen_ai.tool.name}` span
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/#execute-tool-span).
 *
 * Parent: the W3C trace context in `params._meta` (`traceparent`, `tracestate`: MCP 2026-07-28,
 * Overview, "_meta", OpenTelemetry trace context,
 * https://modelcontextprotocol.io/specification/2026-07-28/basic#_meta, from
 * https://modelcontextprotocol.io/community/seps/414-request-meta), else the
 * HTTP request's `traceparent`/`tracestate` headers (https://www.w3.org/TR/trace-context/), else
 * the active context; the ambient span (an HTTP server span, say) is linked when it is not the
 * parent, as the conventions' "Context propagation" section asks.
 */
import { createHash } from "node:crypto";

import type { Attributes, Context, Link, Span, SpanContext, Tracer } from "@opentelemetry/api";

import { RequestCancelledError } from "../errors.js";
import {
  type DispatchObserver,
  type HandlerEnd,
  type HandlerInfo,
  type HandlerOutcome,
  isPlainObject,
  isSupportedProtocolVersion,
  type RequestInfo,
  type ResponseSink,
  type SinkListener,
} from "../protocol/index.js";
import type { TracerProviderLike } from "./tracer-provider.js";

/** The API module (see load-otel.ts): its types stay inside this file's implementation. */
type OpenTelemetryApi = typeof import("@opentelemetry/api");

/** The longest `traceparent`/`tracestate` value read (W3C: 55 characters for version 00, 512 for a propagated tracestate). */
const MAX_CARRIER_LENGTH = 512;
/** W3C Trace Context §3.2 `traceparent`: version-traceid-parentid-flags, lower-case hex. */
const TRACEPARENT = /^([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})(-.*)?$/;

interface HandlerSpan {
  readonly span: Span;
  readonly context: Context;
}

/** The tracing observer (made by {@link createTracing}). */
class RequestTracing implements DispatchObserver {
  private readonly requests = new WeakMap<RequestInfo, TracedSink>();
  private readonly handlers = new WeakMap<HandlerInfo, HandlerSpan>();

  /**
   * What the global provider delegates to while no SDK is registered (the API's no-op
   * provider); null when spans come from a provider given in the options.
   */
  private readonly noSdk: unknown;

  constructor(
    private readonly api: OpenTelemetryApi,
    private readonly tracer: Tracer,
    global: boolean,
  ) {
    this.noSdk = global ? new api.ProxyTracerProvider().getDelegate() : null;
  }

  /** False while no SDK is registered behind the global provider: no span would record. */
  followsRequests(): boolean {
    return this.noSdk === null || !this.sdkMissing();
  }

  requestStarted(info: RequestInfo, sink: ResponseSink): ResponseSink | undefined {
    // No SDK registered behind the global provider (yet: it may come at any time): the span would
    // be the API's no-op span, which records nothing, so none is made.
    if (this.noSdk !== null && this.sdkMissing()) return undefined;
    const { api } = this;
    const parent = this.parentOf(info);
    // The method is known to samplers from the start; the rest only once the span records.
    const span = this.tracer.startSpan(
      info.method,
      {
        kind: api.SpanKind.SERVER,
        attributes: { "mcp.method.name": info.method },
        links: parent.links,
      },
      parent.context,
    );
    // No SDK registered (the API's no-op tracer), or not sampled: nothing more for this request.
    if (!span.isRecording()) return undefined;
    span.setAttributes(requestAttributes(info));
    const traced = new TracedSink(sink, span, info, api, api.trace.setSpan(parent.context, span));
    this.requests.set(info, traced);
    return traced;
  }

  handlerStarted(info: HandlerInfo): void {
    const request = info.request === null ? undefined : this.requests.get(info.request);
    if (request === undefined) return; // its request was not traced
    request.nameTarget(info);
    const span = this.tracer.startSpan(
      handlerSpanName(info),
      { kind: this.api.SpanKind.INTERNAL, attributes: handlerAttributes(info) },
      request.context,
    );
    this.handlers.set(info, { span, context: this.api.trace.setSpan(request.context, span) });
  }

  runHandler(info: HandlerInfo, run: () => unknown): unknown {
    // A handler has a span only when its request has one (handlerStarted).
    const handler = info.request === null ? undefined : this.handlers.get(info);
    return handler === undefined ? run() : this.api.context.with(handler.context, run);
  }

  /** A handler has a span only when its request was followed (handlerStarted). */
  wantsEnd(_outcome: HandlerOutcome, followed: boolean): boolean {
    return followed;
  }

  handlerEnded(info: HandlerInfo, end: HandlerEnd): void {
    const handler = info.request === null ? undefined : this.handlers.get(info);
    if (handler === undefined) return;
    this.handlers.delete(info);
    const { span } = handler;
    const { SpanStatusCode } = this.api;
    span.setAttribute("conduit_mcp.outcome", end.outcome);
    if (end.outcome === "error") {
      const request = info.request === null ? undefined : this.requests.get(info.request);
      if (end.error === undefined) {
        // A tool's own `isError: true` result: the conventions' `tool_error`.
        span.setAttribute("error.type", "tool_error");
        span.setStatus({ code: SpanStatusCode.ERROR });
      } else {
        const { error } = end;
        span.setAttribute("error.type", errorType(error));
        // To the operator's trace backend only: never on the wire.
        try {
          if (error instanceof Error) span.recordException(error);
        } catch {
          // An error whose getters throw is still an error; the span ends below all the same.
        }
        span.setStatus({ code: SpanStatusCode.ERROR, message: messageOf(error) });
      }
      request?.markToolError();
    } else if (end.outcome === "cancelled" || end.outcome === "killed") {
      recordCancellation(span, end.cancellationSource);
      if (end.cancellationSource === "timeout") {
        // Past its deadline (`timeoutMs`): the server stopped it, an error of the call.
        span.setAttribute("error.type", "timeout");
        span.setStatus({ code: SpanStatusCode.ERROR, message: "deadline exceeded" });
      }
      if (end.outcome === "killed") {
        // Abandoned at the stream cancel timeout (an isolated tool's thread terminated).
        span.setAttribute("error.type", "killed");
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: "still running at the stream cancel timeout: abandoned",
        });
      }
    }
    span.end();
  }

  /**
   * Whether the global tracer provider still delegates to the API's no-op provider (how
   * `trace.setGlobalTracerProvider` and an SDK's `register()` install theirs:
   * https://open-telemetry.github.io/opentelemetry-js/classes/_opentelemetry_api.ProxyTracerProvider.html).
   * A provider registered some other way counts as an SDK.
   */
  private sdkMissing(): boolean {
    const provider = this.api.trace.getTracerProvider();
    return (
      provider instanceof this.api.ProxyTracerProvider && provider.getDelegate() === this.noSdk
    );
  }

  /** The parent context and the links of a request's span. */
  private parentOf(info: RequestInfo): { context: Context; links: Link[] } {
    const { api } = this;
    const active = api.context.active();
    const meta = info.params?._meta;
    const fromMeta = isPlainObject(meta)
      ? this.remoteContext(meta.traceparent, meta.tracestate)
      : undefined;
    const headers = info.meta.headers;
    const fromHeaders =
      headers === undefined
        ? undefined
        : this.remoteContext(first(headers.traceparent), first(headers.tracestate));
    const remote = fromMeta ?? fromHeaders;
    if (remote === undefined) return { context: active, links: [] };
    const links: Link[] = [];
    if (
      fromMeta !== undefined &&
      fromHeaders !== undefined &&
      fromHeaders.spanId !== remote.spanId
    ) {
      links.push({ context: fromHeaders });
    }
    const ambient = api.trace.getSpanContext(active);
    if (
      ambient !== undefined &&
      api.isSpanContextValid(ambient) &&
      ambient.spanId !== remote.spanId &&
      !links.some((link) => link.context.spanId === ambient.spanId)
    ) {
      links.push({ context: ambient });
    }
    return { context: api.trace.setSpanContext(active, remote), links };
  }

  /** A valid remote span context from W3C `traceparent`/`tracestate` values, or undefined. */
  private remoteContext(traceparent: unknown, tracestate: unknown): SpanContext | undefined {
    if (typeof traceparent !== "string" || traceparent.length > MAX_CARRIER_LENGTH) {
      return undefined;
    }
    const match = TRACEPARENT.exec(traceparent.trim());
    if (match === null) return undefined;
    const [, version, traceId, spanId, flags, rest] = match as unknown as [
      string,
      string,
      string,
      string,
      string,
      string | undefined,
    ];
    // Version ff is invalid; version 00 has exactly four fields (W3C Trace Context §3.2.2.1).
    if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
    const context: SpanContext = {
      traceId,
      spanId,
      // Only the `sampled` flag is defined (§3.2.2.5); other bits are ignored.
      traceFlags: Number.parseInt(flags, 16) & this.api.TraceFlags.SAMPLED,
      isRemote: true,
    };
    if (!this.api.isSpanContextValid(context)) return undefined;
    if (typeof tracestate === "string" && tracestate.length <= MAX_CARRIER_LENGTH) {
      try {
        return { ...context, traceState: this.api.createTraceState(tracestate) };
      } catch {
        // A tracestate the API cannot parse is dropped (§3.3.1.1: the parent still counts).
      }
    }
    return context;
  }
}

/**
 * The request's answer goes through here: the request span ends when its exchange ends
 * (answered, or cancelled: a JSON -32800 or a stream closed without a response), with the
 * JSON-RPC error code when there is one.
 */
class TracedSink implements ResponseSink {
  private done = false;
  private toolError = false;

  constructor(
    private readonly inner: ResponseSink,
    readonly span: Span,
    private readonly info: RequestInfo,
    private readonly api: OpenTelemetryApi,
    /** The context whose active span is this request's: its handler's parent. */
    readonly context: Context,
  ) {}

  get streamable(): boolean {
    return this.inner.streamable;
  }
  get ended(): boolean {
    return this.inner.ended;
  }
  get lifetime() {
    return this.inner.lifetime;
  }
  notify(json: string): Promise<void> {
    return this.inner.notify(json);
  }
  // The first answer or cancel ends the span, even when the client already went away (a
  // disconnect ends the exchange before the cancel it causes reaches the sink).
  respond(json: string, status?: number, headers?: Readonly<Record<string, string>>): void {
    this.finish(json, false);
    this.inner.respond(json, status, headers);
  }
  cancel(json: string): void {
    this.finish(json, true);
    this.inner.cancel(json);
  }
  setSessionId(id: string): void {
    this.inner.setSessionId(id);
  }
  setListener(listener: SinkListener | null): void {
    this.inner.setListener(listener);
  }
  releaseSlots(): void {
    this.inner.releaseSlots?.();
  }
  callReleasesSlots(): void {
    this.inner.callReleasesSlots?.();
  }

  /** Names the span after its target once the target is known to exist (bounded names). */
  nameTarget(handler: HandlerInfo): void {
    const { span } = this;
    if (handler.kind === "tool") {
      span.updateName(`tools/call ${handler.name}`);
      span.setAttribute("gen_ai.tool.name", handler.name);
      span.setAttribute("gen_ai.operation.name", "execute_tool");
    } else if (handler.kind === "prompt") {
      span.updateName(`prompts/get ${handler.name}`);
      span.setAttribute("gen_ai.prompt.name", handler.name);
    } else if (handler.kind === "resource" || handler.kind === "resource-template") {
      span.setAttribute("mcp.resource.uri", handler.name);
    }
  }

  /** The handler failed or returned an `isError` result. */
  markToolError(): void {
    this.toolError = true;
  }

  private finish(json: string, cancelled: boolean): void {
    if (this.done) return;
    this.done = true;
    // An aborting handle tells its listener (this call's end) before its signal carries the
    // reason; the reason is read once the abort is complete.
    if (this.info.handle.aborted) queueMicrotask(() => this.close(json, cancelled));
    else this.close(json, cancelled);
  }

  private close(json: string, cancelled: boolean): void {
    const { span, api } = this;
    const error = errorOf(json, this.info.requestId);
    if (error !== null) span.setAttribute("rpc.response.status_code", String(error.code));
    const { handle } = this.info;
    const reason: unknown = handle.aborted ? handle.signal.reason : undefined;
    if (cancelled) {
      // A cancellation is the client's (or the server's) decision, not a failure.
      recordCancellation(span, reason instanceof RequestCancelledError ? reason.source : undefined);
    } else if (error !== null) {
      span.setAttribute("error.type", String(error.code));
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: error.message });
      if (reason instanceof RequestCancelledError) recordCancellation(span, reason.source);
    } else if (reason instanceof RequestCancelledError && reason.source === "timeout") {
      // Answered with a tool error at its deadline (`timeoutMs`): the server stopped the call.
      recordCancellation(span, reason.source);
      span.setAttribute("error.type", "timeout");
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: "deadline exceeded" });
    } else if (this.toolError && this.info.method === "tools/call") {
      span.setAttribute("error.type", "tool_error");
      span.setStatus({ code: api.SpanStatusCode.ERROR });
    }
    span.end();
  }
}

function recordCancellation(span: Span, source: string | undefined): void {
  const attributes: Attributes =
    source === undefined ? {} : { "conduit_mcp.cancellation.source": source };
  span.addEvent("conduit_mcp.cancelled", attributes);
  if (source !== undefined) span.setAttribute("conduit_mcp.cancellation.source", source);
}

function requestAttributes(info: RequestInfo): Attributes {
  const attributes: Attributes = {
    "mcp.method.name": info.method,
    "conduit_mcp.protocol.era": info.protocolEra,
    "conduit_mcp.scope.kind": scopeKind(info.meta.scope),
  };
  // The conventions: not recorded for a null id.
  if (info.requestId !== null) attributes["jsonrpc.request.id"] = String(info.requestId);
  const version = protocolVersionOf(info);
  if (version !== undefined) attributes["mcp.protocol.version"] = version;
  if (info.meta.sessionId !== null) {
    attributes["mcp.session.id"] = sessionAttribute(info.meta.sessionId);
  }
  const http = info.meta.headers !== undefined;
  attributes["network.transport"] = http ? "tcp" : "pipe";
  if (http) attributes["network.protocol.name"] = "http";
  return attributes;
}

function handlerAttributes(info: HandlerInfo): Attributes {
  const attributes: Attributes = {
    "mcp.method.name": info.method,
    "conduit_mcp.handler.kind": info.kind,
  };
  if (info.requestId !== null) attributes["jsonrpc.request.id"] = String(info.requestId);
  if (info.kind === "tool") {
    attributes["gen_ai.operation.name"] = "execute_tool";
    attributes["gen_ai.tool.name"] = info.name;
  } else if (info.kind === "prompt") {
    attributes["gen_ai.prompt.name"] = info.name;
  } else if (info.kind === "resource" || info.kind === "resource-template") {
    attributes["mcp.resource.uri"] = info.name;
  } else if (info.kind === "extension") {
    // The method name is the handler's name: already `mcp.method.name`.
  } else {
    attributes["conduit_mcp.completion.ref"] = info.name;
  }
  return attributes;
}

/**
 * Handler span names: the GenAI `execute_tool {tool}` for tools; the conventions have none for
 * the others, so these are conduit-mcp's own, low-cardinality (never a resource URI).
 */
function handlerSpanName(info: HandlerInfo): string {
  switch (info.kind) {
    case "tool":
      return `execute_tool ${info.name}`;
    case "prompt":
      return `get_prompt ${info.name}`;
    case "completion":
      return `complete ${info.name}`;
    case "extension":
      // A method the server registered (bounded by its own extensions), never client text.
      return info.method;
    default:
      return "read_resource";
  }
}

/** `error.type`: the error's class name (the Recording Errors guidance), bounded. */
function errorType(error: unknown): string {
  if (!(error instanceof Error)) return "_OTHER";
  try {
    const name = error.constructor?.name || error.name;
    return typeof name === "string" && name.length > 0 && name.length <= 64 ? name : "Error";
  } catch {
    return "Error"; // a getter that throws
  }
}

/** An Error's message for the span status (the operator's backend), bounded; "" otherwise. */
function messageOf(error: unknown): string {
  try {
    return error instanceof Error && typeof error.message === "string"
      ? error.message.slice(0, 1_024)
      : "";
  } catch {
    return "";
  }
}

/**
 * The version a request was served under: 2026-07-28 for the modern era; the
 * `MCP-Protocol-Version` header (or the `initialize` request's version) when it names a version
 * this server supports. Never a client's arbitrary text.
 */
function protocolVersionOf(info: RequestInfo): string | undefined {
  if (info.protocolEra === "2026-07-28") return "2026-07-28";
  const header = first(info.meta.headers?.["mcp-protocol-version"]);
  if (typeof header === "string" && isSupportedProtocolVersion(header)) return header;
  const requested = info.method === "initialize" ? info.params?.protocolVersion : undefined;
  if (typeof requested === "string" && isSupportedProtocolVersion(requested)) return requested;
  return undefined;
}

/**
 * `mcp.session.id` as a digest: a session id lets its holder act in the session, and traces
 * travel to backends far from the server; the digest still ties a session's spans together.
 */
function sessionAttribute(sessionId: string): string {
  return createHash("sha256").update(sessionId).digest("hex").slice(0, 32);
}

function scopeKind(scope: string): string {
  const colon = scope.indexOf(":");
  return colon === -1 ? scope : scope.slice(0, colon);
}

function first(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === "string" ? value : value?.[0];
}

/** The `{ code, message }` of a JSON-RPC error response for `id`, or null for a result. */
function errorOf(
  json: string,
  id: string | number | null,
): { code: number; message: string } | null {
  // The responses of json-rpc.ts put `error` or `result` right after the id.
  const prefix = `{"jsonrpc":"2.0","id":${id === null ? "null" : JSON.stringify(id)},"error":`;
  if (!json.startsWith(prefix)) return null;
  try {
    const error = (JSON.parse(json) as { error?: { code?: unknown; message?: unknown } }).error;
    if (typeof error?.code !== "number") return null;
    return { code: error.code, message: typeof error.message === "string" ? error.message : "" };
  } catch {
    return null;
  }
}

/**
 * The tracing observer of a server: spans from `provider`, else from the global provider (an
 * SDK registered later is picked up: the API's global tracer delegates to it).
 *
 * @example
 * ```ts
 * const api = await loadOpenTelemetry();
 * const tracing = api === null ? null : createTracing(api, undefined, "1.0.0");
 * ```
 */
export function createTracing(
  api: object,
  provider: TracerProviderLike | undefined,
  version: string,
): DispatchObserver {
  const otel = api as OpenTelemetryApi;
  const source = provider ?? otel.trace.getTracerProvider();
  return new RequestTracing(
    otel,
    source.getTracer("conduit-mcp", version) as Tracer,
    provider === undefined,
  );
}
