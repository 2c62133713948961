/**
 * What the conduit-mcp benchmark targets serve: the CLI's `echo` tool and `review` prompt
 * (exactly what `conduit-mcp serve` runs, zod-validated), and the benchmark's Markdown resource
 * (bench/lib/bench-content.ts), which every target serves with the same bytes.
 *
 * @example
 * ```ts
 * const server = createMcpServer({ ...BENCH_DEFINITIONS });
 * ```
 */
import { reviewPrompt } from "../../src/cli/demo-prompts.js";
import { echoTool } from "../../src/cli/demo-tools.js";
import { defineResource } from "../../src/protocol/index.js";
import { BENCH_RESOURCE_MIME, BENCH_RESOURCE_TEXT, BENCH_RESOURCE_URI } from "./bench-content.js";

/** Tools, resources and prompts for `createMcpServer`. */
export const BENCH_DEFINITIONS = {
  tools: [echoTool],
  resources: [
    defineResource({
      uri: BENCH_RESOURCE_URI,
      name: "readme",
      mimeType: BENCH_RESOURCE_MIME,
      read: () => BENCH_RESOURCE_TEXT,
    }),
  ],
  prompts: [reviewPrompt],
};
