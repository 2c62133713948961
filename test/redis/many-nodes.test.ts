/**
 * What several nodes sharing one Redis must get right beyond a single cancel: a scope cancelled
 * everywhere at once, cancels heard after the subscriber reconnects, nothing published that no
 * other node can act on, answers that never wait for an untrack round trip, a user's lazy client
 * connected, and one clock (Redis's) for every stamp and cutoff whatever a node's own clock says.
 * Two "nodes" are two registries over two stores on one private redis-server.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Redis } from "ioredis";

import { CancellationRegistry } from "../../src/cancellation/index.js";
import { RequestCancelledError } from "../../src/errors.js";
import { RedisCancellationStore, RedisSessionStore } from "../../src/redis/index.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { Fixture, freshPrefix, sleep } from "./helpers.js";

const skip = redisSkipReason();

/** Resolves true once `signal` aborts, false after `ms`. */
function abortedWithin(signal: AbortSignal, ms: number): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      { once: true },
    );
  });
}

describe("many nodes on one Redis", { skip: skip ?? false }, () => {
  let server: RedisServer;

  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server?.stop();
  });

  async function twoNodes(fx: Fixture, prefix = freshPrefix("nodes")) {
    const storeA = await fx.store({ prefix, nodeId: "node-a" });
    const storeB = await fx.store({ prefix, nodeId: "node-b" });
    const a = new CancellationRegistry({ store: storeA, janitor: false });
    const b = new CancellationRegistry({ store: storeB, janitor: false });
    return { a, b, storeA, storeB, prefix };
  }

  it("cancelScope on node B aborts every handle of that scope on node A, and records nothing", async () => {
    const fx = new Fixture(server.url);
    try {
      const { a, b, storeA } = await twoNodes(fx);
      const one = await a.track(1, "session:s1");
      const two = await a.track("x", "session:s1");
      const other = await a.track(1, "session:s2");
      await b.cancelScope("session:s1", "session terminated", "disconnect");
      assert.ok(await abortedWithin(one.signal, 2_000), "handle 1 of the scope");
      assert.ok(await abortedWithin(two.signal, 2_000), "handle x of the scope");
      const why = one.signal.reason as RequestCancelledError;
      assert.ok(why instanceof RequestCancelledError);
      assert.equal(why.source, "disconnect");
      assert.equal(why.reason, "session terminated");
      assert.equal(await abortedWithin(other.signal, 100), false, "another scope is untouched");
      assert.equal(await storeA.size(), 0, "no row for a scope cancel");
      // The node that cancels aborts its own handles of the scope too.
      const local = await b.track(3, "session:s1");
      await b.cancelScope("session:s1", "again", "disconnect");
      assert.equal(local.signal.aborted, true);
      await a.close();
      await b.close();
    } finally {
      await fx.close();
    }
  });

  it("a handle tracked notifiable: false on node A ignores a notification cancel from node B", async () => {
    const fx = new Fixture(server.url);
    try {
      const { a, b } = await twoNodes(fx);
      const modern = await a.track(4, "principal:alice", { notifiable: false });
      const legacy = await a.track(4, "principal:alice");
      assert.deepEqual(await b.cancel(4, "stop", "principal:alice", "notification"), { ok: true });
      assert.ok(await abortedWithin(legacy.signal, 2_000), "the notifiable namesake is aborted");
      assert.equal(await abortedWithin(modern.signal, 200), false, "notifiable: false is reached");
      // Any other source still reaches it across nodes.
      await b.cancel(4, "operator", "principal:alice", "library");
      assert.ok(await abortedWithin(modern.signal, 2_000));
      await a.close();
      await b.close();
    } finally {
      await fx.close();
    }
  });

  it("publishes a notification cancel, but not a disconnect, timeout or shutdown", async () => {
    const fx = new Fixture(server.url);
    const listener = new Redis(server.url, { maxRetriesPerRequest: 1 });
    try {
      const { a, b, prefix } = await twoNodes(fx);
      const heard: string[] = [];
      await listener.subscribe(`{${prefix}}:cancelled`);
      listener.on("message", (_channel: string, raw: string) => heard.push(raw));
      const heardByB: unknown[] = [];
      const storeB = b.store as RedisCancellationStore;
      storeB.onRemoteCancellation((event) => heardByB.push(event));
      for (const source of ["disconnect", "shutdown"] as const) {
        const handle = await a.track(`h-${source}`, "ip:127.0.0.1");
        assert.deepEqual(await a.cancelHandle(handle, "bye", source), { ok: true });
        assert.equal(await a.isCancelled(`h-${source}`, "ip:127.0.0.1"), true, "row written");
      }
      await a.cancel("n-1", "stop", "ip:127.0.0.1", "notification");
      await sleep(100);
      assert.equal(heard.length, 1, heard.join("\n"));
      assert.match(heard[0] as string, /"requestId":"n-1"/);
      assert.equal(heardByB.length, 1);
      await a.close();
      await b.close();
    } finally {
      listener.disconnect();
      await fx.close();
    }
  });

  it("untrack resolves at once while Redis hangs, so a constant answer never waits for it", async () => {
    const fx = new Fixture(server.url);
    try {
      const store = await fx.store({ commandTimeoutMs: 1_000 });
      const registry = new CancellationRegistry({ store, janitor: false });
      const handle = await registry.track("ping-1", "ip:127.0.0.1");
      server.freeze();
      let took: number;
      try {
        const start = performance.now();
        await registry.untrack(handle);
        took = performance.now() - start;
      } finally {
        server.thaw();
      }
      assert.ok(took < 100, `untrack waited ${took.toFixed(1)} ms for a hung Redis`);
      assert.equal(handle.alive, false);
      assert.equal(registry.inFlightCount, 0);
      // The entry is removed once Redis answers again.
      let gone = false;
      for (let i = 0; i < 200 && !gone; i++) {
        gone = !(await store.isInFlight("ip:127.0.0.1", "ping-1"));
        if (!gone) await sleep(10);
      }
      assert.ok(gone, "the background removal reached Redis");
      await registry.close();
    } finally {
      await fx.close();
    }
  });

  it("connects a user-supplied lazyConnect client, so cross-node cancellation is on", async () => {
    const fx = new Fixture(server.url);
    const lazy = new Redis(server.url, { lazyConnect: true, enableOfflineQueue: false });
    lazy.on("error", () => {});
    const lazySessions = new Redis(server.url, { lazyConnect: true, enableOfflineQueue: false });
    lazySessions.on("error", () => {});
    try {
      const prefix = freshPrefix("lazy");
      // Shared at once (shareAfterMs 0), so node B sees the call in flight right away.
      const storeA = new RedisCancellationStore({
        redis: lazy,
        prefix,
        shareAfterMs: 0,
        logger: () => {},
      });
      assert.ok(await storeA.ready(5_000), "a lazy client is connected by the store");
      const storeB = await fx.store({ prefix });
      const a = new CancellationRegistry({ store: storeA, janitor: false });
      const b = new CancellationRegistry({ store: storeB, janitor: false });
      const handle = await a.track(5, "s");
      assert.equal(await b.isInFlight(5, "s"), true);
      await b.cancel(5, null, "s", "notification");
      assert.ok(await abortedWithin(handle.signal, 2_000));
      const sessions = new RedisSessionStore({ redis: lazySessions, prefix, logger: () => {} });
      assert.ok(await sessions.ready(5_000), "the session store connects a lazy client too");
      await sessions.close();
      await a.close();
      await b.close();
      await storeA.close();
    } finally {
      lazy.disconnect();
      lazySessions.disconnect();
      await fx.close();
    }
  });

  it("a cancel published while node A's subscriber was killed still aborts A's call (catch-up)", async () => {
    const fx = new Fixture(server.url);
    const admin = fx.client();
    try {
      const { a, b, prefix } = await twoNodes(fx);
      const handle = await a.track(9, "principal:alice");
      const channel = `{${prefix}}:cancelled`;
      // Kill node A's subscriber connection, then cancel on node B before it can resubscribe
      // (the store waits at least 50 ms before reconnecting).
      const list = String(await admin.client("LIST"));
      const line = list.split("\n").find((l) => l.includes("name=conduit-mcp-sub-node-a "));
      const id = /\bid=(\d+)/.exec(line ?? "")?.[1];
      assert.ok(id, `node A's subscriber not found in CLIENT LIST:\n${list}`);
      assert.equal(String(await admin.client("KILL", "ID", id)), "1");
      const [, listeners] = (await admin.pubsub("NUMSUB", channel)) as [string, number];
      await b.cancel(9, "stop", "principal:alice", "notification");
      assert.ok(
        await abortedWithin(handle.signal, 5_000),
        `not aborted after the reconnect (channel had ${listeners} listeners when the cancel was published)`,
      );
      assert.ok(listeners < 2, `node A was still subscribed (${listeners} listeners)`);
      await a.close();
      await b.close();
    } finally {
      await fx.close();
    }
  });

  it("a node whose clock is skewed neither wipes others' rows and sessions nor stops expiry", async () => {
    const fx = new Fixture(server.url);
    const prefix = freshPrefix("clock");
    const realNow = Date.now;
    const ahead = () => realNow() + 30 * 60_000;
    const farAhead = () => realNow() + 10 * 365 * 86_400_000;
    // Node A is built while its clock reads 30 minutes ahead; node C while it reads 10 years ahead.
    let storeA: RedisCancellationStore;
    let sessionsA: RedisSessionStore;
    let storeC: RedisCancellationStore;
    let sessionsC: RedisSessionStore;
    try {
      Date.now = ahead;
      storeA = new RedisCancellationStore({ redis: server.url, prefix, logger: () => {} });
      sessionsA = new RedisSessionStore({ redis: server.url, prefix, logger: () => {} });
      Date.now = farAhead;
      storeC = new RedisCancellationStore({ redis: server.url, prefix, logger: () => {} });
      sessionsC = new RedisSessionStore({ redis: server.url, prefix, logger: () => {} });
    } finally {
      Date.now = realNow;
    }
    const sessionsB = new RedisSessionStore({ redis: server.url, prefix, logger: () => {} });
    try {
      const storeB = await fx.store({ prefix });
      for (const s of [storeA, storeC]) assert.ok(await s.ready(5_000));
      for (const s of [sessionsA, sessionsB, sessionsC]) assert.ok(await s.ready(5_000));
      const a = new CancellationRegistry({ store: storeA, janitor: false, clock: ahead });
      const c = new CancellationRegistry({ store: storeC, janitor: false, clock: farAhead });
      const b = new CancellationRegistry({ store: storeB, janitor: false });

      // B's row and session, one minute old at most: A's cleanups (60 s TTL) must keep them.
      await b.cancel("b-1", null, "s", "library");
      const now = realNow();
      const record = {
        principalId: null,
        creatorScope: "ip:127.0.0.1",
        protocolVersion: "2025-11-25",
        createdAt: now,
        lastSeenAt: now,
        logLevel: null,
      };
      assert.equal(await sessionsB.create({ id: "b-session", ...record }), "created");
      await a.cleanup(60_000);
      assert.equal(await sessionsA.cleanup(60_000, ahead()), 0);
      assert.equal(await b.isCancelled("b-1", "s"), true, "A's clock wiped B's row");
      assert.notEqual(await sessionsB.get("b-session"), undefined, "A's clock wiped B's session");

      // C's row and session, stamped while C's clock reads 10 years ahead: B's cleanup with a
      // short TTL removes them once they are older than it by Redis's clock.
      await c.cancel("c-1", null, "s", "library");
      const far = farAhead();
      const farRecord = { ...record, createdAt: far, lastSeenAt: far };
      assert.equal(await sessionsC.create({ id: "c-session", ...farRecord }), "created");
      await sleep(30);
      await b.cleanup(10);
      assert.ok((await sessionsB.cleanup(10, realNow())) >= 1);
      assert.equal(await b.isCancelled("c-1", "s"), false, "C's row never expires");
      assert.equal(await sessionsB.get("c-session"), undefined, "C's session never expires");
      for (const r of [a, b, c]) await r.close();
    } finally {
      await Promise.all([storeA.close(), storeC.close()]);
      await Promise.all([sessionsA.close(), sessionsB.close(), sessionsC.close()]);
      await fx.close();
    }
  });
});
