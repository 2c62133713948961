/**
 * A Redis restarted without persistence comes back empty. A node holding sessions it created or
 * served before the restart sees its records gone (the epoch token it remembered is gone too),
 * says so in one line, and writes back what it holds, each under its creator's quotas: a
 * pre-restart session keeps working on that node and is found again by every other node. A real
 * redis-server restarted empty, a real node on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { echoTool } from "../../src/cli/demo-tools.js";
import { RedisSessionStore } from "../../src/redis/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { postFrom } from "../abuse/post-from.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { freshPrefix } from "./helpers.js";

const skip = redisSkipReason();
const V = "2025-11-25";

async function initialize(url: string, from: string): Promise<string> {
  const answer = await postFrom(url, from, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: V, capabilities: {}, clientInfo: { name: "restart", version: "1" } },
  });
  const id = answer.headers["mcp-session-id"];
  assert.equal(typeof id, "string", answer.text);
  return id as string;
}

function listTools(url: string, from: string, session: string) {
  return postFrom(
    url,
    from,
    { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
    { "mcp-session-id": session, "mcp-protocol-version": V },
  );
}

async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("sessions after Redis restarted empty", { skip: skip ?? false }, () => {
  let redis: RedisServer;
  let node: McpServer;
  let url: string;
  let store: RedisSessionStore;
  const prefix = freshPrefix("restart");
  const lines: string[] = [];

  before(async () => {
    redis = await startRedisServer();
    store = new RedisSessionStore({
      redis: redis.url,
      prefix,
      maxSessionsPerScope: 4,
      logger: (line) => lines.push(line),
    });
    assert.ok(await store.ready(5_000));
    node = createMcpServer({ tools: [echoTool], sessions: { store }, onError: false });
    ({ url } = await node.listen({ host: "127.0.0.1", port: 0 }));
  });
  after(async () => {
    await node?.close();
    await store?.close();
    await redis?.stop();
  });

  it("a pre-restart session keeps working, is written back, and the loss is logged", async () => {
    const first = await initialize(url, "127.0.0.2");
    const second = await initialize(url, "127.0.0.3");
    assert.equal((await listTools(url, "127.0.0.2", first)).status, 200);

    await redis.restart(); // persistence off: it comes back empty
    await until(
      async () => (await store.ready(100)) && (await store.size()) >= 0,
      10_000,
      "reconnect",
    );

    // The node notices the loss on reconnect; a request racing that check can still get 404
    // (docs/tenancy.md): this test waits for the notice, then checks the write-back.
    await until(async () => lines.some((l) => /came back without/.test(l)), 10_000, "the notice");
    const after = await listTools(url, "127.0.0.2", first);
    assert.equal(after.status, 200, `pre-restart session answered ${after.status}: ${after.text}`);
    assert.ok(
      lines.some((line) => /came back without the session records/.test(line)),
      lines.join("\n"),
    );
    // Written back: a node that never saw them finds both sessions in Redis.
    const other = new RedisSessionStore({ redis: redis.url, prefix, logger: () => {} });
    try {
      assert.ok(await other.ready(5_000));
      await until(
        async () =>
          (await other.get(first)) !== undefined && (await other.get(second)) !== undefined,
        10_000,
        "the write-back",
      );
      assert.equal((await other.get(first))?.creatorScope, "ip:127.0.0.2");
    } finally {
      await other.close();
    }
    // Sessions made after the restart work as ever, and an unknown id is still 404.
    const fresh = await initialize(url, "127.0.0.4");
    assert.equal((await listTools(url, "127.0.0.4", fresh)).status, 200);
    assert.equal((await listTools(url, "127.0.0.4", "x".repeat(32))).status, 404);
  });
});
