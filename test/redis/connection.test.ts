/**
 * RedisConnection: the one connection set-up of the Redis stores and buses: an owned connection
 * from a URL, a borrowed ioredis client left open (and lazily connected), subscribers quit on
 * close, listeners removed from a borrowed client, outages reported once.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Redis } from "ioredis";

import { InvalidOptionError } from "../../src/errors.js";
import { RedisConnection } from "../../src/redis/connection/connection.js";
import { OutageMonitor } from "../../src/redis/connection/outage-monitor.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";

const skip = redisSkipReason();

function untilStatus(client: { status: string }, status: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 5_000;
    const poll = () => {
      if (client.status === status) resolve();
      else if (Date.now() > deadline) reject(new Error(`status ${client.status}, not ${status}`));
      else setTimeout(poll, 10);
    };
    poll();
  });
}

describe("RedisConnection", () => {
  it("refuses a redis option that is neither a URL nor an ioredis client", () => {
    const monitor = new OutageMonitor(() => {}, "changes");
    for (const redis of ["", 6379, null, undefined, {}]) {
      assert.throws(
        () => new RedisConnection({ redis, timeoutMs: 1_000, monitor }),
        (error: unknown) => error instanceof InvalidOptionError && /redis/.test(error.message),
      );
    }
  });

  describe("on a redis-server", { skip: skip ?? false }, () => {
    let server: RedisServer;
    before(async () => {
      server = await startRedisServer();
    });
    after(() => server.stop());

    it("owns a connection made from a URL and quits it, with its subscribers, on close", async () => {
      const monitor = new OutageMonitor(() => {}, "changes");
      const connection = new RedisConnection({ redis: server.url, timeoutMs: 1_000, monitor });
      assert.equal(connection.owned, true);
      const subscriber = connection.subscriber("conduit-mcp-test-sub");
      await untilStatus(connection.client, "ready");
      await untilStatus(subscriber, "ready");
      assert.equal(await subscriber.client("GETNAME"), "conduit-mcp-test-sub");
      await connection.close();
      await untilStatus(connection.client, "end");
      await untilStatus(subscriber, "end");
    });

    it("borrows a client: connects a lazy one, leaves it open, removes its listeners on close", async () => {
      const client = new Redis(server.url, { lazyConnect: true, keyPrefix: "app:" });
      try {
        const monitor = new OutageMonitor(() => {}, "changes");
        const before = client.listenerCount("error");
        const connection = new RedisConnection({ redis: client, timeoutMs: 1_000, monitor });
        assert.equal(connection.owned, false);
        assert.equal(connection.keyPrefix, "app:");
        connection.on("ready", () => {});
        assert.equal(client.status, "wait", "not connected before connect()");
        connection.connect();
        await untilStatus(client, "ready");
        const subscriber = connection.subscriber();
        await untilStatus(subscriber, "ready");
        await connection.close();
        assert.equal(client.status, "ready", "the caller's client stays open");
        assert.equal(await client.ping(), "PONG");
        assert.equal(client.listenerCount("error"), before);
        assert.equal(client.listenerCount("ready"), 0);
        assert.equal(client.listenerCount("close"), 0);
        await untilStatus(subscriber, "end");
      } finally {
        client.disconnect();
      }
    });

    it("reports an outage once, and not the close it makes itself", async () => {
      const lines: string[] = [];
      const monitor = new OutageMonitor((line) => lines.push(line), "changes");
      const connection = new RedisConnection({ redis: server.url, timeoutMs: 1_000, monitor });
      connection.on("ready", () => monitor.up());
      await untilStatus(connection.client, "ready");
      await server.pause();
      await new Promise<void>((resolve) => {
        const poll = () => (monitor.isDown ? resolve() : setTimeout(poll, 10));
        poll();
      });
      await server.start();
      await untilStatus(connection.client, "ready");
      assert.equal(monitor.isDown, false);
      await connection.close();
      assert.equal(monitor.isDown, false, "closing is not an outage");
      assert.equal(lines.length, 1);
      assert.match(lines[0] ?? "", /change feed unreachable/);
    });
  });
});
