/**
 * Three `conduit-mcp serve <probe module> --redis` processes on one private Redis, two principals
 * (bearer tokens), tasks over the 2025-11-25 wire
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks):
 * - a task created on node 1, polled on node 2 and cancelled on node 3: the handler on node 1 sees
 *   its signal abort within 50 ms of the cancel being sent (median of a batch of 9, up to 3 batches
 *   on a busy machine; node 1 prints the abort time, comparable across processes), the task reads
 *   cancelled on every node, and no in-flight entry or running-task entry is left in Redis;
 * - tenant isolation across nodes: bob's get/cancel/result/list of alice's task id, and a sweep of
 *   guessed ids, get exactly the answer of an unknown task on every node, and alice's handler runs on;
 * - quota under a flood: alice floods creates through every node at once; exactly her quota is
 *   created, the rest is refused with a clear error, while bob is served;
 * - Redis stalled (SIGSTOP): reading or creating a task is an internal error, never "unknown
 *   task" (the task store fails closed), and the task is there again once Redis answers;
 * - a node killed with SIGKILL: its running tasks read failed (with the orphan message) on the
 *   other nodes within two leases. (Last: it kills node 3.)
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import type { Redis } from "ioredis";

import { newTaskId, ORPHANED_TASK_MESSAGE } from "../../src/tasks/index.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { inspector, measureBatches, waitFor } from "../redis-e2e/cluster.js";
import {
  cancelTask,
  createTask,
  epochNow,
  getTask,
  listTasks,
  startTaskNodes,
  type TaskNode,
  taskResult,
} from "./task-nodes.js";

const skip = redisSkipReason();
const ALICE = { authorization: "Bearer alice-secret-0123456789" };
const BOB = { authorization: "Bearer bob-secret-0123456789" };
const LEASE_MS = 1_000;
const QUOTA = 6;
const ROUNDS = 9;
const BOUND_MS = 50;
/** The CLI's key prefix (the stores' default). */
const TAG = "{conduit-mcp}";

