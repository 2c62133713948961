/**
 * Connections: one that never sends a byte is closed after `headersTimeoutMs`; at most
 * `maxConnections` are open at once (reaching it closes one of the largest bucket's, never
 * refusing: test/abuse/connection-bounds.test.ts); an idle keep-alive connection stays open for
 * `keepAliveTimeoutMs` (default 65 s: longer than common load balancers' idle timeouts).
 */
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { describe, test } from "node:test";

import { createMcpServer, type McpServerOptions } from "../../src/server/index.js";
import { testTools, until } from "../server/fixtures.js";

interface Watched {
  readonly socket: Socket;
  closedAt: number | null;
  received: string;
}

function open(port: number): Watched {
  const socket = connect(port, "127.0.0.1");
  const watched: Watched = { socket, closedAt: null, received: "" };
  socket.on("data", (chunk) => {
    watched.received += chunk.toString("latin1");
  });
  socket.on("error", () => {});
  socket.on("close", () => {
    watched.closedAt = performance.now();
  });
  return watched;
}

async function withServer(
  options: Omit<McpServerOptions, "tools">,
  run: (port: number) => Promise<void>,
): Promise<void> {
  const server = createMcpServer({ tools: testTools(), ...options });
  const { port } = await server.listen();
  try {
    await run(port);
  } finally {
    await server.close();
  }
}

const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
const PING_REQUEST =
  "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
  `Accept: application/json\r\nContent-Length: ${PING.length}\r\n\r\n${PING}`;

describe("connections are bounded", () => {
  test("a connection that never sends a byte is closed after headersTimeoutMs", async () => {
    // 1.5 s: node's own header timeout only starts with a request's first byte, so without the
    // server's own timer these sockets stay open indefinitely.
    await withServer({ headersTimeoutMs: 1_500 }, async (port) => {
      const started = performance.now();
      const silent = Array.from({ length: 5 }, () => open(port));
      await until(() => silent.every((s) => s.closedAt !== null), 5_000, "silent sockets closed");
      for (const s of silent) {
        const after = (s.closedAt as number) - started;
        assert.ok(after >= 1_400 && after < 4_500, `closed after ${after} ms`);
      }
    });
  });

  test("connections opened at different times are each closed at their own deadline", async () => {
    // One timer serves every connection: a later one must not be checked at an earlier one's
    // deadline (closed too soon), nor wait for a later round.
    await withServer({ headersTimeoutMs: 1_000 }, async (port) => {
      const firstAt = performance.now();
      const first = open(port);
      await new Promise((resolve) => setTimeout(resolve, 600));
      const secondAt = performance.now();
      const second = open(port);
      const talker = open(port);
      talker.socket.write(PING_REQUEST);
      await until(() => second.closedAt !== null, 5_000, "second silent socket closed");
      const firstAfter = (first.closedAt as number) - firstAt;
      const secondAfter = (second.closedAt as number) - secondAt;
      assert.ok(firstAfter >= 950 && firstAfter < 2_500, `first closed after ${firstAfter} ms`);
      assert.ok(secondAfter >= 950 && secondAfter < 2_500, `second closed after ${secondAfter} ms`);
      assert.ok(
        (second.closedAt as number) - (first.closedAt as number) >= 400,
        "the second closed at its own deadline, not the first's",
      );
      assert.equal(talker.closedAt, null, "a connection that sent a byte stays open");
      talker.socket.destroy();
    });
  });

  test("a connection that sent its request is not closed by that timer", async () => {
    await withServer({ headersTimeoutMs: 300, keepAliveTimeoutMs: 5_000 }, async (port) => {
      const client = open(port);
      client.socket.write(PING_REQUEST);
      await until(() => client.received.includes('"result"'), 2_000, "the answer");
      await new Promise((resolve) => setTimeout(resolve, 600));
      assert.equal(client.closedAt, null, "kept alive past headersTimeoutMs");
      client.socket.destroy();
    });
  });

  test("at maxConnections a new connection makes room: the largest bucket's oldest idle one closes", async () => {
    // One address holds all three: the global bound never refuses it (its own bound is 128), it
    // closes that bucket's oldest connections instead, so the total stays at three.
    await withServer({ maxConnections: 3 }, async (port) => {
      const first = Array.from({ length: 3 }, () => open(port));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const extra = Array.from({ length: 2 }, () => open(port));
      await until(
        () => first.filter((s) => s.closedAt !== null).length === 2,
        2_000,
        "two of the first closed",
      );
      assert.equal(first[2]?.closedAt, null, "the youngest of the first three stays open");
      assert.ok(
        extra.every((s) => s.closedAt === null),
        "the new connections stay open",
      );
      for (const s of [...first, ...extra]) s.socket.destroy();
    });
  });

  for (const expectContinue of [false, true]) {
    test(`at maxConnections a connection with a call running is spared, the oldest idle one closes${expectContinue ? " (its request sent Expect: 100-continue)" : ""}`, async () => {
      // The node door counts each request on its connection, including one node hands over as
      // 'checkContinue' rather than 'request' (a client sending Expect: 100-continue).
      await withServer({ maxConnections: 3 }, async (port) => {
        const busy = open(port);
        const body = JSON.stringify({
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: { name: "sleep", arguments: { ms: 1_500 } },
        });
        busy.socket.write(
          "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
            "Accept: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\n" +
            (expectContinue ? "Expect: 100-continue\r\n" : "") +
            `Content-Length: ${body.length}\r\n\r\n${body}`,
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
        const idle = Array.from({ length: 2 }, () => open(port));
        await new Promise((resolve) => setTimeout(resolve, 200));
        const extra = open(port);
        await until(() => idle[0]?.closedAt !== null, 2_000, "the oldest idle connection closed");
        assert.equal(busy.closedAt, null, "the busy connection, though older, stays open");
        assert.equal(idle[1]?.closedAt, null);
        assert.equal(extra.closedAt, null);
        await until(() => busy.received.includes('"slept 1500 ms"'), 3_000, "the call's answer");
        for (const s of [busy, ...idle, extra]) s.socket.destroy();
      });
    });
  }

  test("an idle keep-alive connection is closed after keepAliveTimeoutMs", async () => {
    await withServer({ keepAliveTimeoutMs: 300 }, async (port) => {
      const client = open(port);
      client.socket.write(PING_REQUEST);
      await until(() => client.received.includes('"result"'), 2_000, "the answer");
      const answeredAt = performance.now();
      assert.match(client.received, /keep-alive: timeout=0/i);
      await until(() => client.closedAt !== null, 3_000, "closed when idle");
      const idle = (client.closedAt as number) - answeredAt;
      assert.ok(idle >= 250 && idle < 2_500, `closed after ${idle} ms idle`);
    });
  });

  test("by default an idle keep-alive connection outlives node's 5 s default", async () => {
    await withServer({}, async (port) => {
      const client = open(port);
      client.socket.write(PING_REQUEST);
      await until(() => client.received.includes('"result"'), 2_000, "the answer");
      assert.match(client.received, /keep-alive: timeout=65/i);
      await new Promise((resolve) => setTimeout(resolve, 5_600));
      assert.equal(client.closedAt, null, "still open after 5.6 s idle");
      client.socket.destroy();
    });
  });
});
