/**
 * `RedisReplyBus` on a real `redis-server`: an answer forwarded to a node reaches that node's
 * listener only; what arrives on a channel is hostile (anyone allowed to PUBLISH can forge it):
 * malformed, oversized or mistyped messages are dropped; and while Redis is away `forward`
 * neither throws nor waits longer than `commandTimeoutMs`.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import type { ClientReply } from "../../src/index.js";
import { RedisReplyBus } from "../../src/redis/index.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { Fixture, freshPrefix, sleep } from "../redis/helpers.js";
import { until } from "../server/fixtures.js";

const skip = redisSkipReason();

describe("RedisReplyBus", { skip: skip ?? false }, () => {
  let redis: RedisServer;
  let fixture: Fixture;

  before(async () => {
    redis = await startRedisServer();
    fixture = new Fixture(redis.url);
  });
  after(async () => {
    await fixture?.close();
    await redis?.stop();
  });

  test("forward reaches the named node's listener only; detach stops delivery", async () => {
    const prefix = freshPrefix("bus");
    const one = new RedisReplyBus({ redis: redis.url, prefix, logger: () => {} });
    const two = new RedisReplyBus({ redis: redis.url, prefix, logger: () => {} });
    try {
      const gotA: [string, string, ClientReply][] = [];
      const gotB: [string, string, ClientReply][] = [];
      const detachA = one.attach("nodeAAAAAAA", (...args) => gotA.push(args));
      two.attach("nodeBBBBBBB", (...args) => gotB.push(args));
      assert.ok(await one.ready(5_000));
      assert.ok(await two.ready(5_000));
      await two.forward("nodeAAAAAAA", "session:s", "nodeAAAAAAA.x", {
        ok: true,
        result: { a: 1 },
      });
      await one.forward("nodeBBBBBBB", "ip:1", "nodeBBBBBBB.y", {
        ok: false,
        code: -1,
        message: "m",
      });
      await until(() => gotA.length === 1 && gotB.length === 1, 2_000, "both deliveries");
      assert.deepEqual(gotA[0], ["session:s", "nodeAAAAAAA.x", { ok: true, result: { a: 1 } }]);
      assert.deepEqual(gotB[0], ["ip:1", "nodeBBBBBBB.y", { ok: false, code: -1, message: "m" }]);
      detachA();
      await two.forward("nodeAAAAAAA", "session:s", "nodeAAAAAAA.z", { ok: true, result: 1 });
      await sleep(100);
      assert.equal(gotA.length, 1);
    } finally {
      await one.close();
      await two.close();
    }
  });

  test("forged channel messages that are malformed, oversized or mistyped are dropped", async () => {
    const prefix = freshPrefix("bus");
    const bus = new RedisReplyBus({
      redis: redis.url,
      prefix,
      maxMessageBytes: 512,
      logger: () => {},
    });
    try {
      const got: unknown[] = [];
      bus.attach("nodeCCCCCCC", (...args) => got.push(args));
      assert.ok(await bus.ready(5_000));
      const raw = fixture.client();
      const channel = `{${prefix}}:reply:nodeCCCCCCC`;
      const valid = { v: 1, scope: "s", id: "i", reply: { ok: true, result: null } };
      for (const forged of [
        "not json",
        "[]",
        JSON.stringify({ ...valid, v: 2 }),
        JSON.stringify({ ...valid, scope: 7 }),
        JSON.stringify({ ...valid, scope: "" }),
        JSON.stringify({ ...valid, id: "i".repeat(200) }),
        JSON.stringify({ ...valid, reply: { ok: true } }),
        JSON.stringify({ ...valid, reply: { ok: false, code: 1.5, message: "" } }),
        JSON.stringify({ ...valid, reply: { ok: false, code: 1, message: "x".repeat(2_000) } }),
        JSON.stringify({ ...valid, scope: "s".repeat(600) }), // over maxMessageBytes
      ]) {
        await raw.publish(channel, forged);
      }
      await raw.publish(channel, JSON.stringify(valid));
      await until(() => got.length === 1, 2_000, "the valid message");
      await sleep(50);
      assert.deepEqual(got, [["s", "i", { ok: true, result: null }]]);
    } finally {
      await bus.close();
    }
  });

  test("Redis away: forward resolves within the command timeout and never throws", async () => {
    const lines: string[] = [];
    const bus = new RedisReplyBus({
      redis: "redis://127.0.0.1:1",
      commandTimeoutMs: 200,
      logger: (line) => lines.push(line),
    });
    try {
      const started = performance.now();
      await bus.forward("nodeDDDDDDD", "s", "i", { ok: true, result: 1 });
      assert.ok(performance.now() - started < 1_000);
      assert.equal(await bus.ready(100), false);
    } finally {
      await bus.close();
    }
  });

  test("options are checked", () => {
    assert.throws(() => new RedisReplyBus({ redis: "" }), /redis/);
    assert.throws(() => new RedisReplyBus({ redis: redis.url, prefix: "{x}" }), /prefix/);
    assert.throws(
      () => new RedisReplyBus({ redis: redis.url, commandTimeoutMs: 2 ** 31 }),
      /commandTimeoutMs/,
    );
  });
});
