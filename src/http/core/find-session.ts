/**
 * Step (2025 era): the session a request presents in `Mcp-Session-Id`, which must exist and
 * belong to the request's principal; its facts go on the request's context, and with them the
 * scope the message is handled in is decided (scope.ts).
 */
import { principalId } from "../../identity/index.js";
import { type ClassifiedMessage, capabilitiesOf, type LoggingLevel } from "../../protocol/index.js";
import { isWellFormedSessionId, type SessionStore } from "../../sessions/index.js";
import { reply, SESSION_NOT_FOUND, SESSION_REQUIRED } from "./context/answers.js";
import { type RequestContext, single } from "./context/request-context.js";
import { decideScope } from "./context/scope.js";

/**
 * Fills in the session (or none) and the scope, and returns true; or answers 404 (a session that
 * does not exist or is another principal's) or 400 (none presented where the server requires
 * one) and returns false. Without sessions, or without a presented id, it is known at once (no
 * promise).
 *
 * @example
 * ```ts
 * const found = findSession(ctx, classified);
 * if (!(found instanceof Promise ? await found : found)) return; // answered
 * ```
 */
export function findSession(
  ctx: RequestContext,
  classified: ClassifiedMessage,
): boolean | Promise<boolean> {
  const sessions = ctx.core.config.sessions;
  if (sessions === null) {
    decideScope(ctx);
    return true;
  }
  const presented = single(ctx.headers["mcp-session-id"]);
  if (presented === undefined) {
    if (sessions.required && !isInitialize(classified)) {
      reply(ctx, 400, SESSION_REQUIRED);
      return false;
    }
    decideScope(ctx);
    return true;
  }
  if (!isWellFormedSessionId(presented)) {
    reply(ctx, 404, SESSION_NOT_FOUND);
    return false;
  }
  return sessions.store.get(presented).then((session) => {
    if (session === undefined || session.principalId !== principalId(ctx.principal)) {
      reply(ctx, 404, SESSION_NOT_FOUND);
      return false;
    }
    const declared = session.clientCapabilities;
    ctx.sessionId = presented;
    ctx.logLevel = session.logLevel as LoggingLevel | null;
    ctx.clientCapabilities = typeof declared === "string" ? capabilitiesOf(declared) : null;
    decideScope(ctx);
    return true;
  });
}

/**
 * The session a `DELETE` or `GET` names, when it exists and is the caller's own; else 400 (none
 * named) or 404 is answered — the same 404 for another principal's session as for none, so no
 * client learns which ids exist — and the promise resolves undefined.
 *
 * @example
 * ```ts
 * const sessionId = await ownSession(ctx, store);
 * if (sessionId === undefined) return; // answered
 * ```
 */
export async function ownSession(
  ctx: RequestContext,
  store: SessionStore,
): Promise<string | undefined> {
  const presented = single(ctx.headers["mcp-session-id"]);
  if (presented === undefined) {
    reply(ctx, 400, SESSION_REQUIRED);
    return undefined;
  }
  const session = isWellFormedSessionId(presented) ? await store.get(presented) : undefined;
  if (session === undefined || session.principalId !== principalId(ctx.principal)) {
    reply(ctx, 404, SESSION_NOT_FOUND);
    return undefined;
  }
  return presented;
}

function isInitialize(classified: ClassifiedMessage): boolean {
  return classified.kind === "request" && classified.message.method === "initialize";
}
