/**
 * What observers learn of a handler invocation (its start and its end) and what a handler's value
 * becomes: a checked result, or an answer the invocation writes itself.
 */
import type { RequestId } from "../../../cancellation/types.js";
import type { HandlerKind } from "../../../diagnostics.js";
import type { CancellationSource } from "../../../errors.js";
import type { ProtocolEra, RequestInfo } from "../request-info.js";

/** How a handler invocation ended, as counted by `conduit_mcp_tool_calls_total{outcome}`. */
export type HandlerOutcome = "ok" | "error" | "cancelled" | "killed";
/** The outcome of a tool call (the same four values). */
export type ToolOutcome = HandlerOutcome;

/** What an observer learns when a handler starts (and again, with {@link HandlerEnd}, when it ends). */
export interface HandlerInfo {
  /** `tools/call`, `resources/read`, `prompts/get` or `completion/complete`. */
  readonly method: string;
  /** Which handler: `tool`, `resource`, `resource-template`, `prompt` or `completion`. */
  readonly kind: HandlerKind;
  /** The tool or prompt name, the resource URI, or the completion reference. */
  readonly name: string;
  readonly requestId: RequestId | null;
  readonly scope: string;
  readonly sessionId: string | null;
  readonly protocolEra: ProtocolEra;
  /** The authenticated principal's id, or null. */
  readonly principalId: string | null;
  /**
   * The request this invocation answers, as observers were told of it; null when no observer
   * followed it (none asked, or none stood a sink of its own in front of it).
   */
  readonly request: RequestInfo | null;
}

/** How a handler ended. */
export interface HandlerEnd {
  readonly outcome: HandlerOutcome;
  /** What the handler threw, or why its result was refused; undefined otherwise. */
  readonly error?: unknown;
  /** For `cancelled` and `killed`: which cause aborted the request. */
  readonly cancellationSource?: CancellationSource;
}

/** A handler's value turned into a result object, or refused (never sent as is). */
export type HandlerResult =
  | {
      readonly ok: true;
      readonly result: Record<string, unknown>;
      /** A tool result with `isError: true`: counted as outcome `error`. */
      readonly isError?: boolean;
      /** Why a value was replaced by an error result (e.g. invalid `structuredContent`). */
      readonly error?: unknown;
    }
  | { readonly ok: false; readonly error: unknown };

/** An answer an invocation writes itself: JSON-RPC text, HTTP status and headers. */
export interface InvocationAnswer {
  readonly json: string;
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
}
