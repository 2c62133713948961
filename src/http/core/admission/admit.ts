/**
 * Step: admission under the bounds of the scope the request comes from, before its body is read,
 * so a scope at its bound costs the server no buffering. The unit taken is held on the request's
 * context until an exchange takes it over (open-exchange.ts) or the message is handled.
 */
import { ACQUIRED } from "../../../protocol/asking/index.js";
import { refuseBusy } from "../context/answers.js";
import { NOTICE_BYTES } from "../context/core-state.js";
import { type RequestContext, single } from "../context/request-context.js";
import { originScope } from "../context/scope.js";

/**
 * Decides `ctx.origin` and takes a request unit there and returns true. A scope at its bound
 * gets a notice unit for a small declared body instead (a cancel can still get through), else
 * 429 is answered at once, the body unread: false. The global bound refuses nobody under its
 * own bound: it takes a unit back from the largest scope, closing that request (503 only when
 * none can be).
 *
 * @example
 * ```ts
 * if (!admit(ctx)) return; // refused, answered
 * try { … } finally { giveBack(ctx); }
 * ```
 */
export function admit(ctx: RequestContext): boolean {
  const origin = originScope(ctx);
  ctx.origin = origin;
  // The target is what the global bound closes should it take this unit back to make room.
  const outcome = ctx.core.config.limits.requests.tryAcquire(origin, ctx.target);
  if (outcome === ACQUIRED) {
    ctx.holdsUnit = true;
    return true;
  }
  const length = Number(single(ctx.headers["content-length"]));
  if (length <= NOTICE_BYTES && ctx.core.notices.tryAcquire(origin, ctx.target) === ACQUIRED) {
    ctx.holdsUnit = true;
    ctx.notice = true;
    ctx.refusal = outcome;
    return true;
  }
  ctx.input.body.skip();
  refuseBusy(ctx, outcome, null);
  return false;
}

/**
 * Gives the request's unit back, unless an exchange took it over (or it went back already).
 *
 * @example
 * ```ts
 * giveBack(ctx);
 * ```
 */
export function giveBack(ctx: RequestContext): void {
  if (!ctx.holdsUnit) return;
  ctx.holdsUnit = false;
  if (ctx.notice) ctx.core.notices.release(ctx.origin, ctx.target);
  else ctx.core.config.limits.requests.release(ctx.origin, ctx.target);
}
