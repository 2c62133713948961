/**
 * The stdio transport: newline-delimited JSON-RPC over a subprocess's stdin and stdout
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio). The public
 * entry, `serveStdio(server)`, lives in src/server/serve-stdio.ts: it needs the server, and this
 * layer sits below the server.
 *
 * @example
 * ```ts
 * const connection = new StdioConnection(core, process.stdin, process.stdout);
 * await connection.closed;
 * ```
 */
export { StdioConnection, type TransportCore } from "./stdio-connection.js";
