/** A `fetch` that drives a server in-process through `server.fetch`, without a socket. */
import type { FetchOptions } from "../http/index.js";
import type { McpServer } from "../server/create-mcp-server.js";

/** A `fetch` as the official clients' transports take it. */
export type InProcessFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A `fetch` bound to `server`, for an official client's Streamable HTTP transport (its `fetch`
 * option): aborts are disconnects, streams are the server's. `options.clientAddress` gives its
 * requests one client address, so a 2025-era `notifications/cancelled` reaches them without auth
 * or sessions; see {@link FetchOptions}.
 *
 * @example
 * ```ts
 * const transport = new StreamableHTTPClientTransport(new URL("http://in-process/mcp"), {
 *   fetch: inProcessFetch(server, { clientAddress: "127.0.0.1" }),
 * });
 * ```
 */
export function inProcessFetch(server: McpServer, options: FetchOptions = {}): InProcessFetch {
  return (url, init) => server.fetch(new Request(url, init), options);
}
