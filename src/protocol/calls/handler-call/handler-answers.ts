/**
 * The JSON-RPC answers a handler call writes besides its result: a thrown error as the client
 * may see it, a tool execution error, a run past its deadline, and a 2026-07-28 result with its
 * `resultType`. Functions of the call's fields, not closures: nothing is made per call but the
 * answer's text.
 */
import type { RequestId } from "../../../cancellation/types.js";
import {
  CannotAskClientError,
  ErrorCode,
  InvalidParamsError,
  MissingClientCapabilityError,
  WorkerPoolFullError,
} from "../../../errors.js";
import { errorResponseJson, internalErrorJson, successResponseJson } from "../../wire/index.js";

/** What an answer names of its call (a {@link HandlerCall} is one). */
export interface AnsweredCall {
  readonly requestId: RequestId | null;
  /** A 2026-07-28 request: results carry `resultType`, a missing capability is -32021. */
  readonly modern: boolean;
  readonly invocation: { readonly method: string; readonly name: string };
}

/**
 * The answer to a thrown error. Never the handler's message or stack on the wire (they may
 * name internals), except an {@link InvalidParamsError}'s, which the handler wrote for the client.
 */
export function thrownErrorJson(call: AnsweredCall, error: unknown): string {
  if (error instanceof WorkerPoolFullError) {
    return errorResponseJson(call.requestId, ErrorCode.ServerError, "Server busy");
  }
  if (error instanceof MissingClientCapabilityError && call.modern) {
    // MCP 2026-07-28 basic, "_meta": -32021 naming the capabilities (HTTP 400, set by the call).
    return errorResponseJson(call.requestId, ErrorCode.MissingCapability, error.message, {
      requiredCapabilities: error.requiredCapabilities,
    });
  }
  if (error instanceof CannotAskClientError) {
    if (call.invocation.method !== "tools/call") {
      return errorResponseJson(call.requestId, ErrorCode.InternalError, error.message);
    }
    return toolErrorJson(call, error.message);
  }
  if (!(error instanceof InvalidParamsError)) return internalErrorJson(call.requestId);
  if (call.invocation.method !== "tools/call") {
    return errorResponseJson(call.requestId, ErrorCode.InvalidParams, error.message);
  }
  return toolErrorJson(call, error.message);
}

/** A tool result with `isError: true` carrying `text` (a message written for the client). */
export function toolErrorJson(call: AnsweredCall, text: string): string {
  const result: Record<string, unknown> = {
    content: [{ type: "text", text }],
    isError: true,
  };
  if (call.modern) result.resultType = "complete";
  return successResponseJson(call.requestId, JSON.stringify(result));
}

/**
 * The answer of a run past its deadline. A tool's is a tool execution error (`isError: true`),
 * which the client hands to its model (MCP 2025-11-25 and 2026-07-28, Tools, "Error Handling":
 * https://modelcontextprotocol.io/specification/2026-07-28/server/tools#error-handling); any
 * other method's an internal error. The text names the deadline only.
 */
export function timeoutJson(call: AnsweredCall, limit: number): string {
  const text = `Tool ${call.invocation.name} did not finish within its ${limit} ms deadline`;
  if (call.invocation.method === "tools/call") return toolErrorJson(call, text);
  return errorResponseJson(call.requestId, ErrorCode.InternalError, "Request timed out");
}

/**
 * A 2026-07-28 result's JSON with `resultType: "complete"`: spliced in front of the serialized
 * object's own members rather than copying the object to add it. A result that carries a
 * `resultType` of its own (or serializes itself through `toJSON`) is copied, so that "complete"
 * replaces it as before.
 */
export function completeResultJson(result: Readonly<Record<string, unknown>>): string {
  if (!("resultType" in result) && typeof result.toJSON !== "function") {
    const json = JSON.stringify(result);
    return json === "{}"
      ? '{"resultType":"complete"}'
      : `{"resultType":"complete",${json.slice(1)}`;
  }
  return JSON.stringify({ ...result, resultType: "complete" });
}
