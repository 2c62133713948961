/**
 * The contract every {@link TaskStore} must meet, as a reusable suite run against the memory
 * store and the Redis store (docs/architecture.md, "How to add…"). It talks to the store only
 * through the interface and controls time only through the `clock` it hands to `makeStore`.
 *
 * The rules it checks are the ones in src/tasks/task-store.ts's module comment.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { StoreClosedError } from "../../src/errors.js";
import { newTaskId } from "../../src/tasks/task-id.js";
import type { NewTask, TaskChange, TaskRecord, TaskStore } from "../../src/tasks/task-store.js";

/** What a contract test asks of the store factory. */
export interface TaskStoreFactoryOptions {
  maxTasks?: number;
  maxTasksPerScope?: number;
  maxResultBytes?: number;
  maxTaskBytesPerScope?: number;
  maxTaskBytes?: number;
  clock: () => number;
}

/** Builds a fresh, empty store. */
export type TaskStoreFactory = (options: TaskStoreFactoryOptions) => Promise<TaskStore> | TaskStore;

/** A controllable clock: `clock.now` is the time, `clock.advance(ms)` moves it. */
interface TestClock {
  (): number;
  now: number;
  advance(ms: number): void;
}

function testClock(start = 1_700_000_000_000): TestClock {
  const clock = (() => clock.now) as TestClock;
  clock.now = start;
  clock.advance = (ms: number) => {
    clock.now += ms;
  };
  return clock;
}

const ALICE = "principal:alice";
const BOB = "principal:bob";
const CAROL = "principal:carol";

/**
 * Registers the task store contract tests under `describe(name)`.
 *
 * @example
 * ```ts
 * runTaskStoreContract("MemoryTaskStore", (o) => new MemoryTaskStore(o));
 * ```
 */
