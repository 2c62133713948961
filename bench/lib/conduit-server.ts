/**
 * Benchmark target (a): conduit-mcp's server with the CLI's `echo` demo tool (defined with
 * `defineTool` and a zod schema, exactly what `conduit-mcp serve` runs), all options at their
 * documented defaults: stateless, cancellation registry on, no metrics. It also serves the demo's
 * `demo://readme` resource and `review` prompt, which `bench/http.ts --methods …` measures side
 * by side with `tools/call` (a `tools/call` does not look at them).
 * Run as a child process by bench/http.ts: `node --import tsx bench/lib/conduit-server.ts`.
 */
import { reviewPrompt } from "../../src/cli/demo-prompts.js";
import { readmeResource } from "../../src/cli/demo-resources.js";
import { echoTool } from "../../src/cli/demo-tools.js";
import { createMcpServer } from "../../src/server/index.js";
import { announce } from "./listening.js";

const server = createMcpServer({
  tools: [echoTool],
  resources: [readmeResource],
  prompts: [reviewPrompt],
});
const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
announce(url);
