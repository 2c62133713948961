/**
 * Asking the client for input on a 2026-07-28 request: input-required results (multi round-trip
 * requests, https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr), for
 * `ctx.elicit`, `ctx.sample` and `ctx.roots`
 * (https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation,
 * .../client/sampling, .../client/roots).
 *
 * How a handler's progress survives a round — **re-run with answers**, plus optional explicit
 * state:
 *
 * 1. The handler runs. An ask whose answer is known resolves with it; an ask without one records
 *    its question and rejects with {@link InputPending}, which ends the handler.
 * 2. The request then answers `resultType: "input_required"` with every question recorded in the
 *    run (several asks in one `Promise.all` make several questions in one round) and a sealed
 *    `requestState` holding the answers used so far, the handler's `ctx.saveState` value and the
 *    flow's expiry (request-state.ts).
 * 3. The client's retry (any node holding the key) runs the handler again from the top; the
 *    answers of earlier rounds come from the state, the new ones from `inputResponses`, so the
 *    handler reaches further, and either asks again (another round) or returns its result.
 *
 * Work before an ask is therefore done again on every round: keep it cheap and free of side
 * effects, or save its outcome with `ctx.saveState` and read it back from `ctx.savedState`.
 *
 * Questions are keyed: by the caller's `key` option, else `elicit-1`, `sample-2`, `roots-3`… in
 * the order of the asks of one run (stable as long as the handler asks the same way given the
 * same answers). Answers already sealed win over a resent `inputResponses` entry (a client cannot
 * rewrite an earlier round); answers nobody asks for are ignored.
 */
import { z } from "zod";
import { CannotAskClientError, MissingClientCapabilityError } from "../../errors.js";
import { isPlainObject } from "../wire/index.js";
import { RequestStateSealer, type StateBinding } from "./request-state.js";

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

/**
 * What an ask without an answer rejects with: the handler stops here and the request answers an
 * input-required result. A handler that catches every error should rethrow it (the request
 * answers input-required whatever the handler does once a question is pending).
 */
export class InputPending extends Error {
  constructor() {
    super("Waiting for the client's answer (the request answers input_required)");
    this.name = "InputPending";
  }
}

/** What the server's `inputRequired` option resolves to (server/options.ts). */
export interface InputRequiredSettings {
  readonly sealer: RequestStateSealer;
  /** How long a flow may last from its first round, in ms. */
  readonly ttlMs: number;
  /** Most `inputResponses` entries one request may carry. */
  readonly maxInputResponses: number;
  /** Longest `inputResponses`, as JSON text. */
  readonly maxResponseBytes: number;
}

/** How a run of the handler ended, as far as asking goes. */
export type RoundVerdict =
  | { readonly kind: "complete" }
  | { readonly kind: "input_required"; readonly json: string | null }
  | { readonly kind: "invalid"; readonly message: string };

/** A question as sent: a request's method and params. */
export type InputRequest = {
  readonly method: string;
  readonly params?: Record<string, unknown>;
};

const KEY = /^[A-Za-z0-9_.-]{1,64}$/;
const INVALID_STATE = "requestState is invalid or expired; retry the request without it";
const RESPONSES_NOT_OBJECT = "inputResponses must be an object of objects";

/**
 * Opens the asking side of one request: checks `requestState` and `inputResponses`, then hands out
 * the {@link InputRound} the handler asks through; a string says why the request is refused
 * (-32602).
 *
 * @example
 * ```ts
 * const round = openInputRound(params, settings, binding, clientCapabilities);
 * if (typeof round === "string") return answerError(request, -32602, round);
 * ```
 */
