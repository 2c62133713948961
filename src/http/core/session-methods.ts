/**
 * `DELETE` and `GET` on the endpoint: what a client does with its own session (2025-11-25
 * basic/transports, "Session Management" and "Listening for Messages from the Server",
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/transports). Neither reads a
 * body.
 */
import { ACQUIRED } from "../../protocol/asking/index.js";
import { ACCEPTS_SSE, acceptedMediaTypes } from "../negotiation.js";
import { writeEmpty } from "../write-response.js";
import { authenticate } from "./admission/authenticate.js";
import {
  METHOD_NOT_ALLOWED,
  NOT_ACCEPTABLE,
  RETRY_SOON,
  refuseBusy,
  refuseUnread,
  reply,
  SHUTTING_DOWN,
} from "./context/answers.js";
import { type RequestContext, single } from "./context/request-context.js";
import { originScope } from "./context/scope.js";
import { ownSession } from "./find-session.js";

/**
 * `DELETE`: ends the caller's session and cancels its calls, its subscriptions and its stream.
 *
 * @example
 * ```ts
 * if (input.method === "DELETE") return endSession(ctx);
 * ```
 */
export async function endSession(ctx: RequestContext): Promise<void> {
  const { sessions, dispatcher } = ctx.core.config;
  if (sessions === null) {
    refuseUnread(ctx, 405, METHOD_NOT_ALLOWED, ctx.core.allow);
    return;
  }
  if (!(await authenticate(ctx))) return;
  ctx.input.body.skip();
  const sessionId = await ownSession(ctx, sessions.store);
  if (sessionId === undefined) return;
  await sessions.store.delete(sessionId);
  // Ending the session cancels its in-flight requests, its subscriptions and its stream.
  dispatcher.cancelSession(sessionId);
  ctx.core.streams?.close(sessionId);
  ctx.core.recorder?.("none", 204, ctx.startedAt);
  writeEmpty(ctx.target, 204);
}

/**
 * `GET`: opens the caller's standalone SSE stream. Only for a session of the caller's own
 * principal (404 as for a POST otherwise): no client can attach to another's stream.
 *
 * @example
 * ```ts
 * if (input.method === "GET") return listen(ctx);
 * ```
 */
export async function listen(ctx: RequestContext): Promise<void> {
  const { sessions, limits } = ctx.core.config;
  const streams = ctx.core.streams;
  if (sessions === null || streams === null) {
    refuseUnread(ctx, 405, METHOD_NOT_ALLOWED, ctx.core.allow);
    return;
  }
  if (ctx.core.config.closing()) {
    ctx.target.closeAfterAnswer();
    refuseUnread(ctx, 503, SHUTTING_DOWN, RETRY_SOON);
    return;
  }
  if (!(await authenticate(ctx))) return;
  const input = ctx.input;
  input.body.skip();
  if ((acceptedMediaTypes(single(ctx.headers.accept)) & ACCEPTS_SSE) === 0) {
    return reply(ctx, 406, NOT_ACCEPTABLE);
  }
  const sessionId = await ownSession(ctx, sessions.store);
  if (sessionId === undefined) return;
  // A stream unit of the caller's scope, held while the stream is open: streams of sessions
  // a store ended without telling (a shared store) stay bounded per tenant.
  const origin = originScope(ctx);
  ctx.origin = origin;
  const outcome = limits.streams.tryAcquire(origin);
  if (outcome !== ACQUIRED) return refuseBusy(ctx, outcome, null);
  ctx.core.recorder?.("none", 200, ctx.startedAt);
  // Settled when the stream ends, not when it opens: the fetch door and the framework adapters
  // end their response when the request core's promise settles.
  const ended = new Promise<void>((resolve) => {
    streams.open(sessionId, ctx.target, input.closed, () => {
      limits.streams.release(origin);
      resolve();
    });
  });
  // The session may have ended (on any node) between the read above and the stream opening:
  // its onEnded then found no stream to close. A second read after opening closes the gap; a
  // store that fails to answer leaves the stream to the client and the keep-alives.
  sessions.store.get(sessionId).then(
    (current) => {
      if (current === undefined) streams.close(sessionId);
    },
    () => undefined,
  );
  return ended;
}
