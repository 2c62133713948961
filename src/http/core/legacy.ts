/**
 * A 2025-era message (or one whose era the headers reject): its session, then its notification
 * handling or its exchange and its call.
 */
import {
  type ClassifiedMessage,
  classifyEra,
  looksModernVersion,
  missingEnvelopeJson,
} from "../../protocol/index.js";
import { accepted, reply } from "./context/answers.js";
import { type RequestContext, single } from "./context/request-context.js";
import { stableBucket } from "./context/scope.js";
import { findSession } from "./find-session.js";
import { openExchange, releaseWhenSettled } from "./open-exchange.js";

/** A request or a notification, classified. */
export type JsonRpcMessage = Extract<ClassifiedMessage, { kind: "request" | "notification" }>;

/**
 * Handles a 2025-era message. Undefined when it was answered at once; otherwise the promise of
 * its handling.
 *
 * @example
 * ```ts
 * const handled = legacy(ctx, classified);
 * ```
 */
export function legacy(ctx: RequestContext, classified: JsonRpcMessage): Promise<void> | undefined {
  const headerVersion = single(ctx.headers["mcp-protocol-version"]);
  const era = classifyEra(headerVersion);
  if (era.era === "rejected") {
    // A modern version in the header but no claim in the body: a modern message missing its
    // envelope, not a 2025 one. Checked only here, so the 2025 path pays nothing for it.
    if (headerVersion !== undefined && looksModernVersion(headerVersion)) {
      if (classified.kind === "notification") accepted(ctx);
      else reply(ctx, 400, missingEnvelopeJson(classified.message.id));
      return;
    }
    reply(ctx, era.status, era.json);
    return;
  }
  const found = findSession(ctx, classified);
  if (found === true) return inSession(ctx, classified);
  if (found === false) return;
  return found.then((ok) => (ok ? inSession(ctx, classified) : undefined));
}

/** A 2025-era message once its session (or none), and so its scope, is known. */
function inSession(ctx: RequestContext, classified: JsonRpcMessage): Promise<void> | undefined {
  const dispatcher = ctx.core.config.dispatcher;
  if (classified.kind === "notification") {
    // Answered at once; a cancel flood is bounded by the registry's per-scope row quota.
    return dispatcher.handleNotification(classified.message, ctx.scope).then((error) => {
      if (error === null) return accepted(ctx);
      // A refused notification is answered 200 with the error.
      return reply(ctx, 200, error);
    });
  }
  const request = classified.message;
  const exchange = openExchange(ctx, request);
  if (exchange === null) return;
  let running: Promise<void>;
  try {
    running = dispatcher.handleRequest(
      request,
      {
        scope: ctx.scope,
        bucket: stableBucket(ctx),
        principal: ctx.principal,
        sessionId: ctx.sessionId,
        logLevel: ctx.logLevel,
        clientCapabilities: ctx.clientCapabilities,
        headers: ctx.input.headers,
        // The exchange, not the context: a running call keeps the request's view source only.
        view: exchange,
      },
      exchange,
    );
  } catch (error) {
    exchange.releaseSlots();
    throw error;
  }
  return releaseWhenSettled(exchange, running);
}
