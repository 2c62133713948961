/**
 * Express (4 and 5) middleware on Express's own node objects; Express is not a dependency. On a
 * route (`req.route` set) the request is the MCP endpoint whatever its path; under
 * `app.use([prefix], …)` the path below the prefix decides, as on the node:http listener, and
 * anything else goes to `next()`. A body a parser already read is used as it is.
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

/** The Express middleware of `server`, e.g. `app.all("/api/mcp", expressHandler(server))`. */
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