export function openInputRound(
  params: Readonly<Record<string, unknown>> | undefined,
  settings: InputRequiredSettings,
  binding: StateBinding,
  clientCapabilities: Readonly<Record<string, unknown>>,
): InputRound | string {
  const responses = params?.inputResponses;
  let given: Readonly<Record<string, unknown>> = NONE;
  if (responses !== undefined) {
    if (!isPlainObject(responses)) return RESPONSES_NOT_OBJECT;
    const keys = Object.keys(responses);
    if (keys.length > settings.maxInputResponses) {
      return `inputResponses may carry at most ${settings.maxInputResponses} entries`;
    }
    for (const key of keys) if (!isPlainObject(responses[key])) return RESPONSES_NOT_OBJECT;
    if (JSON.stringify(responses).length > settings.maxResponseBytes) {
      return `inputResponses may be at most ${settings.maxResponseBytes} characters of JSON`;
    }
    given = responses;
  }
  const token = params?.requestState;
  let sealed: Readonly<Record<string, unknown>> = NONE;
  let state: unknown;
  let exp = settings.sealer.currentTime() + settings.ttlMs;
  if (token !== undefined) {
    const payload = settings.sealer.open(token, binding);
    if (payload === null) return INVALID_STATE;
    const answers = payload.answers;
    if (!isPlainObject(answers)) return INVALID_STATE;
    sealed = answers;
    state = payload.state;
    exp = payload.exp as number;
  }
  return new InputRound(settings, binding, clientCapabilities, given, sealed, state, exp);
}

const NONE: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * Where a handler's `ctx.elicit` / `ctx.elicitUrl` / `ctx.sample` / `ctx.roots` go. One per
 * request that can ask; the handler call delegates to it and knows nothing of the era. Two kinds:
 * {@link InputRound} (2026-07-28 input-required results: asks end the request, `verdict` says
 * how) and `ServerRequestAsker` (server-requests.ts: 2025-11-25 requests on the call's stream,
 * asks resolve in place, `close` withdraws the open ones when the call ends).
 */
