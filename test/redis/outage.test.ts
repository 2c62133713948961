/**
 * Redis going away and coming back: nothing throws or hangs, writes are
 * dropped, `record` fails open, one log line and one `conduit-mcp:store:outage` event per outage,
 * and when Redis returns the same store objects resume cross-node delivery and re-assert their
 * in-flight entries by themselves.
 */
import assert from "node:assert/strict";
import diagnosticsChannel from "node:diagnostics_channel";
import { after, before, describe, it } from "node:test";

import type { RemoteCancellation } from "../../src/cancellation/types.js";
import { ChannelName } from "../../src/diagnostics.js";
import type { StoreOutageMessage } from "../../src/redis/index.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { Fixture, freshPrefix, sleep } from "./helpers.js";

const skip = redisSkipReason();

/** Runs `op` and asserts it settles (resolves) within `ms`. */
async function bounded<T>(label: string, ms: number, op: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const value = await op();
  const took = performance.now() - start;
  assert.ok(took < ms, `${label} took ${took.toFixed(0)} ms`);
  return value;
}

describe("RedisCancellationStore during a Redis outage", { skip: skip ?? false }, () => {
  let server: RedisServer;
  const events: StoreOutageMessage[] = [];
  const onOutage = (message: unknown) => events.push(message as StoreOutageMessage);

  before(async () => {
    server = await startRedisServer();
    diagnosticsChannel.subscribe(ChannelName.storeOutage, onOutage);
  });
  after(async () => {
    diagnosticsChannel.unsubscribe(ChannelName.storeOutage, onOutage);
    await server?.stop();
  });

  it("stopped mid-run: fails open, reports once, resumes delivery and re-asserts entries after a restart", async () => {
    const fx = new Fixture(server.url);
    events.length = 0;
    try {
      const prefix = freshPrefix("outage");
      const logA: string[] = [];
      const logB: string[] = [];
      // Shared at once (shareAfterMs 0): the test follows entries through the outage.
      const a = await fx.store({
        prefix,
        nodeId: "node-a",
        shareAfterMs: 0,
        logger: (m) => logA.push(m),
      });
      const b = await fx.store({ prefix, nodeId: "node-b", logger: (m) => logB.push(m) });
      const heard: RemoteCancellation[] = [];
      a.onRemoteCancellation((event) => heard.push(event));
      await a.addInFlight("s", "running", "h1");
      assert.equal(await b.isInFlight("s", "running"), true);

      await server.pause();
      const row = { scope: "s", requestId: "during", reason: null, cancelledAt: Date.now() };
      // A burst of request-path calls while Redis is gone: each settles fast, none throws.
      for (let i = 0; i < 25; i++) {
        assert.equal(
          await bounded("record", 1_500, () => b.record(row, "notification")),
          "recorded",
        );
        assert.equal(await bounded("has", 1_500, () => b.has("s", "during")), false);
        assert.equal(await bounded("reason", 1_500, () => b.reason("s", "during")), undefined);
        assert.equal(await bounded("isInFlight", 1_500, () => b.isInFlight("s", "running")), false);
        await bounded("addInFlight", 1_500, () => a.addInFlight("s", `new-${i}`, `n${i}`));
        await bounded("removeInFlight", 1_500, () => a.removeInFlight("s", `new-${i}`, `n${i}`));
        assert.equal(await bounded("clear", 1_500, () => b.clear("s", "during")), false);
        assert.deepEqual(await bounded("cleanup", 1_500, () => b.cleanup(1, Date.now())), {
          removed: 0,
          inFlightRemoved: 0,
        });
        assert.equal(await bounded("size", 1_500, () => b.size()), 0);
      }
      await a.addInFlight("s", "started-during-outage", "h2");
      assert.equal(logA.length, 1, `node A logged: ${logA.join(" | ")}`);
      assert.equal(logB.length, 1, `node B logged: ${logB.join(" | ")}`);
      assert.match(logB[0] ?? "", /unreachable.*failing open/);
      assert.deepEqual(
        events.map((e) => e.state),
        ["down", "down"],
        "one down event per store",
      );
      assert.equal(events[0]?.store, "redis");
      assert.equal(typeof events[0]?.error, "string");

      // Redis comes back empty (no persistence): same store objects, no restart of the nodes.
      await server.start();
      assert.ok(await a.ready(10_000), "node A reconnected and resubscribed");
      assert.ok(await b.ready(10_000), "node B reconnected and resubscribed");
      assert.deepEqual(
        events.map((e) => e.state),
        ["down", "down", "up", "up"],
      );
      // Node A re-asserted its live entries, including the one tracked during the outage.
      assert.equal(await b.isInFlight("s", "running"), true);
      assert.equal(await b.isInFlight("s", "started-during-outage"), true);
      assert.equal(await b.isInFlight("s", "new-3"), false);
      // Cross-node delivery works again.
      assert.equal(
        await b.record(
          { scope: "s", requestId: "after", reason: "back", cancelledAt: Date.now() },
          "notification",
        ),
        "recorded",
      );
      const deadline = Date.now() + 1_000;
      while (heard.length === 0 && Date.now() < deadline) await sleep(5);
      assert.deepEqual(heard, [
        { scope: "s", requestId: "after", reason: "back", source: "notification" },
      ]);
      assert.equal(logA.length + logB.length, 2, "no further log lines");
    } finally {
      await fx.close();
    }
  });

  it("down at start: calls fail open at once, then the store connects by itself", async () => {
    const fx = new Fixture(server.url);
    events.length = 0;
    try {
      await server.pause();
      const log: string[] = [];
      const store = await fx.store({ logger: (m) => log.push(m) }, false);
      assert.equal(await store.ready(300), false);
      const row = { scope: "s", requestId: "1", reason: null, cancelledAt: Date.now() };
      assert.equal(await bounded("record", 200, () => store.record(row, "library")), "recorded");
      assert.equal(await bounded("has", 200, () => store.has("s", "1")), false);
      assert.equal(log.length, 1);
      assert.deepEqual(
        events.map((e) => e.state),
        ["down"],
      );
      await server.start();
      assert.ok(await store.ready(10_000));
      assert.equal(await store.record(row, "library"), "recorded");
      assert.equal(await store.has("s", "1"), true);
      assert.deepEqual(
        events.map((e) => e.state),
        ["down", "up"],
      );
      assert.equal(log.length, 1);
    } finally {
      await fx.close();
    }
  });

  it("hung (SIGSTOP): calls give up after commandTimeoutMs, report once, recover on the next answer", async () => {
    const fx = new Fixture(server.url);
    events.length = 0;
    try {
      const log: string[] = [];
      const store = await fx.store({ logger: (m) => log.push(m), commandTimeoutMs: 200 });
      server.freeze();
      try {
        const row = { scope: "s", requestId: "1", reason: null, cancelledAt: Date.now() };
        for (let i = 0; i < 3; i++) {
          assert.equal(
            await bounded("record", 600, () => store.record(row, "library")),
            "recorded",
          );
          assert.equal(await bounded("isInFlight", 600, () => store.isInFlight("s", "1")), false);
        }
        assert.equal(log.length, 1);
        assert.deepEqual(
          events.map((e) => e.state),
          ["down"],
        );
      } finally {
        server.thaw();
      }
      const deadline = Date.now() + 3_000;
      while (!(await store.has("s", "1")) && Date.now() < deadline) await sleep(20);
      assert.equal(await store.has("s", "1"), true);
      assert.deepEqual(
        events.map((e) => e.state),
        ["down", "up"],
      );
      assert.equal(log.length, 1);
    } finally {
      await fx.close();
    }
  });
});
