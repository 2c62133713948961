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
