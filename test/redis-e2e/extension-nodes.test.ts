/**
 * An extension method across two `conduit-mcp serve --redis` processes on one private
 * redis-server (the module test/fixtures/extension-server.ts): both nodes declare the extension
 * in server/discover and initialize; a 2025-era `probe/wait` running on node 1 is aborted by a
 * `notifications/cancelled` sent to node 2 (same IP scope, the cancel travels through Redis) and
 * answers -32800 long before its 20 s; a 2025 session created on node 1 calls the extension's
 * method on node 2; a 2026-07-28 call is answered by either node.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import type { Redis } from "ioredis";

import { type CliProcess, rpc, startCli } from "../cli/cli-process.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { cancelOn, headers, inFlight, inspector, waitFor } from "./cluster.js";

const skip = redisSkipReason();
const MODULE = fileURLToPath(new URL("../fixtures/extension-server.ts", import.meta.url));
const ID = "com.example/probe";
const V2026 = "2026-07-28";

describe("an extension method across two --redis nodes", {
  skip: skip ?? false,
  timeout: 240_000,
}, () => {
  let server: RedisServer;
  const nodes: CliProcess[] = [];
  let redis: Redis;
  const node = (i: number): CliProcess => nodes[i] as CliProcess;

  before(async () => {
    server = await startRedisServer();
    redis = inspector(server.url);
    // One after the other, each given a minute: a .ts module loads through tsx (slow when busy).
    for (let i = 0; i < 2; i++) {
      nodes.push(
        await startCli(["serve", "--port", "0", "--redis", server.url, "--sessions", MODULE], {
          listeningWithinMs: 60_000,
        }),
      );
    }
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.kill()));
    redis?.disconnect();
    await server?.stop();
  });

  it("both nodes declare it; a session made on node 1 calls it on node 2", async () => {
    const response = await fetch(node(0).url, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: { extensions: { [ID]: {} } },
          clientInfo: { name: "t", version: "1" },
        },
      }),
    });
    const session = response.headers.get("mcp-session-id");
    const init = JSON.parse(await response.text()) as {
      result: { capabilities: Record<string, unknown> };
    };
    const capabilities = init.result.capabilities;
    assert.deepEqual((capabilities.extensions as Record<string, unknown>)[ID], { nodes: "any" });
    assert.ok(session !== null, "a session was minted");
    const echoed = await rpc(
      node(1).url,
      { id: 2, method: "probe/echo", params: { text: "hi" } },
      headers({ "mcp-session-id": session }),
    );
    assert.equal(echoed.message?.result?.text, "hi", JSON.stringify(echoed.message));
    assert.notEqual(echoed.message?.result?.pid, undefined, "answered by node 2's process");
    for (const n of nodes) {
      const discover = await rpc(
        n.url,
        {
          id: 3,
          method: "server/discover",
          params: {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": V2026,
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        },
        headers({ "mcp-protocol-version": V2026, "mcp-method": "server/discover" }),
      );
      const declared = discover.message?.result?.capabilities as Record<string, unknown>;
      assert.deepEqual((declared.extensions as Record<string, unknown>)[ID], { nodes: "any" });
    }
  });

  it("probe/wait on node 1 is cancelled by notifications/cancelled sent to node 2", async () => {
    const started = performance.now();
    const pending = rpc(
      node(0).url,
      { id: "x-wait", method: "probe/wait", params: { ms: 20_000 } },
      headers(),
    );
    assert.ok(
      await waitFor(() => inFlight(redis, "ip:127.0.0.1", "x-wait"), 10_000),
      "the call was shared in Redis",
    );
    const cancelled = await cancelOn(node(1).url, "x-wait");
    assert.equal(cancelled.status, 202, cancelled.body);
    const answer = await pending;
    assert.equal(answer.message?.error?.code, -32800, JSON.stringify(answer.message));
    assert.ok(performance.now() - started < 15_000, "cancelled, not run to its end");
  });
});