export interface ClientAsker {
  elicit<T>(
    message: string,
    schema: ElicitSchema | z.ZodObject,
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

/**
 * The asks of one run of a handler on a 2026-07-28 request.
 *
 * @example
 * ```ts
 * const answer = await round.elicit("Proceed?", { type: "object", properties: { ok: { type: "boolean" } } });
 * ```
 */
export class InputRound implements ClientAsker {
  private readonly pending = new Map<string, InputRequest>();
  /** Answers used by this run (sealed ones and new ones), carried into the next state. */
  private readonly used: Record<string, unknown> = {};
  private asked = 0;
  private invalid: string | null = null;
  private nextState: unknown;

  constructor(
    private readonly settings: InputRequiredSettings,
    private readonly binding: StateBinding,
    private readonly capabilities: Readonly<Record<string, unknown>>,
    private readonly given: Readonly<Record<string, unknown>>,
    private readonly sealed: Readonly<Record<string, unknown>>,
    /** The handler's saved state from the previous round, undefined on the first. */
    readonly savedState: unknown,
    private readonly exp: number,
  ) {
    this.nextState = savedState;
  }

  /** Sets the value the next round's `savedState` will be (JSON-serialisable). */
  saveState(value: unknown): void {
    this.nextState = value;
  }

  elicit<T>(
    message: string,
    schema: ElicitSchema | z.ZodObject,
    options?: AskOptions,
  ): Promise<ElicitResult<T>> {
    return this.ask(prepareElicit(this.capabilities, message, schema), options) as Promise<
      ElicitResult<T>
    >;
  }

  elicitUrl(message: string, url: string, options?: AskOptions): Promise<ElicitResult<undefined>> {
    return this.ask(prepareElicitUrl(this.capabilities, message, url), options) as Promise<
      ElicitResult<undefined>
    >;
  }

  sample(request: SampleRequest, options?: AskOptions): Promise<SampleResult> {
    return this.ask(prepareSample(this.capabilities, request), options) as Promise<SampleResult>;
  }

  roots(options?: AskOptions): Promise<RootsResult> {
    return this.ask(prepareRoots(this.capabilities), options) as Promise<RootsResult>;
  }

  waiting(): boolean {
    return this.pending.size > 0 || this.invalid !== null;
  }

  /** How this run ends as far as asking goes; called once the handler settled. */
  verdict(): RoundVerdict {
    if (this.invalid !== null) return { kind: "invalid", message: this.invalid };
    if (this.pending.size === 0) return { kind: "complete" };
    const payload: { exp: number } & Record<string, unknown> = {
      exp: this.exp,
      answers: this.used,
    };
    if (this.nextState !== undefined) payload.state = this.nextState;
    let requestState: string | null;
    try {
      requestState = this.settings.sealer.seal(payload, this.binding);
    } catch {
      requestState = null; // a state that is not JSON (a cycle, a BigInt)
    }
    if (requestState === null) return { kind: "input_required", json: null };
    return {
      kind: "input_required",
      json: JSON.stringify({
        resultType: "input_required",
        inputRequests: Object.fromEntries(this.pending),
        requestState,
      }),
    };
  }

  private ask(prepared: PreparedAsk | Error, options: AskOptions | undefined): Promise<unknown> {
    if (prepared instanceof Error) return Promise.reject(prepared);
    const { kind, request, check } = prepared;
    this.asked++;
    const key = options?.key ?? `${kind}-${this.asked}`;
    if (typeof key !== "string" || !KEY.test(key)) {
      return Promise.reject(new TypeError("ask key: 1-64 characters of A-Z a-z 0-9 _ . -"));
    }
    const fromState = Object.hasOwn(this.sealed, key);
    const answer = fromState
      ? this.sealed[key]
      : Object.hasOwn(this.given, key)
        ? this.given[key]
        : undefined;
    if (answer === undefined) {
      this.pending.set(key, request);
      return pendingPromise();
    }
    const checked = check(answer);
    if (typeof checked === "string") {
      this.invalid ??= `Invalid inputResponses entry ${key}: ${checked}`;
      return pendingPromise();
    }
    this.used[key] = answer;
    return Promise.resolve(checked);
  }
}

/**
 * One question as the spec's request (`elicitation/create`, `sampling/createMessage`,
 * `roots/list`) with the check of its answer: shared by both eras' askers.
 */
export interface PreparedAsk {
  /** The kind, as default question keys name it. */
  readonly kind: "elicit" | "sample" | "roots";
  readonly request: InputRequest;
  /** The answer, checked and shaped; a string says what is wrong with it. */
  readonly check: (answer: unknown) => unknown;
}

/**
 * A form elicitation for a client with `capabilities`, or the error the ask rejects with: a
 * {@link MissingClientCapabilityError}, or a TypeError for a schema the spec does not allow.
 */
export function prepareElicit(
  capabilities: Readonly<Record<string, unknown>>,
  message: string,
  schema: ElicitSchema | z.ZodObject,
): PreparedAsk | Error {
  const elicitation = capabilities.elicitation;
  // An empty `elicitation` object declares form mode (2025-11-25 and 2026-07-28 elicitation,
  // "Capabilities").
  const form =
    isPlainObject(elicitation) &&
    (isPlainObject(elicitation.form) || !isPlainObject(elicitation.url));
  if (!form) return new MissingClientCapabilityError({ elicitation: {} });
  const zod = schema instanceof z.ZodType ? schema : null;
  const requestedSchema = zod === null ? (schema as ElicitSchema) : jsonSchemaOf(zod);
  // A programming error, reported as such (-32603 and the server's onError), not sent.
  if (!isFlatForm(requestedSchema)) return new TypeError(FORM_RULE);
  return {
    kind: "elicit",
    request: { method: "elicitation/create", params: { mode: "form", message, requestedSchema } },
    check: (answer) => elicitAnswer(answer, requestedSchema, zod),
  };
}

/** A URL elicitation for a client with `capabilities`, or the error the ask rejects with. */
export function prepareElicitUrl(
  capabilities: Readonly<Record<string, unknown>>,
  message: string,
  url: string,
): PreparedAsk | Error {
  const elicitation = capabilities.elicitation;
  if (!isPlainObject(elicitation) || !isPlainObject(elicitation.url)) {
    return new MissingClientCapabilityError({ elicitation: { url: {} } });
  }
  return {
    kind: "elicit",
    request: { method: "elicitation/create", params: { mode: "url", message, url } },
    check: (answer) => elicitAnswer(answer, null, null),
  };
}

/** A sampling request for a client with `capabilities`, or the error the ask rejects with. */
export function prepareSample(
  capabilities: Readonly<Record<string, unknown>>,
  request: SampleRequest,
): PreparedAsk | Error {
  const sampling = capabilities.sampling;
  if (!isPlainObject(sampling)) return new MissingClientCapabilityError({ sampling: {} });
  if (
    (request.tools !== undefined || request.toolChoice !== undefined) &&
    !isPlainObject(sampling.tools)
  ) {
    return new MissingClientCapabilityError({ sampling: { tools: {} } });
  }
  const context = request.includeContext;
  if (context !== undefined && context !== "none" && !isPlainObject(sampling.context)) {
    return new MissingClientCapabilityError({ sampling: { context: {} } });
  }
  return {
    kind: "sample",
    request: { method: "sampling/createMessage", params: { ...request } },
    check: sampleAnswer,
  };
}

/** A roots request for a client with `capabilities`, or the error the ask rejects with. */
export function prepareRoots(capabilities: Readonly<Record<string, unknown>>): PreparedAsk | Error {
  if (!isPlainObject(capabilities.roots)) return new MissingClientCapabilityError({ roots: {} });
  return { kind: "roots", request: { method: "roots/list", params: {} }, check: rootsAnswer };
}

/** Rejected with {@link InputPending}, and marked handled: a handler that never awaits it is fine. */
function pendingPromise(): Promise<never> {
  const promise = Promise.reject(new InputPending());
  promise.catch(noop);
  return promise;
}

function noop(): void {}

/** A zod object as a form's `requestedSchema` (only the keys the spec's schema has). */
function jsonSchemaOf(schema: z.ZodType): ElicitSchema {
  const json = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }) as Record<
    string,
    unknown
  >;
  const result: {
    type: "object";
    properties: Record<string, Record<string, unknown>>;
    required?: string[];
  } = {
    type: "object",
    properties: (json.properties ?? {}) as Record<string, Record<string, unknown>>,
  };
  if (Array.isArray(json.required)) result.required = json.required as string[];
  return result;
}