export function runTaskStoreContract(name: string, makeStore: TaskStoreFactory): void {
  async function withStore(
    options: Omit<TaskStoreFactoryOptions, "clock">,
    body: (store: TaskStore, clock: TestClock) => Promise<void>,
  ): Promise<void> {
    const clock = testClock();
    const store = await makeStore({ ...options, clock });
    try {
      await body(store, clock);
    } finally {
      await store.close();
    }
  }

  /** Creates a task in `scope` (1 ms later than the previous one) and returns its record. */
  async function create(
    store: TaskStore,
    clock: TestClock,
    scope: string,
    extra: Partial<NewTask> = {},
  ): Promise<TaskRecord> {
    clock.advance(1);
    const outcome = await store.create({
      scope,
      taskId: newTaskId(),
      ttlMs: 60_000,
      pollIntervalMs: 1_000,
      ...extra,
    });
    assert.ok(outcome.ok, `create in ${scope} was refused`);
    return outcome.task;
  }

  async function complete(store: TaskStore, task: TaskRecord, result = '{"content":[]}') {
    assert.equal(
      await store.finish(task.scope, task.taskId, { status: "completed", result }),
      "finished",
    );
  }

  /** Every task of `scope`, through list pages of `limit`. */
  async function listAll(store: TaskStore, scope: string, limit = 2): Promise<string[]> {
    const ids: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 1_000; page++) {
      const got = await store.list(scope, { after, limit });
      assert.ok(got !== null);
      assert.ok(got.tasks.length <= limit);
      ids.push(...got.tasks.map((task) => task.taskId));
      if (got.next === null) return ids;
      after = got.next;
    }
    throw new Error("list never ended");
  }

  describe(name, () => {
    it("creates a working task owned by this node, readable at once", async () => {
      await withStore({}, async (store, clock) => {
        const task = await create(store, clock, ALICE, { statusMessage: "starting" });
        assert.equal(task.status, "working");
        assert.equal(task.scope, ALICE);
        assert.equal(task.owner, store.nodeId);
        assert.equal(task.createdAt, clock.now);
        assert.equal(task.lastUpdatedAt, clock.now);
        assert.equal(task.statusMessage, "starting");
        assert.equal(task.ttlMs, 60_000);
        assert.equal(task.pollIntervalMs, 1_000);
        assert.equal(task.expiresAt, null);
        assert.equal(task.result, null);
        assert.equal(task.error, null);
        assert.equal(task.inputRequests, null);
        assert.deepEqual(await store.get(ALICE, task.taskId), task);
        assert.equal(await store.size(), 1);
      });
    });

    it("answers another scope exactly as an unknown task, and changes nothing", async () => {
      await withStore({}, async (store, clock) => {
        const task = await create(store, clock, ALICE);
        const unknown = newTaskId();
        for (const id of [task.taskId, unknown]) {
          assert.equal(await store.get(BOB, id), undefined);
          assert.deepEqual(await store.cancel(BOB, id, "x"), { outcome: "unknown" });
          assert.equal(await store.update(BOB, id, { statusMessage: "x" }), false);
          assert.equal(
            await store.finish(BOB, id, { status: "completed", result: "{}" }),
            "not_running",
          );
        }
        assert.deepEqual(await store.cancelScope(BOB, "x"), []);
        assert.deepEqual(await store.list(BOB, { after: null, limit: 10 }), {
          tasks: [],
          next: null,
        });
        assert.deepEqual(await store.get(ALICE, task.taskId), task);
      });
    });

    it("moves between working and input_required, stamping lastUpdatedAt", async () => {
      await withStore({}, async (store, clock) => {
        const task = await create(store, clock, ALICE);
        clock.advance(5);
        assert.equal(
          await store.update(ALICE, task.taskId, {
            status: "input_required",
            statusMessage: "need a name",
            inputRequests: '{"a":{}}',
          }),
          true,
        );
        let read = await store.get(ALICE, task.taskId);
        assert.equal(read?.status, "input_required");
        assert.equal(read?.statusMessage, "need a name");
        assert.equal(read?.inputRequests, '{"a":{}}');
        assert.equal(read?.lastUpdatedAt, clock.now);
        clock.advance(5);
        assert.equal(
          await store.update(ALICE, task.taskId, { status: "working", inputRequests: null }),
          true,
        );
        read = await store.get(ALICE, task.taskId);
        assert.equal(read?.status, "working");
        assert.equal(read?.statusMessage, "need a name", "an absent field is kept");
        assert.equal(read?.inputRequests, null);
        assert.equal(read?.lastUpdatedAt, clock.now);
        assert.equal(read?.createdAt, task.createdAt);
      });
    });

    it("finishes with a result or an error; a terminal task never changes again", async () => {
      await withStore({}, async (store, clock) => {
        const done = await create(store, clock, ALICE);
        await store.update(ALICE, done.taskId, { inputRequests: '{"k":{}}' });
        clock.advance(10);
        assert.equal(
          await store.finish(ALICE, done.taskId, {
            status: "completed",
            result: '{"content":[{"type":"text","text":"ok"}]}',
            statusMessage: "done",
          }),
          "finished",
        );
        const read = await store.get(ALICE, done.taskId);
        assert.equal(read?.status, "completed");
        assert.equal(read?.result, '{"content":[{"type":"text","text":"ok"}]}');
        assert.equal(read?.error, null);
        assert.equal(read?.statusMessage, "done");
        assert.equal(read?.owner, null);
        assert.equal(read?.inputRequests, null);
        assert.equal(read?.lastUpdatedAt, clock.now);
        assert.equal(read?.expiresAt, clock.now + 60_000);

        const failed = await create(store, clock, ALICE);
        assert.equal(
          await store.finish(ALICE, failed.taskId, {
            status: "failed",
            error: '{"code":-32603,"message":"Internal error"}',
          }),
          "finished",
        );
        const failedRead = await store.get(ALICE, failed.taskId);
        assert.equal(failedRead?.status, "failed");
        assert.equal(failedRead?.error, '{"code":-32603,"message":"Internal error"}');
        assert.equal(failedRead?.result, null);

        const toolError = await create(store, clock, ALICE);
        assert.equal(
          await store.finish(ALICE, toolError.taskId, {
            status: "failed",
            result: '{"content":[],"isError":true}',
          }),
          "finished",
        );
        assert.equal(
          (await store.get(ALICE, toolError.taskId))?.result,
          '{"content":[],"isError":true}',
        );

        for (const task of [done, failed, toolError]) {
          const before = await store.get(ALICE, task.taskId);
          clock.advance(1);
          assert.equal(await store.update(ALICE, task.taskId, { status: "working" }), false);
          assert.equal(
            await store.finish(ALICE, task.taskId, { status: "completed", result: "{}" }),
            "not_running",
          );
          assert.deepEqual(await store.cancel(ALICE, task.taskId, "late"), {
            outcome: "terminal",
            task: before,
          });
          assert.deepEqual(await store.get(ALICE, task.taskId), before);
        }
      });
    });

    it("cancels a running task before it answers; the task stays cancelled", async () => {
      await withStore({}, async (store, clock) => {
        const task = await create(store, clock, ALICE);
        clock.advance(3);
        const cancelled = await store.cancel(ALICE, task.taskId, "stopped by the client");
        assert.equal(cancelled.outcome, "cancelled");
        assert.ok(cancelled.outcome === "cancelled");
        assert.equal(cancelled.task.status, "cancelled");
        assert.equal(cancelled.task.statusMessage, "stopped by the client");
        assert.equal(cancelled.task.owner, null);
        assert.equal(cancelled.task.lastUpdatedAt, clock.now);
        assert.equal(cancelled.task.expiresAt, clock.now + 60_000);
        assert.deepEqual(await store.get(ALICE, task.taskId), cancelled.task);
        assert.equal(
          await store.finish(ALICE, task.taskId, { status: "completed", result: "{}" }),
          "not_running",
        );
        assert.equal((await store.get(ALICE, task.taskId))?.status, "cancelled");
      });
    });

    it("counts its tasks by status, every status shown (the conduit_mcp_tasks_by_status gauge)", async () => {
      await withStore({}, async (store, clock) => {
        assert.ok(store.countByStatus, "the store counts by status");
        assert.deepEqual(await store.countByStatus(), {
          working: 0,
          input_required: 0,
          completed: 0,
          failed: 0,
          cancelled: 0,
        });
        const asking = await create(store, clock, ALICE);
        await store.update(ALICE, asking.taskId, { status: "input_required" });
        await create(store, clock, ALICE);
        await complete(store, await create(store, clock, BOB));
        const broken = await create(store, clock, BOB);
        await store.finish(BOB, broken.taskId, { status: "failed", error: '{"code":-32603}' });
        await store.cancel(ALICE, (await create(store, clock, ALICE)).taskId, "stopped");
        assert.deepEqual(await store.countByStatus(), {
          working: 1,
          input_required: 1,
          completed: 1,
          failed: 1,
          cancelled: 1,
        });
      });
    });

    it("cancels every running task of one scope only", async () => {
      await withStore({}, async (store, clock) => {
        const a1 = await create(store, clock, ALICE);
        const a2 = await create(store, clock, ALICE);
        const a3 = await create(store, clock, ALICE);
        await complete(store, a3);
        const b1 = await create(store, clock, BOB);
        const ids = await store.cancelScope(ALICE, "session closed");
        assert.deepEqual([...ids].sort(), [a1.taskId, a2.taskId].sort());
        for (const task of [a1, a2]) {
          const read = await store.get(ALICE, task.taskId);
          assert.equal(read?.status, "cancelled");
          assert.equal(read?.statusMessage, "session closed");
        }
        assert.equal((await store.get(ALICE, a3.taskId))?.status, "completed");
        assert.equal((await store.get(BOB, b1.taskId))?.status, "working");
      });
    });

    it("refuses a result or error over maxResultBytes (UTF-8 bytes) and writes nothing", async () => {
      await withStore({ maxResultBytes: 16 }, async (store, clock) => {
        assert.equal(store.maxResultBytes, 16);
        const task = await create(store, clock, ALICE);
        // 8 two-byte characters plus the quotes: 18 bytes, though only 10 UTF-16 units.
        const wide = JSON.stringify("é".repeat(8));
        assert.equal(
          await store.finish(ALICE, task.taskId, { status: "completed", result: wide }),
          "too_large",
        );
        assert.equal(
          await store.finish(ALICE, task.taskId, { status: "failed", error: wide }),
          "too_large",
        );
        const read = await store.get(ALICE, task.taskId);
        assert.equal(read?.status, "working");
        assert.equal(read?.result, null);
        const exact = JSON.stringify("x".repeat(14));
        assert.equal(
          await store.finish(ALICE, task.taskId, { status: "completed", result: exact }),
          "finished",
        );
        assert.equal((await store.get(ALICE, task.taskId))?.result, exact);
      });
    });

    it("at the per-scope quota refuses a scope whose tasks all run, while other scopes are served", async () => {
      await withStore({ maxTasksPerScope: 3 }, async (store, clock) => {
        assert.equal(store.maxTasksPerScope, 3);
        for (let i = 0; i < 3; i++) await create(store, clock, ALICE);
        const refused = await store.create({
          scope: ALICE,
          taskId: newTaskId(),
          ttlMs: 1_000,
          pollIntervalMs: 1_000,
        });
        assert.deepEqual(refused, { ok: false, error: "task_limit_reached" });
        assert.equal(await store.size(), 3);
        await create(store, clock, BOB);
        assert.equal(await store.size(), 4);
      });
    });

    it("at the per-scope quota drops the scope's own oldest finished task to make room", async () => {
      await withStore({ maxTasksPerScope: 3 }, async (store, clock) => {
        const a1 = await create(store, clock, ALICE);
        const a2 = await create(store, clock, ALICE);
        const a3 = await create(store, clock, ALICE);
        await complete(store, a2);
        await complete(store, a1);
        const bob = await create(store, clock, BOB);
        await complete(store, bob);
        const a4 = await create(store, clock, ALICE);
        assert.equal(await store.get(ALICE, a2.taskId), undefined, "oldest finished dropped");
        for (const task of [a1, a3, a4]) assert.ok(await store.get(ALICE, task.taskId));
        assert.ok(await store.get(BOB, bob.taskId), "another scope is untouched");
        assert.equal(await store.size(), 4);
      });
    });

    it("at the global cap drops a finished task of the largest scope first", async () => {
      await withStore({ maxTasks: 5 }, async (store, clock) => {
        assert.equal(store.maxTasks, 5);
        const bob = await create(store, clock, BOB);
        await complete(store, bob);
        const alice = [];
        for (let i = 0; i < 4; i++) alice.push(await create(store, clock, ALICE));
        await complete(store, alice[2] as TaskRecord);
        await complete(store, alice[1] as TaskRecord);
        const seen: TaskChange[] = [];
        store.onChange((change) => seen.push(change));
        const carol = await store.create({
          scope: CAROL,
          taskId: newTaskId(),
          ttlMs: 1_000,
          pollIntervalMs: 1_000,
        });
        assert.ok(carol.ok);
        assert.deepEqual(carol.evicted, []);
        assert.equal(await store.size(), 5);
        assert.equal(
          await store.get(ALICE, (alice[2] as TaskRecord).taskId),
          undefined,
          "alice's first finished task went",
        );
        assert.ok(await store.get(BOB, bob.taskId), "the smaller scope kept its finished task");
        assert.ok(await store.get(ALICE, (alice[1] as TaskRecord).taskId));
        assert.deepEqual(seen, []);
      });
    });

    it("at the global cap with no finished task drops the largest scope's oldest running task and reports it", async () => {
      await withStore({ maxTasks: 4 }, async (store, clock) => {
        const alice = [];
        for (let i = 0; i < 3; i++) alice.push(await create(store, clock, ALICE));
        const bob = await create(store, clock, BOB);
        const seen: TaskChange[] = [];
        store.onChange((change) => seen.push(change));
        const carol = await store.create({
          scope: CAROL,
          taskId: newTaskId(),
          ttlMs: 1_000,
          pollIntervalMs: 1_000,
        });
        assert.ok(carol.ok);
        const first = alice[0] as TaskRecord;
        assert.deepEqual(carol.evicted, [{ scope: ALICE, taskId: first.taskId }]);
        assert.deepEqual(seen, [{ scope: ALICE, taskId: first.taskId, status: "evicted" }]);
        assert.equal(await store.get(ALICE, first.taskId), undefined);
        assert.ok(await store.get(BOB, bob.taskId));
        assert.equal(await store.size(), 4);
      });
    });

    it("at the global cap drops a larger scope's running task before a smaller scope's finished one", async () => {
      // Three tenants fill the cap with running tasks; a fourth tenant's one finished task (its
      // result included) must outlive all of them: the cap evicts from the largest scopes first.
      await withStore({ maxTasks: 10, maxTasksPerScope: 3 }, async (store, clock) => {
        const victim = await create(store, clock, "ip:10.0.0.9");
        await complete(store, victim, '{"content":[{"type":"text","text":"kept"}]}');
        for (const attacker of ["ip:10.0.0.1", "ip:10.0.0.2", "ip:10.0.0.3"]) {
          for (let i = 0; i < 3; i++) await create(store, clock, attacker);
        }
        assert.equal(await store.size(), 10);
        const next = await store.create({
          scope: "ip:10.0.0.4",
          taskId: newTaskId(),
          ttlMs: 1_000,
          pollIntervalMs: 1_000,
        });
        assert.ok(next.ok);
        assert.equal(next.evicted.length, 1);
        assert.equal(next.evicted[0]?.scope, "ip:10.0.0.1");
        const kept = await store.get("ip:10.0.0.9", victim.taskId);
        assert.equal(kept?.result, '{"content":[{"type":"text","text":"kept"}]}');
      });
    });

    it("counts the quota against the bucket, whatever scope (session) the task was made in", async () => {
      await withStore({ maxTasksPerScope: 3 }, async (store, clock) => {
        const bucket = "ip:10.0.0.7";
        const made: TaskRecord[] = [];
        for (let i = 0; i < 3; i++)
          made.push(await create(store, clock, `session:s${i}`, { bucket }));
        const refused = await store.create({
          scope: "session:s9",
          bucket,
          taskId: newTaskId(),
          ttlMs: 1_000,
          pollIntervalMs: 1_000,
        });
        assert.deepEqual(refused, { ok: false, error: "task_limit_reached" });
        // Each task stays visible in its own scope only.
        const first = made[0] as TaskRecord;
        assert.ok(await store.get("session:s0", first.taskId));
        assert.equal(await store.get("session:s1", first.taskId), undefined);
        assert.equal(await store.get(bucket, first.taskId), undefined);
        // A finished task of the bucket makes room for the next, in any of its sessions.
        await complete(store, first);
        await create(store, clock, "session:s9", { bucket });
        assert.equal(await store.get("session:s0", first.taskId), undefined);
        await create(store, clock, "session:other", { bucket: "ip:10.0.0.8" });
      });
    });

    it("keeps a bucket's result bytes under its budget by dropping its own oldest finished tasks", async () => {
      await withStore({ maxTaskBytesPerScope: 100 }, async (store, clock) => {
        assert.equal(store.maxTaskBytesPerScope, 100);
        const forty = JSON.stringify("x".repeat(38));
        const bob = await create(store, clock, BOB);
        await complete(store, bob, forty);
        const a1 = await create(store, clock, ALICE);
        const a2 = await create(store, clock, ALICE);
        const a3 = await create(store, clock, ALICE);
        await complete(store, a1, forty);
        await complete(store, a2, forty);
        await complete(store, a3, forty);
        assert.equal(await store.get(ALICE, a1.taskId), undefined, "the oldest went");
        assert.equal((await store.get(ALICE, a2.taskId))?.result, forty);
        assert.equal((await store.get(ALICE, a3.taskId))?.result, forty);
        assert.equal(
          (await store.get(BOB, bob.taskId))?.result,
          forty,
          "another bucket kept its own",
        );
        // A result that cannot fit beside what the bucket still runs is refused, nothing written.
        const running = await create(store, clock, CAROL);
        assert.ok(await store.update(CAROL, running.taskId, { inputRequests: forty }));
        const last = await create(store, clock, CAROL);
        const wide = JSON.stringify("y".repeat(70));
        assert.equal(
          await store.finish(CAROL, last.taskId, { status: "completed", result: wide }),
          "too_large",
        );
        assert.equal((await store.get(CAROL, last.taskId))?.status, "working");
      });
    });

    it("over the global byte budget drops tasks of the bucket holding the most bytes first", async () => {
      await withStore({ maxTaskBytes: 200 }, async (store, clock) => {
        assert.equal(store.maxTaskBytes, 200);
        const forty = JSON.stringify("x".repeat(38));
        const small = await create(store, clock, BOB);
        await complete(store, small, forty);
        const big: TaskRecord[] = [];
        for (let i = 0; i < 4; i++) {
          const task = await create(store, clock, ALICE);
          await complete(store, task, forty);
          big.push(task);
        }
        // 200 bytes held: one more result of bob's puts the store over; alice pays.
        const more = await create(store, clock, BOB);
        await complete(store, more, forty);
        assert.equal(await store.get(ALICE, (big[0] as TaskRecord).taskId), undefined);
        assert.equal((await store.get(BOB, small.taskId))?.result, forty);
        assert.equal((await store.get(BOB, more.taskId))?.result, forty);
        for (const task of big.slice(1)) assert.ok(await store.get(ALICE, task.taskId));
      });
    });

    it("keeps the table at the cap under a flood from many scopes", async () => {
      await withStore({ maxTasks: 20, maxTasksPerScope: 5 }, async (store, clock) => {
        for (let i = 0; i < 200; i++) {
          clock.advance(1);
          const scope = `ip:10.0.0.${i % 7}`;
          const outcome = await store.create({
            scope,
            taskId: newTaskId(),
            ttlMs: 1_000,
            pollIntervalMs: 1_000,
          });
          if (outcome.ok && i % 2 === 0) await complete(store, outcome.task);
          assert.ok((await store.size()) <= 20);
        }
        assert.equal(await store.size(), 20);
        for (let s = 0; s < 7; s++) {
          assert.ok((await listAll(store, `ip:10.0.0.${s}`, 10)).length <= 5, "per-scope quota");
        }
      });
    });

    it("keeps a finished task ttlMs after it finished, then it is gone for every read", async () => {
      await withStore({}, async (store, clock) => {
        const task = await create(store, clock, ALICE, { ttlMs: 1_000 });
        const running = await create(store, clock, ALICE, { ttlMs: 1_000 });
        clock.advance(5_000);
        await complete(store, task);
        const finishedAt = clock.now;
        clock.advance(999);
        assert.equal((await store.get(ALICE, task.taskId))?.status, "completed");
        assert.deepEqual((await store.sweep(clock.now)).expired, 0);
        clock.advance(1);
        assert.equal(clock.now, finishedAt + 1_000);
        assert.equal(await store.get(ALICE, task.taskId), undefined);
        assert.deepEqual(await store.cancel(ALICE, task.taskId, null), { outcome: "unknown" });
        assert.deepEqual(await listAll(store, ALICE), [running.taskId]);
        assert.deepEqual(await store.sweep(clock.now), { expired: 1, orphaned: 0 });
        assert.equal(await store.size(), 1);
        clock.advance(10_000_000);
        assert.deepEqual(await store.sweep(clock.now), { expired: 0, orphaned: 0 });
        assert.equal(
          (await store.get(ALICE, running.taskId))?.status,
          "working",
          "a running task never expires",
        );
      });
    });

    it("lists a scope's tasks in creation order, page by page", async () => {
      await withStore({}, async (store, clock) => {
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) {
          ids.push((await create(store, clock, ALICE)).taskId);
          await create(store, clock, BOB);
        }
        assert.deepEqual(await listAll(store, ALICE, 2), ids);
        assert.deepEqual(await listAll(store, ALICE, 5), ids);
        assert.deepEqual(await listAll(store, ALICE, 100), ids);
        const first = await store.list(ALICE, { after: null, limit: 2 });
        assert.ok(first?.next);
        // A task cancelled between pages is still listed; one created meanwhile comes last.
        await store.cancel(ALICE, ids[2] as string, null);
        const late = (await create(store, clock, ALICE)).taskId;
        const rest = await store.list(ALICE, { after: first.next, limit: 10 });
        assert.deepEqual(
          rest?.tasks.map((task) => task.taskId),
          [ids[2], ids[3], ids[4], late],
        );
        assert.equal(rest?.next, null);
      });
    });

    it("refuses a list position it never handed out", async () => {
      await withStore({}, async (store, clock) => {
        await create(store, clock, ALICE);
        for (const bad of ["", "-1", "abc", "1e3", " 1", "99999999999999999999", "\u0000"]) {
          assert.equal(await store.list(ALICE, { after: bad, limit: 10 }), null, bad);
        }
      });
    });

    it("announces terminal transitions to its listeners before the write resolves", async () => {
      await withStore({}, async (store, clock) => {
        const seen: TaskChange[] = [];
        const stop = store.onChange((change) => seen.push(change));
        const done = await create(store, clock, ALICE);
        const failed = await create(store, clock, ALICE);
        const cancelled = await create(store, clock, ALICE);
        const scoped = await create(store, clock, BOB);
        await store.update(ALICE, done.taskId, { statusMessage: "half way" });
        assert.deepEqual(seen, [], "non-terminal changes are not announced");
        await complete(store, done);
        assert.deepEqual(seen, [{ scope: ALICE, taskId: done.taskId, status: "completed" }]);
        await store.finish(ALICE, failed.taskId, { status: "failed", error: "{}" });
        await store.cancel(ALICE, cancelled.taskId, null);
        await store.cancelScope(BOB, null);
        assert.deepEqual(seen.slice(1), [
          { scope: ALICE, taskId: failed.taskId, status: "failed" },
          { scope: ALICE, taskId: cancelled.taskId, status: "cancelled" },
          { scope: BOB, taskId: scoped.taskId, status: "cancelled" },
        ]);
        await store.cancel(ALICE, cancelled.taskId, null);
        assert.equal(seen.length, 4, "a cancel of a terminal task announces nothing");
        stop();
        await complete(store, await create(store, clock, ALICE));
        assert.equal(seen.length, 4, "unsubscribed");
      });
    });

    it("rejects every call after close", async () => {
      const clock = testClock();
      const store = await makeStore({ clock });
      await store.close();
      await store.close();
      await assert.rejects(
        store.create({ scope: ALICE, taskId: newTaskId(), ttlMs: 1, pollIntervalMs: 1 }),
        StoreClosedError,
      );
      await assert.rejects(store.get(ALICE, newTaskId()), StoreClosedError);
      await assert.rejects(store.list(ALICE, { after: null, limit: 1 }), StoreClosedError);
      await assert.rejects(store.sweep(0), StoreClosedError);
    });
  });
}
