/**
 * Several nodes on one Redis: a cancel recorded on one node reaches the others at once through
 * pub/sub; events carry their scope (tenant isolation is the registry's scope+id match); a node
 * that stops renewing its lease loses its in-flight entries to another node's cleanup, and a live
 * node whose lease lapsed re-asserts its entries by itself.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Redis } from "ioredis";

import type { RemoteCancellation } from "../../src/cancellation/types.js";
import { RedisCancellationStore } from "../../src/redis/index.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { Fixture, freshPrefix, sleep } from "./helpers.js";

const skip = redisSkipReason();

/** Resolves with the first event the store delivers, or rejects after `ms`. */
function nextEvent(store: RedisCancellationStore, ms: number): Promise<RemoteCancellation> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no remote cancellation within ${ms} ms`));
    }, ms);
    const off = store.onRemoteCancellation((event) => {
      clearTimeout(timer);
      off();
      resolve(event);
    });
  });
}

describe("RedisCancellationStore across nodes", { skip: skip ?? false }, () => {
  let server: RedisServer;

  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server?.stop();
  });

  it("a record on node B reaches node A's listener within 50 ms; B does not hear itself", async () => {
    const fx = new Fixture(server.url);
    try {
      const prefix = freshPrefix("xnode");
      const a = await fx.store({ prefix, nodeId: "node-a" });
      const b = await fx.store({ prefix, nodeId: "node-b" });
      const heardByB: unknown[] = [];
      b.onRemoteCancellation((event) => heardByB.push(event));
      const latencies: number[] = [];
      for (let i = 0; i < 20; i++) {
        const arrived = nextEvent(a, 1_000);
        const start = performance.now();
        const outcome = await b.record(
          { scope: "principal:alice", requestId: `r${i}`, reason: "stop", cancelledAt: Date.now() },
          "notification",
        );
        assert.equal(outcome, "recorded");
        const event = await arrived;
        latencies.push(performance.now() - start);
        assert.deepEqual(event, {
          scope: "principal:alice",
          requestId: `r${i}`,
          reason: "stop",
          source: "notification",
        });
      }
      latencies.sort((x, y) => x - y);
      const p99 = latencies[latencies.length - 1] ?? Number.POSITIVE_INFINITY;
      assert.ok(p99 < 50, `worst record-to-listener latency ${p99.toFixed(1)} ms`);
      await sleep(30);
      assert.deepEqual(heardByB, [], "a node never hears its own cancellations");
    } finally {
      await fx.close();
    }
  });

  it("a rejected record (quota) publishes nothing", async () => {
    const fx = new Fixture(server.url);
    try {
      const prefix = freshPrefix("xquota");
      const a = await fx.store({ prefix, nodeId: "node-a" });
      const b = await fx.store({ prefix, nodeId: "node-b", maxRowsPerScope: 1 });
      const heard: RemoteCancellation[] = [];
      a.onRemoteCancellation((event) => heard.push(event));
      const row = (id: string) => ({ scope: "s", requestId: id, reason: null, cancelledAt: 0 });
      assert.equal(await b.record(row("1"), "notification"), "recorded");
      assert.equal(await b.record(row("2"), "notification"), "limit_reached");
      await sleep(50);
      assert.deepEqual(
        heard.map((e) => e.requestId),
        ["1"],
      );
    } finally {
      await fx.close();
    }
  });

  it("tenant isolation: an event carries only its own scope; other tenants' keys stay untouched", async () => {
    const fx = new Fixture(server.url);
    try {
      const prefix = freshPrefix("tenant");
      // Entries written to Redis at once (shareAfterMs 0): this test is about shared entries.
      const a = await fx.store({ prefix, shareAfterMs: 0, nodeId: "node-a" });
      const b = await fx.store({ prefix, nodeId: "node-b" });
      // Node A runs request "1" for alice and for bob.
      await a.addInFlight("principal:alice", "1", "ha");
      await a.addInFlight("principal:bob", "1", "hb");
      const heard: RemoteCancellation[] = [];
      a.onRemoteCancellation((event) => heard.push(event));
      // Bob cancels id 1 through node B, in his own scope.
      assert.equal(await b.isInFlight("principal:bob", "1"), true);
      await b.record(
        { scope: "principal:bob", requestId: "1", reason: null, cancelledAt: 0 },
        "notification",
      );
      await sleep(50);
      assert.deepEqual(heard, [
        { scope: "principal:bob", requestId: "1", reason: null, source: "notification" },
      ]);
      assert.equal(await a.has("principal:alice", "1"), false);
      assert.equal(await a.has("principal:bob", "1"), true);
    } finally {
      await fx.close();
    }
  });

  it("in-flight entries are shared: node B sees node A's request, and its removal", async () => {
    const fx = new Fixture(server.url);
    try {
      const prefix = freshPrefix("share");
      // Entries written to Redis at once (shareAfterMs 0): this test is about shared entries.
      const a = await fx.store({ prefix, shareAfterMs: 0, nodeId: "node-a" });
      const b = await fx.store({ prefix, shareAfterMs: 0, nodeId: "node-b" });
      // The same handle id on two nodes must not collide.
      await a.addInFlight("s", "k", "h1");
      await b.addInFlight("s", "k", "h1");
      await a.removeInFlight("s", "k", "h1");
      assert.equal(await a.isInFlight("s", "k"), true, "b's h1 is still there");
      await b.removeInFlight("s", "k", "h1");
      assert.equal(await a.isInFlight("s", "k"), false);
    } finally {
      await fx.close();
    }
  });

  it("a node that stops renewing its lease loses its in-flight entries to another node's cleanup", async () => {
    const fx = new Fixture(server.url);
    const crashing = new Redis(server.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    crashing.on("error", () => {});
    try {
      const prefix = freshPrefix("lease");
      const a = new RedisCancellationStore({
        redis: crashing,
        prefix,
        nodeId: "node-a",
        leaseMs: 300,
        logger: () => {},
      });
      fx.stores.push(a);
      assert.ok(await a.ready(5_000));
      const b = await fx.store({ prefix, nodeId: "node-b", leaseMs: 300 });
      await a.addInFlight("s", "leaked", "h1");
      await a.addInFlight("s", "shared", "h2");
      await b.addInFlight("s", "shared", "h3");
      await b.addInFlight("s", "live", "h4");
      assert.deepEqual(await b.cleanup(60_000, Date.now()), { removed: 0, inFlightRemoved: 0 });
      // Wait beyond several renewal periods: a live lease is renewed, nothing is swept.
      await sleep(500);
      assert.deepEqual(await b.cleanup(60_000, Date.now()), { removed: 0, inFlightRemoved: 0 });
      assert.equal(await b.isInFlight("s", "leaked"), true);
      // "Crash" node A: its connection is gone, so it renews nothing (its process lives on here).
      crashing.disconnect();
      await sleep(450);
      assert.deepEqual(await b.cleanup(60_000, Date.now()), { removed: 0, inFlightRemoved: 2 });
      assert.equal(await b.isInFlight("s", "leaked"), false);
      assert.equal(await b.isInFlight("s", "shared"), true, "b's own namesake stays");
      assert.equal(await b.isInFlight("s", "live"), true);
      assert.deepEqual(await b.cleanup(60_000, Date.now()), { removed: 0, inFlightRemoved: 0 });
    } finally {
      await fx.close();
      crashing.disconnect();
    }
  });

  it("a live node whose lease lapsed re-asserts its entries at the next renewal", async () => {
    const fx = new Fixture(server.url);
    try {
      const prefix = freshPrefix("reassert");
      // Entries written to Redis at once (shareAfterMs 0): this test is about shared entries.
      const a = await fx.store({ prefix, shareAfterMs: 0, nodeId: "node-a", leaseMs: 300 });
      const b = await fx.store({ prefix, nodeId: "node-b", leaseMs: 300 });
      await a.addInFlight("s", "running", "h1");
      await a.addInFlight("s", "done", "h2");
      await a.removeInFlight("s", "done", "h2");
      // A long pause on node A, as seen from Redis: its lease key disappears.
      const raw = fx.client();
      await raw.del(`{${prefix}}:lease:node-a`);
      assert.equal((await b.cleanup(60_000, Date.now())).inFlightRemoved, 1);
      assert.equal(await b.isInFlight("s", "running"), false);
      // Within one renewal period (100 ms) node A notices and puts its live entry back.
      const deadline = Date.now() + 1_000;
      while (!(await b.isInFlight("s", "running")) && Date.now() < deadline) await sleep(20);
      assert.equal(await b.isInFlight("s", "running"), true);
      assert.equal(await b.isInFlight("s", "done"), false);
    } finally {
      await fx.close();
    }
  });

  it("close() removes the node's lease and entries at once", async () => {
    const fx = new Fixture(server.url);
    try {
      const prefix = freshPrefix("retire");
      const a = await fx.store({ prefix, nodeId: "node-a" });
      const b = await fx.store({ prefix, nodeId: "node-b" });
      await a.addInFlight("s", "1", "h1");
      await a.close();
      assert.equal(await b.isInFlight("s", "1"), false);
      const raw = fx.client();
      assert.equal(await raw.exists(`{${prefix}}:lease:node-a`), 0);
      assert.equal(await raw.sismember(`{${prefix}}:nodes`, "node-a"), 0);
    } finally {
      await fx.close();
    }
  });
});
