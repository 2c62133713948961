/**
 * What the dispatcher knows of a request before it runs: who sent it ({@link RequestMeta}, fixed
 * by the transport) and, for observers, the request itself ({@link RequestInfo}).
 */
import type { RequestHandle, RequestId } from "../../cancellation/types.js";
import type { Principal } from "../../identity/index.js";
import type { LoggingLevel } from "../../logging-levels.js";

/** Which protocol era a request was served in. */
export type ProtocolEra = "2025-11-25" | "2026-07-28";

/** Who sent a request: fixed once by the transport, before dispatch. */
export interface RequestMeta {
  /** `session:…` > `principal:…` > `ip:…` (identity/scopeOf). */
  readonly scope: string;
  /**
   * The bucket that pays for what the request leaves behind (tasks, subscriptions): its principal,
   * else its client's IP bucket, whatever session it runs in, so sessions never multiply a
   * tenant's quotas. Null when the transport has no stable identity for the caller (`server.fetch`
   * given no `clientAddress` and no authentication): nothing a later request must find is made
   * then. Absent: `scope`.
   */
  readonly bucket?: string | null | undefined;
  readonly principal: Principal | null;
  /** The validated session id, or null. */
  readonly sessionId: string | null;
  /** The session's `logging/setLevel` threshold, or null (send every level). */
  readonly logLevel: LoggingLevel | null;
  /**
   * What the client declared it can be asked (elicitation, sampling, roots) in the `initialize`
   * of its session or stdio connection; null or absent when this server was not told (a
   * stateless request): then the server's `unknownCapabilities` rule applies.
   */
  readonly clientCapabilities?: Readonly<Record<string, unknown>> | null | undefined;
  /**
   * The transport's request headers, names in lower case, when it has any (HTTP): tracing reads
   * `traceparent`/`tracestate` and `mcp-protocol-version` from them. Absent for stdio.
   */
  readonly headers?: Readonly<Record<string, string | readonly string[] | undefined>> | undefined;
  /**
   * Where a handler's `ctx.request` comes from: the HTTP request's view, made on first use. Absent
   * where there is no HTTP request (stdio).
   */
  readonly view?: RequestViewSource | undefined;
}

/**
 * A read-only view of the HTTP request that brought a call (`ctx.request`; docs/limits.md, "The
 * request view"). Every value is the client's (hostile): validate what you use.
 */
export interface RequestView {
  /** The HTTP method, upper case (`POST`). */
  readonly method: string;
  /** The URL path, without its query string (as the door saw it: a framework may strip a mount). */
  readonly path: string;
  /**
   * The client's address as the server believes it (the socket peer, or the `X-Forwarded-For`
   * entry `trustProxy` vouches for); null when the door knows none (`server.fetch` without
   * `clientAddress`).
   */
  readonly clientAddress: string | null;
  /**
   * The headers the server's `requestHeaders` option allows, names in lower case, a repeated
   * header's values joined with ", " (RFC 9110, section 5.3); a header the request lacks is
   * absent. Never `Authorization`, `Proxy-Authorization` or `Cookie`.
   */
  readonly headers: Readonly<Record<string, string>>;
}

/** What makes a {@link RequestView} (the HTTP request core's context), once, when asked. */
export interface RequestViewSource {
  requestView(): RequestView;
}

/** What an observer learns about a request (any method) as it starts. */
export interface RequestInfo {
  readonly method: string;
  readonly requestId: RequestId | null;
  /** The request's `params` as sent (hostile: validate what you read). */
  readonly params: Readonly<Record<string, unknown>> | undefined;
  readonly meta: RequestMeta;
  readonly protocolEra: ProtocolEra;
  /** The request's handle: `aborted` and `signal.reason` tell whether and why it was cancelled. */
  readonly handle: RequestHandle;
}

/**
 * The bucket of a request ({@link RequestMeta.bucket}), `scope` when the transport did not say.
 *
 * @example
 * ```ts
 * bucketOf({ scope: "session:abc", bucket: "ip:203.0.113.7", principal: null, sessionId: "abc", logLevel: null }); // "ip:203.0.113.7"
 * ```
 */
export function bucketOf(meta: RequestMeta): string | null {
  return meta.bucket === undefined ? meta.scope : meta.bucket;
}

/**
 * The refusal of something a later request must find (a task, a subscription) when the request has
 * no stable identity ({@link RequestMeta.bucket} null).
 */
export const NO_STABLE_CLIENT =
  "This request has no stable client identity, so nothing made now could be found again: pass clientAddress to server.fetch (or authenticate the request).";

/**
 * A task's run outlives its request: it gets the view taken now (the request's objects are not
 * kept for as long as the task runs).
 */
export function snapshotView(source: RequestViewSource | undefined): RequestViewSource | null {
  if (source === undefined) return null;
  const view = source.requestView();
  return { requestView: () => view };
}
