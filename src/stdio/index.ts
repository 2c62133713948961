/**
 * The stdio transport: newline-delimited JSON-RPC over a subprocess's stdin and stdout
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio).
 *
 * @example
 * ```ts
 * import { createMcpServer, serveStdio } from "conduit-mcp";
 * const { closed } = serveStdio(createMcpServer({ tools }));
 * ```
 */
export { type StdioOptions, type StdioServing, serveStdio } from "./serve-stdio.js";
