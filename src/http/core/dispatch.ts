/**
 * Step: a read message to its way — a client's answer to a server request, or a request or
 * notification of its era, the era decided once, from the body — and the request's unit given
 * back once the message is handled, unless an exchange took it over.
 */
import { type ClassifiedMessage, modernClaim } from "../../protocol/index.js";
import { giveBack } from "./admission/admit.js";
import { withinRate } from "./admission/rate-limit.js";
import { ANSWERED, type Answered, type Classified } from "./admission/read-message.js";
import { accepted } from "./context/answers.js";
import type { RequestContext } from "./context/request-context.js";
import { findSession } from "./find-session.js";
import { legacy } from "./legacy.js";
import { modern } from "./modern.js";

/**
 * Hands a read message to its way. Returned rather than awaited, so no frame stays suspended
 * while a call runs; undefined when it was answered at once.
 *
 * @example
 * ```ts
 * const read = readMessage(ctx);
 * if (!(read instanceof Promise)) return dispatchMessage(ctx, read);
 * ```
 */
export function dispatchMessage(
  ctx: RequestContext,
  classified: Classified | Answered,
): Promise<void> | undefined {
  let handled: Promise<void> | undefined;
  try {
    if (classified === ANSWERED) return;
    if (classified.kind === "response") {
      handled = clientAnswer(ctx, classified);
    } else {
      ctx.method = classified.message.method;
      const allowed = classified.kind === "request" ? withinRate(ctx, classified.message) : true;
      if (allowed === true) handled = route(ctx, classified);
      else if (allowed !== false)
        handled = allowed.then((ok) => (ok ? route(ctx, classified) : undefined));
    }
  } finally {
    if (handled === undefined) giveBack(ctx);
  }
  if (handled === undefined || !ctx.holdsUnit) return handled;
  return handled.then(
    () => giveBack(ctx),
    (error: unknown) => {
      giveBack(ctx);
      throw error;
    },
  );
}

/**
 * A request or notification to its era: decided once, body first: a `_meta` protocolVersion
 * claim makes the request modern, whatever else it carries (an `Mcp-Session-Id` is ignored).
 */
function route(
  ctx: RequestContext,
  classified: Exclude<Classified, { kind: "response" }>,
): Promise<void> | undefined {
  if (modernClaim(classified.message.params) !== undefined) return modern(ctx, classified);
  return legacy(ctx, classified);
}

/**
 * A client's answer to a server request (2025-11-25 elicitation, sampling, roots): from the
 * scope the call would have (session > principal > IP bucket), routed to the waiting ask here
 * or on another node; 202 whether anyone waited or not, so nothing is learnt from it.
 */
async function clientAnswer(
  ctx: RequestContext,
  classified: Extract<ClassifiedMessage, { kind: "response" }>,
): Promise<void> {
  const found = findSession(ctx, classified);
  if (!(found instanceof Promise ? await found : found)) return;
  await ctx.core.config.dispatcher.handleResponse(classified.message, ctx.scope);
  accepted(ctx);
}
