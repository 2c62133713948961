/**
 * The Redis store's sharing delay (`shareAfterMs`, docs/redis.md): a call is written to Redis
 * only once it has run that long, so a call that ends sooner costs no Redis command at all, while
 * a cancel from another node still aborts it — through the shared entry and a row once it is
 * shared, and through an announcement (no row) before.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { CancellationRegistry } from "../../src/cancellation/registry.js";
import type { RequestHandle } from "../../src/cancellation/types.js";
import { processCancelledNotification } from "../../src/protocol/calls/cancelled-notification.js";
import { RedisCancellationStore } from "../../src/redis/index.js";
import { DEFAULT_SHARE_AFTER_MS } from "../../src/redis/redis-option-declarations.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { Fixture, freshPrefix, sleep } from "./helpers.js";

const skip = redisSkipReason();

/** Commands Redis has run since it started, `INFO` itself left out. */
async function commandsRun(fx: Fixture): Promise<number> {
  const info = await fx.client().info("commandstats");
  let total = 0;
  for (const match of info.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)) {
    if (match[1] !== "info") total += Number(match[2]);
  }
  return total;
}

/** Resolves whether the handle aborted within `ms`. */
function abortedWithin(handle: RequestHandle, ms: number): Promise<boolean> {
  if (handle.aborted) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    handle.signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      { once: true },
    );
  });
}

function cancelledNotification(requestId: unknown) {
  return {
    jsonrpc: "2.0" as const,
    method: "notifications/cancelled",
    params: { requestId, reason: "stop" },
  };
}

