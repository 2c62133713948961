/**
 * The method table: what a capability registers with the dispatcher. A capability is a
 * {@link ProtocolFeature}: its methods (name, the era(s) serving each, a params check, what a
 * running request holds, the handler) and the server capabilities it advertises. The dispatcher
 * routes a request to its method, applies the era rules and the error ladder, and computes the
 * `initialize` (2025-11-25) and `server/discover` (2026-07-28) capabilities from the features it
 * was given, so a method exists and is advertised in one place.
 *
 * Users add methods of their own through the extension seam built on it (extension.ts:
 * `defineExtension`, served by an `ExtensionFeature`), as the built-in tasks extension does.
 */
import type { RequestHandle, RequestId } from "../../cancellation/types.js";
import type { ClientAsker } from "../asking/index.js";
import type { PresentedParamHeaders, ResponseSink } from "../wire/index.js";
import { isPlainObject } from "../wire/index.js";
import type { HandlerInvocation } from "./handler-call/handler-call.js";
import type { VisibilityContext } from "./primitive.js";
import type { RequestInfo, RequestMeta } from "./request-info.js";

/** Which era serves a method: the 2025 session/JSON-RPC era, 2026-07-28, or both. */
export type MethodEras = "2025" | "2026" | "both";

/**
 * What a running request of a method holds of its scope's bounds, besides the request unit
 * every request holds: `"stream"` — also a stream unit when answered on an SSE stream (a handler
 * that may run long and report progress); `"request"` — nothing more.
 */
export type MethodHolds = "request" | "stream";

/** What a validated 2026-07-28 envelope tells the dispatcher (see modern-envelope.ts). */
export interface ModernRequestInfo {
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  /**
   * The request's `Mcp-Param-*` headers, checked against the tool's `x-mcp-header` ones; absent
   * when the request did not come over HTTP (other transports may ignore the annotations).
   */
  readonly paramHeaders?: PresentedParamHeaders;
}

/** One request as a method sees it: already tracked; answered through its {@link MethodHost}. */
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
  readonly eras: MethodEras;
  /**
   * Checks the request's params before `run`: a message for a -32602 Invalid params answer, or
   * null when they are fine. Null when the method checks them itself as it goes.
   */
  readonly checkParams?:
    | ((params: Readonly<Record<string, unknown>> | undefined) => string | null)
    | null
    | undefined;
  /** What a running request holds besides its request unit. Default `"request"`. */
  readonly holds?: MethodHolds | undefined;
  /** Handles the request; must answer (or hand it to a handler call). */
  run(request: MethodRequest): Promise<void>;
}

/** Server capabilities as `initialize` and `server/discover` publish them. */
export type ServerCapabilities = Readonly<Record<string, unknown>>;

/**
 * A capability the dispatcher serves: its methods and what it advertises in each era. The
 * dispatcher merges the features' capabilities by top-level key (and `extensions` by extension
 * id), in the order the features were registered.
 */
export interface ProtocolFeature {
  /** Names the feature (a method defined by two features is an error naming both). */
  readonly id: string;
  readonly methods: Readonly<Record<string, MethodDefinition>>;
  /** Added to the `capabilities` of `initialize` results (2025-11-25). */
  readonly capabilities2025?: ServerCapabilities | undefined;
  /** Added to the `capabilities` of `server/discover` results (2026-07-28). */
  readonly capabilities2026?: ServerCapabilities | undefined;
  /**
   * An extension declared only to the clients it accepts: left out of the capabilities above,
   * `initialize` and `server/discover` add its `extensions[id]` per request.
   */
  readonly negotiated?: NegotiatedExtension | undefined;
}

/** An extension declared to a client only when that client's own declaration is acceptable. */
export interface NegotiatedExtension {
  readonly id: string;
  readonly settings: Readonly<Record<string, unknown>>;
  /** The eras whose `initialize` / `server/discover` may declare it. */
  readonly eras: MethodEras;
  /** Whether to declare it to a client that declared `clientSettings` for it (null: none). */
  accepts(clientSettings: Readonly<Record<string, unknown>> | null): boolean;
}

/** Where a detached call (a task's run) answers, under which handle, and through whom it asks. */
export interface DetachedRun {
  readonly sink: ResponseSink;
  readonly handle: RequestHandle;
  readonly asker: ClientAsker | null;
}

/** What a method may ask of the dispatcher that routed its request. */
export interface MethodHost {
  /**
   * Answers a tracked request: untrack, write, then clear the row. `headers` go on a plain JSON
   * answer only.
   */
  answer(
    request: MethodRequest,
    json: string,
    status?: number,
    headers?: Readonly<Record<string, string>>,
  ): Promise<void>;
  /** Answers a successful result object, adding `resultType` for 2026-07-28. */
  answerResult(request: MethodRequest, result: Readonly<Record<string, unknown>>): Promise<void>;
  /** Answers a JSON-RPC error. */
  answerError(
    request: MethodRequest,
    code: number,
    message: string,
    data?: unknown,
    status?: number,
  ): Promise<void>;
  /**
   * An item that exists but is forbidden by its scopes: 403 with a challenge naming them
   * (RFC 6750 §3.1 `insufficient_scope`).
   */
  forbidden(request: MethodRequest, scopes: readonly string[]): Promise<void>;
  /** Ends a tracked request's exchange without an answer (the client left, or cancelled it). */
  endUnanswered(request: MethodRequest): Promise<void>;
  /**
   * Hands a tracked request to a handler call; `detached` (a task's run) answers into the task's
   * sink under the task's handle instead, and asks through the task's asker.
   */
  startCall(
    request: MethodRequest,
    invocation: HandlerInvocation,
    progressToken?: string | number,
    detached?: DetachedRun,
  ): Promise<void>;
}

/** What a request's caller may see: its principal and scope. */
export function visibilityOf(meta: RequestMeta): VisibilityContext {
  return { principal: meta.principal, scope: meta.scope };
}

/** `params._meta.progressToken`, when a string or a number. */
export function progressTokenOf(
  params: Readonly<Record<string, unknown>> | undefined,
): string | number | undefined {
  const meta = params?._meta;
  if (!isPlainObject(meta)) return undefined;
  const token = meta.progressToken;
  return typeof token === "string" || typeof token === "number" ? token : undefined;
}

/**
 * The capabilities `features` advertise in one era, merged in order: by top-level key, and
 * `extensions` by extension id.
 *
 * @example
 * ```ts
 * capabilitiesOf([{ id: "logging", methods: {}, capabilities2026: { logging: {} } }], "2026");
 * // { logging: {} }
 * ```
 */
export function capabilitiesOf(
  features: readonly ProtocolFeature[],
  era: "2025" | "2026",
): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const feature of features) {
    const own = era === "2025" ? feature.capabilities2025 : feature.capabilities2026;
    if (own === undefined) continue;
    for (const [key, value] of Object.entries(own)) {
      const before = merged[key];
      merged[key] =
        key === "extensions" && isPlainObject(before) && isPlainObject(value)
          ? { ...before, ...value }
          : value;
    }
  }
  return merged;
}