describe("three --redis nodes share tasks", { skip: skip ?? false }, () => {
  let server: RedisServer;
  let nodes: TaskNode[] = [];
  let redis: Redis;
  const node = (i: number): TaskNode => nodes[i] as TaskNode;

  before(async () => {
    server = await startRedisServer();
    redis = inspector(server.url);
    nodes = await startTaskNodes(server.url, 3, [
      "--token",
      "alice=alice-secret-0123456789",
      "--token",
      "bob=bob-secret-0123456789",
      "--redis-lease-ms",
      String(LEASE_MS),
      "--max-tasks-per-scope",
      String(QUOTA),
    ]);
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.cli.kill()));
    redis?.disconnect();
    await server?.stop();
  });

  /** Creates a `hold` task for alice on `a`, polls it on `b`, cancels it on `c`; the abort delay. */
  async function round(a: TaskNode, b: TaskNode, c: TaskNode, tag: string): Promise<number> {
    const created = await createTask(a.url, "hold", { tag, ms: 60_000 }, ALICE);
    assert.ok(created.task, JSON.stringify(created));
    const { taskId } = created.task;
    assert.equal((await getTask(b.url, taskId, ALICE)).task?.status, "working");
    const sent = epochNow();
    const cancelled = await cancelTask(c.url, taskId, ALICE);
    assert.equal(cancelled.task?.status, "cancelled", JSON.stringify(cancelled));
    const abortedAt = await a.abortOf(tag, 5_000);
    assert.ok(abortedAt !== null, `${tag}: the handler on its node never saw the cancel`);
    for (const n of nodes) {
      assert.equal((await getTask(n.url, taskId, ALICE)).task?.status, "cancelled");
    }
    return abortedAt - sent;
  }

  it("created on node 1, polled on node 2, cancelled on node 3: node 1's handler aborts within 50 ms", async (t) => {
    const warm = await round(node(0), node(1), node(2), "warm");
    let i = 0;
    const { best, report } = await measureBatches(
      (label) => {
        i++;
        // Rotate the roles so that every node creates, polls and cancels.
        return round(node(i % 3), node((i + 1) % 3), node((i + 2) % 3), `x-${label}`);
      },
      ROUNDS,
      BOUND_MS,
    );
    t.diagnostic(
      `tasks/cancel sent on node C → abort seen by the handler on node A: ${report} (warm-up ${warm.toFixed(1)} ms)`,
    );
    assert.ok(best.p50 <= BOUND_MS, report);
    assert.ok(best.max < 2_000, report);
    // Nothing stays in flight: no in-flight entry of the registry, no running task of any node.
    assert.ok(
      await waitFor(async () => (await redis.keys(`${TAG}:f:*`)).length === 0, 5_000),
      "in-flight entries left behind",
    );
    for (const key of await redis.keys(`${TAG}:trun:*`)) {
      assert.equal(await redis.scard(key), 0, `${key} still lists running tasks`);
    }
    // Nor a cancellation row: a cancelled task's row would count against alice's row quota (the
    // one her ordinary cancels use) until its TTL.
    assert.ok(
      await waitFor(async () => (await redis.zcard(`${TAG}:s:principal:alice`)) === 0, 5_000),
      `cancellation rows left behind: ${await redis.zcard(`${TAG}:s:principal:alice`)}`,
    );
  });

  it("another principal, on any node, learns and changes nothing of alice's task", async () => {
    const created = await createTask(node(0).url, "hold", { tag: "iso", ms: 60_000 }, ALICE);
    assert.ok(created.task);
    const { taskId } = created.task;
    // What an unknown task gets: the reference answers every attempt of bob's must match.
    const nobody = newTaskId();
    const unknownGet = (await getTask(node(1).url, nobody, BOB)).error;
    const unknownCancel = (await cancelTask(node(1).url, nobody, BOB)).error;
    const unknownResult = (await taskResult(node(1).url, nobody, BOB)).message?.error;
    assert.ok(unknownGet && unknownCancel && unknownResult, "an unknown task id must be refused");
    const keysBefore = (await redis.keys(`${TAG}:t*`)).sort();
    for (const n of nodes) {
      assert.deepEqual((await getTask(n.url, taskId, BOB)).error, unknownGet);
      assert.deepEqual((await cancelTask(n.url, taskId, BOB)).error, unknownCancel);
      assert.deepEqual((await taskResult(n.url, taskId, BOB)).message?.error, unknownResult);
      assert.deepEqual((await listTasks(n.url, BOB)).ids, []);
    }
    for (let g = 0; g < 60; g++) {
      const guess = newTaskId();
      const n = node(g % 3);
      assert.deepEqual((await getTask(n.url, guess, BOB)).error, unknownGet);
      assert.deepEqual((await cancelTask(n.url, guess, BOB)).error, unknownCancel);
    }
    assert.deepEqual((await redis.keys(`${TAG}:t*`)).sort(), keysBefore, "bob wrote nothing");
    assert.equal(node(0).aborts.has("iso"), false, "bob's attempts reached alice's handler");
    assert.equal((await getTask(node(2).url, taskId, ALICE)).task?.status, "working");
    assert.ok((await listTasks(node(1).url, ALICE)).ids?.includes(taskId));
    assert.equal((await cancelTask(node(1).url, taskId, ALICE)).task?.status, "cancelled");
    assert.notEqual(await node(0).abortOf("iso", 5_000), null);
  });

  it("a flood from alice through every node stops at her quota while bob is served", async () => {
    // Alice's earlier tasks are all terminal: at her quota each create drops one of them first,
    // so exactly QUOTA long tasks end up running and every later create is refused.
    const attempts = 30;
    const answers = await Promise.all(
      Array.from({ length: attempts }, (_, k) =>
        createTask(node(k % 3).url, "hold", { tag: `flood-${k}`, ms: 60_000 }, ALICE),
      ),
    );
    const bob = await createTask(node(2).url, "hold", { tag: "bob-served", ms: 60_000 }, BOB);
    assert.ok(bob.task, `bob was not served: ${JSON.stringify(bob)}`);
    const created = answers.filter((a) => a.task !== undefined);
    const refused = answers.filter((a) => a.error !== undefined);
    assert.equal(created.length, QUOTA, "exactly alice's quota of running tasks");
    assert.equal(refused.length, attempts - QUOTA);
    for (const r of refused) assert.match(r.error?.message ?? "", /limit|quota|too many/i);
    assert.equal((await getTask(node(0).url, bob.task.taskId, BOB)).task?.status, "working");
    // Clean up: every running task is cancelled, on a node other than its own.
    for (const [k, a] of answers.entries()) {
      if (a.task !== undefined) {
        assert.equal(
          (await cancelTask(node((k + 1) % 3).url, a.task.taskId, ALICE)).task?.status,
          "cancelled",
        );
      }
    }
    assert.equal((await cancelTask(node(1).url, bob.task.taskId, BOB)).task?.status, "cancelled");
  });

  it("while Redis stalls, task requests get an internal error (never 'unknown task'); then work again", async () => {
    const created = await createTask(node(0).url, "hold", { tag: "stall", ms: 60_000 }, ALICE);
    assert.ok(created.task);
    const { taskId } = created.task;
    server.freeze();
    try {
      const read = await getTask(node(1).url, taskId, ALICE);
      assert.equal(read.error?.code, -32603, JSON.stringify(read));
      assert.doesNotMatch(read.error?.message ?? "", /not found|redis/i);
      const refused = await createTask(node(2).url, "hold", { tag: "stall-2", ms: 1_000 }, ALICE);
      assert.equal(refused.error?.code, -32603, JSON.stringify(refused));
    } finally {
      server.thaw();
    }
    assert.ok(
      await waitFor(
        async () => (await getTask(node(1).url, taskId, ALICE)).task?.status === "working",
        10_000,
      ),
      "the task reads working again once Redis answers",
    );
    assert.equal((await cancelTask(node(2).url, taskId, ALICE)).task?.status, "cancelled");
    assert.notEqual(await node(0).abortOf("stall", 5_000), null);
  });

  it("a node killed with SIGKILL leaves its running tasks failed, found within two leases", async (t) => {
    const victim = node(2);
    const running: string[] = [];
    for (const tag of ["dead-1", "dead-2"]) {
      const created = await createTask(victim.url, "hold", { tag, ms: 60_000 }, ALICE);
      assert.ok(created.task);
      running.push(created.task.taskId);
    }
    victim.cli.child.kill("SIGKILL");
    await victim.cli.exited;
    const killedAt = performance.now();
    const found = await waitFor(async () => {
      const read = await getTask(node(0).url, running[0] as string, ALICE);
      return read.task?.status === "failed";
    }, 4 * LEASE_MS);
    const took = performance.now() - killedAt;
    t.diagnostic(
      `SIGKILL → task read failed on another node: ${took.toFixed(0)} ms (lease ${LEASE_MS} ms)`,
    );
    assert.ok(found, `still not failed ${took.toFixed(0)} ms after the kill`);
    assert.ok(took <= 2 * LEASE_MS, `failed after ${took.toFixed(0)} ms (lease ${LEASE_MS} ms)`);
    for (const taskId of running) {
      const read = await getTask(node(1).url, taskId, ALICE);
      assert.equal(read.task?.status, "failed");
      assert.equal(read.task?.statusMessage, ORPHANED_TASK_MESSAGE);
    }
    const result = await taskResult(node(1).url, running[1] as string, ALICE);
    assert.ok(result.message?.error, "tasks/result of an orphaned task is the request's error");
  });
});
