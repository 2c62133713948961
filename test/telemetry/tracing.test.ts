/**
 * OpenTelemetry (docs/tracing.md), with the SDK's in-memory exporter and real HTTP
 * servers on 127.0.0.1: a call, a cancelled call and a killed call (an isolated tool terminated
 * at the stream cancel timeout) produce a request span and a handler span each, parented by the
 * incoming `traceparent` (`params._meta` first, then the HTTP header), with the MCP semantic
 * conventions' names and attributes; the handler runs inside its span's context; a malformed
 * `traceparent` is ignored; `tracing: false` produces nothing.
 */
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import {
  type Context,
  type ContextManager,
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { z } from "zod";

import { isolatedHandler } from "../../src/isolation/index.js";
import { definePrompt, defineResource, defineTool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServerOptions } from "../../src/server/index.js";
import { loadOpenTelemetry } from "../../src/telemetry/index.js";
import { connectPeer } from "../hosting/stdio-peer.js";
import { callBody, cancelBody, rpc, until } from "../server/fixtures.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";
const HEADER_PARENT_ID = "b7ad6b7169203331";
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;
const ISOLATED = new URL("../fixtures/isolated-tools.ts", import.meta.url);

/** A context manager over AsyncLocalStorage, as the Node SDK registers one (test-only). */
class StorageContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

function tools() {
  return [
    defineTool({
      name: "echo",
      input: z.object({ text: z.string() }),
      handler: ({ text }) => text,
    }),
    defineTool({
      name: "sleep",
      input: z.object({ ms: z.number() }),
      handler: async ({ ms }, ctx) => {
        await sleep(ms, undefined, { signal: ctx.signal });
        return "slept";
      },
    }),
    defineTool({
      name: "boom",
      handler: () => {
        throw new RangeError("internal detail");
      },
    }),
    defineTool({
      name: "hostile",
      handler: () => {
        const error = new Error("x");
        for (const key of ["message", "name", "stack"]) {
          Object.defineProperty(error, key, {
            get() {
              throw new Error("gotcha");
            },
          });
        }
        throw error;
      },
    }),
    defineTool({
      name: "soft_fail",
      handler: () => ({ isError: true, content: [{ type: "text", text: "no" }] }),
    }),
    defineTool({
      name: "nested",
      // Work of the tool's own, traced with the active context: a child of `execute_tool nested`.
      handler: async () => {
        await sleep(1);
        const span = trace.getTracer("user-code").startSpan("user work");
        span.end();
        return "nested";
      },
    }),
    defineTool({
      name: "spin",
      input: z.object({ ms: z.number().int().min(0) }),
      isolated: isolatedHandler(ISOLATED, "spin"),
    }),
  ];
}

async function withServer(
  options: Omit<McpServerOptions, "tools">,
  run: (url: string, inFlight: () => number) => Promise<void>,
): Promise<void> {
  const server = createMcpServer({
    tools: tools(),
    tracing: { tracerProvider: provider },
    onError: false,
    ...options,
  });
  const { url } = await server.listen({ host: "127.0.0.1" });
  try {
    await run(url, () => server.registry.inFlightCount);
  } finally {
    await server.close();
  }
}

const json = { accept: "application/json" };

function spansOf(id: string | number): {
  request: ReadableSpan;
  handler: ReadableSpan | undefined;
} {
  const spans = exporter
    .getFinishedSpans()
    .filter((span) => span.attributes["jsonrpc.request.id"] === String(id));
  const request = spans.find((span) => span.kind === SpanKind.SERVER);
  assert.ok(request, `a request span for ${id}`);
  return { request, handler: spans.find((span) => span.kind === SpanKind.INTERNAL) };
}

function cancelEvent(span: ReadableSpan) {
  return span.events.find((event) => event.name === "conduit_mcp.cancelled");
}

describe("OpenTelemetry spans", () => {
  before(() => {
    context.setGlobalContextManager(new StorageContextManager());
    trace.setGlobalTracerProvider(provider);
  });
  after(async () => {
    context.disable();
    trace.disable();
    await provider.shutdown();
  });

  test("a call: request span parented by _meta.traceparent, execute_tool child, MCP attributes", async () => {
    exporter.reset();
    await withServer({}, async (url) => {
      const answer = await rpc(
        url,
        callBody(1, "echo", { text: "hi" }, { traceparent: TRACEPARENT, tracestate: "rojo=1" }),
        { ...json, "mcp-protocol-version": "2025-11-25" },
      );
      assert.equal(answer.json.result.content[0].text, "hi");
    });
    const { request, handler } = spansOf(1);
    assert.equal(request.name, "tools/call echo");
    assert.equal(request.spanContext().traceId, TRACE_ID);
    assert.equal(request.parentSpanContext?.spanId, PARENT_ID);
    assert.equal(request.parentSpanContext?.isRemote, true);
    assert.equal(request.parentSpanContext?.traceState?.get("rojo"), "1");
    assert.deepEqual(
      {
        method: request.attributes["mcp.method.name"],
        tool: request.attributes["gen_ai.tool.name"],
        operation: request.attributes["gen_ai.operation.name"],
        version: request.attributes["mcp.protocol.version"],
        scope: request.attributes["conduit_mcp.scope.kind"],
        transport: request.attributes["network.transport"],
      },
      {
        method: "tools/call",
        tool: "echo",
        operation: "execute_tool",
        version: "2025-11-25",
        scope: "ip",
        transport: "tcp",
      },
    );
    assert.equal(request.status.code, SpanStatusCode.UNSET);
    assert.ok(handler);
    assert.equal(handler.name, "execute_tool echo");
    assert.equal(handler.parentSpanContext?.spanId, request.spanContext().spanId);
    assert.equal(handler.spanContext().traceId, TRACE_ID);
    assert.equal(handler.attributes["gen_ai.tool.name"], "echo");
    assert.equal(handler.attributes["conduit_mcp.outcome"], "ok");
  });

  test("the HTTP traceparent header parents a request without one in _meta; _meta wins and links the header", async () => {
    exporter.reset();
    const header = `00-${"a".repeat(32)}-${HEADER_PARENT_ID}-01`;
    await withServer({}, async (url) => {
      await rpc(url, callBody(2, "echo", { text: "a" }), { ...json, traceparent: header });
      await rpc(url, callBody(3, "echo", { text: "b" }, { traceparent: TRACEPARENT }), {
        ...json,
        traceparent: header,
      });
    });
    const fromHeader = spansOf(2).request;
    assert.equal(fromHeader.spanContext().traceId, "a".repeat(32));
    assert.equal(fromHeader.parentSpanContext?.spanId, HEADER_PARENT_ID);
    const fromMeta = spansOf(3).request;
    assert.equal(fromMeta.parentSpanContext?.spanId, PARENT_ID);
    assert.deepEqual(
      fromMeta.links.map((link) => link.context.spanId),
      [HEADER_PARENT_ID],
    );
  });

  test("malformed traceparents are ignored: a new trace starts", async () => {
    exporter.reset();
    const bad = [
      `ff-${TRACE_ID}-${PARENT_ID}-01`,
      `00-${"0".repeat(32)}-${PARENT_ID}-01`,
      `00-${TRACE_ID}-${PARENT_ID}-01-extra`,
      `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`,
      "x".repeat(10_000),
    ];
    await withServer({}, async (url) => {
      for (const [i, traceparent] of bad.entries()) {
        await rpc(url, callBody(10 + i, "echo", { text: "x" }, { traceparent }), json);
      }
    });
    for (let i = 0; i < bad.length; i++) {
      const { request } = spansOf(10 + i);
      assert.equal(request.parentSpanContext, undefined, `case ${i}: no parent`);
      assert.notEqual(request.spanContext().traceId, TRACE_ID);
    }
  });

  test("a cancelled call: both spans record the cancellation and its source, not an error", async () => {
    exporter.reset();
    await withServer({}, async (url, inFlight) => {
      const call = rpc(
        url,
        callBody(20, "sleep", { ms: 60_000 }, { traceparent: TRACEPARENT }),
        json,
      );
      await until(() => inFlight() === 1, 5000, "the call to run");
      await rpc(url, cancelBody(20, "user pressed stop"));
      assert.equal((await call).json.error.code, -32800);
      await until(() => exporter.getFinishedSpans().length >= 2, 5000, "both spans");
    });
    const { request, handler } = spansOf(20);
    assert.equal(request.parentSpanContext?.spanId, PARENT_ID);
    assert.equal(
      cancelEvent(request)?.attributes?.["conduit_mcp.cancellation.source"],
      "notification",
    );
    assert.equal(request.attributes["rpc.response.status_code"], "-32800");
    assert.equal(request.status.code, SpanStatusCode.UNSET, "a cancellation is not a failure");
    assert.ok(handler);
    assert.equal(handler.attributes["conduit_mcp.outcome"], "cancelled");
    assert.equal(handler.attributes["conduit_mcp.cancellation.source"], "notification");
    assert.equal(handler.status.code, SpanStatusCode.UNSET);
  });

  test("a killed call: an isolated tool terminated at the stream cancel timeout marks its span as an error", async () => {
    exporter.reset();
    await withServer({ streamCancelTimeoutMs: 100 }, async (url, inFlight) => {
      // On a stream, with a progress token: the tool's first progress says its worker has
      // started and is spinning (a worker's start-up can take longer than any fixed wait).
      const call = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify(
          callBody(30, "spin", { ms: 30_000 }, { traceparent: TRACEPARENT, progressToken: "p30" }),
        ),
      });
      assert.equal(inFlight(), 1);
      const reader = (call.body as ReadableStream<Uint8Array>)
        .pipeThrough(new TextDecoderStream())
        .getReader();
      let text = "";
      while (!text.includes("notifications/progress")) {
        const { value, done } = await reader.read();
        assert.ok(!done, "the stream ended before the tool's progress");
        text += value;
      }
      await rpc(url, cancelBody(30));
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
      // The stream of a cancelled call ends without a result.
      assert.doesNotMatch(text, /"result"/);
      await until(
        () => exporter.getFinishedSpans().some((span) => span.kind === SpanKind.INTERNAL),
        5000,
        "the handler span",
      );
    });
    const { request, handler } = spansOf(30);
    assert.equal(request.parentSpanContext?.spanId, PARENT_ID);
    assert.ok(handler);
    assert.equal(handler.name, "execute_tool spin");
    assert.equal(handler.parentSpanContext?.spanId, request.spanContext().spanId);
    assert.equal(handler.spanContext().traceId, TRACE_ID);
    assert.equal(handler.attributes["conduit_mcp.outcome"], "killed");
    assert.equal(handler.attributes["error.type"], "killed");
    assert.equal(handler.attributes["conduit_mcp.cancellation.source"], "notification");
    assert.equal(handler.status.code, SpanStatusCode.ERROR);
  });

  test("failures: a throw is -32603 on the request span and an exception on the handler span; isError is tool_error", async () => {
    exporter.reset();
    await withServer({}, async (url) => {
      await rpc(url, callBody(40, "boom", {}), json);
      await rpc(url, callBody(41, "soft_fail", {}), json);
      await rpc(url, callBody(42, "no_such_tool", {}), json);
      const hostile = await rpc(url, callBody(43, "hostile", {}), json);
      assert.equal(hostile.json.error.code, -32603);
    });
    const thrown = spansOf(40);
    assert.equal(thrown.request.status.code, SpanStatusCode.ERROR);
    assert.equal(thrown.request.attributes["error.type"], "-32603");
    assert.equal(thrown.request.attributes["rpc.response.status_code"], "-32603");
    assert.equal(thrown.handler?.status.code, SpanStatusCode.ERROR);
    assert.equal(thrown.handler?.attributes["error.type"], "RangeError");
    assert.ok(thrown.handler?.events.some((event) => event.name === "exception"));
    const soft = spansOf(41);
    assert.equal(soft.request.attributes["error.type"], "tool_error");
    assert.equal(soft.request.status.code, SpanStatusCode.ERROR);
    assert.equal(soft.handler?.attributes["error.type"], "tool_error");
    const unknown = spansOf(42);
    assert.equal(unknown.request.name, "tools/call", "an unknown name never becomes a span name");
    assert.equal(unknown.request.attributes["error.type"], "-32602");
    assert.equal(unknown.handler, undefined);
    const hostile = spansOf(43);
    assert.equal(hostile.handler?.status.code, SpanStatusCode.ERROR, "ended despite its getters");
    assert.equal(hostile.handler?.attributes["error.type"], "Error");
  });

  test("the handler runs in its span's context; resources, prompts and lists get spans too", async () => {
    exporter.reset();
    await withServer(
      {
        resources: [defineResource({ uri: "demo://r", name: "r", read: () => "text" })],
        prompts: [definePrompt({ name: "greet", get: () => "hello" })],
      },
      async (url) => {
        await rpc(url, callBody(50, "nested", {}), json);
        const body = (id: number, method: string, params: object) => ({
          jsonrpc: "2.0",
          id,
          method,
          params,
        });
        await rpc(url, body(51, "resources/read", { uri: "demo://r" }), json);
        await rpc(url, body(52, "prompts/get", { name: "greet" }), json);
        await rpc(url, body(53, "tools/list", {}), json);
      },
    );
    const nested = spansOf(50);
    const user = exporter.getFinishedSpans().find((span) => span.name === "user work");
    assert.ok(user, "the tool's own span");
    assert.equal(user.parentSpanContext?.spanId, nested.handler?.spanContext().spanId);
    const read = spansOf(51);
    assert.equal(read.request.name, "resources/read");
    assert.equal(read.request.attributes["mcp.resource.uri"], "demo://r");
    assert.equal(read.handler?.name, "read_resource");
    const prompt = spansOf(52);
    assert.equal(prompt.request.name, "prompts/get greet");
    assert.equal(prompt.request.attributes["gen_ai.prompt.name"], "greet");
    assert.equal(prompt.handler?.name, "get_prompt greet");
    const list = spansOf(53);
    assert.equal(list.request.name, "tools/list");
    assert.equal(list.handler, undefined);
  });

  test("a 2026-07-28 call (official client 2.x) carries its version; sessions are recorded as a digest", async () => {
    exporter.reset();
    await withServer({ sessions: true }, async (url) => {
      const client = new ModernClient(
        { name: "modern", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(new ModernTransport(new URL(url)));
      try {
        await client.callTool({ name: "echo", arguments: { text: "m" } });
      } finally {
        await client.close();
      }
      const init = await rpc(
        url,
        {
          jsonrpc: "2.0",
          id: 61,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "t", version: "1" },
          },
        },
        json,
      );
      const session = init.headers.get("mcp-session-id") ?? "";
      await rpc(url, callBody(62, "echo", { text: "s" }), {
        ...json,
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
      });
      const sessionSpan = spansOf(62).request;
      const digest = String(sessionSpan.attributes["mcp.session.id"]);
      assert.match(digest, /^[0-9a-f]{32}$/);
      assert.ok(!digest.includes(session) && !session.includes(digest));
      assert.equal(sessionSpan.attributes["conduit_mcp.scope.kind"], "session");
    });
    const modern = exporter
      .getFinishedSpans()
      .find((span) => span.kind === SpanKind.SERVER && span.name === "tools/call echo");
    assert.equal(modern?.attributes["mcp.protocol.version"], "2026-07-28");
    assert.equal(modern?.attributes["conduit_mcp.protocol.era"], "2026-07-28");
  });

  test("stdio: a pipe transport, parented by _meta.traceparent, in the connection's scope", async () => {
    exporter.reset();
    const server = createMcpServer({ tools: tools(), tracing: { tracerProvider: provider } });
    await server.listen(); // the API has loaded (serveStdio does not wait for it)
    const peer = connectPeer(server);
    try {
      peer.send(callBody(80, "echo", { text: "p" }, { traceparent: TRACEPARENT }));
      assert.equal((await peer.response(80)).result.content[0].text, "p");
    } finally {
      await peer.serving.close();
      await server.close();
    }
    const { request, handler } = spansOf(80);
    assert.equal(request.attributes["network.transport"], "pipe");
    assert.equal(request.attributes["conduit_mcp.scope.kind"], "stdio");
    assert.equal(request.parentSpanContext?.spanId, PARENT_ID);
    assert.equal(handler?.parentSpanContext?.spanId, request.spanContext().spanId);
  });

  test("a 2026-07-28 call cancelled by closing its stream (official client 2.x): source disconnect", async () => {
    exporter.reset();
    await withServer({}, async (url, inFlight) => {
      const client = new ModernClient(
        { name: "modern", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(new ModernTransport(new URL(url)));
      try {
        const stop = new AbortController();
        const call = client.callTool(
          { name: "sleep", arguments: { ms: 60_000 } },
          { signal: stop.signal },
        );
        await until(() => inFlight() === 1, 5000, "the call to run");
        stop.abort();
        await assert.rejects(call);
        await until(
          () =>
            exporter
              .getFinishedSpans()
              .some((span) => span.attributes["conduit_mcp.outcome"] === "cancelled"),
          5000,
          "the handler span",
        );
      } finally {
        await client.close();
      }
    });
    const spans = exporter.getFinishedSpans();
    const handler = spans.find((span) => span.name === "execute_tool sleep");
    const request = spans.find((span) => span.name === "tools/call sleep");
    assert.equal(handler?.attributes["conduit_mcp.cancellation.source"], "disconnect");
    assert.equal(request?.attributes["conduit_mcp.cancellation.source"], "disconnect");
    assert.equal(request?.attributes["mcp.protocol.version"], "2026-07-28");
    assert.equal(request?.status.code, SpanStatusCode.UNSET);
  });

  test("spans from the global provider by default; tracing: false produces none", async () => {
    exporter.reset();
    const server = createMcpServer({ tools: tools() });
    const { url } = await server.listen();
    try {
      await rpc(url, callBody(70, "echo", { text: "g" }), json);
    } finally {
      await server.close();
    }
    assert.equal(spansOf(70).request.name, "tools/call echo");
    exporter.reset();
    await withServer({ tracing: false }, async (url) => {
      await rpc(url, callBody(71, "echo", { text: "x" }), json);
    });
    assert.deepEqual(exporter.getFinishedSpans(), []);
    assert.throws(() => createMcpServer({ tracing: "on" as never }), /tracing/);
    assert.throws(
      () => createMcpServer({ tracing: { tracerProvider: {} as never } }),
      /tracing\.tracerProvider/,
    );
  });

  test("an absent API (the importer fails) resolves null, never rejects", async () => {
    const missing = Object.assign(new Error("Cannot find package '@opentelemetry/api'"), {
      code: "ERR_MODULE_NOT_FOUND",
    });
    assert.equal(await loadOpenTelemetry(() => Promise.reject(missing)), null);
    assert.equal(await loadOpenTelemetry(() => Promise.resolve({})), null);
    assert.notEqual(await loadOpenTelemetry(), null, "installed here: it loads");
  });
});
