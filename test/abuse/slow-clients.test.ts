/**
 * Abuse: a client trickling its headers or its body is cut off by the timeouts
 * (`headersTimeoutMs`, `requestTimeoutMs`, `bodyTimeoutMs`): 408 where possible, and the
 * connection is closed; meanwhile the server keeps serving others.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, test } from "node:test";

import { createMcpServer, type McpServer, type McpServerOptions } from "../../src/server/index.js";
import { rpc, testTools } from "../server/fixtures.js";
import { trickle } from "./raw-socket.js";

const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';

async function withServer(
  options: Omit<McpServerOptions, "tools">,
  run: (port: number, url: string, server: McpServer) => Promise<void>,
): Promise<void> {
  const server = createMcpServer({ tools: testTools(), ...options });
  const { url, port } = await server.listen();
  try {
    await run(port, url, server);
  } finally {
    await server.close();
  }
}

function postHead(length: number): string {
  return (
    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
    `Accept: application/json\r\nContent-Length: ${length}\r\n\r\n`
  );
}

describe("slow clients are cut off", () => {
  test("headers trickled a byte per 100 ms: 408 and closed after headersTimeoutMs", async () => {
    await withServer({ headersTimeoutMs: 400, requestTimeoutMs: 5_000 }, async (port, url) => {
      // The request line at once, then the headers one byte per 100 ms (they never end in time).
      const headers = "Host: 127.0.0.1\r\nContent-Type: application/json\r\nX-Slow: ".padEnd(
        200,
        "a",
      );
      const outcome = await trickle(port, "POST /mcp HTTP/1.1\r\n", headers, 100, 5_000);
      assert.equal(outcome.closedByServer, true, "the server closed the connection");
      assert.match(outcome.received, /^HTTP\/1\.1 408 /);
      // Cut near the timeout (node checks at an interval derived from it), long before the
      // 20 s the trickle would need.
      assert.ok(outcome.elapsedMs < 2_500, `cut after ${outcome.elapsedMs} ms`);
      assert.equal((await rpc(url, JSON.parse(PING))).status, 200);
    });
  });

  test("a body trickled a byte per 100 ms: 408 with a JSON-RPC error and closed after bodyTimeoutMs", async () => {
    await withServer({ bodyTimeoutMs: 400 }, async (port, url, server) => {
      const outcome = await trickle(port, postHead(PING.length), PING, 100, 5_000);
      assert.equal(outcome.closedByServer, true);
      assert.match(outcome.received, /^HTTP\/1\.1 408 /);
      assert.match(outcome.received, /connection: close/i);
      const body = outcome.received.slice(outcome.received.indexOf("\r\n\r\n") + 4);
      assert.deepEqual(JSON.parse(body), {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: "Request body timeout" },
      });
      assert.ok(outcome.elapsedMs >= 350 && outcome.elapsedMs < 2_000, `${outcome.elapsedMs} ms`);
      // Only a few bytes got in: the trickle was not read to its end.
      assert.ok(outcome.bytesWritten < postHead(PING.length).length + PING.length);
      assert.equal(server.concurrency().requests, 0);
      assert.equal((await rpc(url, JSON.parse(PING))).status, 200);
    });
  });

  test("the body timeout is a total deadline: steady progress does not reset it", async () => {
    // 40 bytes at 100 ms each would take 4 s; an idle timeout of 400 ms would never fire.
    await withServer({ bodyTimeoutMs: 600 }, async (port) => {
      const outcome = await trickle(port, postHead(PING.length), PING, 100, 5_000);
      assert.match(outcome.received, /^HTTP\/1\.1 408 /);
      assert.ok(outcome.elapsedMs < 2_000, `${outcome.elapsedMs} ms`);
    });
  });

  test("requestTimeoutMs cuts a trickled body even with the body timeout off", async () => {
    await withServer(
      { bodyTimeoutMs: 0, headersTimeoutMs: 300, requestTimeoutMs: 600 },
      async (port) => {
        const outcome = await trickle(port, postHead(PING.length), PING, 100, 5_000);
        assert.equal(outcome.closedByServer, true);
        assert.match(outcome.received, /^HTTP\/1\.1 408 /);
        assert.ok(outcome.elapsedMs < 2_500, `${outcome.elapsedMs} ms`);
      },
    );
  });

  test("a request whose body is complete in time is not affected, nor a long tool call after it", async () => {
    await withServer(
      { bodyTimeoutMs: 300, headersTimeoutMs: 300, requestTimeoutMs: 300 },
      async (_port, url) => {
        // The request arrives at once; the call then runs longer than every timeout.
        const answer = await rpc(url, {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "sleep", arguments: { ms: 800 } },
        });
        assert.equal(answer.status, 200);
        assert.deepEqual(answer.json.result, { content: [{ type: "text", text: "slept 800 ms" }] });
      },
    );
  });

  test("bodyTimeoutMs applies to `handler` under a server the caller created", async () => {
    const mcp = createMcpServer({ tools: testTools(), bodyTimeoutMs: 300 });
    const http = createServer(mcp.handler);
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = http.address() as AddressInfo;
      const outcome = await trickle(port, postHead(PING.length), PING, 100, 5_000);
      assert.match(outcome.received, /^HTTP\/1\.1 408 /);
      assert.equal(outcome.closedByServer, true);
    } finally {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      await mcp.close();
    }
  });

  test("timeouts are validated", () => {
    for (const [option, value] of [
      ["headersTimeoutMs", 0],
      ["requestTimeoutMs", -1],
      ["bodyTimeoutMs", 1.5],
      ["headersTimeoutMs", "10"],
    ] as const) {
      assert.throws(
        () => createMcpServer({ tools: [], [option]: value }),
        (error: Error) => error.name === "InvalidOptionError" && error.message.includes(option),
      );
    }
    assert.throws(
      () => createMcpServer({ tools: [], headersTimeoutMs: 2_000, requestTimeoutMs: 1_000 }),
      /requestTimeoutMs/,
    );
  });
});
