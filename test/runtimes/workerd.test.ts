/**
 * The door suite and the disconnect latency on workerd (test/runtimes/runtime-suite.ts), and
 * what `conduit-mcp/redis` does there: every store refuses to start, naming the runtime.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { startOn, whyNot } from "./hosts.js";
import { runtimeSuite } from "./runtime-suite.js";

runtimeSuite("workerd");

test("conduit-mcp/redis in a Cloudflare Worker: each store refuses to start with UnsupportedRuntimeError", {
  skip: whyNot("workerd") ?? false,
}, async () => {
  // ioredis needs node:tty and friends, which workerd has from 2026-06-01 on.
  const door = await startOn("workerd", {
    entry: "worker-redis-entry.ts",
    compatibilityDate: "2026-06-01",
    commonJs: true,
  });
  try {
    assert.ok(door.target.kind === "http");
    const response = await fetch(new URL("/?redis=redis://127.0.0.1:6390", door.target.url));
    const outcomes = (await response.json()) as Record<string, { code?: string; message?: string }>;
    assert.deepEqual(Object.keys(outcomes).sort(), [
      "RedisCancellationStore",
      "RedisChangeFeed",
      "RedisReplyBus",
      "RedisSessionStore",
      "RedisTaskStore",
    ]);
    for (const [store, outcome] of Object.entries(outcomes)) {
      assert.equal(outcome.code, "CONDUIT_ERR_UNSUPPORTED_RUNTIME", store);
      assert.match(outcome.message ?? "", /Cloudflare Workers \(workerd\).*memory stores/, store);
    }
  } finally {
    await door.close();
  }
});