const FORM_RULE =
  "ctx.elicit: the schema must be an object of primitive properties (string, number, integer, boolean, or an array of enum strings), as MCP 2026-07-28 elicitation, 'Requested Schema', restricts it";
const PRIMITIVE_TYPES: ReadonlySet<unknown> = new Set(["string", "number", "integer", "boolean"]);

/** A form's schema as the spec restricts it: flat, primitive properties (arrays of enums only). */
function isFlatForm(schema: unknown): boolean {
  if (!isPlainObject(schema) || schema.type !== "object" || !isPlainObject(schema.properties)) {
    return false;
  }
  if (schema.required !== undefined && !Array.isArray(schema.required)) return false;
  return Object.values(schema.properties).every(
    (property) =>
      isPlainObject(property) &&
      (PRIMITIVE_TYPES.has(property.type) ||
        (property.type === "array" &&
          isPlainObject(property.items) &&
          allowedValues(property.items) !== null)),
  );
}

/** An `ElicitResult`, checked against the form it answers; a string says what is wrong. */
function elicitAnswer(
  answer: unknown,
  schema: ElicitSchema | null,
  zod: z.ZodType | null,
): unknown {
  if (!isPlainObject(answer)) return "not an object";
  const { action } = answer;
  if (action === "decline" || action === "cancel") return { action };
  if (action !== "accept") return "action must be accept, decline or cancel";
  if (schema === null) return { action }; // URL mode: no content
  const content = answer.content ?? {};
  if (!isPlainObject(content)) return "content must be an object";
  if (zod !== null) {
    const parsed = zod.safeParse(content);
    return parsed.success
      ? { action, content: parsed.data }
      : "content does not match the requested schema";
  }
  const kept: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties)) {
    const value = content[name];
    if (value === undefined) {
      if (schema.required?.includes(name)) return `content.${name} is required`;
      continue;
    }
    if (!matches(value, property)) return `content.${name} does not match the requested schema`;
    kept[name] = value;
  }
  return { action, content: kept };
}

/** One value against a primitive property schema of a form (2026-07-28 elicitation, "Requested Schema"). */
function matches(value: unknown, property: Readonly<Record<string, unknown>>): boolean {
  const allowed = allowedValues(property);
  switch (property.type) {
    case "string":
      return typeof value === "string" && (allowed === null || allowed.includes(value));
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "array": {
      if (!Array.isArray(value) || !value.every((item) => typeof item === "string")) return false;
      const items = isPlainObject(property.items) ? allowedValues(property.items) : null;
      return items === null || value.every((item) => items.includes(item));
    }
    default:
      return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
  }
}

