/**
 * A 2025-era session's idle expiry cancels its running tasks on every node (docs/tasks.md): two
 * servers on one private redis-server share sessions (`RedisSessionStore`), tasks
 * (`RedisTaskStore`) and cancellation rows, one prefix. Node A keeps sessions an hour, node B a
 * second, so the session always expires through node B's janitor. The session has a task running
 * on node A (another node than the one that expires it) and one on node B (the same node): both
 * handlers see their signals abort and both tasks read cancelled with the session's message,
 * while a polling session's task on node A runs on.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";

import { CancellationRegistry } from "../../src/cancellation/index.js";
import {
  RedisCancellationStore,
  RedisSessionStore,
  RedisTaskStore,
} from "../../src/redis/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { freshPrefix } from "../redis/helpers.js";
import {
  inSession,
  openSession,
  type WatchedRun,
  watchedTask,
  watchedTool,
} from "../tasks/wire.js";

const skip = redisSkipReason();
const SESSION_ENDED = "The session that owned this task ended (closed, or expired while idle).";
const SHORT_TTL_MS = 1_000;

interface Node {
  readonly server: McpServer;
  readonly url: string;
  readonly runs: Map<string, WatchedRun>;
  readonly tasks: RedisTaskStore;
  close(): Promise<void>;
}

describe("session idle expiry cancels its tasks on every node (Redis)", {
  skip: skip ?? false,
}, () => {
  let redis: RedisServer;
  let a: Node;
  let b: Node;

  async function node(prefix: string, sessionTtlMs: number): Promise<Node> {
    const options = { redis: redis.url, prefix, logger: () => {} };
    const rows = new RedisCancellationStore(options);
    const sessions = new RedisSessionStore(options);
    const tasks = new RedisTaskStore(options);
    const ready = await Promise.all([rows.ready(5_000), sessions.ready(5_000), tasks.ready(5_000)]);
    assert.ok(ready.every(Boolean), "the Redis stores are ready");
    const registry = new CancellationRegistry({ store: rows });
    const runs = new Map<string, WatchedRun>();
    const server = createMcpServer({
      name: "session-expiry-redis",
      version: "1.0.0",
      tools: [watchedTool(runs)],
      sessions: { store: sessions, ttlMs: sessionTtlMs },
      tasks: { store: tasks },
      registry,
      onError: false,
    });
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    return {
      server,
      url,
      runs,
      tasks,
      async close() {
        await server.close();
        await registry.close();
        await Promise.all([rows.close(), sessions.close(), tasks.close()]);
      },
    };
  }

  before(async () => {
    redis = await startRedisServer();
    const prefix = freshPrefix("expiry");
    a = await node(prefix, 3_600_000);
    b = await node(prefix, SHORT_TTL_MS);
  });

  after(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
  });

  test("expired through node B: its tasks on node A and on node B are cancelled", async () => {
    const quiet = await openSession(a.url);
    const polling = await openSession(a.url);
    const onA = await watchedTask(a.url, quiet, "quiet-a");
    const onB = await watchedTask(b.url, quiet, "quiet-b");
    const pollingTask = await watchedTask(a.url, polling, "polling-a");
    const aborted = (): boolean =>
      a.runs.get("quiet-a")?.abortedAt != null && b.runs.get("quiet-b")?.abortedAt != null;
    // `polling` stays alive through its tasks/get polls (on node B: its touches count there too).
    for (let round = 0; round < 300 && !aborted(); round++) {
      const read = await inSession(b.url, polling, "tasks/get", { taskId: pollingTask });
      assert.equal(read.json?.result?.status, "working", read.text);
      await delay(100);
    }
    assert.ok(
      a.runs.get("quiet-a")?.abortedAt != null,
      "the run on node A (not the expiring one) aborted",
    );
    assert.ok(
      b.runs.get("quiet-b")?.abortedAt != null,
      "the run on node B (the expiring one) aborted",
    );
    for (const [store, taskId] of [
      [a.tasks, onA],
      [a.tasks, onB],
      [b.tasks, onA],
    ] as const) {
      const record = await store.get(`session:${quiet}`, taskId);
      assert.equal(record?.status, "cancelled");
      assert.equal(record?.statusMessage, SESSION_ENDED);
    }
    for (const url of [a.url, b.url]) {
      const gone = await inSession(url, quiet, "tasks/get", { taskId: onA });
      assert.equal(gone.status, 404, "the session is gone on every node");
    }
    assert.equal(a.runs.get("polling-a")?.abortedAt, null, "the polling session's task runs on");
    assert.equal((await a.tasks.get(`session:${polling}`, pollingTask))?.status, "working");
    const cancelled = await inSession(a.url, polling, "tasks/cancel", { taskId: pollingTask });
    assert.equal(cancelled.json?.result?.status, "cancelled", cancelled.text);
  });
});
