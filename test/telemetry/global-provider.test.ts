/**
 * Tracing from the global tracer provider (the default `tracing: true`, docs/tracing.md):
 * while no SDK is registered a request makes no span at all (the API's no-op span would record
 * nothing, so none is made), and an SDK registered after the server started is used from the
 * next request on, with its request and handler spans, over a real HTTP server on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";

import { SpanKind, trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { z } from "zod";

import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer } from "../../src/server/index.js";
import { callBody, rpc } from "../server/fixtures.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

after(async () => {
  trace.disable();
  await provider.shutdown();
});

const echo = defineTool({
  name: "echo",
  input: z.object({ text: z.string() }),
  handler: ({ text }) => text,
});

test("no SDK: calls answer and make no span; an SDK registered later traces the next call", async () => {
  trace.disable(); // no global provider: the API's no-op behind its proxy
  const server = createMcpServer({ tools: [echo], onError: false });
  const { url } = await server.listen({ host: "127.0.0.1" });
  try {
    const headers = { "mcp-protocol-version": "2025-11-25" };
    const first = await rpc(url, callBody(1, "echo", { text: "before" }), headers);
    assert.equal(first.json.result.content[0].text, "before");
    assert.equal(exporter.getFinishedSpans().length, 0);

    assert.equal(trace.setGlobalTracerProvider(provider), true);
    const second = await rpc(url, callBody(2, "echo", { text: "after" }), headers);
    assert.equal(second.json.result.content[0].text, "after");
    const spans = exporter.getFinishedSpans();
    assert.equal(spans.length, 2, "the request span and the handler span of the second call");
    const request = spans.find((span) => span.kind === SpanKind.SERVER);
    const handler = spans.find((span) => span.kind === SpanKind.INTERNAL);
    assert.ok(request, "a request span once the SDK is there");
    assert.equal(request.name, "tools/call echo");
    assert.equal(request.attributes["jsonrpc.request.id"], "2");
    assert.ok(handler, "and its handler span");
    assert.equal(handler.name, "execute_tool echo");
    assert.equal(handler.parentSpanContext?.spanId, request.spanContext().spanId);
  } finally {
    await server.close();
  }
});
