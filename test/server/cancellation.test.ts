/**
 * How a cancelled request's exchange ends (docs/architecture.md, "A cancel"): a JSON exchange answers
 * -32800 at once, a stream ends without a response, a disconnect cancels under the request's own
 * scope, a stubborn tool is abandoned at the stream cancel timeout, DELETE of a session and
 * close() cancel what is running.
 */
import assert from "node:assert/strict";
import diagnosticsChannel from "node:diagnostics_channel";
import { request } from "node:http";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import {
  ChannelName,
  type RequestCancelledMessage,
  type ToolKilledMessage,
} from "../../src/diagnostics.js";
import { createMcpServer, type McpServerOptions } from "../../src/server/index.js";
import { callBody, cancelBody, probes, rpc, testTools, until } from "./fixtures.js";

async function withServer(
  options: Omit<McpServerOptions, "tools">,
  run: (url: string, server: ReturnType<typeof createMcpServer>) => Promise<void>,
): Promise<void> {
  const server = createMcpServer({ tools: testTools(), ...options });
  const { url } = await server.listen();
  try {
    await run(url, server);
  } finally {
    await server.close();
  }
}

/** Collects messages of a diagnostics channel during `run`. */
async function collect<T>(name: string, run: (seen: T[]) => Promise<void>): Promise<void> {
  const seen: T[] = [];
  const listener = (message: unknown): void => {
    seen.push(message as T);
  };
  diagnosticsChannel.subscribe(name, listener);
  try {
    await run(seen);
  } finally {
    diagnosticsChannel.unsubscribe(name, listener);
  }
}

/** Reads an SSE response into raw text, resolving when the stream ends. */
async function openStream(
  url: string,
  body: unknown,
): Promise<{ status: number; type: string | null; chunks: string[]; done: Promise<void> }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(body),
  });
  const chunks: string[] = [];
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  const done = (async () => {
    if (reader === undefined) return;
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) return;
      chunks.push(decoder.decode(value));
    }
  })();
  return { status: response.status, type: response.headers.get("content-type"), chunks, done };
}

describe("cancelled exchanges", () => {
  test("a cancelled JSON exchange answers -32800 at once, without waiting for the tool", async () => {
    await withServer({ streamCancelTimeoutMs: 10_000 }, async (url) => {
      const call = rpc(url, callBody("j-1", "stubborn", { ms: 1500, tag: "json-cancel" }), {
        accept: "application/json",
      });
      await until(() => probes.has("json-cancel"));
      const sent = performance.now();
      assert.equal((await rpc(url, cancelBody("j-1"))).status, 202);
      const answer = await call;
      assert.ok(performance.now() - sent < 500, "answered long before the tool ended");
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.json, {
        jsonrpc: "2.0",
        id: "j-1",
        error: { code: -32800, message: "Request cancelled" },
      });
      assert.equal(probes.get("json-cancel")?.finishedAt, null, "the tool is still running");
    });
  });

  test("a streamed call switches to SSE at its first progress, and a cancel ends the stream without a response", async () => {
    await withServer({ keepAliveMs: 20 }, async (url) => {
      const stream = await openStream(
        url,
        callBody(5, "count", { to: 50, intervalMs: 60, tag: "sse-cancel" }, { progressToken: "p" }),
      );
      assert.equal(stream.status, 200);
      assert.equal(stream.type, "text/event-stream");
      await until(() => stream.chunks.join("").includes("notifications/progress"));
      await until(
        () => stream.chunks.join("").includes(": keepalive"),
        2000,
        "a keep-alive comment",
      );
      assert.equal((await rpc(url, cancelBody(5))).status, 202);
      await stream.done; // the stream ends
      const text = stream.chunks.join("");
      assert.doesNotMatch(text, /"result"|"error"/, "no response on a cancelled stream");
      assert.match(
        text,
        /^event: message\ndata: \{"jsonrpc":"2.0","method":"notifications\/progress","params":\{"progressToken":"p","progress":1,"total":50,"message":"step 1"\}\}\n\n/,
      );
      assert.equal(probes.get("sse-cancel")?.reason?.source, "notification");
    });
  });

  test("a streamed call that finishes sends its progress, then the result, then ends", async () => {
    await withServer({}, async (url) => {
      const stream = await openStream(
        url,
        callBody(6, "count", { to: 2, intervalMs: 1, tag: "sse-ok" }, { progressToken: 9 }),
      );
      await stream.done;
      const events = stream.chunks
        .join("")
        .split("\n\n")
        .filter((e) => e.startsWith("event: message"))
        .map((e) => JSON.parse(e.slice(e.indexOf("data: ") + 6)));
      assert.equal(events.length, 3);
      assert.equal(events[0].params.progress, 1);
      assert.equal(events[1].params.progress, 2);
      assert.deepEqual(events[2], {
        jsonrpc: "2.0",
        id: 6,
        result: { content: [{ type: "text", text: "counted to 2" }] },
      });
    });
  });

  test("a client that accepts only JSON gets no notifications, just the result", async () => {
    await withServer({}, async (url) => {
      const answer = await rpc(
        url,
        callBody(8, "count", { to: 2, intervalMs: 1, tag: "json-only" }, { progressToken: 1 }),
        {
          accept: "application/json",
        },
      );
      assert.equal(answer.headers.get("content-type"), "application/json");
      assert.deepEqual(answer.json.result.content, [{ type: "text", text: "counted to 2" }]);
    });
  });
});

