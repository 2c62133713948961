/**
 * Step: the exchange of an admitted request (exchange.ts), the `ResponseSink` its call answers
 * through. It takes over the units the request holds and gives them back when the call settles.
 */

import { ACQUIRED, SCOPE_LIMIT } from "../../protocol/asking/index.js";
import { HANDLED } from "../../protocol/calls/index.js";
import type { JsonRpcRequest } from "../../protocol/index.js";
import { HttpExchange } from "../exchange.js";
import { ACCEPTS_JSON, ACCEPTS_SSE } from "../negotiation.js";
import { methodLabel } from "../operability/metrics.js";
import { refuseBusy } from "./context/answers.js";
import type { RequestContext } from "./context/request-context.js";

/**
 * Whether `method` runs a handler that may run long and report progress (its method table entry
 * holds a stream unit: Dispatcher.holds): answered on an SSE stream when the client accepts one
 * (2025-11-25 basic/transports "Sending Messages to the Server",
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/transports).
 */
export function isStreamed(ctx: RequestContext, method: string): boolean {
  return ctx.core.config.dispatcher.holds(method) === "stream";
}

/**
 * The exchange of `request`, once its scope is decided; or null when it was refused (answered).
 * A request read on a notice unit is refused (its scope is at its bound). A session's request
 * also takes a unit of the session's own scope; a handler request whose client accepts SSE takes
 * a stream unit — without one the call still runs when the client accepts JSON (one JSON body,
 * its notifications dropped) and is refused when it accepts only SSE.
 *
 * @example
 * ```ts
 * const exchange = openExchange(ctx, request);
 * if (exchange === null) return; // refused, answered
 * ```
 */
export function openExchange(ctx: RequestContext, request: JsonRpcRequest): HttpExchange | null {
  if (ctx.notice) {
    refuseBusy(ctx, ctx.refusal, request.id);
    return null;
  }
  const { config, recorder } = ctx.core;
  const { limits } = config;
  const sessionScope = ctx.sessionScope;
  if (sessionScope !== null) {
    const outcome = limits.sessionRequests.tryAcquire(sessionScope);
    if (outcome !== ACQUIRED) {
      refuseBusy(ctx, outcome, request.id, sessionScope);
      return null;
    }
  }
  const accepts = ctx.accepts;
  let sse = (accepts & ACCEPTS_SSE) !== 0;
  let stream: string | null = null;
  if (sse && isStreamed(ctx, request.method)) {
    if (limits.streams.tryAcquire(ctx.scope) === ACQUIRED) stream = ctx.scope;
    else if ((accepts & ACCEPTS_JSON) === 0) {
      if (sessionScope !== null) limits.sessionRequests.release(sessionScope);
      refuseBusy(ctx, SCOPE_LIMIT, request.id, ctx.scope);
      return null;
    } else sse = false;
  }
  const exchange = new HttpExchange({
    target: ctx.target,
    closed: ctx.input.closed,
    jsonAccepted: (accepts & ACCEPTS_JSON) !== 0,
    sseAccepted: sse,
    settings: ctx.core.exchangeSettings,
    // The metrics' label, looked up only when metrics record it.
    method: recorder === null ? "" : methodLabel(request.method),
    startedAt: ctx.startedAt,
    input: ctx.input,
  });
  exchange.hold(limits, { origin: ctx.origin, session: sessionScope, stream });
  ctx.holdsUnit = false; // the exchange gives the origin's unit back
  return exchange;
}

/**
 * Gives the exchange's slots back once the call running on it settles, either way. Chained
 * rather than awaited: the caller's frame ends instead of staying suspended while the call runs.
 * Returns what the request core's promise follows: the call, or HANDLED when the call gives the
 * slots back itself and the door does not wait for the answer's end.
 *
 * @example
 * ```ts
 * return releaseWhenSettled(exchange, dispatcher.handleRequest(request, meta, exchange));
 * ```
 */
export function releaseWhenSettled(exchange: HttpExchange, running: Promise<void>): Promise<void> {
  if (running === HANDLED) {
    // Answered before the dispatcher returned: the slots go back now, nothing to wait for.
    exchange.releaseSlots();
    return HANDLED;
  }
  // A handler call running on the exchange gives them back itself when it ends (settled,
  // cancelled or abandoned): no reaction and closures held for as long as it runs. Its promise
  // never rejects (Dispatcher.handleRequest), so a door that does not wait for the answer's end
  // (node:http) is handed nothing to hold on to while the call runs.
  if (exchange.releasedByCall) return exchange.awaitsAnswer ? running : HANDLED;
  return running.then(
    () => exchange.releaseSlots(),
    (error: unknown) => {
      exchange.releaseSlots();
      throw error;
    },
  );
}
