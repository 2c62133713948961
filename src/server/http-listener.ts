/**
 * The node:http server `listen()` starts: node's slow-client timeouts, the keep-alive timeout,
 * the connection bounds, `100 Continue` after the checks, and silent connections closed.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import type { ConnectionBounds, NodeRequestListener } from "../http/index.js";
import type { ListenAddress } from "./mcp-server.js";

/** `listen()` needs node:http; where there is none, the runtime serves `server.fetch` itself. */
export const LISTEN_FEATURE = {
  feature: "listen() (node:http)",
  instead:
    "hand server.fetch to the runtime instead: `export default { fetch: (request) => server.fetch(request) }` on Cloudflare Workers (docs/runtimes.md)",
};

/**
 * An HTTP server serving `handler` under the server's timeouts and connection bounds (not yet
 * listening).
 *
 * @example
 * ```ts
 * const server = createHttpServer(http, { handler, connections, headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 65_000 });
 * ```
 */
export function createHttpServer(
  http: typeof import("node:http"),
  options: {
    readonly handler: NodeRequestListener;
    readonly connections: ConnectionBounds;
    readonly headersTimeoutMs: number;
    readonly requestTimeoutMs: number;
    readonly keepAliveTimeoutMs: number;
  },
): Server {
  const { handler, headersTimeoutMs } = options;
  // Slow clients: node cuts a client still sending its headers or its request after
  // these (408, then close). It checks every `connectionsCheckingInterval` (30 s by default),
  // so the interval follows the shorter timeout.
  const server = http.createServer<typeof IncomingMessage, typeof ServerResponse>(
    {
      headersTimeout: headersTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeoutMs / 4))),
    },
    handler,
  );
  // Keep-alive: longer than common load balancers' idle timeouts, so the balancer (not the
  // server) closes an idle connection and never reuses one the server is closing.
  server.keepAliveTimeout = options.keepAliveTimeoutMs;
  // Per client bucket, then globally (evicting from the largest buckets): node's own
  // `maxConnections` stays unset, it would refuse everyone alike once full. A connection that
  // never sends a byte is closed after `headersTimeoutMs` (node's header timeout starts only with
  // a request's first byte).
  options.connections.attach(server, { closeSilentAfterMs: headersTimeoutMs });
  // `100 Continue` only once the request passed its checks (the core sends it when it reads).
  server.on("checkContinue", handler.checkContinue);
  return server;
}

/**
 * Starts `server` listening; resolves with the endpoint's URL once it listens, rejects with the
 * listen error (e.g. `EADDRINUSE`).
 *
 * @example
 * ```ts
 * const { url } = await listenOn(server, { host: "127.0.0.1", port: 0, path: "/mcp" });
 * ```
 */
export function listenOn(
  server: Server,
  at: { readonly host: string; readonly port: number; readonly path: string },
): Promise<ListenAddress> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(at.port, at.host, () => {
      server.removeListener("error", reject);
      const address = server.address() as AddressInfo;
      const urlHost = address.address.includes(":") ? `[${address.address}]` : address.address;
      resolve({
        url: `http://${urlHost}:${address.port}${at.path}`,
        host: address.address,
        port: address.port,
      });
    });
  });
}
