/**
 * A 2025-era session's idle expiry cancels its running tasks, as its `DELETE` does (docs/tasks.md): a real server on 127.0.0.1 with the memory session store and a short `sessions.ttlMs`.
 * One session goes quiet and its task's handler sees its signal abort, the task reads cancelled
 * with the session's message; another session keeps polling (a `tasks/get` is a request, so it
 * keeps its session alive) and its task runs on. The Redis case, with the session expiring on
 * another node, is test/tasks-redis/session-expiry.test.ts.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";

import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { MemoryTaskStore } from "../../src/tasks/memory-task-store.js";
import { inSession, openSession, type WatchedRun, watchedTask, watchedTool } from "./wire.js";

/** Idle sessions are removed after this long (the janitor runs as often). */
const TTL_MS = 1_000;
const SESSION_ENDED = "The session that owned this task ended (closed, or expired while idle).";

describe("session idle expiry cancels the session's tasks (memory session store)", () => {
  let server: McpServer;
  let url: string;
  const runs = new Map<string, WatchedRun>();
  const store = new MemoryTaskStore();

  before(async () => {
    server = createMcpServer({
      name: "session-expiry",
      version: "1.0.0",
      tools: [watchedTool(runs)],
      sessions: { ttlMs: TTL_MS },
      tasks: { store },
      onError: false,
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
  });

  after(async () => {
    await server.close();
  });

  test("the quiet session's task is cancelled at its expiry; the polling session's runs on", async () => {
    const quiet = await openSession(url);
    const polling = await openSession(url);
    const quietTask = await watchedTask(url, quiet, "quiet");
    const pollingTask = await watchedTask(url, polling, "polling");
    const startedAt = Date.now();
    // Keeps `polling` alive with tasks/get until the quiet task's handler saw its signal abort
    // (bounded: expiry is due within two TTLs, the bound leaves room for a loaded machine).
    let aborted = false;
    for (let round = 0; round < 300 && !aborted; round++) {
      const read = await inSession(url, polling, "tasks/get", { taskId: pollingTask });
      assert.equal(read.json?.result?.status, "working", read.text);
      await delay(100);
      aborted = runs.get("quiet")?.abortedAt != null;
    }
    assert.ok(aborted, "the quiet session's task was aborted");
    assert.ok(Date.now() - startedAt >= TTL_MS, "not before the session was idle for ttlMs");
    const quietRecord = await store.get(`session:${quiet}`, quietTask);
    assert.equal(quietRecord?.status, "cancelled");
    assert.equal(quietRecord?.statusMessage, SESSION_ENDED);
    // The session is gone (404); the other one and its task are untouched.
    const gone = await inSession(url, quiet, "tasks/get", { taskId: quietTask });
    assert.equal(gone.status, 404, gone.text);
    assert.equal(runs.get("polling")?.abortedAt, null);
    assert.equal((await store.get(`session:${polling}`, pollingTask))?.status, "working");
    const cancelled = await inSession(url, polling, "tasks/cancel", { taskId: pollingTask });
    assert.equal(cancelled.json?.result?.status, "cancelled", cancelled.text);
  });
});
