/**
 * The server: `createMcpServer`, its options and lifecycle.
 *
 * @example
 * ```ts
 * import { createMcpServer, defineTool } from "conduit-mcp";
 * const server = createMcpServer({ tools: [defineTool({ name: "hi", handler: () => "hi" })] });
 * await server.listen({ port: 3000 });
 * ```
 */

export {
  defineTool,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolResult,
} from "../protocol/index.js";
export { createMcpServer } from "./create-mcp-server.js";
export type { ConcurrencySnapshot, ListenAddress, McpServer } from "./mcp-server.js";
export {
  type DeprecatedFlatOptions,
  groupFlatOptions,
  type HttpOptions,
  type LimitOptions,
  type ListOptions,
  type McpServerOptions,
  PACKAGE_VERSION,
  type ResolvedOptions,
  resolveOptions,
  type SessionOptions,
  type TimeoutOptions,
} from "./options.js";
export { type StdioOptions, type StdioServing, serveStdio } from "./serve-stdio.js";
