/**
 * Nodes whose wall clocks disagree, on one Redis: three `conduit-mcp serve <probe module> --redis
 * --sessions` processes, one on time, one 90 s ahead and one 90 s behind (test/fixtures/clock-skew.mjs
 * moves `Date.now()`, `new Date()` and `performance.timeOrigin`; the lease is 1 s, so every node's
 * janitor and task sweep run several times meanwhile). Tasks over the 2025-11-25 wire
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks).
 *
 * A skewed node must not expire or take over another node's live work:
 * - a running task of each node stays `working` on every node, its handler never aborted (no
 *   lease or in-flight entry judged dead by a skewed janitor), and a cancel sent to another node
 *   still reaches it;
 * - a finished task whose ttl (60 s) is shorter than the skew is still readable on every node;
 * - task stamps come from Redis's clock, not the creating node's (within seconds of real time);
 * - a session created on a skewed node is served by the others after their janitors ran.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { postFrom } from "../abuse/post-from.js";
import { startCli } from "../cli/cli-process.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import {
  cancelTask,
  createTask,
  getTask,
  PROBE_MODULE,
  type TaskNode,
  taskResult,
  wrapNode,
} from "./task-nodes.js";

const skip = redisSkipReason();
const AUTH = { authorization: "Bearer alice-secret-0123456789" };
const LEASE_MS = 1_000;
const SKEW_MS = 90_000;
const V = "2025-11-25";

async function skewedNode(redisUrl: string, skewMs: number): Promise<TaskNode> {
  const cli = await startCli(
    [
      "serve",
      PROBE_MODULE,
      "--port",
      "0",
      "--redis",
      redisUrl,
      "--sessions",
      "--token",
      "alice=alice-secret-0123456789",
      "--redis-lease-ms",
      String(LEASE_MS),
    ],
    {
      nodeArgs: ["--import", "./test/fixtures/clock-skew.mjs"],
      env: { CONDUIT_TEST_CLOCK_SKEW_MS: String(skewMs) },
    },
  );
  return wrapNode(cli);
}

async function openSession(url: string): Promise<string> {
  const init = await postFrom(
    url,
    "127.0.0.2",
    {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: V, capabilities: {}, clientInfo: { name: "skew", version: "1" } },
    },
    AUTH,
  );
  const id = init.headers["mcp-session-id"];
  assert.equal(typeof id, "string", init.text);
  return id as string;
}

async function listTools(url: string, session: string): Promise<number> {
  const listed = await postFrom(
    url,
    "127.0.0.2",
    { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
    { ...AUTH, "mcp-session-id": session, "mcp-protocol-version": V },
  );
  return listed.status;
}

describe("nodes with skewed clocks on one Redis", { skip: skip ?? false }, () => {
  let server: RedisServer;
  let nodes: TaskNode[] = [];

  before(async () => {
    server = await startRedisServer();
    nodes = await Promise.all([0, SKEW_MS, -SKEW_MS].map((skew) => skewedNode(server.url, skew)));
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.cli.kill()));
    await server?.stop();
  });

  it("no node expires or takes over another's live work", async () => {
    const names = ["on time", "ahead", "behind"];
    for (const [i, skew] of [0, SKEW_MS, -SKEW_MS].entries()) {
      const stderr = nodes[i]?.cli.stderr() ?? "";
      assert.match(stderr, new RegExp(`clock skewed by ${skew} ms`), names[i]);
    }
    const running: string[] = [];
    const finished: string[] = [];
    const sessions: string[] = [];
    for (const [i, node] of nodes.entries()) {
      const run = await createTask(node.url, "hold", { tag: `run-${i}`, ms: 60_000 }, AUTH);
      assert.ok(run.task, JSON.stringify(run));
      running.push(run.task.taskId);
      // ttl 60 s, shorter than the skew.
      const done = await createTask(node.url, "hold", { tag: `done-${i}`, ms: 0 }, AUTH);
      assert.ok(done.task, JSON.stringify(done));
      assert.equal(done.task.ttl, 60_000);
      finished.push(done.task.taskId);
      // Stamped by Redis's clock: near this process's, whatever the creating node's.
      const stamped = Date.parse(run.task.createdAt);
      assert.ok(
        Math.abs(stamped - Date.now()) < 10_000,
        `${names[i]}: createdAt ${run.task.createdAt}, now ${new Date().toISOString()}`,
      );
      sessions.push(await openSession(node.url));
    }
    for (const [i, node] of nodes.entries()) {
      const done = await taskResult(node.url, finished[i] as string, AUTH);
      assert.ok(done.message?.result, `${names[i]}: ${JSON.stringify(done.message)}`);
    }

    // Several leases: every node's janitor and task sweep run meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 5 * LEASE_MS));

    for (const [r, node] of nodes.entries()) {
      for (const [i, taskId] of running.entries()) {
        const read = await getTask(node.url, taskId, AUTH);
        assert.equal(
          read.task?.status,
          "working",
          `${names[i]}'s running task, read ${names[r]}: ${JSON.stringify(read)}`,
        );
      }
      for (const [i, taskId] of finished.entries()) {
        const read = await getTask(node.url, taskId, AUTH);
        assert.equal(
          read.task?.status,
          "completed",
          `${names[i]}'s finished task, read ${names[r]}: ${JSON.stringify(read)}`,
        );
      }
      for (const [i, session] of sessions.entries()) {
        assert.equal(
          await listTools(node.url, session),
          200,
          `${names[i]}'s session on ${names[r]}`,
        );
      }
    }
    for (const [i, node] of nodes.entries()) {
      assert.equal(node.aborts.get(`run-${i}`), undefined, `${names[i]}'s handler was aborted`);
    }

    // A cancel sent to another node still reaches each running task's handler.
    for (const [i, node] of nodes.entries()) {
      const other = nodes[(i + 1) % nodes.length] as TaskNode;
      const cancelled = await cancelTask(other.url, running[i] as string, AUTH);
      assert.equal(cancelled.task?.status, "cancelled", JSON.stringify(cancelled));
      assert.notEqual(await node.abortOf(`run-${i}`, 5_000), null, `${names[i]}: not aborted`);
    }
  });
});
