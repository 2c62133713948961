/**
 * Benchmark target of bench/telemetry.ts: bench/lib/conduit-server.ts's server (the CLI's `echo`
 * tool, defaults otherwise) with tracing in the mode `BENCH_TELEMETRY` names:
 *
 * - `off`: `tracing: false` (the API is never imported);
 * - `absent`: `@opentelemetry/api` cannot be resolved (test/telemetry/fixtures/no-otel.mjs),
 *   default options: what a user without the package gets;
 * - `noop`: the API installed, no SDK registered (default options);
 * - `on`: an SDK tracer provider sampling every request, with a batch processor and an exporter
 *   that drops what it gets (the cost of recording spans, not of shipping them).
 *
 * Run as a child process: `BENCH_TELEMETRY=on node --import tsx bench/lib/telemetry-server.ts`.
 */
import type { McpServerOptions } from "../../src/server/index.js";
import { announce } from "./listening.js";

const mode = process.env.BENCH_TELEMETRY ?? "off";
const HIDE_OTEL = "../../test/telemetry/fixtures/no-otel.mjs";
if (mode === "absent") await import(HIDE_OTEL);
// Imported after the hooks, so that the server's own import of the API goes through them.
const { echoTool } = await import("../../src/cli/demo-tools.js");
const { createMcpServer } = await import("../../src/server/index.js");

let tracing: McpServerOptions["tracing"] = true;
if (mode === "off") tracing = false;
if (mode === "on") {
  const { BasicTracerProvider, BatchSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
  const exporter = {
    export: (_spans: unknown, done: (result: { code: number }) => void) => done({ code: 0 }),
    shutdown: () => Promise.resolve(),
  };
  tracing = {
    tracerProvider: new BasicTracerProvider({
      spanProcessors: [new BatchSpanProcessor(exporter as never)],
    }),
  };
}
if (mode === "absent") {
  // The row must measure what it says: fail the run if the package loaded after all.
  const { loadOpenTelemetry } = await import("../../src/telemetry/index.js");
  if ((await loadOpenTelemetry()) !== null) throw new Error("@opentelemetry/api was not hidden");
}
const server = createMcpServer({ tools: [echoTool], tracing });
const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
announce(url);
