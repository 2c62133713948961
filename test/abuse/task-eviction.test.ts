/**
 * The task table's global cap as an attack: three addresses (127.0.0.2-4) fill it with running
 * `sleep` tasks, each within its own quota. A fourth address's finished task, result included,
 * must survive every create that follows: the cap evicts from the largest tenants first, never a
 * small tenant's rows before a large tenant's (the memory store and the Redis store alike).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { sleepTool } from "../../src/cli/demo-tools.js";
import { RedisTaskStore } from "../../src/redis/index.js";
import { createMcpServer } from "../../src/server/index.js";
import { MemoryTaskStore } from "../../src/tasks/memory-task-store.js";
import type { TaskStore } from "../../src/tasks/task-store.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { freshPrefix } from "../redis/helpers.js";
import { postFrom } from "./post-from.js";

const PER_ADDRESS = 10;
const CAP = 3 * PER_ADDRESS;

function call(id: number, method: string, params: Record<string, unknown>) {
  return { jsonrpc: "2.0", id, method, params };
}

async function createTask(url: string, from: string, ms: number): Promise<string> {
  const answer = await postFrom(
    url,
    from,
    call(1, "tools/call", { name: "sleep", arguments: { ms }, task: {} }),
  );
  const taskId = JSON.parse(answer.text)?.result?.task?.taskId;
  assert.equal(typeof taskId, "string", answer.text);
  return taskId as string;
}

async function getTask(url: string, from: string, taskId: string) {
  const answer = await postFrom(url, from, call(2, "tasks/get", { taskId }));
  return JSON.parse(answer.text) as { result?: { status: string }; error?: { message: string } };
}

async function attack(store: TaskStore): Promise<void> {
  const server = createMcpServer({ tools: [sleepTool], tasks: { store }, onError: false });
  const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
  try {
    const victim = "127.0.0.9";
    const done = await createTask(url, victim, 1);
    const deadline = Date.now() + 10_000;
    while ((await getTask(url, victim, done)).result?.status !== "completed") {
      assert.ok(Date.now() < deadline, "the victim's task never completed");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Three attackers, each at its own quota, hold every other row of the table, and then keep
    // creating (each create past the cap evicts someone).
    for (const attacker of ["127.0.0.2", "127.0.0.3", "127.0.0.4"]) {
      for (let i = 0; i < PER_ADDRESS; i++) await createTask(url, attacker, 60_000);
    }
    const read = await getTask(url, victim, done);
    assert.equal(read.result?.status, "completed", JSON.stringify(read));
    const result = await postFrom(url, victim, call(3, "tasks/result", { taskId: done }));
    assert.match(result.text, /slept 1 ms/);
  } finally {
    await server.close();
  }
}

describe("the task cap under three addresses' running tasks", () => {
  test("memory store: the victim's finished task and result survive", async () => {
    await attack(new MemoryTaskStore({ maxTasks: CAP, maxTasksPerScope: PER_ADDRESS }));
  });

  const skip = redisSkipReason();
  describe("Redis store", { skip: skip ?? false }, () => {
    let redis: RedisServer;
    before(async () => {
      redis = await startRedisServer();
    });
    after(async () => {
      await redis?.stop();
    });

    test("Redis store: the victim's finished task and result survive", async () => {
      const store = new RedisTaskStore({
        redis: redis.url,
        prefix: freshPrefix("evict"),
        maxTasks: CAP,
        maxTasksPerScope: PER_ADDRESS,
        logger: () => {},
      });
      assert.ok(await store.ready(5_000));
      try {
        await attack(store);
      } finally {
        await store.close();
      }
    });
  });
});
