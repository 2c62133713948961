/**
 * Step: authentication, before anything else about the request is looked at. The principal goes
 * on the request's context; a refusal is answered here, the body unread.
 */
import { ErrorCode } from "../../../errors.js";
import { errorResponseJson } from "../../../protocol/index.js";
import { refuseUnread } from "../context/answers.js";
import type { RequestContext } from "../context/request-context.js";

/** What `post` awaits when there is no authentication: one microtask turn either way. */
export const NO_AUTHENTICATION: Promise<boolean> = Promise.resolve(true);

/**
 * Sets `ctx.principal` (null without auth) and resolves true; or answers the refusal and resolves
 * false: 400 (malformed credentials), 401 (none, or a bad token), 403 (a scope the server
 * requires), 503 (the authorization server unreachable: fail closed), each with its challenge.
 *
 * @example
 * ```ts
 * if (!(await authenticate(ctx))) return; // refused, answered
 * ```
 */
export async function authenticate(ctx: RequestContext): Promise<boolean> {
  const authenticator = ctx.core.config.authenticate;
  if (authenticator === null) return true;
  const decision = await authenticator(ctx.input);
  if (decision.ok) {
    ctx.principal = decision.principal;
    return true;
  }
  const headers: Record<string, string> = {};
  if (decision.challenge !== null) headers["www-authenticate"] = decision.challenge;
  if (decision.status === 503) headers["retry-after"] = "5";
  const code = decision.status === 400 ? ErrorCode.InvalidRequest : ErrorCode.ServerError;
  refuseUnread(ctx, decision.status, errorResponseJson(null, code, decision.message), headers);
  return false;
}
