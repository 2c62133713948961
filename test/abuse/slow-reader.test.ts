/**
 * A client that stops reading its SSE stream cannot make the server buffer without bound: once
 * `maxStreamBufferBytes` wait for it, the stream is cut and the call cancelled as on a hang-up.
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import { describe, test } from "node:test";
import { setImmediate as yieldTurn } from "node:timers/promises";
import { z } from "zod";

import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer } from "../../src/server/index.js";
import { until } from "../server/fixtures.js";

describe("a slow reader is cut off", () => {
  test("progress the client does not read: the stream is cut and the tool's signal aborts", async () => {
    const seen = { sent: 0, abortedAt: -1, source: "" };
    const flood = defineTool({
      name: "flood",
      input: z.object({ count: z.number().int() }),
      handler: async ({ count }, ctx) => {
        ctx.signal.addEventListener("abort", () => {
          seen.abortedAt = seen.sent;
          seen.source = (ctx.signal.reason as { source?: string }).source ?? "";
        });
        for (let i = 1; i <= count && !ctx.signal.aborted; i++) {
          // Not awaited: a tool (or an isolated tool's worker) that never waits for the client.
          void ctx.progress(i, count, "x".repeat(4_000));
          seen.sent = i;
          if (i % 50 === 0) await yieldTurn();
        }
        return "done";
      },
    });
    const server = createMcpServer({ tools: [flood], maxStreamBufferBytes: 64 * 1024 });
    const { port } = await server.listen();
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    let closed = false;
    socket.on("close", () => {
      closed = true;
    });
    try {
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "flood", arguments: { count: 20_000 }, _meta: { progressToken: "p" } },
      });
      socket.write(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
          `Accept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      socket.pause(); // never reads: kernel buffers fill, then the server's
      await until(() => seen.abortedAt !== -1, 10_000, "the tool aborted");
      assert.equal(seen.source, "disconnect");
      assert.ok(seen.abortedAt < 20_000, `cut after ${seen.abortedAt} of 20000 events`);
      socket.resume(); // reads what was delivered, then sees the server's close
      await until(() => closed, 5_000, "the connection dropped");
      await until(() => server.concurrency().requests === 0, 3_000, "units given back");
    } finally {
      socket.destroy();
      await server.close();
    }
  });
});
