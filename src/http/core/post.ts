/**
 * `POST` on the endpoint: the request core's pipeline over one request context —
 * authenticate → negotiate → admit → read the body → dispatch (its era's way, its session, its
 * exchange) → the answer, written by the step that decides it.
 */
import { HANDLED } from "../../protocol/calls/index.js";
import { admit, giveBack } from "./admission/admit.js";
import { authenticate, NO_AUTHENTICATION } from "./admission/authenticate.js";
import { negotiate } from "./admission/negotiate.js";
import { readMessage } from "./admission/read-message.js";
import { RETRY_SOON, refuseUnread, SHUTTING_DOWN } from "./context/answers.js";
import type { RequestContext } from "./context/request-context.js";
import { dispatchMessage } from "./dispatch.js";

/**
 * Answers one `POST`; settles once its message is handled (a call: once it answered).
 *
 * @example
 * ```ts
 * return post(new RequestContext(core, input, target));
 * ```
 */
export async function post(ctx: RequestContext): Promise<void> {
  const config = ctx.core.config;
  if (config.closing()) {
    ctx.target.closeAfterAnswer();
    refuseUnread(ctx, 503, SHUTTING_DOWN, RETRY_SOON);
    return;
  }
  // One turn of the event loop's microtasks in either case: node's parser delivers a body that
  // came with its headers right after the request event, so it has all arrived when the body is
  // read below and is taken at once (readMessage).
  const proceed = config.authenticate === null ? await NO_AUTHENTICATION : await authenticate(ctx);
  if (!proceed) return;
  // The rest is not in this async function: its suspended state stays small (the await above is
  // its only one). Already handled: nothing is returned, so this function's promise does not
  // have to adopt another one (a thenable job and its reactions per request).
  const handled = admitAndDispatch(ctx);
  if (handled !== HANDLED) return handled;
}

/** A POST once its principal is known: negotiation, admission, the body, then its way. */
function admitAndDispatch(ctx: RequestContext): Promise<void> | undefined {
  if (!negotiate(ctx) || !admit(ctx)) return;
  let read: ReturnType<typeof readMessage>;
  try {
    read = readMessage(ctx);
  } catch (error) {
    giveBack(ctx);
    throw error;
  }
  if (!(read instanceof Promise)) return dispatchMessage(ctx, read);
  return read.then(
    (classified) => dispatchMessage(ctx, classified),
    (error: unknown) => {
      giveBack(ctx);
      throw error;
    },
  );
}
