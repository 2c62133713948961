/**
 * The worker pool is fair between tenants: one scope holds at most `maxWorkersPerScope` workers
 * and `maxQueuePerScope` waiting tasks, and a freed worker goes to the next scope in turn.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { InvalidOptionError } from "../../src/errors.js";
import { isolatedHandler, WorkerPool, WorkerPoolFullError } from "../../src/isolation/index.js";

const TOOLS = new URL("../fixtures/isolated-tools.ts", import.meta.url);
const wait = isolatedHandler(TOOLS, "waitForAbort");
const echo = isolatedHandler(TOOLS, "echo");

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1_000 && !check(); i++) await sleep(5);
  assert.ok(check(), what);
}

describe("WorkerPool: per-scope fairness", () => {
  test("one scope cannot hold every worker: another scope's task runs at once", async () => {
    const pool = new WorkerPool({ maxWorkers: 2, idleTimeoutMs: 100 });
    const hog = new AbortController();
    try {
      assert.equal(pool.options.maxWorkersPerScope, 1, "default: half the workers");
      const hogTasks = [1, 2, 3].map(() =>
        pool.start(wait, {}, { scope: "ip:192.0.2.66", signal: hog.signal }),
      );
      for (const task of hogTasks) task.result.catch(() => {});
      await until(() => pool.busy === 1 && pool.queued === 2, "the hog runs one, queues two");
      const started = performance.now();
      const value = await pool.run(echo, { text: "hi" }, { scope: "ip:198.51.100.1" });
      // Without fairness it would wait for the hog forever; the bound only allows for a loaded machine.
      assert.ok(performance.now() - started < 30_000);
      assert.notEqual(value, undefined);
      assert.deepEqual(
        hogTasks.map((task) => task.state),
        ["running", "queued", "queued"],
        "the hog still waits for its share",
      );
    } finally {
      hog.abort();
      await pool.close();
    }
  });

  test("one scope cannot fill the queue: its 17th waiting task is refused, others still queue", async () => {
    const pool = new WorkerPool({ maxWorkers: 1, maxQueue: 100, idleTimeoutMs: 100 });
    const stop = new AbortController();
    try {
      const running = pool.start(wait, {}, { scope: "ip:198.51.100.1", signal: stop.signal });
      running.result.catch(() => {});
      await until(() => running.state === "running", "a task running");
      const hog = Array.from({ length: 16 }, () =>
        pool.start(wait, {}, { scope: "ip:192.0.2.66", signal: stop.signal }),
      );
      for (const task of hog) task.result.catch(() => {});
      const refused = pool.start(wait, {}, { scope: "ip:192.0.2.66", signal: stop.signal });
      await assert.rejects(refused.result, WorkerPoolFullError);
      const other = pool.start(wait, {}, { scope: "ip:203.0.113.9", signal: stop.signal });
      other.result.catch(() => {});
      assert.equal(other.state, "queued");
      assert.equal(pool.queued, 17);
    } finally {
      stop.abort();
      await pool.close();
    }
  });

  test("a freed worker goes to the next scope in turn, not to the one that queued first", async () => {
    const pool = new WorkerPool({ maxWorkers: 1, maxWorkersPerScope: 1, idleTimeoutMs: 100 });
    const order: string[] = [];
    try {
      const first = new AbortController();
      const holder = pool.start(wait, {}, { scope: "ip:198.51.100.1", signal: first.signal });
      holder.result.catch(() => {});
      await until(() => holder.state === "running", "the holder running");
      const runs = [
        ...["a1", "a2", "a3"].map((tag) => ["ip:192.0.2.66", tag] as const),
        ["ip:203.0.113.9", "b1"] as const,
      ].map(([scope, tag]) => pool.run(echo, { text: tag }, { scope }).then(() => order.push(tag)));
      first.abort();
      await Promise.all(runs);
      assert.deepEqual(order.slice(0, 2), ["a1", "b1"], "b1 ran right after a1, before a2");
    } finally {
      await pool.close();
    }
  });

  test("bad per-scope options are refused at construction", () => {
    for (const bad of [0, -1, 1.5]) {
      assert.throws(() => new WorkerPool({ maxWorkersPerScope: bad }), InvalidOptionError);
      assert.throws(() => new WorkerPool({ maxQueuePerScope: bad }), InvalidOptionError);
    }
  });
});
