/**
 * `RedisTaskStore` on a private Redis Cluster (3 masters + 3 replicas), two stores standing for
 * two nodes: every script touches one slot (no CROSSSLOT error for any operation, in any shard),
 * the scopes spread over the masters, and a task created through one store is read, listed,
 * cancelled (heard by the other) and swept through the other.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Cluster } from "ioredis";

import { RedisTaskStore } from "../../src/redis/index.js";
import { newTaskId, type TaskChange } from "../../src/tasks/index.js";
import {
  type RedisClusterHandle,
  redisClusterSkipReason,
  startRedisCluster,
} from "../helpers/redis-cluster.js";
import { redisSkipReason } from "../helpers/redis-server.js";

const skip = redisSkipReason() ?? redisClusterSkipReason();
const PREFIX = "conduit-tasks-cluster";

function clusterClient(ports: readonly number[]): Cluster {
  const client = new Cluster(
    ports.map((port) => ({ host: "127.0.0.1", port })),
    {
      enableOfflineQueue: false,
      clusterRetryStrategy: (times: number) => Math.min(100 * times, 1_000),
      redisOptions: { maxRetriesPerRequest: 1, connectTimeout: 2_000 },
    },
  );
  client.on("error", () => {});
  return client;
}

describe("RedisTaskStore on a Redis Cluster", { skip: skip ?? false }, () => {
  let cluster: RedisClusterHandle;
  const clients: Cluster[] = [];
  const stores: RedisTaskStore[] = [];
  const errors: string[] = [];

  async function store(nodeId: string): Promise<RedisTaskStore> {
    const client = clusterClient(cluster.ports);
    clients.push(client);
    const s = new RedisTaskStore({
      redis: client,
      prefix: PREFIX,
      nodeId,
      leaseMs: 3_000,
      maxTasksPerScope: 3,
      logger: (line) => errors.push(line),
    });
    stores.push(s);
    if (!(await s.ready(15_000))) throw new Error(`${nodeId}: task store not ready on the cluster`);
    return s;
  }

  before(async () => {
    cluster = await startRedisCluster();
  });
  after(async () => {
    await Promise.all(stores.map((s) => s.close().catch(() => {})));
    for (const client of clients) client.disconnect();
    await cluster?.stop();
  });

  it("every operation of many scopes runs in one slot, spread over the masters", async (t) => {
    const a = await store("node-a");
    const b = await store("node-b");
    const heard: TaskChange[] = [];
    a.onChange((change) => heard.push(change));
    const created: Array<{ scope: string; taskId: string }> = [];
    for (let i = 0; i < 24; i++) {
      const scope = `principal:tenant-${i}`;
      for (let k = 0; k < 3; k++) {
        const outcome = await a.create({
          scope,
          taskId: newTaskId(),
          ttlMs: 60_000,
          pollIntervalMs: 1_000,
        });
        assert.ok(outcome.ok, `create in ${scope}`);
        created.push({ scope, taskId: outcome.task.taskId });
      }
      assert.deepEqual(
        await a.create({ scope, taskId: newTaskId(), ttlMs: 1, pollIntervalMs: 1 }),
        { ok: false, error: "task_limit_reached" },
      );
    }
    for (const [i, { scope, taskId }] of created.entries()) {
      assert.equal((await b.get(scope, taskId))?.status, "working");
      if (i % 3 === 0) assert.equal((await b.cancel(scope, taskId, "stop")).outcome, "cancelled");
      else if (i % 3 === 1) {
        assert.equal(await b.update(scope, taskId, { statusMessage: "half" }), true);
        assert.equal(
          await b.finish(scope, taskId, { status: "completed", result: "{}" }),
          "finished",
        );
      }
    }
    for (let i = 0; i < 24; i++) {
      const page = await b.list(`principal:tenant-${i}`, { after: null, limit: 10 });
      assert.equal(page?.tasks.length, 3);
      assert.equal((await b.cancelScope(`principal:tenant-${i}`, "closed")).length, 1);
    }
    assert.deepEqual(await b.sweep(Date.now()), { expired: 0, orphaned: 0 });
    assert.equal(await b.size(), 72);
    // Every change of the other store reached this one (one channel across the cluster).
    for (let i = 0; i < 200 && heard.length < 72; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(heard.length, 72);
    const masters = (await cluster.clusterNodes()).filter((n) => n.role === "master");
    const counts = masters.map((m) => Number(cluster.cli(m.port, "DBSIZE").trim()));
    t.diagnostic(`keys per master: ${counts.join(", ")}`);
    assert.ok(counts.filter((n) => n > 0).length >= 2, `one master holds everything: ${counts}`);
    assert.deepEqual(errors, [], "no script failed (a CROSSSLOT error would be logged)");
  });
});
