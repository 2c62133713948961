/**
 * A Redis restarted without persistence comes back empty. A node holding sessions it created or
 * served before the restart sees its records gone (the epoch token it remembered is gone too),
 * says so in one line, and writes back what it holds, each under its creator's quotas: a
 * pre-restart session keeps working on that node and is found again by every other node, even for
 * a call that lands in the instant after the reconnect, before the node has read the epoch again
 * (neither that call nor the node's catch-up of ended sessions may take the session for ended). A
 * real redis-server restarted empty, a real node on 127.0.0.1, clients from 127.0.0.2 and .3.
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
/** Sessions called at once after the restart (one creator: within its quota of 64). */
const SESSIONS = 48;
/** Restarts in a row, each hammered. */
const RESTARTS = 4;

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
      maxSessionsPerScope: 64,
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
    // Many sessions, called all at once from the moment Redis is back: a call landing between
    // the reconnect and the node's check of the epoch must not be told its session is gone.
    const first = await initialize(url, "127.0.0.2");
    const second = await initialize(url, "127.0.0.3");
    const many = [first];
    while (many.length < SESSIONS) many.push(await initialize(url, "127.0.0.2"));
    assert.equal((await listTools(url, "127.0.0.2", first)).status, 200);

    // Each restart is one more chance to land in the window between the reconnect and the check.
    for (let restart = 1; restart <= RESTARTS; restart++) {
      const noticesBefore = lines.filter((l) => /came back without/.test(l)).length;
      await redis.restart(); // persistence off: it comes back empty
      const answers = new Map<number, number>();
      let rounds = 0;
      const deadline = Date.now() + 10_000;
      // Right after the restart, before the node has even reconnected: every round calls every
      // session at once, until the loss has been noticed and a few rounds more.
      let noticedAtRound = -1;
      while (Date.now() < deadline && (noticedAtRound < 0 || rounds < noticedAtRound + 5)) {
        const statuses = await Promise.all(
          many.map(async (id) => (await listTools(url, "127.0.0.2", id)).status),
        );
        for (const status of statuses) answers.set(status, (answers.get(status) ?? 0) + 1);
        rounds++;
        const notices = lines.filter((l) => /came back without/.test(l)).length;
        if (noticedAtRound < 0 && notices > noticesBefore) noticedAtRound = rounds;
      }
      assert.ok(noticedAtRound > 0, `restart ${restart}: the loss was not noticed within 10 s`);
      assert.deepEqual(
        [...answers.keys()],
        [200],
        `restart ${restart}: pre-restart sessions answered ${JSON.stringify([...answers])} over ${rounds} rounds`,
      );
    }
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
