/**
 * Asking the client, as a handler sees it: the vocabulary of `ctx.elicit`, `ctx.elicitUrl`,
 * `ctx.sample` and `ctx.roots` (MCP 2026-07-28 client/elicitation, client/sampling, client/roots,
 * https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation), the
 * {@link ClientAsker} every era's asker is, and one question as the spec's request
 * ({@link PreparedAsk}).
 */
import type { StandardSchemaV1 } from "@standard-schema/spec";

/** The user's reply to an elicitation (MCP 2026-07-28 `ElicitResult`). */
export type ElicitResult<T = Record<string, ElicitValue>> =
  | { readonly action: "accept"; readonly content: T }
  | { readonly action: "decline" | "cancel"; readonly content?: undefined };

/** A value of an accepted form (MCP `ElicitResult.content`). */
export type ElicitValue = string | number | boolean | string[];

/** A form elicitation's `requestedSchema`: a flat object of primitive properties. */
export interface ElicitSchema {
  readonly type: "object";
  readonly properties: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly required?: readonly string[];
}

/** The sampling request's params (MCP 2026-07-28 `CreateMessageRequestParams`). */
export interface SampleRequest {
  readonly messages: readonly SamplingMessage[];
  readonly maxTokens: number;
  readonly systemPrompt?: string;
  readonly modelPreferences?: Readonly<Record<string, unknown>>;
  readonly temperature?: number;
  readonly stopSequences?: readonly string[];
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly includeContext?: "none" | "thisServer" | "allServers";
  /** Tools for the client's model; needs the client's `sampling.tools` capability. */
  readonly tools?: readonly Readonly<Record<string, unknown>>[];
  readonly toolChoice?: { readonly mode?: "auto" | "required" | "none" };
}

/** One message to or from the model (MCP `SamplingMessage`). */
export interface SamplingMessage {
  readonly role: "user" | "assistant";
  readonly content: SamplingContent | readonly SamplingContent[];
}

/** A content block of a sampling message (text, image, audio, tool_use, tool_result). */
export type SamplingContent = { readonly type: string } & Readonly<Record<string, unknown>>;

/** The model's answer (MCP 2026-07-28 `CreateMessageResult`). */
export interface SampleResult extends SamplingMessage {
  readonly model: string;
  readonly stopReason?: string;
}

/** One root the client exposes (MCP `Root`). */
export interface Root {
  readonly uri: string;
  readonly name?: string;
}

/** The client's roots (MCP 2026-07-28 `ListRootsResult`). */
export interface RootsResult {
  readonly roots: readonly Root[];
}

/** Options of one ask. */
export interface AskOptions {
  /**
   * The question's key in `inputRequests` (1-64 characters of `A-Z a-z 0-9 _ . -`). Default: the
   * kind and the ask's position in the run (`elicit-1`, `sample-2`, `roots-3`).
   */
  readonly key?: string;
}

/** A question as sent: a request's method and params. */
export type InputRequest = {
  readonly method: string;
  readonly params?: Record<string, unknown>;
};

/** How a run of the handler ended, as far as asking goes. */
export type RoundVerdict =
  | { readonly kind: "complete" }
  | { readonly kind: "input_required"; readonly json: string | null }
  | { readonly kind: "invalid"; readonly message: string };

/** The verdict of a run that ends with its result: one frozen object, not one per call. */
export const COMPLETE_VERDICT: RoundVerdict = Object.freeze({ kind: "complete" });

/**
 * One question as the spec's request (`elicitation/create`, `sampling/createMessage`,
 * `roots/list`) with the check of its answer: shared by every era's asker (prepared-ask.ts).
 */
export interface PreparedAsk {
  /** The kind, as default question keys name it. */
  readonly kind: "elicit" | "sample" | "roots";
  readonly request: InputRequest;
  /**
   * The answer, checked and shaped; a string says what is wrong with it. A promise of the same
   * when the check is asynchronous (a schema library that validates so): askers read it through
   * `checkAnswer` (prepared-ask.ts).
   */
  readonly check: (answer: unknown) => unknown;
}

/**
 * Where a handler's `ctx.elicit` / `ctx.elicitUrl` / `ctx.sample` / `ctx.roots` go. One per
 * request that can ask; the handler call delegates to it and knows nothing of the era. Three kinds, each a
 * `ClientAskerBase` (client-asker-base.ts): `InputRound` (input-required.ts: 2026-07-28 input-required results,
 * asks end the request, `verdict` says how), `ServerRequestAsker` (server-requests.ts: 2025-11-25
 * requests on the call's stream, asks resolve in place, `close` withdraws the open ones when the
 * call ends) and `TaskAsker` (a task's questions in its record, answered by `tasks/update`).
 */
export interface ClientAsker {
  elicit<T>(
    message: string,
    schema: ElicitSchema | StandardSchemaV1,
    options?: AskOptions,
  ): Promise<ElicitResult<T>>;
  elicitUrl(message: string, url: string, options?: AskOptions): Promise<ElicitResult<undefined>>;
  sample(request: SampleRequest, options?: AskOptions): Promise<SampleResult>;
  roots(options?: AskOptions): Promise<RootsResult>;
  /** What the handler saved in an earlier round (input-required results only). */
  readonly savedState: unknown;
  saveState(value: unknown): void;
  /**
   * How the run ends as far as asking goes, once the handler settled: an asker whose asks end
   * the request (input-required results) says so here; absent, the handler's own result stands.
   */
  verdict?(): RoundVerdict;
  /** Whether the run will end asking (a question pending, or an answer invalid); cheap. */
  waiting?(): boolean;
  /**
   * The call is over (cancelled, its client gone, or settled): asks still waiting are withdrawn
   * and reject with `error()`; `reason` is what the client is told. The error is made only when
   * an ask is waiting: a settled call almost never has one, and an Error's stack is not free.
   */
  close?(reason: string, error: () => unknown): void;
}
