/**
 * Sessions ended on one node end what lives beside them on every node: two servers share one
 * real `redis-server` (RedisSessionStore, one prefix); a session's GET stream and resource
 * subscriptions live on node B while the session ends on node A by `DELETE`, by idle expiry, or
 * by eviction. Node B must end the stream and drop the subscriptions (counted through
 * `resources.updated`, which returns how many sessions were subscribed here, and
 * `concurrency().streams`).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { RedisSessionStore } from "../../src/redis/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { freshPrefix } from "../redis/helpers.js";
import { legacyHeaders } from "./listen-helpers.js";

const skip = redisSkipReason();

interface Node {
  readonly server: McpServer;
  readonly url: URL;
  readonly store: RedisSessionStore;
}

async function initialize(url: URL): Promise<string> {
  const response = await fetch(url, {
    method: "POST",
    headers: legacyHeaders(),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    }),
  });
  assert.equal(response.status, 200);
  await response.text();
  const id = response.headers.get("mcp-session-id");
  assert.ok(id !== null);
  return id;
}

async function subscribe(url: URL, session: string, uri: string): Promise<void> {
  const response = await fetch(url, {
    method: "POST",
    headers: legacyHeaders(session),
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "resources/subscribe", params: { uri } }),
  });
  assert.equal(response.status, 200);
  assert.deepEqual(((await response.json()) as { result?: unknown }).result, {});
}

/** Opens the GET stream; resolves once its headers came, with a promise of its end. */
async function openStream(url: URL, session: string): Promise<{ ended: Promise<void> }> {
  const response = await fetch(url, { method: "GET", headers: legacyHeaders(session) });
  assert.equal(response.status, 200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const ended = (async () => {
    for (;;) {
      try {
        if ((await reader.read()).done) return;
      } catch {
        return; // cut: ended too
      }
    }
  })();
  return { ended };
}

async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<T>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), `${what}: not within ${ms} ms`);
}

describe("a session ended on another node ends its stream and subscriptions here", {
  skip: skip ?? false,
}, () => {
  let redis: RedisServer;
  const nodes: Node[] = [];

  async function node(
    prefix: string,
    sessions: { ttlMs?: number; maxSessions?: number } = {},
  ): Promise<Node> {
    const store = new RedisSessionStore({
      redis: redis.url,
      prefix,
      logger: () => {},
      ...(sessions.maxSessions === undefined ? {} : { maxSessions: sessions.maxSessions }),
    });
    assert.ok(await store.ready(5_000));
    const server = createMcpServer({
      sessions: { store, ...(sessions.ttlMs === undefined ? {} : { ttlMs: sessions.ttlMs }) },
      keepAliveMs: 60_000,
    });
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    const made = { server, url: new URL(url), store };
    nodes.push(made);
    return made;
  }

  before(async () => {
    redis = await startRedisServer();
  });
  after(async () => {
    for (const { server, store } of nodes) {
      await server.close();
      await store.close();
    }
    await redis?.stop();
  });

  test("DELETE on node A", async () => {
    const prefix = freshPrefix("ended-delete");
    const a = await node(prefix);
    const b = await node(prefix);
    const session = await initialize(a.url);
    const stream = await openStream(b.url, session);
    await subscribe(b.url, session, "test://watched");
    assert.equal(b.server.resources.updated("test://watched"), 1);
    assert.equal(b.server.concurrency().streams, 1);
    const response = await fetch(a.url, { method: "DELETE", headers: legacyHeaders(session) });
    assert.equal(response.status, 204);
    await within(stream.ended, 2_000, "node B's GET stream to end");
    await until(
      () => b.server.resources.updated("test://watched") === 0,
      2_000,
      "subscriptions dropped",
    );
    await until(() => b.server.concurrency().streams === 0, 2_000, "stream unit released");
  });

  test("idle expiry swept by node A", async () => {
    const prefix = freshPrefix("ended-expiry");
    const a = await node(prefix, { ttlMs: 400 });
    // Node B's own sweep comes only after 10 s, beyond the test: only node A's expiry can end it.
    // B's TTL stays short enough that its refresh window (a 32nd of it, 312 ms: how long a
    // session it refreshed is kept past its last use, docs/redis.md "Session refresh") lets node
    // A's 400 ms expiry land within the wait below.
    const b = await node(prefix, { ttlMs: 10_000 });
    const session = await initialize(b.url);
    const stream = await openStream(b.url, session);
    await subscribe(b.url, session, "test://expiring");
    assert.equal(b.server.resources.updated("test://expiring"), 1);
    await within(stream.ended, 5_000, "node B's GET stream to end after node A's expiry");
    assert.equal(b.server.resources.updated("test://expiring"), 0);
    assert.equal(a.server.resources.updated("test://expiring"), 0);
  });

  test("eviction by a session created on node A", async () => {
    const prefix = freshPrefix("ended-evict");
    const a = await node(prefix, { maxSessions: 1 });
    const b = await node(prefix, { maxSessions: 1 });
    const first = await initialize(b.url);
    const stream = await openStream(b.url, first);
    await subscribe(b.url, first, "test://evicted");
    assert.equal(b.server.resources.updated("test://evicted"), 1);
    await initialize(a.url); // the store is full: the least recently used session goes
    await within(stream.ended, 2_000, "node B's GET stream to end after the eviction");
    assert.equal(b.server.resources.updated("test://evicted"), 0);
  });
});
