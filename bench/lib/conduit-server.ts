/**
 * Benchmark target (a): conduit-mcp's server with the CLI's `echo` demo tool (defined with
 * `defineTool` and a zod schema, exactly what `conduit-mcp serve` runs), all options at their
 * documented defaults: stateless, cancellation registry on, no metrics.
 * Run as a child process by bench/http.ts: `node --import tsx bench/lib/conduit-server.ts`.
 */
import { echoTool } from "../../src/cli/demo-tools.js";
import { createMcpServer } from "../../src/server/index.js";
import { announce } from "./listening.js";

const server = createMcpServer({ tools: [echoTool] });
const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
announce(url);