describe("RedisCancellationStore: sharing a call only after shareAfterMs", {
  skip: skip ?? false,
}, () => {
  let server: RedisServer;

  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server?.stop();
  });

  it("is 50 ms by default; refuses values outside 0..60 000", async () => {
    assert.equal(DEFAULT_SHARE_AFTER_MS, 50);
    for (const bad of [-1, 60_001, 1.5, "50", Number.NaN]) {
      assert.throws(
        () =>
          new RedisCancellationStore({
            redis: server.url,
            shareAfterMs: bad as number,
            logger: () => {},
          }),
        /shareAfterMs/,
      );
    }
  });

  it("a call that ends before shareAfterMs costs no Redis command (track, untrack, clear)", async () => {
    const fx = new Fixture(server.url);
    try {
      // A long lease: no renewal falls inside the measured loop.
      const lazy = await fx.store({ leaseMs: 600_000 });
      const eager = await fx.store({ leaseMs: 600_000, shareAfterMs: 0 });
      const measure = async (store: RedisCancellationStore): Promise<number> => {
        const registry = new CancellationRegistry({ store, janitor: false });
        await sleep(20); // let the connections settle (subscribe, lease, catch-up position)
        const before = await commandsRun(fx);
        for (let i = 0; i < 100; i++) {
          const handle = await registry.track(i, "principal:alice");
          await registry.untrack(handle);
          await registry.clear(i, "principal:alice");
        }
        await sleep(100); // background removals would have reached Redis by now
        const ran = (await commandsRun(fx)) - before;
        await registry.close();
        return ran;
      };
      assert.equal(await measure(lazy), 0, "100 short calls with the default delay");
      // The same loop with every entry written at once: three commands per call.
      assert.ok((await measure(eager)) >= 300, "shareAfterMs 0 writes, removes and clears");
    } finally {
      await fx.close();
    }
  });

  it("a call is shared no sooner than shareAfterMs, then a cancel on the other node aborts it and writes a row", async () => {
    const fx = new Fixture(server.url);
    try {
      const prefix = freshPrefix("after");
      const a = new CancellationRegistry({
        store: await fx.store({ prefix, nodeId: "node-a" }),
        janitor: false,
      });
      const b = new CancellationRegistry({
        store: await fx.store({ prefix, nodeId: "node-b" }),
        janitor: false,
      });
      const started = performance.now();
      const handle = await a.track("long-1", "principal:alice");
      let sharedAt = 0;
      for (let i = 0; i < 500 && sharedAt === 0; i++) {
        if (await b.isInFlight("long-1", "principal:alice")) sharedAt = performance.now();
        else await sleep(2);
      }
      assert.ok(sharedAt > 0, "the call was shared within the bounded wait");
      assert.ok(
        sharedAt - started >= DEFAULT_SHARE_AFTER_MS,
        `shared after ${(sharedAt - started).toFixed(1)} ms, before the ${DEFAULT_SHARE_AFTER_MS} ms delay`,
      );
      // The 2025-era path on node B: the in-flight check passes, so a row is written.
      const error = await processCancelledNotification(
        cancelledNotification("long-1"),
        "principal:alice",
        b,
      );
      assert.equal(error, null);
      assert.ok(await abortedWithin(handle, 2_000), "node A's call was aborted");
      assert.equal(await b.isCancelled("long-1", "principal:alice"), true, "a row was written");
      assert.equal(await b.reason("long-1", "principal:alice"), "stop");
      await a.untrack(handle);
      await a.close();
      await b.close();
    } finally {
      await fx.close();
    }
  });

  it("a notification reaching another node before the call is shared still aborts it, records no row, and reaches only its own scope", async () => {
    const fx = new Fixture(server.url);
    try {
      const prefix = freshPrefix("window");
      // A long delay keeps the window open through every step below, whatever the machine's load.
      const a = new CancellationRegistry({
        store: await fx.store({ prefix, nodeId: "node-a", shareAfterMs: 30_000 }),
        janitor: false,
      });
      const b = new CancellationRegistry({
        store: await fx.store({ prefix, nodeId: "node-b" }),
        janitor: false,
      });
      const alice = await a.track(7, "principal:alice");
      const bob = await a.track(7, "principal:bob");
      const modern = await a.track(8, "principal:alice", { notifiable: false });
      assert.equal(await a.isInFlight(7, "principal:alice"), true, "node A knows its own call");
      assert.equal(await b.isInFlight(7, "principal:alice"), false, "not shared yet: the window");
      assert.equal(
        await processCancelledNotification(cancelledNotification(7), "principal:alice", b),
        null,
      );
      assert.ok(await abortedWithin(alice, 2_000), "alice's call on node A was aborted");
      assert.equal(alice.signal.reason.source, "notification");
      assert.equal(alice.signal.reason.reason, "stop");
      // A 2026-07-28 call never hears notifications/cancelled, even announced.
      await processCancelledNotification(cancelledNotification(8), "principal:alice", b);
      await sleep(100);
      assert.equal(bob.aborted, false, "bob's namesake in another scope runs on");
      assert.equal(modern.aborted, false, "a notifiable: false call runs on");
      assert.equal(await b.isCancelled(7, "principal:alice"), false, "no row for an unshared call");
      assert.equal(await b.size(), 0);
      for (const handle of [alice, bob, modern]) await a.untrack(handle);
      await a.close();
      await b.close();
    } finally {
      await fx.close();
    }
  });

  it("a library cancel on another node before the call is shared aborts it and writes a row", async () => {
    const fx = new Fixture(server.url);
    try {
      const prefix = freshPrefix("library");
      const a = new CancellationRegistry({
        store: await fx.store({ prefix, nodeId: "node-a", shareAfterMs: 30_000 }),
        janitor: false,
      });
      const b = new CancellationRegistry({
        store: await fx.store({ prefix, nodeId: "node-b" }),
        janitor: false,
      });
      const handle = await a.track("job", "global");
      assert.deepEqual(await b.cancel("job", "by operator", "global"), { ok: true });
      assert.ok(await abortedWithin(handle, 2_000));
      assert.equal(await a.isCancelled("job", "global"), true);
      // The end of the call clears that row (a cancel was heard for its key, so it asks Redis).
      await a.untrack(handle);
      assert.equal(await a.clear("job", "global"), true);
      await a.close();
      await b.close();
    } finally {
      await fx.close();
    }
  });

  it("a row recorded here before a short call of the same key is still cleared at its end", async () => {
    const fx = new Fixture(server.url);
    try {
      const store = await fx.store();
      const registry = new CancellationRegistry({ store, janitor: false });
      await registry.cancel("k", null, "s");
      const handle = await registry.track("k", "s");
      await registry.untrack(handle);
      assert.equal(await registry.clear("k", "s"), true);
      assert.equal(await registry.isCancelled("k", "s"), false);
      await registry.close();
    } finally {
      await fx.close();
    }
  });

  it("an entry shared and then removed leaves nothing in Redis", async () => {
    const fx = new Fixture(server.url);
    try {
      const prefix = freshPrefix("leave");
      const store = await fx.store({ prefix, nodeId: "node-a", shareAfterMs: 20 });
      const other = await fx.store({ prefix, nodeId: "node-b" });
      await store.addInFlight("s", "1", "h1");
      let shared = false;
      for (let i = 0; i < 200 && !shared; i++) {
        shared = await other.isInFlight("s", "1");
        if (!shared) await sleep(5);
      }
      assert.ok(shared);
      await store.removeInFlight("s", "1", "h1");
      assert.equal(await other.isInFlight("s", "1"), false);
      const raw = fx.client();
      assert.deepEqual(await raw.keys(`{${prefix}}:f:*`), []);
      assert.equal(await raw.hlen(`{${prefix}}:nf:node-a`), 0);
    } finally {
      await fx.close();
    }
  });
});
