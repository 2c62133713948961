/**
 * `serveStdio` over in-memory streams, line by line: framing and bad input, progress,
 * cancellation by `notifications/cancelled` (2026-07-28 basic/patterns/cancellation: the only
 * way on stdio) and by the end of stdin, the per-connection scope (tenant isolation), the
 * per-scope bound, both protocol eras, and shutdown.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { probes, testTools, until } from "../server/fixtures.js";
import { connectPeer } from "./stdio-peer.js";

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

function call(id: number | string, name: string, args: Record<string, unknown>, meta?: object) {
  return {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: meta === undefined ? { name, arguments: args } : { name, arguments: args, _meta: meta },
  };
}

function cancel(requestId: unknown) {
  return { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId } };
}

async function withServer(
  options: Partial<Parameters<typeof createMcpServer>[0]>,
  body: (server: McpServer) => Promise<void>,
): Promise<void> {
  const server = createMcpServer({ tools: testTools(), ...options });
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

describe("serveStdio", () => {
  test("answers tools/list and tools/call on stdout, one message per line", async () => {
    await withServer({}, async (server) => {
      const peer = connectPeer(server);
      peer.send({ jsonrpc: "2.0", id: 1, method: "tools/list" });
      peer.send(call(2, "echo", { text: "line\nbreak" }));
      const list = await peer.response(1);
      assert.ok(list.result.tools.some((tool: { name: string }) => tool.name === "echo"));
      const echoed = await peer.response(2);
      assert.deepEqual(echoed.result.content, [{ type: "text", text: "line\nbreak" }]);
      await peer.serving.close();
    });
  });

  test("bad input: -32700 for a line that is not JSON, -32600 with the id for an invalid message; responses and blank lines are ignored", async () => {
    await withServer({}, async (server) => {
      const peer = connectPeer(server);
      peer.send("{not json\n");
      peer.send({ jsonrpc: "1.0", id: 9, method: "ping" });
      peer.send({ jsonrpc: "2.0", id: 10, result: {} });
      peer.send("\r\n\n");
      peer.send({ jsonrpc: "2.0", id: 11, method: "ping" });
      await peer.response(11);
      assert.deepEqual(
        peer.lines.map((line) => [line.id, line.error?.code ?? "ok"]),
        [
          [null, -32700],
          [9, -32600],
          [11, "ok"],
        ],
      );
      await peer.serving.close();
    });
  });

  test("progress notifications come before the response, on the same channel", async () => {
    await withServer({}, async (server) => {
      const peer = connectPeer(server);
      peer.send({
        ...call(3, "count", { to: 3, intervalMs: 1, tag: "stdio-progress" }),
        params: {
          name: "count",
          arguments: { to: 3, intervalMs: 1, tag: "stdio-progress" },
          _meta: { progressToken: "p3" },
        },
      });
      await peer.response(3);
      const progress = peer.lines.filter((line) => line.method === "notifications/progress");
      assert.deepEqual(
        progress.map((line) => line.params.progress),
        [1, 2, 3],
      );
      assert.ok(progress.every((line) => line.params.progressToken === "p3"));
      assert.equal(peer.lines.at(-1).id, 3, "the response is the last line");
      await peer.serving.close();
    });
  });

  test("notifications/cancelled aborts ctx.signal (source notification); nothing more is written for that request", async () => {
    await withServer({}, async (server) => {
      const peer = connectPeer(server);
      peer.send(call(4, "sleep", { ms: 10_000, tag: "stdio-cancel" }));
      await until(() => probes.has("stdio-cancel"), 5_000, "the tool started");
      const sent = performance.now();
      peer.send(cancel(4));
      await until(() => probes.get("stdio-cancel")?.abortedAt != null, 2_000, "abort");
      const probe = probes.get("stdio-cancel");
      assert.equal(probe?.reason?.source, "notification");
      assert.ok((probe?.abortedAt as number) - sent < 1_000);
      assert.match(probe?.scope ?? "", /^stdio:[0-9a-f-]{36}$/);
      await until(() => server.registry.inFlightCount === 0, 2_000, "untracked");
      peer.send({ jsonrpc: "2.0", id: 5, method: "ping" });
      await peer.response(5);
      assert.equal(
        peer.lines.filter((line) => line.id === 4).length,
        0,
        "no response for the cancelled request",
      );
      await peer.serving.close();
    });
  });

  test("a cancel written right behind its request, in the same chunk, still cancels it", async () => {
    await withServer({}, async (server) => {
      const peer = connectPeer(server);
      peer.send(
        `${JSON.stringify(call("r-6", "sleep", { ms: 10_000, tag: "stdio-early" }))}\n${JSON.stringify(cancel("r-6"))}\n`,
      );
      await until(() => probes.get("stdio-early")?.abortedAt != null, 5_000, "abort");
      assert.equal(probes.get("stdio-early")?.reason?.source, "notification");
      await until(() => server.registry.inFlightCount === 0, 2_000, "untracked");
      await peer.serving.close();
    });
  });

  test("each connection is its own scope: a cancel on one never reaches the same id on another", async () => {
    await withServer({}, async (server) => {
      const alice = connectPeer(server);
      const mallory = connectPeer(server);
      assert.notEqual(alice.serving.scope, mallory.serving.scope);
      alice.send(call(1, "sleep", { ms: 10_000, tag: "stdio-alice" }));
      await until(() => probes.has("stdio-alice"), 5_000, "the tool started");
      mallory.send(cancel(1));
      mallory.send({ jsonrpc: "2.0", id: 2, method: "ping" });
      await mallory.response(2);
      await sleep(100);
      assert.equal(probes.get("stdio-alice")?.abortedAt, null, "not cancelled by another client");
      alice.send(cancel(1));
      await until(() => probes.get("stdio-alice")?.abortedAt != null, 2_000, "own cancel");
      await alice.serving.close();
      await mallory.serving.close();
    });
  });

  test("stdin closing cancels every running request at once (source disconnect) and resolves closed", async () => {
    await withServer({ cancelOnDisconnect: false }, async (server) => {
      const peer = connectPeer(server);
      peer.send(call(1, "sleep", { ms: 10_000, tag: "stdio-eof-1" }));
      peer.send(call(2, "sleep", { ms: 10_000, tag: "stdio-eof-2" }));
      await until(
        () => probes.has("stdio-eof-1") && probes.has("stdio-eof-2"),
        5_000,
        "both started",
      );
      const ended = performance.now();
      peer.stdin.end();
      await peer.serving.closed;
      await until(
        () =>
          probes.get("stdio-eof-1")?.abortedAt != null &&
          probes.get("stdio-eof-2")?.abortedAt != null,
        2_000,
        "both aborted",
      );
      for (const tag of ["stdio-eof-1", "stdio-eof-2"]) {
        const probe = probes.get(tag);
        assert.equal(probe?.reason?.source, "disconnect");
        assert.ok((probe?.abortedAt as number) - ended < 500, `${tag} aborted at once`);
      }
      await until(() => server.registry.inFlightCount === 0, 2_000, "untracked");
      assert.equal(server.concurrency().requests, 0, "the scope's units are given back");
      assert.equal(peer.lines.length, 0, "nothing is written after the input ended");
    });
  });

  test("the per-scope bound refuses one request too many with -32000; a cancel still gets through", async () => {
    await withServer({ maxConcurrentRequestsPerScope: 2 }, async (server) => {
      const peer = connectPeer(server);
      peer.send(call(1, "sleep", { ms: 10_000, tag: "stdio-bound-1" }));
      peer.send(call(2, "sleep", { ms: 10_000, tag: "stdio-bound-2" }));
      peer.send(call(3, "echo", { text: "one too many" }));
      const refused = await peer.response(3);
      assert.equal(refused.error.code, -32000);
      assert.equal(server.concurrency().requests, 2);
      await until(() => probes.has("stdio-bound-1"), 5_000, "started");
      peer.send(cancel(1));
      await until(() => probes.get("stdio-bound-1")?.abortedAt != null, 2_000, "cancelled");
      await until(() => server.concurrency().requests === 1, 2_000, "unit given back");
      peer.send(call(4, "echo", { text: "room again" }));
      assert.equal((await peer.response(4)).result.content[0].text, "room again");
      await peer.serving.close();
    });
  });

  test("a cancelled call that ignores its signal gives its unit back at the stream cancel timeout, not when it finally settles", async () => {
    await withServer(
      { maxConcurrentRequestsPerScope: 1, streamCancelTimeoutMs: 100 },
      async (server) => {
        const peer = connectPeer(server);
        peer.send(call(1, "stubborn", { ms: 20_000, tag: "stdio-abandoned" }));
        await until(() => probes.has("stdio-abandoned"), 5_000, "started");
        peer.send(cancel(1));
        // Abandoned 100 ms after the cancel while its handler sleeps on for 20 s.
        await until(() => server.concurrency().requests === 0, 5_000, "unit given back");
        assert.equal(probes.get("stdio-abandoned")?.remainingRan, false, "still sleeping");
        peer.send(call(2, "echo", { text: "room again" }));
        assert.equal((await peer.response(2)).result.content[0].text, "room again");
        await peer.serving.close();
      },
    );
  });

  test("a line over maxBodyBytes is refused without being kept, and the next line is served", async () => {
    await withServer({ maxBodyBytes: 1_024 }, async (server) => {
      const peer = connectPeer(server);
      // Sent in pieces and without a newline for a while: the bound applies before the line ends.
      const big = JSON.stringify(call(1, "echo", { text: "x".repeat(5_000) }));
      peer.send(big.slice(0, 2_000));
      const refused = await peer.next((line) => line.error?.code === -32600);
      assert.equal(refused.id, null);
      peer.send(`${big.slice(2_000)}\n`);
      peer.send({ jsonrpc: "2.0", id: 2, method: "ping" });
      await peer.response(2);
      assert.equal(peer.lines.length, 2, "one refusal, one answer");
      await peer.serving.close();
    });
  });

  test("logging/setLevel holds for the connection's later calls", async () => {
    await withServer({}, async (server) => {
      const peer = connectPeer(server);
      peer.send(call(1, "chatty", {}));
      await peer.response(1);
      const before = peer.lines.filter((line) => line.method === "notifications/message").length;
      assert.equal(before, 3);
      peer.send({ jsonrpc: "2.0", id: 2, method: "logging/setLevel", params: { level: "error" } });
      await peer.response(2);
      peer.send(call(3, "chatty", {}));
      await peer.response(3);
      const logs = peer.lines.filter((line) => line.method === "notifications/message");
      assert.deepEqual(
        logs.slice(before).map((line) => line.params.level),
        ["error"],
      );
      await peer.serving.close();
    });
  });

  test("2026-07-28 requests: the envelope in _meta is checked, with no header layer", async () => {
    await withServer({}, async (server) => {
      const peer = connectPeer(server);
      peer.send({
        jsonrpc: "2.0",
        id: 1,
        method: "server/discover",
        params: { _meta: MODERN_META },
      });
      const discovered = await peer.response(1);
      assert.ok(discovered.result.supportedVersions.includes("2026-07-28"));
      peer.send(call(2, "echo", { text: "modern" }, MODERN_META));
      const echoed = await peer.response(2);
      assert.equal(echoed.result.resultType, "complete");
      assert.equal(echoed.result.content[0].text, "modern");
      peer.send(
        call(
          3,
          "echo",
          { text: "x" },
          { ...MODERN_META, "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
        ),
      );
      assert.equal((await peer.response(3)).error.code, -32022);
      await peer.serving.close();
    });
  });

  test("server.close(): running requests are answered -32603 'Server is shutting down' (their client waits), new ones refused", async () => {
    const server = createMcpServer({ tools: testTools(), closeGraceMs: 0 });
    const peer = connectPeer(server);
    peer.send(call(1, "sleep", { ms: 10_000, tag: "stdio-shutdown" }));
    await until(() => probes.has("stdio-shutdown"), 5_000, "started");
    const closing = server.close();
    peer.send({ jsonrpc: "2.0", id: 2, method: "ping" });
    assert.equal((await peer.response(2)).error.code, -32603);
    const answer = await peer.response(1);
    assert.equal(answer.error.code, -32603);
    assert.equal(answer.error.message, "Server is shutting down");
    assert.equal(probes.get("stdio-shutdown")?.reason?.source, "shutdown");
    await closing;
    await peer.serving.close();
  });
});
