/**
 * A 2026-07-28 message. Notifications are answered 202 and dropped (the revision defines none
 * over HTTP: closing the stream is the cancel). Requests climb the error ladder
 * (protocol/modern-envelope.ts), then run without a session: the scope is the principal, else
 * the client's IP bucket.
 */
import { checkModernRequest } from "../../protocol/index.js";
import { accepted, reply } from "./context/answers.js";
import { type RequestContext, single } from "./context/request-context.js";
import { decideScope, stableBucket } from "./context/scope.js";
import type { JsonRpcMessage } from "./legacy.js";
import { isStreamed, openExchange, releaseWhenSettled } from "./open-exchange.js";

/**
 * Handles a 2026-07-28 message. Undefined when it was answered at once; otherwise the promise of
 * its handling.
 *
 * @example
 * ```ts
 * const handled = modern(ctx, classified);
 * ```
 */
export function modern(ctx: RequestContext, classified: JsonRpcMessage): Promise<void> | undefined {
  if (classified.kind !== "request") {
    accepted(ctx);
    return;
  }
  const request = classified.message;
  const input = ctx.input;
  const headers = ctx.headers;
  const envelope = checkModernRequest(request, {
    protocolVersion: single(headers["mcp-protocol-version"]),
    method: single(headers["mcp-method"]),
    name: single(headers["mcp-name"]),
    // Read (and built by Node) only for a tool that declares x-mcp-header parameters.
    distinct: input,
  });
  if (!envelope.ok) {
    reply(ctx, envelope.status, envelope.json);
    return;
  }
  ctx.logLevel = envelope.logLevel;
  decideScope(ctx); // no session in this revision: the scope the request came from
  const exchange = openExchange(ctx, request);
  if (exchange === null) return;
  // A long modern call gets its stream (and keep-alive comments) even before any progress.
  if (isStreamed(ctx, request.method)) exchange.keepAliveWhilePending();
  let running: Promise<void>;
  try {
    running = ctx.core.config.dispatcher.handleModernRequest(
      request,
      {
        scope: ctx.scope,
        bucket: stableBucket(ctx),
        principal: ctx.principal,
        sessionId: null,
        logLevel: envelope.logLevel,
        headers,
        // The exchange, not the context: a running call keeps the request's view source only.
        view: exchange,
      },
      exchange,
      envelope,
    );
  } catch (error) {
    exchange.releaseSlots();
    throw error;
  }
  return releaseWhenSettled(exchange, running);
}
