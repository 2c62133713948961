/**
 * Two CancellationRegistry instances ("nodes") over two RedisCancellationStores on one Redis: the
 * path a `notifications/cancelled` takes when it lands on another node than its `tools/call`
 * (aborted within 50 ms; tenant isolation holds across nodes).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { CancellationRegistry } from "../../src/cancellation/index.js";
import { RequestCancelledError } from "../../src/errors.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { Fixture, freshPrefix, sleep } from "./helpers.js";

const skip = redisSkipReason();

describe("CancellationRegistry over RedisCancellationStore, two nodes", {
  skip: skip ?? false,
}, () => {
  let server: RedisServer;

  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server?.stop();
  });

  async function twoNodes(fx: Fixture) {
    const prefix = freshPrefix("reg");
    // Shared at once (shareAfterMs 0): node B's in-flight check must see A's calls right away.
    const storeA = await fx.store({ prefix, nodeId: "node-a", shareAfterMs: 0 });
    const storeB = await fx.store({ prefix, nodeId: "node-b" });
    const a = new CancellationRegistry({ store: storeA, janitor: false });
    const b = new CancellationRegistry({ store: storeB, janitor: false });
    return { a, b };
  }

  it("a cancel on node B aborts node A's handle within 50 ms, only in the caller's scope", async () => {
    const fx = new Fixture(server.url);
    try {
      const { a, b } = await twoNodes(fx);
      const alice = await a.track(7, "principal:alice");
      const bob = await a.track(7, "principal:bob");
      // The handler's rule: record only for a request in flight in the caller's scope.
      assert.equal(await b.isInFlight(7, "principal:bob"), true);
      assert.equal(await b.isInFlight(7, "principal:carol"), false);

      const aborted = new Promise<number>((resolve) => {
        bob.signal.addEventListener("abort", () => resolve(performance.now()), { once: true });
      });
      const start = performance.now();
      assert.deepEqual(await b.cancel("7", "user pressed stop", "principal:bob", "notification"), {
        ok: true,
      });
      const at = await Promise.race([aborted, sleep(1_000).then(() => Number.NaN)]);
      assert.ok(at - start < 50, `abort after ${(at - start).toFixed(1)} ms`);
      const why = bob.signal.reason;
      assert.ok(why instanceof RequestCancelledError);
      assert.equal(why.source, "notification");
      assert.equal(why.reason, "user pressed stop");
      await sleep(20);
      assert.equal(alice.signal.aborted, false, "same id, other tenant: untouched");
      assert.equal(await a.isCancelled(7, "principal:bob"), true);
      assert.equal(await a.isCancelled(7, "principal:alice"), false);

      await a.untrack(alice);
      await a.untrack(bob);
      await a.close();
      await b.close();
    } finally {
      await fx.close();
    }
  });
});
