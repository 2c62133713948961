/**
 * What a long call's in-flight entry costs Redis, counted with `INFO commandstats` on a private
 * redis-server: its share is SADD (the node's membership), HSET of the node's list and HSET of the
 * key's entry, its removal two HDELs, each a pipeline of plain commands, no script (a script costs
 * Redis several times the commands it runs). Another node sees the entry in between; a dead
 * node's shared entries are still found and removed by the lease sweep.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Redis } from "ioredis";

import { RedisCancellationStore } from "../../src/redis/index.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { commandCalls, commandsBetween, freshPrefix } from "./helpers.js";

const skip = redisSkipReason();

describe("RedisCancellationStore: in-flight entries as plain commands", {
  skip: skip ?? false,
}, () => {
  let server: RedisServer;
  let inspect: Redis;
  const stores: RedisCancellationStore[] = [];
  async function make(prefix: string, nodeId: string, leaseMs = 15_000) {
    const store = new RedisCancellationStore({
      redis: server.url,
      prefix,
      nodeId,
      leaseMs,
      shareAfterMs: 0,
      logger: () => {},
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
    await Promise.all(stores.map((s) => s.close().catch(() => {})));
    inspect?.disconnect();
    await server?.stop();
  });

  it("a share is SADD and two HSETs, a removal two HDELs; no script", async () => {
    const prefix = freshPrefix("inflight-plain");
    const a = await make(prefix, "node-a");
    const b = await make(prefix, "node-b");
    const t0 = await commandCalls(inspect);
    await a.addInFlight("principal:alice", "r1", "h1");
    const shared = Object.fromEntries(commandsBetween(t0, await commandCalls(inspect)));
    assert.deepEqual(shared, { sadd: 1, hset: 2 });
    assert.equal(await b.isInFlight("principal:alice", "r1"), true, "another node sees it");
    const t1 = await commandCalls(inspect);
    await a.removeInFlight("principal:alice", "r1", "h1");
    assert.deepEqual(Object.fromEntries(commandsBetween(t1, await commandCalls(inspect))), {
      hdel: 2,
    });
    assert.equal(await b.isInFlight("principal:alice", "r1"), false);
    assert.equal(await inspect.hlen(`{${prefix}}:nf:node-a`), 0, "the node's list is empty again");
  });

  it("a dead node's shared entries are found through its list and removed once its lease lapses", async () => {
    const prefix = freshPrefix("inflight-reap");
    const deadClient = new Redis(server.url);
    const dead = new RedisCancellationStore({
      redis: deadClient,
      prefix,
      nodeId: "node-dead",
      leaseMs: 600,
      shareAfterMs: 0,
      logger: () => {},
    });
    stores.push(dead);
    assert.ok(await dead.ready(5_000));
    const live = await make(prefix, "node-live");
    await dead.addInFlight("ip:203.0.113.7", "r9", "h9");
    assert.equal(await live.isInFlight("ip:203.0.113.7", "r9"), true);
    // The node dies: its connection is gone, its lease lapses.
    deadClient.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 800));
    const removed = await live.cleanup(Number.POSITIVE_INFINITY, Date.now());
    assert.equal(removed.inFlightRemoved, 1);
    assert.equal(await live.isInFlight("ip:203.0.113.7", "r9"), false);
  });
});
