/**
 * A tool call past its deadline (`timeoutMs`) in the traces: both spans (request and handler)
 * carry `conduit_mcp.cancellation.source` = `timeout`, status `ERROR` and `error.type` =
 * `timeout` (docs/limits.md, "Deadlines"; docs/tracing.md).
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { SpanStatusCode } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";

import { createMcpServer, defineTool, type McpServer } from "../../src/index.js";
import { callBody, rpc, until } from "../server/fixtures.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let server: McpServer;
let url: string;

before(async () => {
  server = createMcpServer({
    tools: [
      defineTool({
        name: "stuck",
        timeoutMs: 100,
        handler: async (_args, ctx) => {
          await sleep(10_000, undefined, { signal: ctx.signal });
          return "never";
        },
      }),
    ],
    tracing: { tracerProvider: provider },
  });
  url = (await server.listen({ host: "127.0.0.1", port: 0 })).url;
});

after(async () => {
  await server.close();
  await provider.shutdown();
});

test("both spans of a call past its deadline say timeout, with status ERROR", async () => {
  const answer = await rpc(url, callBody(1, "stuck", {}));
  assert.equal(answer.json?.result?.isError, true, answer.text);
  await until(() => exporter.getFinishedSpans().length >= 2, 5_000, "two spans");
  const spans = exporter.getFinishedSpans();
  const request = spans.find((s) => s.name === "tools/call stuck");
  const handler = spans.find((s) => s !== request);
  for (const span of [request, handler]) {
    assert.ok(span !== undefined, spans.map((s) => s.name).join(", "));
    assert.equal(span.attributes["conduit_mcp.cancellation.source"], "timeout", span.name);
    assert.equal(span.attributes["error.type"], "timeout", span.name);
    assert.equal(span.status.code, SpanStatusCode.ERROR, span.name);
    assert.ok(
      span.events.some((e) => e.name === "conduit_mcp.cancelled"),
      span.name,
    );
  }
});