describe("disconnect", () => {
  test("a dropped connection aborts ctx.signal and records the cancel under the request's own scope", async () => {
    await collect<RequestCancelledMessage>(ChannelName.requestCancelled, async (seen) => {
      await withServer({ streamCancelTimeoutMs: 10_000 }, async (url, server) => {
        const req = request(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
        });
        req.on("error", () => {});
        req.end(JSON.stringify(callBody("d-1", "stubborn", { ms: 1000, tag: "drop" })));
        await until(() => probes.has("drop"));
        const dropped = performance.now();
        req.destroy();
        await until(() => probes.get("drop")?.abortedAt != null, 2000, "abort after disconnect");
        const probe = probes.get("drop");
        assert.ok((probe?.abortedAt as number) - dropped < 50);
        assert.equal(probe?.reason?.source, "disconnect");
        assert.deepEqual(
          seen.filter((m) => m.requestId === "d-1"),
          [
            {
              requestId: "d-1",
              scope: "ip:127.0.0.1",
              reason: "client disconnected",
              source: "disconnect",
            },
          ],
        );
        // The tool is still running: the row tells the truth under the request's scope.
        assert.equal(await server.registry.isCancelled("d-1", "ip:127.0.0.1"), true);
        assert.equal(await server.registry.reason("d-1", "ip:127.0.0.1"), "client disconnected");
        // Once it settles: untracked, then cleared.
        await until(() => probes.get("drop")?.finishedAt != null, 3000);
        await until(() => server.registry.inFlightCount === 0);
        await until(async () => !(await server.registry.isCancelled("d-1", "ip:127.0.0.1")));
      });
    });
  });

  for (const era of ["2025-11-25", "2026-07-28"] as const) {
    test(`${era}: one client hanging up never cancels a namesake call of another client in the same scope`, async () => {
      await withServer({ streamCancelTimeoutMs: 10_000 }, async (url, server) => {
        // Two anonymous clients behind one address share the scope ip:127.0.0.1 and both chose
        // id 1: legal in both eras (ids are only unique per sender).
        const modern = era === "2026-07-28";
        const meta = modern
          ? {
              "io.modelcontextprotocol/protocolVersion": era,
              "io.modelcontextprotocol/clientCapabilities": {},
            }
          : undefined;
        const headers: Record<string, string> = modern
          ? { "mcp-protocol-version": era, "mcp-method": "tools/call", "mcp-name": "sleep" }
          : {};
        const survivor = rpc(
          url,
          callBody(1, "sleep", { ms: 300, tag: `stay-${era}` }, meta),
          headers,
        );
        const req = request(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...headers,
          },
        });
        req.on("error", () => {});
        req.end(JSON.stringify(callBody(1, "sleep", { ms: 5_000, tag: `gone-${era}` }, meta)));
        await until(() => probes.has(`stay-${era}`) && probes.has(`gone-${era}`));
        req.destroy();
        await until(
          () => probes.get(`gone-${era}`)?.abortedAt != null,
          2000,
          "abort after disconnect",
        );
        const answer = await survivor;
        assert.equal(probes.get(`stay-${era}`)?.abortedAt, null, "the namesake was not aborted");
        assert.equal(answer.status, 200);
        const text = answer.json?.result?.content?.[0]?.text ?? answer.text;
        assert.match(text, /slept 300 ms/);
        await until(() => server.registry.inFlightCount === 0);
      });
    });
  }

  test("with cancelOnDisconnect: false a dropped connection does not cancel", async () => {
    await withServer({ cancelOnDisconnect: false }, async (url, server) => {
      const req = request(url, { method: "POST", headers: { "content-type": "application/json" } });
      req.on("error", () => {});
      req.end(JSON.stringify(callBody("d-2", "sleep", { ms: 200, tag: "keep" })));
      await until(() => probes.has("keep"));
      req.destroy();
      await until(() => probes.get("keep")?.finishedAt != null, 3000);
      assert.equal(probes.get("keep")?.abortedAt, null);
      assert.equal(probes.get("keep")?.remainingRan, true);
      await until(() => server.registry.inFlightCount === 0);
    });
  });
});

