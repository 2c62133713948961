/**
 * RedisCancellationStore against a private redis-server: the shared store contract (unchanged),
 * then what only Redis has to show — one hash tag, prefix isolation, script cache fallback,
 * atomicity under concurrent connections, hostile channel messages.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { InvalidOptionError } from "../../src/errors.js";
import { RedisCancellationStore } from "../../src/redis/index.js";
import { runCancellationStoreContract } from "../cancellation/store-contract.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { Fixture, freshPrefix, sleep } from "./helpers.js";

const skip = redisSkipReason();

describe("RedisCancellationStore", { skip: skip ?? false }, () => {
  let server: RedisServer;
  let shared: Fixture;

  before(async () => {
    server = await startRedisServer();
    shared = new Fixture(server.url);
  });
  after(async () => {
    await shared?.close();
    await server?.stop();
  });

  // The contract suite closes each store itself; each gets its own prefix, so tests never meet.
  runCancellationStoreContract("RedisCancellationStore", async (options) => {
    const store = new RedisCancellationStore({
      redis: server.url,
      prefix: freshPrefix("contract"),
      logger: () => {},
      ...options,
    });
    assert.ok(await store.ready(5_000), "store ready");
    return store;
  });

  describe("options", () => {
    it("rejects bad options at construction", () => {
      const cases: Array<[string, Record<string, unknown>]> = [
        ["prefix", { prefix: "a{b}" }],
        ["prefix", { prefix: "" }],
        ["maxRows", { maxRows: 0 }],
        ["maxRowsPerScope", { maxRowsPerScope: 1.5 }],
        ["leaseMs", { leaseMs: 2 }],
        ["nodeId", { nodeId: "has space" }],
        ["commandTimeoutMs", { commandTimeoutMs: 0 }],
        ["redis", { redis: "" }],
        ["redis", { redis: { not: "a client" } }],
      ];
      for (const [option, extra] of cases) {
        assert.throws(
          () =>
            new RedisCancellationStore({
              redis: "redis://127.0.0.1:1",
              ...extra,
            } as unknown as ConstructorParameters<typeof RedisCancellationStore>[0]),
          (error) => error instanceof InvalidOptionError && error.option === option,
          option,
        );
      }
    });
  });

  describe("key layout", () => {
    it("puts every key under one hash tag {prefix} (one Redis Cluster slot)", async () => {
      const fx = new Fixture(server.url);
      try {
        const prefix = freshPrefix("layout");
        const store = await fx.store({ prefix, maxRows: 4, maxRowsPerScope: 3 });
        const now = Date.now();
        for (const [scope, id] of [
          ["a", "1"],
          ["a", "2"],
          ["b", "1"],
          ["c:{x}", "z"],
          ["d", "9"],
        ]) {
          await store.record(
            { scope: scope as string, requestId: id as string, reason: "r", cancelledAt: now },
            "library",
          );
        }
        await store.addInFlight("a", "1", "h1");
        const raw = fx.client();
        const keys = await raw.keys(`*${prefix}*`);
        assert.ok(keys.length >= 6, `keys: ${keys.join(", ")}`);
        for (const key of keys) assert.ok(key.startsWith(`{${prefix}}:`), key);
      } finally {
        await fx.close();
      }
    });

    it("equal-score ZSET members order bytewise (the id tie-break Redis gives for free)", async () => {
      const fx = new Fixture(server.url);
      try {
        const raw = fx.client();
        const key = `{${freshPrefix("zset")}}:probe`;
        const ids = ["\u{10000}", "\uE000", "b", "a", "ab", "", "\u00e9", "Z"];
        for (const id of ids) await raw.zadd(key, 5, id);
        const ordered = await raw.zrange(key, 0, -1);
        const bytewise = [...ids].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
        assert.deepEqual(ordered, bytewise);
        await raw.del(key);
      } finally {
        await fx.close();
      }
    });
  });

  it("keeps ids and scopes with lone surrogates apart from U+FFFD (no UTF-8 replacement)", async () => {
    const fx = new Fixture(server.url);
    try {
      // One fixed time: eviction ties go by id, by code point (U+D800 < U+D801 < U+E000 < U+FFFD).
      const store = await fx.store({
        maxRows: 4,
        maxRowsPerScope: Number.POSITIVE_INFINITY,
        clock: () => 1_000,
      });
      const at = { reason: null, cancelledAt: 0 };
      for (const id of ["\uFFFD", "\uE000", "\uD801"]) {
        await store.record({ scope: "p:\uDC00", requestId: id, ...at }, "library");
      }
      await store.record({ scope: "p:\uDC00", requestId: "\uD800", ...at }, "library");
      assert.equal(await store.has("p:\uDC00", "\uD800"), true);
      assert.equal(await store.has("p:\uFFFD", "\uD800"), false);
      assert.equal(await store.has("p:\uDC00", "\uDFFF"), false);
      await store.addInFlight("p:\uDC00", "\uD800", "h1");
      assert.equal(await store.isInFlight("p:\uDC00", "\uD800"), true);
      assert.equal(await store.isInFlight("p:\uFFFD", "\uFFFD"), false);
      assert.equal(await store.size(), 4);
      await store.record({ scope: "other", requestId: "1", ...at }, "library");
      assert.equal(
        await store.has("p:\uDC00", "\uD800"),
        false,
        "the smallest code point goes first",
      );
      assert.equal(await store.has("p:\uDC00", "\uD801"), true);
      assert.equal(await store.clear("p:\uDC00", "\uD801"), true);
      assert.equal(await store.clear("p:\uDC00", "\uFFFD"), true);
      await store.removeInFlight("p:\uDC00", "\uD800", "h1");
      assert.equal(await store.isInFlight("p:\uDC00", "\uD800"), false);
    } finally {
      await fx.close();
    }
  });

  it("two prefixes on one Redis do not see each other's rows, quotas or events", async () => {
    const fx = new Fixture(server.url);
    try {
      const a = await fx.store({ maxRowsPerScope: 1, nodeId: "node-a" });
      const b = await fx.store({ maxRowsPerScope: 1, nodeId: "node-b" });
      const heard: unknown[] = [];
      b.onRemoteCancellation((event) => heard.push(event));
      const row = { scope: "s", requestId: "1", reason: null, cancelledAt: Date.now() };
      assert.equal(await a.record(row, "library"), "recorded");
      await a.addInFlight("s", "1", "h");
      assert.equal(await b.has("s", "1"), false);
      assert.equal(await b.isInFlight("s", "1"), false);
      assert.equal(await b.size(), 0);
      assert.equal(await b.record(row, "library"), "recorded", "b's quota is its own");
      await sleep(50);
      assert.deepEqual(heard, []);
    } finally {
      await fx.close();
    }
  });

  it("runs its scripts by SHA and falls back to EVAL after SCRIPT FLUSH", async () => {
    const fx = new Fixture(server.url);
    try {
      const store = await fx.store();
      const raw = fx.client();
      const stats = async () => {
        const info = await raw.info("commandstats");
        const calls = (name: string) =>
          Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
        return { eval: calls("eval"), evalsha: calls("evalsha") };
      };
      await store.record(
        { scope: "s", requestId: "warm", reason: null, cancelledAt: 0 },
        "library",
      );
      await raw.config("RESETSTAT");
      await store.record({ scope: "s", requestId: "1", reason: null, cancelledAt: 0 }, "library");
      assert.deepEqual(await stats(), { eval: 0, evalsha: 1 }, "a loaded script runs by SHA");
      await raw.script("FLUSH");
      await raw.config("RESETSTAT");
      assert.equal(
        await store.record({ scope: "s", requestId: "2", reason: null, cancelledAt: 0 }, "library"),
        "recorded",
      );
      assert.equal(await store.has("s", "2"), true, "the write happened despite the empty cache");
      assert.deepEqual(await stats(), { eval: 1, evalsha: 1 }, "NOSCRIPT, then EVAL");
      await raw.config("RESETSTAT");
      await store.record({ scope: "s", requestId: "3", reason: null, cancelledAt: 0 }, "library");
      assert.deepEqual(await stats(), { eval: 0, evalsha: 1 }, "EVAL reloaded it: SHA again");
    } finally {
      await fx.close();
    }
  });

  describe("atomicity across connections", () => {
    it("many connections recording in one scope never exceed its quota", async () => {
      const fx = new Fixture(server.url);
      try {
        const prefix = freshPrefix("quota");
        const stores = await Promise.all(
          [1, 2, 3, 4].map((n) => fx.store({ prefix, nodeId: `n${n}`, maxRowsPerScope: 25 })),
        );
        const outcomes = await Promise.all(
          stores.flatMap((store, n) =>
            Array.from({ length: 40 }, (_, i) =>
              store.record(
                { scope: "hot", requestId: `${n}-${i}`, reason: null, cancelledAt: 0 },
                "library",
              ),
            ),
          ),
        );
        assert.equal(outcomes.filter((o) => o === "recorded").length, 25);
        assert.equal(outcomes.filter((o) => o === "limit_reached").length, 160 - 25);
        assert.equal(await stores[0]?.size(), 25);
        const raw = fx.client();
        assert.equal(await raw.zcard(`{${prefix}}:s:hot`), 25);
        assert.equal(await raw.zscore(`{${prefix}}:scopes`, "hot"), "25");
      } finally {
        await fx.close();
      }
    });

    it("many connections at the cap never let the table exceed it; indexes stay consistent", async () => {
      const fx = new Fixture(server.url);
      try {
        const prefix = freshPrefix("cap");
        const maxRows = 60;
        const stores = await Promise.all(
          [1, 2, 3, 4].map((n) =>
            fx.store({ prefix, nodeId: `n${n}`, maxRows, maxRowsPerScope: 30 }),
          ),
        );
        const raw = fx.client();
        let maxSeen = 0;
        let polling = true;
        const poller = (async () => {
          while (polling) {
            maxSeen = Math.max(maxSeen, await raw.zcard(`{${prefix}}:time`));
            await sleep(1);
          }
        })();
        for (let round = 0; round < 5; round++) {
          const outcomes = await Promise.all(
            stores.flatMap((store, n) =>
              Array.from({ length: 30 }, (_, i) =>
                store.record(
                  {
                    scope: `scope-${(n + i) % 7}`,
                    requestId: `${round}-${n}-${i}`,
                    reason: "x",
                    cancelledAt: 0,
                  },
                  "library",
                ),
              ),
            ),
          );
          const size = await raw.zcard(`{${prefix}}:time`);
          assert.ok(size <= maxRows, `size ${size}`);
          assert.ok(outcomes.every((o) => o === "recorded" || o === "limit_reached"));
        }
        polling = false;
        await poller;
        assert.ok(maxSeen <= maxRows, `observed ${maxSeen}`);
        // Every index agrees: per-scope ZSETs, reasons, counts and the time index.
        const scopes = await raw.zrange(`{${prefix}}:scopes`, 0, -1, "WITHSCORES");
        let total = 0;
        for (let i = 0; i < scopes.length; i += 2) {
          const scope = scopes[i] as string;
          const count = Number(scopes[i + 1]);
          assert.ok(count <= 30, "quota");
          assert.equal(await raw.zcard(`{${prefix}}:s:${scope}`), count);
          assert.equal(await raw.hlen(`{${prefix}}:r:${scope}`), count);
          total += count;
        }
        assert.equal(await raw.zcard(`{${prefix}}:time`), total);
      } finally {
        await fx.close();
      }
    });
  });

  it("ignores hostile or malformed channel frames, and its own; sanitises reasons on receipt", async () => {
    const fx = new Fixture(server.url);
    try {
      const prefix = freshPrefix("hostile");
      const a = await fx.store({ prefix, nodeId: "node-a" });
      const heard: unknown[] = [];
      a.onRemoteCancellation((event) => heard.push(event));
      const raw = fx.client();
      const channel = `{${prefix}}:cancelled`;
      const good = {
        v: 1,
        scope: "s",
        requestId: "1",
        reason: null,
        source: "notification",
        node: "node-x",
      };
      const frame = (message: unknown, head = "0 1-0") => `${head} ${JSON.stringify(message)}`;
      const bad: string[] = [
        "not json",
        "0 1-0 not json",
        "0 1-0 []",
        "0 1-0 null",
        JSON.stringify(good), // no shard and stream id
        frame(good, "1 1-0"), // shard out of range (one shard)
        frame(good, "0 x-0"),
        frame(good, "-1 1-0"),
        frame({ ...good, v: 2 }),
        frame({ ...good, scope: 5 }),
        frame({ ...good, scope: "" }),
        frame({ ...good, requestId: "x".repeat(257) }),
        frame({ ...good, requestId: 5 }),
        frame({ ...good, reason: 7 }),
        frame({ ...good, reason: "r".repeat(3_000) }),
        frame({ ...good, source: "evil" }),
        frame({ ...good, node: "" }),
        frame({ ...good, node: "has space" }),
        frame({ ...good, node: "node-a" }),
        frame({ ...good, pad: "x".repeat(20_000) }),
      ];
      for (const message of bad) await raw.publish(channel, message);
      await raw.publish(channel, frame(good));
      // A forged reason with CR/LF, ESC and bidi controls, 1 500 characters long.
      const forged = `ok\r\n[error] forged \u001b[31mred\u202Eevil ${"z".repeat(1_500)}`;
      await raw.publish(channel, frame({ ...good, requestId: "2", reason: forged }));
      await sleep(50);
      assert.equal(heard.length, 2, JSON.stringify(heard).slice(0, 500));
      assert.deepEqual(heard[0], {
        scope: "s",
        requestId: "1",
        reason: null,
        source: "notification",
      });
      const reason = (heard[1] as { reason: string }).reason;
      assert.doesNotMatch(reason, /[\r\n\u001b\u202E]/);
      assert.ok(reason.startsWith("ok[error] forged [31mredevil z"), reason.slice(0, 60));
      assert.equal([...reason].length, 200);
    } finally {
      await fx.close();
    }
  });
});
