/**
 * The task store contract (test/tasks/task-store-contract.ts) against `RedisTaskStore` on a real
 * private redis-server, each store under a fresh prefix so the tests share nothing.
 */
import { after, before, describe } from "node:test";

import { RedisTaskStore } from "../../src/redis/index.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { freshPrefix } from "../redis/helpers.js";
import { runTaskStoreContract } from "../tasks/task-store-contract.js";

const skip = redisSkipReason();

describe("RedisTaskStore contract", { skip: skip ?? false }, () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server?.stop();
  });

  runTaskStoreContract("RedisTaskStore", async (options) => {
    const store = new RedisTaskStore({
      redis: server.url,
      prefix: freshPrefix("tasks"),
      logger: () => {},
      ...options,
    });
    if (!(await store.ready(5_000))) throw new Error("task store not ready within 5 s");
    return store;
  });
});
