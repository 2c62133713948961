/**
 * One request's context through the request core: built once per request (endpoint.ts) and
 * handed to every step — authenticate → negotiate → admit → read the body → dispatch → write —
 * in place of the values the steps would otherwise pass each other. Each step writes what it
 * decides, once: the principal, what the client accepts, the scope the request comes from and
 * the unit it holds there, the message's method, its session and, once that is known, the scope
 * its call runs in (scope.ts).
 *
 * A class whose fields all exist from construction: one object of one shape per request, the
 * only object the core itself allocates for a call on the fast path (docs/profile.md).
 */
import type { Principal } from "../../../identity/index.js";
import { ACQUIRED, type LimitOutcome } from "../../../protocol/asking/index.js";
import type { LoggingLevel } from "../../../protocol/index.js";
import type { RequestHeaders, RequestInput, ResponseTarget } from "../../transport.js";
import type { CoreState } from "./core-state.js";
import { steadyHeaders } from "./steady-headers.js";

export class RequestContext {
  // Declared, then assigned in the constructor: plain stores, which V8 optimizes the way it does
  // any constructor's (a class field initializer went through an IC per field per request).
  declare readonly core: CoreState;
  declare readonly input: RequestInput;
  /**
   * The request's headers as the core reads them: a copy of one hidden class whatever the order
   * the client sent them in (steady-headers.ts). `input.headers` is the door's own.
   */
  declare readonly headers: RequestHeaders;
  declare readonly target: ResponseTarget;
  /** Who asked (authentication); null without authentication. */
  declare principal: Principal | null;
  /** What the client accepts (negotiation): `ACCEPTS_JSON` and `ACCEPTS_SSE` bits. */
  declare accepts: number;
  /** The scope the request comes from — its principal, else its client's IP bucket (admission). */
  declare origin: string;
  /** The request holds a unit of {@link origin} (admission) that nobody gave back yet. */
  declare holdsUnit: boolean;
  /** The unit is a notice unit, not a request unit: only a notification may follow. */
  declare notice: boolean;
  /** Why the origin's request unit was refused (for a request read on a notice unit). */
  declare refusal: LimitOutcome;
  /** The message's method once read; null before, and for a client's answer (a metrics label). */
  declare method: string | null;
  /** The validated session (2025 era), or null: none presented, sessions off, or 2026-07-28. */
  declare sessionId: string | null;
  /** The session's `logging/setLevel` threshold (a 2026-07-28 request: its envelope's). */
  declare logLevel: LoggingLevel | null;
  /** What the session's client declared it can be asked; null when unknown (no session). */
  declare clientCapabilities: Readonly<Record<string, unknown>> | null;
  /** The session's own scope, or null: its request takes a unit there too. */
  declare sessionScope: string | null;
  /** The scope the message is handled in: session > principal > IP bucket (scope.ts). */
  declare scope: string;

  /**
   * When the request arrived (`performance.now()`): the request duration's start, read only when
   * metrics record it (0 otherwise: no clock read per request for nobody).
   */
  declare readonly startedAt: number;

  constructor(core: CoreState, input: RequestInput, target: ResponseTarget) {
    this.startedAt = core.recorder === null ? 0 : performance.now();
    this.core = core;
    this.input = input;
    this.headers = steadyHeaders(input.headers);
    this.target = target;
    this.principal = null;
    this.accepts = 0;
    this.origin = "";
    this.holdsUnit = false;
    this.notice = false;
    this.refusal = ACQUIRED;
    this.method = null;
    this.sessionId = null;
    this.logLevel = null;
    this.clientCapabilities = null;
    this.sessionScope = null;
    this.scope = "";
  }
}

/** A repeated header arrives as an array; only a single value is meaningful here. */
export function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
