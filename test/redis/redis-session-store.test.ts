/**
 * RedisSessionStore: sessions shared by nodes on one Redis, with the memory store's
 * rules (bounded, refreshed on get, idle TTL strictly greater) and fail-open behaviour.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Redis } from "ioredis";

import { RedisSessionStore } from "../../src/redis/index.js";
import type { SessionRecord } from "../../src/sessions/session-store.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { runSessionStoreContract } from "../sessions/session-store-contract.js";
import { freshPrefix } from "./helpers.js";

const skip = redisSkipReason();

function session(id: string, at: number): SessionRecord {
  return {
    id,
    principalId: null,
    creatorScope: "ip:127.0.0.1",
    protocolVersion: "2025-11-25",
    createdAt: at,
    lastSeenAt: at,
    logLevel: null,
  };
}

describe("RedisSessionStore", { skip: skip ?? false }, () => {
  let server: RedisServer;
  const stores: RedisSessionStore[] = [];
  async function make(options: Partial<ConstructorParameters<typeof RedisSessionStore>[0]> = {}) {
    const store = new RedisSessionStore({
      redis: server.url,
      prefix: freshPrefix("sess"),
      logger: () => {},
      ...options,
    });
    stores.push(store);
    assert.ok(await store.ready(5_000));
    return store;
  }

  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await server?.stop();
  });

  // The one contract every session store meets (the memory store runs it too).
  runSessionStoreContract("RedisSessionStore", async (options) => {
    const store = new RedisSessionStore({
      redis: server.url,
      prefix: freshPrefix("contract"),
      logger: () => {},
      ...options,
    });
    assert.ok(await store.ready(5_000));
    return store;
  });

  it("two nodes share sessions: create on one, get, set level and delete on the other", async () => {
    let now = 1_000;
    const prefix = freshPrefix("shared");
    const a = await make({ prefix, clock: () => now });
    const b = await make({ prefix, clock: () => now });
    assert.equal(await a.create({ ...session("s1", now), principalId: "alice" }), "created");
    now = 2_000;
    const seen = await b.get("s1");
    assert.deepEqual(seen, { ...session("s1", 1_000), principalId: "alice", lastSeenAt: 2_000 });
    assert.equal(await b.setLogLevel("s1", "debug"), true);
    assert.equal((await a.get("s1"))?.logLevel, "debug");
    assert.equal(await a.setLogLevel("nope", "debug"), false);
    assert.equal(await b.size(), 1);
    assert.equal(await b.delete("s1"), true);
    assert.equal(await a.delete("s1"), false);
    assert.equal(await a.get("s1"), undefined);
  });

  it("is bounded across nodes: per creator on any node, then globally by eviction", async () => {
    const prefix = freshPrefix("bound");
    const a = await make({ prefix, maxSessions: 2, maxSessionsPerScope: 2 });
    const b = await make({ prefix, maxSessions: 2, maxSessionsPerScope: 2 });
    assert.equal(await a.create(session("1", 0)), "created");
    assert.equal(await b.create(session("2", 0)), "created");
    // The creator's quota counts the sessions it made on every node.
    assert.equal(await a.create(session("3", 0)), "scope-full");
    assert.equal(await b.create(session("2", 5)), "created");
    // Another creator at the global bound evicts from the largest creator instead of failing.
    assert.equal(await a.create({ ...session("4", 0), creatorScope: "ip:192.0.2.1" }), "created");
    assert.equal(await b.size(), 2);
    const none = await make({ maxSessions: 0 });
    assert.equal(await none.create(session("x", 0)), "full");
  });

  it("cleanup removes sessions idle strictly longer than the TTL; get refreshes", async () => {
    let now = 0;
    const store = await make({ clock: () => now });
    await store.create(session("old", 0));
    await store.create(session("edge", 0));
    await store.create(session("kept", 0));
    now = 100;
    await store.get("kept");
    now = 70;
    assert.equal(await store.cleanup(50, 70), 2, "old and edge are 70 ms idle");
    assert.equal(await store.get("old"), undefined);
    assert.equal(await store.cleanup(50, 150), 0, "kept is exactly 50 ms idle: kept");
    assert.equal(await store.size(), 1);
  });

  it("keeps sessions through an outage: seen and new ones answer locally, new ones reach Redis after", async () => {
    const log: string[] = [];
    const prefix = freshPrefix("outage");
    const store = await make({ prefix, logger: (m) => log.push(m) });
    assert.equal(await store.create(session("before", 0)), "created");
    assert.notEqual(await store.get("before"), undefined);
    await server.pause();
    try {
      assert.equal(await store.create(session("during", 0)), "created");
      assert.equal((await store.get("during"))?.id, "during", "created during the outage");
      assert.equal((await store.get("before"))?.id, "before", "seen before the outage");
      assert.equal(await store.get("unknown"), undefined);
      assert.equal(await store.setLogLevel("during", "debug"), true);
      assert.equal(await store.delete("before"), true);
      assert.equal(await store.get("before"), undefined);
      assert.equal(log.length, 1, log.join("\n"));
      assert.match(log[0] as string, /Redis session store unreachable/);
    } finally {
      await server.start();
    }
    assert.ok(await store.ready(10_000));
    // Another node on the same Redis sees the session created during the outage once it is back.
    const other = await make({ prefix });
    let seen: SessionRecord | undefined;
    for (let i = 0; i < 100 && seen === undefined; i++) {
      seen = await other.get("during");
      if (seen === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(seen?.logLevel, "debug");
    // Redis restarted empty, so "before" is gone either way; the delete was replayed harmlessly.
    assert.equal(await other.get("before"), undefined);
  });
  it("a session deleted while its outage copy is being written back stays deleted", async () => {
    // Found by the chaos soak (docs/soak.md): sessions created during an outage are written back
    // one by one when Redis returns; one deleted on this node before its turn came was written
    // back anyway, from the list taken when the write-back began, and lived on in Redis.
    const client = new Redis(server.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: () => 50,
    });
    client.on("error", () => {});
    const prefix = freshPrefix("flush-race");
    const store = new RedisSessionStore({ redis: client, prefix, logger: () => {} });
    stores.push(store);
    const inspect = new Redis(server.url, { lazyConnect: true });
    try {
      assert.ok(await store.ready(5_000));
      await server.pause();
      assert.equal(await store.create(session("first", 0)), "created");
      assert.equal(await store.create(session("second", 0)), "created");
      // Runs right after the store's own "ready" handler has begun the write-back (listeners run
      // in the order they were added): the first session is on its way, the second not yet.
      const deleted = new Promise<boolean>((resolve) => {
        client.once("ready", () => void store.delete("second").then(resolve));
      });
      await server.start();
      await deleted;
      await inspect.connect();
      const key = (id: string) => `{${prefix}}:sess:${id}`;
      for (let i = 0; i < 200 && (await inspect.exists(key("first"))) === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(await inspect.exists(key("first")), 1, "the first session was written back");
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(await inspect.exists(key("second")), 0, "the deleted session came back");
      assert.equal(await store.get("second"), undefined);
    } finally {
      inspect.disconnect();
      await store.close();
      client.disconnect();
    }
  });
  it("during an outage, a creator's bound counts the sessions it created then, not stale copies", async () => {
    // Found by the chaos soak (docs/soak.md): a node keeps a copy of every session it has seen,
    // and one ended through another node stays in that copy until it is asked for again or
    // idles out. Counting those copies against the creator's quota refused `initialize` (429)
    // during an outage to a tenant that held no session at all.
    const prefix = freshPrefix("stale-copies");
    const a = await make({ prefix, maxSessionsPerScope: 2 });
    const b = await make({ prefix, maxSessionsPerScope: 2 });
    assert.equal(await a.create(session("old-1", 0)), "created");
    assert.equal(await a.create(session("old-2", 0)), "created");
    assert.equal(await a.create(session("old-3", 0)), "scope-full", "the quota holds in Redis");
    assert.equal(await b.delete("old-1"), true);
    assert.equal(await b.delete("old-2"), true);
    await server.pause();
    try {
      assert.equal(await a.create(session("new-1", 0)), "created");
      assert.equal(await a.create(session("new-2", 0)), "created");
      assert.equal(
        await a.create(session("new-3", 0)),
        "scope-full",
        "sessions created during the outage are still bounded per creator",
      );
    } finally {
      await server.start();
    }
  });

  it("onEnded: every node hears each session ended anywhere (delete, expiry, eviction, re-create)", async () => {
    let now = 1_000;
    const prefix = freshPrefix("ended");
    const a = await make({ prefix, clock: () => now, maxSessions: 2 });
    const b = await make({ prefix, clock: () => now, maxSessions: 2 });
    const heardA: string[] = [];
    const heardB: string[] = [];
    a.onEnded((id) => heardA.push(id));
    const stop = b.onEnded((id) => heardB.push(id));
    b.onEnded(() => {
      throw new Error("a listener's bug");
    });
    // The subscriptions are live once a published end reaches both (bounded wait).
    await a.create(session("probe", now));
    for (let i = 0; i < 200 && !(heardA.includes("probe") && heardB.includes("probe")); i++) {
      await a.delete("probe");
      await a.create(session("probe", now));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(heardB.includes("probe"), "node B's subscription never became live");
    await a.delete("probe");
    heardA.length = 0;
    heardB.length = 0;
    await a.create(session("d", now));
    await b.delete("d"); // delete on B
    await a.create(session("x", now));
    await a.create(session("y", now));
    now = 2_000;
    await b.get("y");
    await a.create(session("z", now)); // store full: evicts x (least recently used)
    now = 10_000;
    await b.get("z");
    assert.equal(await b.cleanup(5_000, now), 1); // y idled out, swept by B
    const deadline = Date.now() + 2_000;
    // Late echoes of the probe may still arrive: only the sessions of this test count.
    const ours = (heard: string[]) => [...new Set(heard.filter((id) => id !== "probe"))].sort();
    while (Date.now() < deadline && (ours(heardA).length < 3 || ours(heardB).length < 3)) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.deepEqual(ours(heardA), ["d", "x", "y"]);
    assert.deepEqual(ours(heardB), ["d", "x", "y"]);
    stop();
    await a.delete("z");
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok(heardA.includes("z"));
    assert.ok(!heardB.includes("z"), "a stopped listener hears nothing more");
  });

  it("onEnded ignores a forged or malformed message on the channel", async () => {
    const prefix = freshPrefix("forged");
    const a = await make({ prefix });
    const heard: string[] = [];
    a.onEnded((id) => heard.push(id));
    await a.create(session("real", 0));
    const raw = new Redis(server.url);
    try {
      for (let i = 0; i < 200 && !heard.includes("real"); i++) {
        await raw.publish(`{${prefix}}:ended`, "real");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.ok(heard.includes("real"));
      await raw.publish(`{${prefix}}:ended`, "has space");
      await raw.publish(`{${prefix}}:ended`, "x".repeat(300));
      await raw.publish(`{${prefix}}:ended`, "bad\nline");
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual([...new Set(heard)], ["real"]);
    } finally {
      raw.disconnect();
    }
  });
});
