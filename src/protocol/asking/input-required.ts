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
import { CannotAskClientError } from "../../errors.js";
import { isPlainObject } from "../wire/index.js";
import {
  type AskOptions,
  COMPLETE_VERDICT,
  type InputRequest,
  type PreparedAsk,
  type RoundVerdict,
} from "./client-asker.js";
import { ClientAskerBase } from "./client-asker-base.js";
import { checkAnswer } from "./prepared-ask.js";
import { CallBinding, RequestStateSealer, type StateBinding } from "./request-state.js";

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
 * Whether a request opens its round with something to check (`requestState`, `inputResponses`):
 * a request that carries neither starts a first round, made on its first ask ({@link FirstRound}).
 */
export function carriesAnswers(params: Readonly<Record<string, unknown>> | undefined): boolean {
  return params?.inputResponses !== undefined || params?.requestState !== undefined;
}

/**
 * The first round of a 2026-07-28 request that carries neither `requestState` nor
 * `inputResponses` (nothing to check): its {@link InputRound} is made when the handler first asks
 * or saves state, which most calls never do. The flow's expiry is fixed when the request starts,
 * as {@link openInputRound} fixes it.
 *
 * @example
 * ```ts
 * const first = new FirstRound(settings, clientCapabilities, params.arguments);
 * const round = first.open("tools/call", "confirm", "principal:alice"); // as openInputRound(…) gives
 * ```
 */
export class FirstRound {
  private readonly exp: number;

  /**
   * `args`: the request's arguments, bound into a requestState with the call's method, name and
   * scope, which the call itself holds and gives at {@link open} (each kept once per call).
   */
  constructor(
    private readonly settings: InputRequiredSettings,
    private readonly capabilities: Readonly<Record<string, unknown>>,
    private readonly args: unknown,
  ) {
    this.exp = settings.sealer.currentTime() + settings.ttlMs;
  }

  /**
   * The round, as {@link openInputRound} opens one without answers or state, for a call of
   * `method` on `name` in `scope` (its {@link StateBinding}).
   */
  open(method: string, name: string, scope: string): InputRound {
    return new InputRound(
      this.settings,
      new CallBinding(method, name, scope, this.args),
      this.capabilities,
      NONE,
      NONE,
      undefined,
      this.exp,
    );
  }
}

/**
 * The asks of one run of a handler on a 2026-07-28 request.
 *
 * @example
 * ```ts
 * const answer = await round.elicit("Proceed?", { type: "object", properties: { ok: { type: "boolean" } } });
 * ```
 */
export class InputRound extends ClientAskerBase {
  // Both made at the first ask: most calls never ask, and a round lives as long as its call
  // (a Map and an object held by each of thousands of long calls: docs/benchmarks.md, "Scale").
  /** Questions this run asked that no answer covers yet, by key; null until the first. */
  private pending: Map<string, InputRequest> | null = null;
  /** Answers used by this run (sealed ones and new ones), carried into the next state. */
  private used: Record<string, unknown> | null = null;
  private invalid: string | null = null;
  private nextState: unknown;

  constructor(
    private readonly settings: InputRequiredSettings,
    private readonly binding: StateBinding,
    private readonly capabilities: Readonly<Record<string, unknown>>,
    private readonly given: Readonly<Record<string, unknown>>,
    private readonly sealed: Readonly<Record<string, unknown>>,
    /** The handler's saved state from the previous round, undefined on the first. */
    override readonly savedState: unknown,
    private readonly exp: number,
  ) {
    super();
    this.nextState = savedState;
  }

  /** Sets the value the next round's `savedState` will be (JSON-serialisable). */
  override saveState(value: unknown): void {
    this.nextState = value;
  }

  waiting(): boolean {
    return this.pending !== null || this.invalid !== null;
  }

  /** How this run ends as far as asking goes; called once the handler settled. */
  verdict(): RoundVerdict {
    if (this.invalid !== null) return { kind: "invalid", message: this.invalid };
    if (this.pending === null) return COMPLETE_VERDICT;
    const payload: { exp: number } & Record<string, unknown> = {
      exp: this.exp,
      answers: this.used ?? {},
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

  protected declared(): Readonly<Record<string, unknown>> {
    return this.capabilities;
  }

  protected ask(prepared: PreparedAsk, options: AskOptions | undefined): Promise<unknown> {
    const { request } = prepared;
    const key = this.keyOf(prepared, options);
    if (key instanceof TypeError) return Promise.reject(key);
    const fromState = Object.hasOwn(this.sealed, key);
    const answer = fromState
      ? this.sealed[key]
      : Object.hasOwn(this.given, key)
        ? this.given[key]
        : undefined;
    if (answer === undefined) {
      this.pending ??= new Map();
      this.pending.set(key, request);
      return pendingPromise();
    }
    // An asynchronous check settles before the handler can go on: a handler that awaits its
    // ask sees the verdict (and this round's `invalid`) before it ends.
    return Promise.resolve(
      checkAnswer(prepared, answer, (checked) => {
        if (typeof checked === "string") {
          this.invalid ??= `Invalid inputResponses entry ${key}: ${checked}`;
          return pendingPromise();
        }
        this.used ??= {};
        this.used[key] = answer;
        return checked;
      }),
    );
  }
}

/** Rejected with {@link InputPending}, and marked handled: a handler that never awaits it is fine. */
function pendingPromise(): Promise<never> {
  const promise = Promise.reject(new InputPending());
  promise.catch(noop);
  return promise;
}

function noop(): void {}

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
