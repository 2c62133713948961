/**
 * The testing helper: a `fetch` that drives a server in-process, through `server.fetch`,
 * without a socket. Hand it to an official client's Streamable HTTP transport (its `fetch`
 * option): the client's requests reach the same core as over the network, its aborts are
 * disconnects, and its streams are the server's streams.
 */
import type { FetchOptions } from "../http/index.js";
import type { McpServer } from "../server/create-mcp-server.js";

/** A `fetch` as the official clients' transports take it. */
export type InProcessFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A `fetch` bound to `server`. `options.clientAddress` (e.g. `"127.0.0.1"`) gives its requests
 * one client address, so that a 2025-era `notifications/cancelled` reaches its requests without
 * auth or sessions; see {@link FetchOptions}.
 *
 * @example
 * ```ts
 * import { Client } from "@modelcontextprotocol/sdk/client/index.js";
 * import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
 *
 * const client = new Client({ name: "test", version: "1.0.0" });
 * await client.connect(
 *   new StreamableHTTPClientTransport(new URL("http://in-process/mcp"), {
 *     fetch: inProcessFetch(server, { clientAddress: "127.0.0.1" }),
 *   }),
 * );
 * ```
 */
export function inProcessFetch(server: McpServer, options: FetchOptions = {}): InProcessFetch {
  return (url, init) => server.fetch(new Request(url, init), options);
}
