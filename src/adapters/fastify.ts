/**
 * Fastify (v4, v5) route handler answering through `reply`, so Fastify's hooks and logging see the
 * answer; Fastify is not a dependency. The client address is the socket's (conduit-mcp's
 * `trustProxy` applies, not Fastify's). Fastify parses the body first, so its `bodyLimit` bounds
 * it and refusals made before a body is read (401, 403, 415, 429, …) come after that limit.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

import {
  CloseLatch,
  failResponse,
  frameworkBody,
  nodeRequestInput,
  WebResponse,
} from "../http/index.js";
import type { McpServer } from "../server/create-mcp-server.js";
import { transportCore } from "../server/transport-core.js";

/** The parts of a Fastify request the adapter reads. */
export interface FastifyRequestLike {
  readonly raw: IncomingMessage;
  /** The body Fastify's content parser produced (undefined when none ran). */
  readonly body?: unknown;
}

/** The parts of a Fastify reply the adapter uses. */
export interface FastifyReplyLike {
  readonly raw: ServerResponse;
  code(status: number): unknown;
  headers(values: Record<string, string>): unknown;
  send(payload?: unknown): unknown;
}

/** A Fastify route handler. */
export type FastifyHandler = (
  request: FastifyRequestLike,
  reply: FastifyReplyLike,
) => Promise<unknown>;

/** The Fastify route handler of `server`, e.g. `app.all("/api/mcp", fastifyHandler(server))`. */
export function fastifyHandler(server: McpServer): FastifyHandler {
  const core = transportCore(server).request;
  return async (request, reply) => {
    const closed = new CloseLatch();
    const target = new WebResponse(() => closed.close());
    const raw = reply.raw;
    // The connection closing before the answer (or the stream's end) is the disconnect.
    if (raw.destroyed) closed.close();
    else raw.once("close", () => closed.close());
    closed.onClose(() => target.settle());
    const read = frameworkBody(request.raw, request.body);
    const input = nodeRequestInput(
      request.raw,
      closed,
      read === undefined ? { endpoint: true } : { endpoint: true, body: read },
    );
    try {
      core.handle(input, target).then(
        () => target.settle(),
        () => {
          failResponse(target);
          target.settle();
        },
      );
    } catch {
      failResponse(target);
      target.settle();
    }
    const { status, headers, body } = await target.answer;
    reply.code(status);
    reply.headers(headers);
    return reply.send(body ?? undefined);
  };
}
