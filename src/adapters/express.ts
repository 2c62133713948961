/**
 * Express (4 and 5): the request core as Express middleware, on Express's own node objects.
 * Express is not a dependency: the types below are the parts of its request the adapter reads
 * (an Express request is a node `IncomingMessage`, its response a `ServerResponse`).
 *
 * Routed or mounted. On a route (`app.all("/api/mcp", …)`, Express sets `req.route`) the
 * request is the MCP endpoint whatever its path. Under `app.use([prefix], …)` the path below the
 * prefix decides, as on the node:http listener: `path` (default `/mcp`), `/health`, `/metrics`;
 * anything else goes on to the next middleware.
 *
 * A body Express already read (`express.json()`, `express.text()`, `express.raw()`) is used as
 * it is and never waited for; otherwise the core reads the stream itself, bounded and timed.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

import { frameworkBody, type NodeServeOptions, serveNode } from "../http/index.js";
import type { McpServer } from "../server/create-mcp-server.js";
import { transportCore } from "../server/transport-core.js";

/** The parts of an Express request the adapter reads, beyond node's `IncomingMessage`. */
export interface ExpressRequestLike extends IncomingMessage {
  /** What a body parser left (Express 5: undefined when none ran). */
  body?: unknown;
  /** Set by Express when the request reached a route (`app.all(path, …)`). */
  route?: unknown;
}

/** Express middleware (also a route handler). */
export type ExpressMiddleware = (
  req: ExpressRequestLike,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void;

/**
 * The Express middleware of `server`.
 *
 * @example
 * ```ts
 * import express from "express";
 * import { createMcpServer, expressHandler } from "conduit-mcp";
 *
 * const server = createMcpServer({ tools });
 * const app = express();
 * app.use(express.json());
 * app.all("/api/mcp", expressHandler(server));
 * app.listen(3000);
 * ```
 */
export function expressHandler(server: McpServer): ExpressMiddleware {
  const core = transportCore(server).request;
  return (req, res, next) => {
    const routed = req.route !== undefined && req.route !== null;
    if (!routed) {
      const url = req.url ?? "/";
      const query = url.indexOf("?");
      if (!core.serves(query === -1 ? url : url.slice(0, query))) {
        next();
        return;
      }
    }
    const body = frameworkBody(req, req.body);
    const options: NodeServeOptions =
      body === undefined ? { endpoint: routed } : { endpoint: routed, body };
    serveNode(core, req, res, options);
  };
}
