/**
 * Fastify (v4, v5): the request core as a route handler that takes Fastify's parsed body and
 * answers through Fastify's reply (`reply.code`, `reply.headers`, `reply.send`, so its hooks
 * and logging see the answer; a stream is a web `ReadableStream` Fastify pipes with backpressure). Fastify is not a
 * dependency: the types below are the parts of its request and reply the adapter uses.
 *
 * A Fastify route is the MCP endpoint whatever its path (`fastify.all("/api/mcp", …)`); the
 * client address is the socket's (`trustProxy` of conduit-mcp applies, not Fastify's). The body
 * is parsed by Fastify before the handler runs: Fastify's `bodyLimit` bounds it, and the
 * refusals that conduit-mcp makes before reading a body (401, 403, 415, 429, …) come after it.
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

/**
 * The Fastify route handler of `server`.
 *
 * @example
 * ```ts
 * import Fastify from "fastify";
 * import { createMcpServer, fastifyHandler } from "conduit-mcp";
 *
 * const server = createMcpServer({ tools });
 * const app = Fastify();
 * app.all("/api/mcp", fastifyHandler(server));
 * await app.listen({ port: 3000 });
 * ```
 */
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
    // Status and headers set on the reply itself, so Fastify's hooks (onSend, logging) see them.
    const { status, headers, body } = await target.answer;
    reply.code(status);
    reply.headers(headers);
    return reply.send(body ?? undefined);
  };
}
