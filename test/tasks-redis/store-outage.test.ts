/**
 * A task store that cannot be reached (a real redis-server frozen with SIGSTOP) answers task
 * requests with the documented outage error: HTTP 503, `Retry-After: 1`, JSON-RPC -32603 saying
 * to retry, never a bare internal error nor "task not found"; once Redis answers again the same
 * requests work.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { sleepTool } from "../../src/cli/demo-tools.js";
import { RedisTaskStore } from "../../src/redis/index.js";
import { createMcpServer } from "../../src/server/index.js";
import { postFrom } from "../abuse/post-from.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { freshPrefix } from "../redis/helpers.js";

const skip = redisSkipReason();

function call(id: number, method: string, params: Record<string, unknown>) {
  return { jsonrpc: "2.0", id, method, params };
}

describe("the task store's outage on the wire", { skip: skip ?? false }, () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedisServer();
  });
  after(async () => {
    await redis?.stop();
  });

  test("503, Retry-After and a retry hint while Redis is frozen; served again after", async () => {
    const store = new RedisTaskStore({
      redis: redis.url,
      prefix: freshPrefix("outage"),
      commandTimeoutMs: 200,
      logger: () => {},
    });
    assert.ok(await store.ready(5_000));
    const server = createMcpServer({ tools: [sleepTool], tasks: { store }, onError: false });
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    try {
      const created = await postFrom(
        url,
        "127.0.0.2",
        call(1, "tools/call", { name: "sleep", arguments: { ms: 60_000 }, task: {} }),
      );
      const taskId = JSON.parse(created.text).result?.task?.taskId as string;
      assert.equal(typeof taskId, "string", created.text);
      redis.freeze();
      try {
        for (const body of [
          call(2, "tasks/get", { taskId }),
          call(3, "tools/call", { name: "sleep", arguments: { ms: 1 }, task: {} }),
        ]) {
          const answer = await postFrom(url, "127.0.0.2", body);
          assert.equal(answer.status, 503, answer.text);
          assert.equal(answer.headers["retry-after"], "1");
          const error = JSON.parse(answer.text).error;
          assert.equal(error.code, -32603);
          assert.match(error.message, /unavailable; retry/);
        }
      } finally {
        redis.thaw();
      }
      const deadline = Date.now() + 10_000;
      for (;;) {
        const read = await postFrom(url, "127.0.0.2", call(4, "tasks/get", { taskId }));
        if (JSON.parse(read.text).result?.status === "working") break;
        assert.ok(Date.now() < deadline, `not served again: ${read.text}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await server.close();
      await store.close();
    }
  });
});
