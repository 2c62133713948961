/**
 * Isolated tools through the HTTP server: they run in the
 * server's worker pool (created on the first isolated call), forward progress and logs, a failure
 * is -32603 without leaking the tool's message, a full pool answers -32000 "Server busy", the
 * stream cancel timeout terminates the worker (`toolKilled` with `terminated: true`), and
 * close() terminates what still runs.
 */
import assert from "node:assert/strict";
import diagnosticsChannel from "node:diagnostics_channel";
import { describe, test } from "node:test";

import { z } from "zod";

import { ChannelName, type ToolKilledMessage } from "../../src/diagnostics.js";
import { isolatedHandler } from "../../src/isolation/index.js";
import { defineTool, type Tool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServerOptions } from "../../src/server/index.js";
import { callBody, cancelBody, rpc, until } from "./fixtures.js";

const MODULE = new URL("../fixtures/isolated-tools.ts", import.meta.url);

function isolatedTools(): Tool[] {
  return [
    defineTool({
      name: "spin",
      input: z.object({ ms: z.number().int().min(0) }),
      isolated: isolatedHandler(MODULE, "spin"),
    }),
    defineTool({
      name: "chatty",
      input: z.object({ steps: z.number().int().min(1) }),
      isolated: isolatedHandler(MODULE, "chatty"),
    }),
    defineTool({ name: "fail", isolated: isolatedHandler(MODULE, "fail") }),
  ];
}

async function withServer(
  options: Omit<McpServerOptions, "tools">,
  run: (url: string) => Promise<void>,
): Promise<void> {
  const server = createMcpServer({ tools: isolatedTools(), ...options });
  const { url } = await server.listen();
  try {
    await run(url);
  } finally {
    await server.close();
  }
}

describe("isolated tools through the server", () => {
  test("run in a worker: progress and logs reach the client's stream, then the result", async () => {
    await withServer({}, async (url) => {
      const answer = await rpc(url, callBody(1, "chatty", { steps: 2 }, { progressToken: "t" }));
      assert.equal(answer.headers.get("content-type"), "text/event-stream");
      const events = answer.text
        .split("\n\n")
        .filter((e) => e.startsWith("event: message"))
        .map((e) => JSON.parse(e.slice(e.indexOf("data: ") + 6)));
      assert.deepEqual(
        events.map((e) => e.method ?? "result"),
        ["notifications/progress", "notifications/progress", "notifications/message", "result"],
      );
      assert.deepEqual(events[3].result.content, [{ type: "text", text: "chatted" }]);
    });
  });

  test("a failing tool is -32603 and its message does not leak", async () => {
    await withServer({}, async (url) => {
      const answer = await rpc(url, callBody(2, "fail", {}), { accept: "application/json" });
      assert.equal(answer.json.error.code, -32603);
      assert.doesNotMatch(answer.text, /secret|srv\/internal/);
    });
  });

  test("a full pool answers -32000 Server busy; the cancel timeout terminates the worker", async () => {
    const killed: ToolKilledMessage[] = [];
    const listener = (m: unknown): void => {
      killed.push(m as ToolKilledMessage);
    };
    diagnosticsChannel.subscribe(ChannelName.toolKilled, listener);
    try {
      await withServer(
        { workerPool: { maxWorkers: 1, maxQueue: 0 }, streamCancelTimeoutMs: 100 },
        async (url) => {
          const first = rpc(url, callBody(3, "spin", { ms: 30_000 }), {
            accept: "application/json",
          });
          // Give the worker time to start the loop (the pool spawns it on this first call).
          await until(async () => {
            const busy = await rpc(url, callBody(4, "spin", { ms: 1 }), {
              accept: "application/json",
            });
            return busy.json?.error?.code === -32000;
          }, 5000);
          const busy = await rpc(url, callBody(5, "spin", { ms: 1 }), {
            accept: "application/json",
          });
          assert.deepEqual(busy.json.error, { code: -32000, message: "Server busy" });
          await rpc(url, cancelBody(3));
          assert.equal((await first).json.error.code, -32800);
          await until(() => killed.length === 1, 3000, "toolKilled");
          assert.equal(killed[0]?.tool, "spin");
          assert.equal(killed[0]?.terminated, true, "the worker thread was terminated");
          // A replacement worker serves the next call once the terminated thread has exited
          // (until then it still counts against maxWorkers: the pool stays bounded).
          let content: unknown;
          await until(async () => {
            const next = await rpc(url, callBody(6, "chatty", { steps: 1 }), {
              accept: "application/json",
            });
            content = next.json?.result?.content;
            return content !== undefined;
          }, 5000);
          assert.deepEqual(content, [{ type: "text", text: "chatted" }]);
        },
      );
    } finally {
      diagnosticsChannel.unsubscribe(ChannelName.toolKilled, listener);
    }
  });

  test("close() terminates an isolated tool that never checks its signal", async () => {
    const server = createMcpServer({ tools: isolatedTools(), closeGraceMs: 0 });
    const { url } = await server.listen();
    const call = rpc(url, callBody(7, "spin", { ms: 60_000 }), { accept: "application/json" });
    await until(() => server.registry.inFlightCount === 1);
    await new Promise((resolve) => setTimeout(resolve, 200)); // the worker has started spinning
    const started = performance.now();
    await server.close();
    assert.ok(performance.now() - started < 3000, "close() did not wait for the loop");
    // Nobody cancelled it: the server says it is shutting down.
    assert.equal((await call).json.error.message, "Server is shutting down");
    assert.equal(server.registry.inFlightCount, 0);
  });

  test("pool options are checked at construction", () => {
    assert.throws(() => createMcpServer({ tools: [], workerPool: { maxWorkers: 0 } }), {
      code: "CONDUIT_ERR_INVALID_OPTION",
    });
    assert.throws(() => createMcpServer({ tools: [], cacheTtlMs: -1 }), {
      code: "CONDUIT_ERR_INVALID_OPTION",
    });
  });
});