describe("stream cancel timeout", () => {
  test("a stubborn tool is abandoned: handle released, late result discarded, toolKilled published", async () => {
    await collect<ToolKilledMessage>(ChannelName.toolKilled, async (killed) => {
      await withServer({ streamCancelTimeoutMs: 100, metrics: true }, async (url, server) => {
        const call = rpc(url, callBody(21, "stubborn", { ms: 800, tag: "stubborn" }), {
          accept: "application/json",
        });
        await until(() => probes.has("stubborn"));
        assert.equal(server.registry.inFlightCount, 1);
        const cancelled = performance.now();
        await rpc(url, cancelBody(21));
        assert.equal((await call).json.error.code, -32800);
        await until(() => killed.length === 1, 2000, "toolKilled");
        const elapsed = performance.now() - cancelled;
        assert.ok(elapsed >= 90 && elapsed < 600, `killed after ${elapsed.toFixed(0)} ms`);
        assert.deepEqual(killed[0], {
          tool: "stubborn",
          requestId: "21",
          scope: "ip:127.0.0.1",
          terminated: false,
        });
        assert.equal(server.registry.inFlightCount, 0, "the gauge drops at once");
        assert.equal(probes.get("stubborn")?.finishedAt, null, "the tool itself is still running");
        const metrics = await (await fetch(url.replace("/mcp", "/metrics"))).text();
        assert.match(
          metrics,
          /^conduit_mcp_tool_calls_total\{tool="stubborn",outcome="killed"\} 1$/m,
        );
        assert.match(
          metrics,
          /^conduit_mcp_tool_calls_total\{tool="stubborn",outcome="cancelled"\} 0$/m,
        );
        assert.match(metrics, /^conduit_mcp_in_flight_requests 0$/m);
        // The late result changes nothing.
        await until(() => probes.get("stubborn")?.finishedAt != null, 2000);
        await sleep(10);
        assert.equal(server.registry.inFlightCount, 0);
      });
    });
  });
});

describe("sessions and shutdown cancel what is running", () => {
  test("DELETE of a session ends it and cancels its in-flight requests", async () => {
    await withServer({ sessions: true }, async (url, server) => {
      const init = await rpc(url, {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "t", version: "1" },
        },
      });
      const session = init.headers.get("mcp-session-id") as string;
      const call = rpc(url, callBody(1, "sleep", { ms: 60_000, tag: "session-call" }), {
        "mcp-session-id": session,
      });
      await until(() => probes.has("session-call"));
      const deleted = await fetch(url, {
        method: "DELETE",
        headers: { "mcp-session-id": session },
      });
      assert.equal(deleted.status, 204);
      assert.equal((await call).json.error.code, -32800);
      assert.equal(probes.get("session-call")?.reason?.source, "disconnect");
      assert.equal(probes.get("session-call")?.scope, `session:${session}`);
      const after = await rpc(
        url,
        { jsonrpc: "2.0", id: 2, method: "ping" },
        { "mcp-session-id": session },
      );
      assert.equal(after.status, 404);
      await until(() => server.registry.inFlightCount === 0);
    });
  });

  test("close() lets short calls finish within the grace period and aborts the rest", async () => {
    const server = createMcpServer({ tools: testTools(), closeGraceMs: 150 });
    const { url } = await server.listen();
    const short = rpc(url, callBody(1, "sleep", { ms: 50, tag: "close-short" }), {
      accept: "application/json",
    });
    const long = rpc(url, callBody(2, "sleep", { ms: 60_000, tag: "close-long" }), {
      accept: "application/json",
    });
    await until(() => probes.has("close-short") && probes.has("close-long"));
    const started = performance.now();
    await server.close();
    const took = performance.now() - started;
    assert.ok(took >= 140 && took < 2000, `close took ${took.toFixed(0)} ms`);
    assert.deepEqual((await short).json.result.content, [{ type: "text", text: "slept 50 ms" }]);
    // Nobody cancelled it: the answer says the server is shutting down, with HTTP 200 as any
    // error of a call that ran, so no load balancer retries it elsewhere (a 503 it would).
    const aborted = await long;
    assert.equal(aborted.status, 200);
    assert.equal(aborted.json.id, 2);
    assert.equal(aborted.json.error.code, -32603);
    assert.equal(aborted.json.error.message, "Server is shutting down");
    assert.equal(probes.get("close-long")?.reason?.source, "shutdown");
    assert.equal(server.registry.inFlightCount, 0);
    await assert.rejects(fetch(url, { method: "POST" }));
    await server.close(); // idempotent
  });

  test("close() answers a call on an open stream with a shutdown error event, then ends it", async () => {
    const server = createMcpServer({ tools: testTools(), closeGraceMs: 50 });
    const { url } = await server.listen();
    const streaming = rpc(
      url,
      callBody(
        3,
        "count",
        { to: 100, intervalMs: 100, tag: "close-stream" },
        { progressToken: "t" },
      ),
    );
    await until(() => probes.has("close-stream"));
    await new Promise((resolve) => setTimeout(resolve, 250)); // a progress event or two: a stream
    await server.close();
    const answer = await streaming;
    assert.equal(answer.headers.get("content-type"), "text/event-stream");
    const events = answer.text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)));
    const last = events.at(-1);
    assert.equal(last.id, 3, "the stream ends with a response to the call");
    assert.equal(last.error.message, "Server is shutting down");
  });
});
