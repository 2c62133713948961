/**
 * End to end with the official 2025-era client (`@modelcontextprotocol/sdk` 1.x): cancellation
 * by AbortSignal reaches the tool's ctx.signal within 50 ms of the cancel POST arriving, the rest
 * of the tool never runs, the in-flight gauge returns to 0; progress reaches `onprogress`.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { probes, testTools, until } from "./fixtures.js";

describe("official SDK 1.x client", () => {
  let server: McpServer;
  let http: Server;
  let url: URL;
  /** Arrival time of every POST, stamped before the server sees it. */
  const arrivals: number[] = [];

  before(async () => {
    server = createMcpServer({ tools: testTools(), metrics: true });
    // Wrapped to stamp arrivals server-side; the listener itself is the library's.
    http = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.method === "POST") arrivals.push(performance.now());
      server.handler(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  });

  after(async () => {
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await server.close();
  });

  async function connect(): Promise<Client> {
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(url));
    return client;
  }

  test("lists tools and calls one", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === "echo"));
    const result = await client.callTool({ name: "echo", arguments: { text: "hello" } });
    assert.deepEqual(result.content, [{ type: "text", text: "hello" }]);
    await client.close();
  });

  test("an AbortSignal at 100 ms aborts a 5 s sleep on the server within 50 ms of the cancel", async (t) => {
    const client = await connect();
    const started = performance.now();
    await assert.rejects(
      client.callTool({ name: "sleep", arguments: { ms: 5000, tag: "sdk-cancel" } }, undefined, {
        signal: AbortSignal.timeout(100),
      }),
    );
    await until(() => probes.get("sdk-cancel")?.abortedAt != null, 2000, "server-side abort");
    const probe = probes.get("sdk-cancel");
    assert.ok(probe?.abortedAt != null);
    // The cancel POST is the last POST that arrived before the abort.
    const cancelArrival = Math.max(...arrivals.filter((t) => t <= (probe.abortedAt as number)));
    const latency = probe.abortedAt - cancelArrival;
    t.diagnostic(`cancel POST arrival → ctx.signal abort: ${latency.toFixed(2)} ms`);
    assert.ok(latency < 50, `aborted ${latency.toFixed(1)} ms after the cancel arrived`);
    assert.ok(probe.abortedAt - started < 1000, "aborted long before the 5 s sleep ended");
    assert.equal(probe.reason?.source, "notification");
    await until(() => server.registry.inFlightCount === 0, 2000, "in-flight gauge 0");
    const metrics = await (await fetch(new URL("/metrics", url))).text();
    assert.match(metrics, /^conduit_mcp_in_flight_requests 0$/m);
    assert.match(metrics, /^conduit_mcp_cancellations_total\{source="notification"\} 1$/m);
    assert.match(metrics, /tool="sleep",outcome="cancelled"\} 1$/m);
    // The rest of the tool never runs.
    await sleep(150);
    assert.equal(probe.remainingRan, false);
    await client.close();
  });

  test("progress reaches onprogress before the result", async () => {
    const client = await connect();
    const seen: Array<{ progress: number; total?: number }> = [];
    const result = await client.callTool(
      { name: "count", arguments: { to: 3, intervalMs: 5 } },
      undefined,
      {
        onprogress: (p) =>
          seen.push({ progress: p.progress, ...(p.total === undefined ? {} : { total: p.total }) }),
      },
    );
    assert.deepEqual(result.content, [{ type: "text", text: "counted to 3" }]);
    assert.deepEqual(seen, [
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
      { progress: 3, total: 3 },
    ]);
    await client.close();
  });

  test("log messages reach the client's notification handler", async () => {
    const client = new Client({ name: "test", version: "1.0.0" });
    const messages: unknown[] = [];
    const { LoggingMessageNotificationSchema } = await import("@modelcontextprotocol/sdk/types.js");
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      messages.push(n.params.data);
    });
    await client.connect(new StreamableHTTPClientTransport(url));
    const result = await client.callTool({ name: "chatty", arguments: {} });
    assert.deepEqual(result.content, [{ type: "text", text: "logged" }]);
    assert.deepEqual(messages, [
      "Tool execution started",
      "a debug line",
      { detail: "Tool execution completed" },
    ]);
    await client.close();
  });

  test("tool errors: isError results pass, a throwing tool is -32603 without its message", async () => {
    const client = await connect();
    const soft = await client.callTool({ name: "soft_fail", arguments: {} });
    assert.equal(soft.isError, true);
    await assert.rejects(
      client.callTool({ name: "boom", arguments: {} }),
      (error: Error & { code?: number }) => {
        assert.equal(error.code, -32603);
        assert.doesNotMatch(error.message, /database|10\.0\.0\.5|sensitive/);
        return true;
      },
    );
    await assert.rejects(
      client.callTool({ name: "nope", arguments: {} }),
      (error: Error & { code?: number }) => {
        assert.equal(error.code, -32602);
        return true;
      },
    );
    await client.close();
  });
});
