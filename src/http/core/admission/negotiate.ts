/**
 * Step: content negotiation, before the body is read — the request's media type, what its client
 * accepts back, and the length it declares.
 */
import { acceptedMediaTypes, isJsonContentType } from "../../negotiation.js";
import { declaredTooLarge } from "../../read-body.js";
import { BAD_CONTENT_TYPE, NOT_ACCEPTABLE, refuseUnread, TOO_LARGE } from "../context/answers.js";
import { type RequestContext, single } from "../context/request-context.js";

/**
 * Sets `ctx.accepts` and returns true; or answers 415 / 406 / 413 (the body unread) and returns
 * false.
 *
 * @example
 * ```ts
 * if (!negotiate(ctx)) return; // refused, answered
 * ```
 */
export function negotiate(ctx: RequestContext): boolean {
  const headers = ctx.headers;
  if (!isJsonContentType(single(headers["content-type"]))) {
    refuseUnread(ctx, 415, BAD_CONTENT_TYPE);
    return false;
  }
  const accepts = acceptedMediaTypes(single(headers.accept));
  if (accepts === 0) {
    refuseUnread(ctx, 406, NOT_ACCEPTABLE);
    return false;
  }
  if (declaredTooLarge(single(headers["content-length"]), ctx.core.config.maxBodyBytes)) {
    refuseUnread(ctx, 413, TOO_LARGE);
    return false;
  }
  ctx.accepts = accepts;
  return true;
}
