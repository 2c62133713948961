/**
 * Rate limits shared across nodes (`RedisRateLimitStore`; docs/limits.md, "Across nodes"): two
 * servers, each with its own store on one real redis-server, share one tenant's budget (calls
 * spread over both nodes empty it together; the official 2.x client on node B is refused once
 * node A's calls took the rest), another address is still served, and every key carries a TTL.
 * While Redis is frozen, each node decides alone within `commandTimeoutMs` (fail-open, still
 * limited by its own memory buckets).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Redis } from "ioredis";

import { createMcpServer, defineTool, type McpServer } from "../../src/index.js";
import { RedisRateLimitStore } from "../../src/redis/index.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { callBody } from "../server/fixtures.js";
import { postFrom } from "./rate-wire.js";

const skip = redisSkipReason();
if (skip !== undefined) console.log(`# skipping the Redis rate-limit tests: ${skip}`);

const tools = [defineTool({ name: "echo", handler: () => "echo" })];

describe("rate limits across two nodes on one Redis", { skip: skip ?? false }, () => {
  let redis: RedisServer;
  const stores: RedisRateLimitStore[] = [];
  const nodes: McpServer[] = [];
  const urls: string[] = [];
  const outages: string[] = [];

  before(async () => {
    redis = await startRedisServer();
    for (let i = 0; i < 2; i++) {
      const store = new RedisRateLimitStore({
        redis: redis.url,
        prefix: "rate-test",
        commandTimeoutMs: 200,
        logger: (line) => outages.push(line),
      });
      assert.ok(await store.ready(5_000), "the store connects");
      stores.push(store);
      const node = createMcpServer({
        tools,
        rateLimits: {
          perScope: { capacity: 6, refillPerSecond: 0.001 },
          methods: { "tools/call": { capacity: 5, refillPerSecond: 0.001 } },
          store,
        },
      });
      nodes.push(node);
      urls.push((await node.listen({ host: "127.0.0.1", port: 0 })).url);
    }
  });

  after(async () => {
    for (const node of nodes) await node.close();
    for (const store of stores) await store.close();
    await redis?.stop();
  });

  test("one tenant's budget is spent on both nodes together; another address is served", async () => {
    const [a, b] = urls as [string, string];
    // tools/call budget 5: two on A, two on B, one on A.
    for (const [i, url] of [a, b, a, b, a].entries()) {
      const answer = await postFrom(url, callBody(i, "echo", {}));
      assert.equal(answer.status, 200, `call ${i}: ${answer.text}`);
    }
    for (const url of [a, b]) {
      const refused = await postFrom(url, callBody(9, "echo", {}));
      assert.equal(refused.status, 429, refused.text);
      assert.ok(Number(refused.headers["retry-after"]) >= 1);
      assert.equal(refused.json.error.code, -32000);
    }
    // 127.0.0.2 is another bucket, on either node.
    for (const url of [a, b]) {
      const other = await postFrom(url, callBody(1, "echo", {}), { localAddress: "127.0.0.2" });
      assert.equal(other.status, 200, other.text);
    }
  });

  test("the official 2.x client on node B is refused once node A's calls emptied the budget", async () => {
    const [a, b] = urls as [string, string];
    // 127.0.0.5's bucket: the client's own discovery may cost requests (perScope 6), so only
    // tools/call is spent here: four on A by hand, then the client's fifth on B succeeds and its
    // sixth is refused.
    for (let i = 0; i < 4; i++) {
      const answer = await postFrom(a, callBody(i, "echo", {}), { localAddress: "127.0.0.5" });
      assert.equal(answer.status, 200, answer.text);
    }
    const client = new ModernClient(
      { name: "rate-redis", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new ModernTransport(new URL(b)));
    try {
      // The client runs from 127.0.0.1, whose tools/call budget the first test spent: refused.
      await assert.rejects(client.callTool({ name: "echo", arguments: {} }), /Rate limit exceeded/);
    } finally {
      await client.close().catch(() => {});
    }
    const fifth = await postFrom(b, callBody(5, "echo", {}), { localAddress: "127.0.0.5" });
    assert.equal(fifth.status, 200, "the fifth call of 127.0.0.5, on B");
    const sixth = await postFrom(a, callBody(6, "echo", {}), { localAddress: "127.0.0.5" });
    assert.equal(sixth.status, 429, "the sixth, on A");
  });

  test("every rate-limit key has a TTL", async () => {
    const probe = new Redis(redis.url);
    try {
      const keys = await probe.keys("rate-test:rl:*");
      assert.ok(keys.length >= 4, keys.join(", "));
      for (const key of keys) {
        const ttl = await probe.pttl(key);
        assert.ok(ttl > 0, `${key}: PTTL ${ttl}`);
      }
    } finally {
      probe.disconnect();
    }
  });

  test("a frozen Redis: each node decides alone within commandTimeoutMs, still limiting", async () => {
    const [a] = urls as [string];
    redis.freeze();
    try {
      const started = performance.now();
      const served = await postFrom(a, callBody(1, "echo", {}), { localAddress: "127.0.0.6" });
      assert.equal(served.status, 200, served.text);
      assert.ok(performance.now() - started < 3_000, "answered within the command timeout");
      // The local buckets of node A: 5 tools/call for 127.0.0.6, then refused.
      for (let i = 0; i < 4; i++) {
        await postFrom(a, callBody(i, "echo", {}), { localAddress: "127.0.0.6" });
      }
      const refused = await postFrom(a, callBody(9, "echo", {}), { localAddress: "127.0.0.6" });
      assert.equal(refused.status, 429);
      assert.ok(
        outages.some((line) => /rate-limit store unreachable/.test(line)),
        outages.join("\n"),
      );
    } finally {
      redis.thaw();
    }
  });
});
