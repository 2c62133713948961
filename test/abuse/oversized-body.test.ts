/**
 * Abuse: an oversized body is refused before it is buffered. A declared
 * Content-Length over the limit is refused unread (test/http/endpoint.test.ts); here a chunked
 * body streamed far past the limit is cut at the limit: 413, the connection closes, and the
 * server read only a bounded prefix of what the client tried to send.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { describe, test } from "node:test";

import { createMcpServer } from "../../src/server/index.js";
import { rpc, testTools } from "../server/fixtures.js";
import { streamChunked } from "./raw-socket.js";

const LIMIT = 64 * 1024;
const ATTEMPT = 64 * 1024 * 1024; // 1 024 times the limit

describe("oversized chunked bodies", () => {
  test("a chunked body streamed to 1 024x the limit: 413, closed, the server read a bounded prefix", async () => {
    const mcp = createMcpServer({ tools: testTools(), maxBodyBytes: LIMIT });
    // A server of our own, to see how many bytes node read from each connection.
    const sockets: Socket[] = [];
    const http: Server = createServer(mcp.handler);
    http.on("connection", (socket: Socket) => sockets.push(socket));
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as AddressInfo;
    const heapBefore = process.memoryUsage().heapUsed;
    try {
      const outcome = await streamChunked(port, "/mcp", ATTEMPT, 16 * 1024, 10_000);
      assert.equal(outcome.closedByServer, true, "the server closed the connection");
      assert.match(outcome.received, /^HTTP\/1\.1 413 /);
      assert.match(outcome.received, /connection: close/i);
      assert.match(outcome.received, /"Request body too large"/);
      const serverRead = sockets[0]?.bytesRead ?? Number.NaN;
      // The limit, plus what node and the kernel hold in flight (stream and socket buffers):
      // far below what the client tried to send.
      assert.ok(serverRead < LIMIT + 1024 * 1024, `server read ${serverRead} bytes`);
      assert.ok(outcome.bytesWritten < ATTEMPT / 4, `client wrote ${outcome.bytesWritten} bytes`);
      // Nothing like the attempted body was retained (generous: other allocations happen too).
      const grown = process.memoryUsage().heapUsed - heapBefore;
      assert.ok(grown < ATTEMPT / 4, `heap grew ${grown} bytes`);
      assert.equal(mcp.concurrency().requests, 0);
    } finally {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      await mcp.close();
    }
  });

  test("through listen(): the cut connection does not stop the server serving others", async () => {
    const mcp = createMcpServer({ tools: testTools(), maxBodyBytes: LIMIT });
    const { url, port } = await mcp.listen();
    try {
      const outcomes = await Promise.all(
        [1, 2, 3].map(() => streamChunked(port, "/mcp", 8 * 1024 * 1024, 16 * 1024, 10_000)),
      );
      for (const outcome of outcomes) {
        assert.equal(outcome.closedByServer, true);
        assert.match(outcome.received, /^HTTP\/1\.1 413 /);
      }
      const answer = await rpc(url, { jsonrpc: "2.0", id: 1, method: "ping" });
      assert.equal(answer.status, 200);
    } finally {
      await mcp.close();
    }
  });
});
