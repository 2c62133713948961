/**
 * `createRedisBackends`: every shared store of a node from one call, under one node name, spread
 * into `createMcpServer` as docs/redis.md shows, and closed by one `close()`. Two servers on one
 * private redis-server: a call on node A is cancelled by a `notifications/cancelled` sent to node
 * B, a task created on A is read on B; every connection a URL opened is gone after `close()`; an
 * ioredis client passed in is shared by every store and left open.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { Redis } from "ioredis";

import { createMcpServer, defineTool, type McpServer } from "../../src/index.js";
import { createRedisBackends, type RedisBackends } from "../../src/redis/index.js";
import { newTaskId } from "../../src/tasks/index.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { freshPrefix } from "./helpers.js";

const skip = redisSkipReason();

const HEADERS = {
  accept: "application/json, text/event-stream",
  "content-type": "application/json",
  "mcp-protocol-version": "2025-11-25",
};

/** Sleeps until cancelled; says so when it was. */
const wait = defineTool({
  name: "wait",
  handler: async (_args, ctx) => {
    await sleep(30_000, undefined, { signal: ctx.signal });
    return "woke up";
  },
});

async function post(url: string, body: Record<string, unknown>) {
  const res = await fetch(url, {
    method: "POST",
    headers: HEADERS,
    body: JSON.stringify({ jsonrpc: "2.0", ...body }),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  const data = text
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5));
  return { status: res.status, message: JSON.parse(data.at(-1) ?? (text || "null")) };
}

/** How many connections this Redis has, the raw client's own included. */
async function connections(raw: Redis): Promise<number> {
  const list = (await raw.client("LIST")) as string;
  return list.trim().split("\n").length;
}

describe("createRedisBackends", { skip: skip ?? false }, () => {
  let redis: RedisServer;
  let raw: Redis;

  before(async () => {
    redis = await startRedisServer();
    raw = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  });
  after(async () => {
    raw?.disconnect();
    await redis?.stop();
  });

  it("gives two servers every shared store: a cancel sent to B stops A's call, A's task is read on B, and close() leaves no connection", async () => {
    const baseline = await connections(raw);
    const prefix = freshPrefix("backends");
    const nodes: Array<{ backends: RedisBackends; server: McpServer; url: string }> = [];
    try {
      for (const nodeId of ["node-a", "node-b"]) {
        const backends = createRedisBackends(redis.url, { prefix, nodeId, logger: () => {} });
        assert.equal(await backends.ready(5_000), true);
        assert.equal(backends.nodeId, nodeId);
        assert.equal(backends.cancellationStore.nodeId, nodeId);
        assert.equal(backends.taskStore.nodeId, nodeId);
        const server = createMcpServer({ tools: [wait], ...backends.serverOptions });
        const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
        nodes.push({ backends, server, url });
      }
      const [a, b] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];
      assert.ok(a.backends.sessionStore, "a session store by default");
      assert.equal(a.backends.serverOptions.sessions?.store, a.backends.sessionStore);

      const call = post(a.url, {
        id: 7,
        method: "tools/call",
        params: { name: "wait", arguments: {} },
      });
      // Running on A (its in-flight gauge), then cancelled through B.
      const deadline = Date.now() + 10_000;
      while (a.server.registry.inFlightCount === 0 && Date.now() < deadline) await sleep(10);
      assert.equal(a.server.registry.inFlightCount, 1);
      assert.ok((await connections(raw)) > baseline + 10, "the stores hold their connections");
      const cancel = await post(b.url, {
        method: "notifications/cancelled",
        params: { requestId: 7, reason: "from node B" },
      });
      assert.equal(cancel.status, 202);
      const answered = await call;
      assert.equal(answered.message?.error?.code, -32800, JSON.stringify(answered.message));

      const taskId = newTaskId();
      const created = await a.backends.taskStore.create({
        scope: "ip:127.0.0.1",
        taskId,
        ttlMs: 60_000,
        pollIntervalMs: 1_000,
      });
      assert.equal(created.ok, true);
      const seen = await b.backends.taskStore.get("ip:127.0.0.1", taskId);
      assert.equal(seen?.taskId, taskId);
    } finally {
      for (const node of nodes) {
        await node.server.close();
        await node.backends.close();
      }
    }
    const deadline = Date.now() + 5_000;
    while ((await connections(raw)) !== baseline && Date.now() < deadline) await sleep(20);
    assert.equal(await connections(raw), baseline, "every connection made from the URL is closed");
  });

  it("shares an ioredis client passed in, leaves it open, and builds no session store with sessions: false", async () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    const backends = createRedisBackends(client, {
      prefix: freshPrefix("borrowed"),
      sessions: false,
      leaseMs: 900,
      logger: () => {},
    });
    try {
      assert.equal(await backends.ready(5_000), true);
      assert.equal(backends.sessionStore, undefined);
      assert.equal("sessions" in backends.serverOptions, false);
      // The lease sets the janitor and the task sweep: a dead node is dealt with within leases.
      assert.equal(backends.serverOptions.tasks.sweepIntervalMs, 900);
    } finally {
      await backends.close();
    }
    assert.equal(client.status, "ready", "the caller's client stays open");
    assert.equal(await client.ping(), "PONG");
    client.disconnect();
  });
});