/** The values an enum property allows (`enum`, or the `const`s of `oneOf` / `anyOf`), or null. */
function allowedValues(property: Readonly<Record<string, unknown>>): unknown[] | null {
  if (Array.isArray(property.enum)) return property.enum;
  const options = Array.isArray(property.oneOf)
    ? property.oneOf
    : Array.isArray(property.anyOf)
      ? property.anyOf
      : null;
  return options === null
    ? null
    : options.map((option) => (isPlainObject(option) ? option.const : undefined));
}

/** A `CreateMessageResult`; a string says what is wrong. */
function sampleAnswer(answer: unknown): unknown {
  if (!isPlainObject(answer)) return "not an object";
  if (answer.role !== "assistant" && answer.role !== "user")
    return "role must be assistant or user";
  if (typeof answer.model !== "string") return "model must be a string";
  if (answer.stopReason !== undefined && typeof answer.stopReason !== "string") {
    return "stopReason must be a string";
  }
  const blocks = Array.isArray(answer.content) ? answer.content : [answer.content];
  if (
    blocks.length === 0 ||
    !blocks.every((block) => isPlainObject(block) && typeof block.type === "string")
  ) {
    return "content must be a content block or an array of them";
  }
  return answer;
}

/** A `ListRootsResult`; a string says what is wrong. */
function rootsAnswer(answer: unknown): unknown {
  if (!isPlainObject(answer) || !Array.isArray(answer.roots)) return "roots must be an array";
  for (const root of answer.roots) {
    if (!isPlainObject(root) || typeof root.uri !== "string" || !root.uri.startsWith("file://")) {
      return "every root needs a file:// uri";
    }
    if (root.name !== undefined && typeof root.name !== "string")
      return "a root's name must be a string";
  }
  return { roots: answer.roots };
}

/** The error an ask gives where the client cannot be asked (2025-11-25, or a method without MRTR). */
export function cannotAsk(): Promise<never> {
  return Promise.reject(
    new CannotAskClientError(
      "The client cannot be asked for input on this request (only tools/call, prompts/get and resources/read can ask)",
    ),
  );
}

/** The `inputRequired` option of a server (every member optional). */
export interface InputRequiredOptions {
  /**
   * Keys sealing `requestState`, newest first (the first seals, all open: rotation). Each at least
   * 32 bytes; a string is taken as UTF-8. Every node a retry may reach needs the same list.
   * Default: one random key per process, so a retry only works on the process that asked.
   */
  readonly keys?: readonly (string | Uint8Array)[];
  /** How long a flow may last from its first round, in ms (not extended by later rounds). Default 600 000. */
  readonly ttlMs?: number;
  /** Longest `requestState` accepted or produced, in characters. Default 65 536. */
  readonly maxStateBytes?: number;
  /** Most `inputResponses` entries a request may carry. Default 32. */
  readonly maxInputResponses?: number;
  /** Longest `inputResponses`, in characters of JSON. Default 262 144. */
  readonly maxResponseBytes?: number;
}

/**
 * Settings from options, defaults filled in; throws a TypeError naming a bad value.
 *
 * @example
 * ```ts
 * const settings = inputRequiredSettings({ keys: [process.env.MCP_STATE_KEY as string] });
 * ```
 */
export function inputRequiredSettings(
  options: InputRequiredOptions = {},
  now?: () => number,
): InputRequiredSettings {
  const bounded = (
    value: number | undefined,
    name: string,
    fallback: number,
    max: number,
  ): number => {
    if (value === undefined) return fallback;
    if (!Number.isSafeInteger(value) || value < 1 || value > max) {
      throw new TypeError(`inputRequired.${name} must be an integer from 1 to ${max}`);
    }
    return value;
  };
  const maxStateBytes = bounded(options.maxStateBytes, "maxStateBytes", 65_536, 16_777_216);
  return {
    sealer: new RequestStateSealer({ keys: options.keys, maxStateBytes, now }),
    ttlMs: bounded(options.ttlMs, "ttlMs", 600_000, 86_400_000),
    maxInputResponses: bounded(options.maxInputResponses, "maxInputResponses", 32, 1_024),
    maxResponseBytes: bounded(options.maxResponseBytes, "maxResponseBytes", 262_144, 16_777_216),
  };
}

/** The methods that may answer input_required (2026-07-28 MRTR, "Supported Requests"). */
export const ASKING_METHODS: ReadonlySet<string> = new Set([
  "tools/call",
  "prompts/get",
  "resources/read",
]);
