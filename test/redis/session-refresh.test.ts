/**
 * RedisSessionStore refreshes a session at most once per refresh window (a 32nd of the janitor's
 * TTL, at most a minute): a get within the window writes nothing (one HGETALL in one script), and
 * the idle sweep counts from the end of the window, so a session is never removed sooner than the
 * TTL after its last use, and at most a window later. Counted with `INFO commandstats` on a
 * private redis-server.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Redis } from "ioredis";

import { RedisSessionStore } from "../../src/redis/index.js";
import { refreshWindowFor } from "../../src/redis/sessions/redis-session-store.js";
import { RedisTime, refreshDue } from "../../src/redis/sessions/redis-time.js";
import { SessionJanitor } from "../../src/sessions/index.js";
import type { SessionRecord } from "../../src/sessions/session-store.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { commandCalls, freshPrefix } from "./helpers.js";

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

function writesBetween(a: Map<string, number>, b: Map<string, number>): number {
  return ["hset", "zadd"].reduce((n, k) => n + (b.get(k) ?? 0) - (a.get(k) ?? 0), 0);
}

describe("RedisSessionStore refresh window", { skip: skip ?? false }, () => {
  let server: RedisServer;
  let inspect: Redis;
  const stores: RedisSessionStore[] = [];
  async function make(options: Partial<ConstructorParameters<typeof RedisSessionStore>[0]> = {}) {
    const store = new RedisSessionStore({
      redis: server.url,
      prefix: freshPrefix("refresh"),
      logger: () => {},
      ...options,
    });
    stores.push(store);
    assert.ok(await store.ready(5_000));
    return store;
  }

  before(async () => {
    server = await startRedisServer();
    inspect = new Redis(server.url);
  });
  after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    inspect?.disconnect();
    await server?.stop();
  });

  it("the window is a 32nd of the TTL, at most a minute", () => {
    assert.equal(refreshWindowFor(3_200), 100);
    assert.equal(refreshWindowFor(30 * 60_000), 56_250);
    assert.equal(refreshWindowFor(24 * 3_600_000), 60_000);
    assert.equal(refreshWindowFor(10), 0);
    assert.equal(refreshWindowFor(Number.POSITIVE_INFINITY), 60_000);
    assert.equal(refreshWindowFor(Number.NaN), 0);
  });

  it("Redis's clock as the node knows it: the script ran between send and answer, its answer rounded down to the ms, then 1 ms/s drift", () => {
    const time = new RedisTime();
    assert.equal(time.bounds(0), null);
    time.learn(1_000_000, 100, 110); // sent at 100, answered at 110 (local ms)
    assert.deepEqual(time.bounds(110), [1_000_000, 1_000_011]);
    assert.deepEqual(time.bounds(10_110), [1_009_990, 1_010_021]);
    // Redis read 1 000 000.9 and answered 1 000 000 a fifth of a ms after the send; another
    // node's refresh in Redis's next millisecond wrote a window ending at 1 000 001 + 100. Read
    // a tenth of a ms later, that window is not "more than a window ahead" (not due).
    time.learn(1_000_000, 100, 100.2);
    const soon = time.bounds(100.3);
    assert.ok(soon !== null && soon[1] >= 1_000_000.9 + 0.3, `upper bound ${soon?.[1]}`);
    assert.equal(refreshDue(String(1_000_001 + 100), soon, 100), false);
    time.forget();
    assert.equal(time.bounds(110), null);
    // Due: clock unknown, no window, a window that may have ended, or one too far ahead.
    assert.equal(refreshDue("5000", null, 100), true);
    assert.equal(refreshDue(undefined, [1_000, 1_000], 100), true);
    assert.equal(refreshDue("soon", [1_000, 1_000], 100), true);
    assert.equal(refreshDue("1050", [1_000, 1_010], 100), false);
    assert.equal(refreshDue("1010", [1_000, 1_010], 100), true, "the upper bound reached it");
    assert.equal(refreshDue("1111", [1_000, 1_010], 100), true, "ahead by more than a window");
    assert.equal(refreshDue("1110", [1_000, 1_010], 100), false);
    assert.equal(
      refreshDue("1050", [1_000, 1_010], 100, "950"),
      false,
      "seen when the window began",
    );
    assert.equal(refreshDue("1050", [1_000, 1_010], 100, "1005"), true, "seen after, no window");
  });

  it("with Redis's clock, a session is refreshed again once its window has passed", async () => {
    const store = await make();
    assert.equal(await store.create(session("w", Date.now())), "created");
    store.idleTtl(3_200); // window 100 ms
    const first = (await store.get("w"))?.lastSeenAt ?? 0;
    assert.equal((await store.get("w"))?.lastSeenAt, first, "within the window");
    await new Promise((resolve) => setTimeout(resolve, 150));
    const later = (await store.get("w"))?.lastSeenAt ?? 0;
    assert.ok(later >= first + 100, `refreshed after the window: ${first} then ${later}`);
  });

  it("a session refreshed without a window (a node of an older version) is refreshed again", async () => {
    let now = 70_000;
    const prefix = freshPrefix("refresh-older");
    const store = await make({ prefix, clock: () => now });
    await store.create(session("o", now));
    store.idleTtl(3_200); // window 100 ms
    assert.equal((await store.get("o"))?.lastSeenAt, 70_000);
    // An older node's get at 70 050: lastSeenAt and the scores set to its time, no window.
    now = 70_050;
    await inspect.hset(`{${prefix}}:sess:o`, "lastSeenAt", String(now));
    await inspect.zadd(`{${prefix}}:sessions`, now, "o");
    now = 70_060;
    assert.equal((await store.get("o"))?.lastSeenAt, 70_060, "refreshed, not left at 70 050");
    assert.equal(await inspect.zscore(`{${prefix}}:sessions`, "o"), "70160");
  });

  it("the server's janitor tells the store its TTL when it starts, before its first sweep", async () => {
    let now = 5_000;
    const store = await make({ clock: () => now });
    await store.create(session("j", now));
    const janitor = new SessionJanitor(store, 3_200, 60_000); // window 100 ms
    try {
      now = 5_010;
      assert.equal((await store.get("j"))?.lastSeenAt, 5_010);
      now = 5_050;
      assert.equal((await store.get("j"))?.lastSeenAt, 5_010, "within the window");
    } finally {
      janitor.stop();
    }
  });

  it("before the janitor's first sweep every get refreshes; after it, one get per window writes", async () => {
    let now = 1_000;
    const store = await make({ clock: () => now });
    assert.equal(await store.create(session("s", now)), "created");
    const t0 = await commandCalls(inspect);
    now = 1_010;
    assert.equal((await store.get("s"))?.lastSeenAt, 1_010);
    now = 1_020;
    assert.equal((await store.get("s"))?.lastSeenAt, 1_020);
    const t1 = await commandCalls(inspect);
    assert.equal(writesBetween(t0, t1), 6, "two refreshes of hash, sessions and creator ZSETs");
    // The janitor sweeps with a TTL of 3.2 s: a window of 100 ms from now on.
    assert.equal(await store.cleanup(3_200, now), 0);
    now = 1_030;
    assert.equal((await store.get("s"))?.lastSeenAt, 1_030, "the last refresh had no window");
    const t2 = await commandCalls(inspect);
    for (const at of [1_040, 1_080, 1_129]) {
      now = at;
      assert.equal((await store.get("s"))?.lastSeenAt, 1_030, "within the window: not written");
    }
    const t3 = await commandCalls(inspect);
    assert.equal(writesBetween(t2, t3), 0, "no write within the window");
    assert.equal((t3.get("hgetall") ?? 0) - (t2.get("hgetall") ?? 0), 3, "one read per get");
    now = 1_130;
    assert.equal((await store.get("s"))?.lastSeenAt, 1_130, "the window has passed: refreshed");
    assert.equal(writesBetween(t3, await commandCalls(inspect)), 3);
  });

  it("a session is never swept sooner than the TTL after its last use, and at most a window later", async () => {
    let now = 10_000;
    const prefix = freshPrefix("refresh-sweep");
    const store = await make({ prefix, clock: () => now });
    await store.create(session("used", now));
    await store.create(session("idle", now));
    await store.cleanup(3_200, now); // window 100 ms
    await store.get("used"); // refreshed at 10 000, window to 10 100
    now = 10_090;
    await store.get("used"); // within the window: its last use, not written
    // Idle exactly the TTL since its last use (10 090): kept; "idle" (10 000) is swept.
    now = 10_090 + 3_200;
    assert.equal(await store.cleanup(3_200, now), 1);
    assert.notEqual(await inspect.zscore(`{${prefix}}:sessions`, "used"), null);
    // Idle past the TTL counted from the window's end: swept.
    now = 10_100 + 3_200 + 1;
    assert.equal(await store.cleanup(3_200, now), 1);
    assert.equal(await store.get("used"), undefined);
  });

  it("with Redis's clock, twenty gets in a row on two nodes: one plain HGETALL each, a refresh on each node's first", async () => {
    const prefix = freshPrefix("refresh-time");
    const a = await make({ prefix });
    const b = await make({ prefix });
    assert.equal(await a.create(session("t", Date.now())), "created");
    await a.cleanup(32 * 60_000, Date.now()); // window 60 s
    await b.cleanup(32 * 60_000, Date.now());
    const t0 = await commandCalls(inspect);
    for (let i = 0; i < 10; i++) {
      assert.notEqual(await a.get("t"), undefined);
      assert.notEqual(await b.get("t"), undefined);
    }
    const t1 = await commandCalls(inspect);
    // The create wrote no window: A's first get refreshes; B, which does not know Redis's clock
    // yet, refreshes once too (and learns it); the other eighteen gets only read.
    assert.equal(writesBetween(t0, t1), 6);
    assert.equal((t1.get("time") ?? 0) - (t0.get("time") ?? 0), 2, "TIME only in the refreshes");
    assert.equal((t1.get("hgetall") ?? 0) - (t0.get("hgetall") ?? 0), 20, "one HGETALL per get");
    assert.equal(
      (t1.get("evalsha") ?? 0) + (t1.get("eval") ?? 0),
      (t0.get("evalsha") ?? 0) + (t0.get("eval") ?? 0) + 2,
      "no script but the refreshes",
    );
  });

  it("a stored refresh time further ahead than a window (a forged record, a clock stepped back) is refreshed", async () => {
    let now = 50_000;
    const prefix = freshPrefix("refresh-ahead");
    const store = await make({ prefix, clock: () => now });
    await store.create(session("f", now));
    await store.cleanup(3_200, now);
    await inspect.hset(`{${prefix}}:sess:f`, "until", String(now + 3_600_000));
    now = 50_010;
    assert.equal((await store.get("f"))?.lastSeenAt, 50_010);
    assert.equal(await inspect.zscore(`{${prefix}}:sessions`, "f"), String(50_110));
  });
});
