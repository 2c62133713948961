/**
 * A real redis-server restarted without persistence comes back empty. The tasks a node still
 * runs are its own to write again: once Redis answers, the node writes them back (with their
 * creation time, under their bucket's quota), so a client's `tasks/get` finds them, and a result
 * that landed during the outage is not lost. The node says so once in its log.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { RedisTaskStore } from "../../src/redis/index.js";
import { newTaskId } from "../../src/tasks/task-id.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { freshPrefix } from "../redis/helpers.js";
import { until } from "../server/fixtures.js";

const skip = redisSkipReason();
const SCOPE = "ip:127.0.0.5";
const RESULT = '{"content":[{"type":"text","text":"done"}]}';

describe("RedisTaskStore after Redis restarted empty", { skip: skip ?? false }, () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedisServer();
  });
  after(async () => {
    await redis?.stop();
  });

  async function open(logs: string[]): Promise<RedisTaskStore> {
    const store = new RedisTaskStore({
      redis: redis.url,
      prefix: freshPrefix("restart"),
      logger: (line) => logs.push(line),
    });
    assert.ok(await store.ready(5_000), "store ready");
    return store;
  }

  async function created(store: RedisTaskStore): Promise<{ taskId: string; createdAt: number }> {
    const outcome = await store.create({
      scope: SCOPE,
      taskId: newTaskId(),
      ttlMs: 60_000,
      pollIntervalMs: 1_000,
    });
    assert.ok(outcome.ok);
    return { taskId: outcome.task.taskId, createdAt: outcome.task.createdAt };
  }

  /** The task as a reader sees it, once Redis answers again (undefined while it is away). */
  async function read(store: RedisTaskStore, taskId: string) {
    try {
      return await store.get(SCOPE, taskId);
    } catch {
      return undefined;
    }
  }

  test("a running task is written back once Redis answers, then finishes with its result", async () => {
    const logs: string[] = [];
    const store = await open(logs);
    try {
      const task = await created(store);
      await redis.restart();
      await until(async () => (await read(store, task.taskId)) !== undefined, 10_000);
      const back = await store.get(SCOPE, task.taskId);
      assert.equal(back?.status, "working");
      assert.equal(back?.createdAt, task.createdAt);
      assert.equal(
        await store.finish(SCOPE, task.taskId, { status: "completed", result: RESULT }),
        "finished",
      );
      assert.equal((await store.get(SCOPE, task.taskId))?.result, RESULT);
      assert.equal(logs.filter((line) => /Redis lost the records/.test(line)).length, 1);
    } finally {
      await store.close();
    }
  });

  test("a result kept during the outage lands after Redis came back empty", async () => {
    const logs: string[] = [];
    const store = await open(logs);
    try {
      const task = await created(store);
      await redis.pause();
      assert.equal(
        await store.finish(SCOPE, task.taskId, { status: "completed", result: RESULT }),
        "finished",
        "kept locally while Redis is away",
      );
      await redis.start();
      await until(async () => (await read(store, task.taskId))?.status === "completed", 10_000);
      assert.equal((await store.get(SCOPE, task.taskId))?.result, RESULT);
    } finally {
      await store.close();
    }
  });
});
