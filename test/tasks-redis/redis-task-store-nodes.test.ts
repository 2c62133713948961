/**
 * `RedisTaskStore` across nodes on one private redis-server (the store alone; the three-node HTTP
 * test is three-nodes.test.ts):
 * - a task created on node A is read on node B; a cancel on node B reaches node A's change
 *   listener through the channel within 50 ms (median);
 * - a node whose connection dies stops renewing its lease: its running tasks read `failed` with
 *   the orphan message and error on another node once the lease is gone, without a sweep; a sweep
 *   counts them once; a graceful close fails the closing node's running tasks at once;
 * - tenant isolation across nodes: another scope's get/cancel/update/finish/list of a real id and
 *   of 200 guessed ids change nothing, and a scope with a lone surrogate is not its U+FFFD twin;
 * - forged channel messages are ignored;
 * - a Redis stall longer than a lease (every lease lapses) fails no live node's task, while a node
 *   that died during it is still found one lease later;
 * - during a Redis stall (SIGSTOP), reads and creates reject with TaskStoreUnavailableError
 *   (fail closed); a node that lost its connection keeps its runs' updates, finishes and cancels
 *   and writes them (check-and-set) once it is back;
 * - Redis stopped: one log line naming the task store and one `conduit-mcp:store:outage` event
 *   (`part: "tasks"`) per outage, `{ state: "up" }` when it is back. (Last: it loses the data.)
 */
import assert from "node:assert/strict";
import diagnosticsChannel from "node:diagnostics_channel";
import { after, before, describe, it } from "node:test";

import { Redis } from "ioredis";

import { ChannelName } from "../../src/diagnostics.js";
import { TaskStoreUnavailableError } from "../../src/errors.js";
import type { StoreOutageMessage } from "../../src/redis/index.js";
import { RedisTaskStore, type RedisTaskStoreOptions } from "../../src/redis/index.js";
import {
  newTaskId,
  ORPHANED_TASK_ERROR,
  ORPHANED_TASK_MESSAGE,
  type TaskChange,
  type TaskRecord,
} from "../../src/tasks/index.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { freshPrefix, sleep } from "../redis/helpers.js";

const skip = redisSkipReason();
const ALICE = "principal:alice";
const BOB = "principal:bob";

/** Stores (and raw clients) closed at the end of a test. */
class Nodes {
  readonly stores: RedisTaskStore[] = [];
  readonly clients: Redis[] = [];
  readonly prefix = freshPrefix("tnodes");
  constructor(readonly url: string) {}

  async node(options: Partial<RedisTaskStoreOptions> = {}): Promise<RedisTaskStore> {
    const store = new RedisTaskStore({
      redis: this.url,
      prefix: this.prefix,
      logger: () => {},
      ...options,
    });
    this.stores.push(store);
    if (!(await store.ready(5_000))) throw new Error("task store not ready within 5 s");
    return store;
  }

  client(): Redis {
    const client = new Redis(this.url, { maxRetriesPerRequest: 1, enableOfflineQueue: true });
    client.on("error", () => {});
    this.clients.push(client);
    return client;
  }

  async close(): Promise<void> {
    await Promise.all(this.stores.map((store) => store.close().catch(() => {})));
    for (const client of this.clients) client.disconnect();
  }
}

async function create(store: RedisTaskStore, scope: string): Promise<TaskRecord> {
  const outcome = await store.create({
    scope,
    taskId: newTaskId(),
    ttlMs: 60_000,
    pollIntervalMs: 1_000,
  });
  assert.ok(outcome.ok);
  return outcome.task;
}

/** Resolves with the first change `store` delivers for `taskId`, or rejects after `ms`. */
function nextChange(store: RedisTaskStore, taskId: string, ms: number): Promise<TaskChange> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no change of ${taskId} within ${ms} ms`));
    }, ms);
    const stop = store.onChange((change) => {
      if (change.taskId !== taskId) return;
      clearTimeout(timer);
      stop();
      resolve(change);
    });
  });
}

describe("RedisTaskStore across nodes", { skip: skip ?? false }, () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server?.stop();
  });

  it("a task created on node A is read on node B; B's cancel reaches A's listener within 50 ms", async () => {
    const nodes = new Nodes(server.url);
    try {
      const a = await nodes.node({ nodeId: "node-a" });
      const b = await nodes.node({ nodeId: "node-b" });
      const heardByB: TaskChange[] = [];
      b.onChange((change) => heardByB.push(change));
      const latencies: number[] = [];
      for (let i = 0; i < 15; i++) {
        const task = await create(a, ALICE);
        assert.deepEqual(await b.get(ALICE, task.taskId), task);
        const heard = nextChange(a, task.taskId, 2_000);
        const start = performance.now();
        const cancelled = await b.cancel(ALICE, task.taskId, "stop");
        assert.equal(cancelled.outcome, "cancelled");
        assert.deepEqual(await heard, { scope: ALICE, taskId: task.taskId, status: "cancelled" });
        latencies.push(performance.now() - start);
        assert.equal((await a.get(ALICE, task.taskId))?.status, "cancelled");
      }
      latencies.sort((x, y) => x - y);
      const median = latencies[Math.floor(latencies.length / 2)] ?? Number.NaN;
      assert.ok(median <= 50, `median cancel → listener ${median.toFixed(1)} ms: ${latencies}`);
      // B heard its own cancels once each, synchronously, never again through the channel.
      await sleep(50);
      assert.equal(heardByB.length, 15);
      // A finish on A is heard by B; a late finish of a cancelled task changes nothing.
      const done = await create(a, BOB);
      const heard = nextChange(b, done.taskId, 2_000);
      assert.equal(
        await a.finish(BOB, done.taskId, { status: "completed", result: '{"content":[]}' }),
        "finished",
      );
      assert.equal((await heard).status, "completed");
      assert.equal((await b.get(BOB, done.taskId))?.result, '{"content":[]}');
    } finally {
      await nodes.close();
    }
  });

  it("a node that stops renewing its lease has its running tasks read failed by another node", async () => {
    const nodes = new Nodes(server.url);
    const dying = new Redis(server.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    dying.on("error", () => {});
    try {
      const a = new RedisTaskStore({
        redis: dying,
        prefix: nodes.prefix,
        nodeId: "node-a",
        leaseMs: 300,
        logger: () => {},
      });
      nodes.stores.push(a);
      assert.ok(await a.ready(5_000));
      const b = await nodes.node({ nodeId: "node-b", leaseMs: 300 });
      const running = await create(a, ALICE);
      const other = await create(a, ALICE);
      const finished = await create(a, ALICE);
      assert.equal(
        await a.finish(ALICE, finished.taskId, { status: "completed", result: "{}" }),
        "finished",
      );
      const bobs = await create(b, BOB);
      // A live lease is renewed: several lease periods later nothing has failed.
      await sleep(700);
      assert.equal((await b.get(ALICE, running.taskId))?.status, "working");
      assert.deepEqual(await b.sweep(Date.now()), { expired: 0, orphaned: 0 });
      // "Kill" node A: its connection is gone (its process lives on here).
      dying.disconnect();
      const killedAt = performance.now();
      let read: TaskRecord | undefined;
      for (let i = 0; i < 200; i++) {
        read = await b.get(ALICE, running.taskId);
        if (read?.status === "failed") break;
        await sleep(10);
      }
      const took = performance.now() - killedAt;
      assert.equal(read?.status, "failed");
      // Two leases, plus one when a renewal on this loaded machine came so late that Redis
      // counted it as an outage and waited a lease before judging (task-scripts.ts, judging).
      assert.ok(took < 900, `failed after ${took.toFixed(0)} ms (lease 300 ms)`);
      assert.equal(read?.statusMessage, ORPHANED_TASK_MESSAGE);
      assert.equal(read?.error, ORPHANED_TASK_ERROR);
      assert.equal(read?.owner, null);
      assert.ok(read?.expiresAt !== null);
      // The other running task is failed by the sweep (counted once); the finished one is untouched.
      assert.deepEqual(await b.sweep(Date.now()), { expired: 0, orphaned: 1 });
      assert.equal((await b.get(ALICE, other.taskId))?.status, "failed");
      assert.equal((await b.get(ALICE, finished.taskId))?.status, "completed");
      assert.deepEqual(await b.sweep(Date.now()), { expired: 0, orphaned: 0 });
      assert.equal((await b.get(BOB, bobs.taskId))?.status, "working", "a live node's task stays");
      // A graceful close fails the closing node's running tasks at once.
      const c = await nodes.node({ nodeId: "node-c", leaseMs: 60_000 });
      const leftOver = await create(c, BOB);
      await c.close();
      const afterClose = await b.get(BOB, leftOver.taskId);
      assert.equal(afterClose?.status, "failed");
      assert.equal(afterClose?.statusMessage, ORPHANED_TASK_MESSAGE);
    } finally {
      await nodes.close();
      dying.disconnect();
    }
  });

  it("another scope, on any node, learns and changes nothing of a task, real id or guessed", async () => {
    const nodes = new Nodes(server.url);
    try {
      const a = await nodes.node({ nodeId: "node-a" });
      const b = await nodes.node({ nodeId: "node-b" });
      const task = await create(a, ALICE);
      const raw = nodes.client();
      const keysBefore = (await raw.keys(`{${nodes.prefix}}:*`)).sort();
      const guesses = [task.taskId, ...Array.from({ length: 200 }, () => newTaskId())];
      for (const id of guesses) {
        for (const node of [a, b]) {
          assert.equal(await node.get(BOB, id), undefined);
          assert.deepEqual(await node.cancel(BOB, id, "x"), { outcome: "unknown" });
          assert.equal(await node.update(BOB, id, { statusMessage: "x" }), false);
          assert.equal(
            await node.finish(BOB, id, { status: "completed", result: "{}" }),
            "not_running",
          );
        }
      }
      assert.deepEqual(await b.list(BOB, { after: null, limit: 100 }), { tasks: [], next: null });
      assert.deepEqual(await b.cancelScope(BOB, "x"), []);
      assert.deepEqual(await b.get(ALICE, task.taskId), task);
      assert.deepEqual((await raw.keys(`{${nodes.prefix}}:*`)).sort(), keysBefore);

      // A lone surrogate is kept as such: "\uD800" and "\uFFFD" are two tenants.
      const lone = "principal:\uD800";
      const twin = "principal:\uFFFD";
      const loneTask = await create(a, lone);
      assert.equal((await b.get(lone, loneTask.taskId))?.scope, lone);
      assert.equal(await b.get(twin, loneTask.taskId), undefined);
      const heard = nextChange(a, loneTask.taskId, 2_000);
      assert.equal((await b.cancel(lone, loneTask.taskId, null)).outcome, "cancelled");
      assert.deepEqual(await heard, { scope: lone, taskId: loneTask.taskId, status: "cancelled" });
    } finally {
      await nodes.close();
    }
  });

  it("forged messages on the task channel are ignored", async () => {
    const nodes = new Nodes(server.url);
    try {
      const a = await nodes.node({ nodeId: "node-a" });
      const b = await nodes.node({ nodeId: "node-b" });
      const heard: TaskChange[] = [];
      a.onChange((change) => heard.push(change));
      const raw = nodes.client();
      const channel = `{${nodes.prefix}}:tasks`;
      const id = newTaskId();
      for (const forged of [
        "",
        "cancelled",
        `cancelled node-x ${id}`,
        `cancelled node-x ${id} not-json`,
        `cancelled node-x ${id} 42`,
        `cancelled node-x short "principal:alice"`,
        `running node-x ${id} "principal:alice"`,
        `cancelled node-x ${id} ""`,
        `cancelled node-x ${id} "${"x".repeat(5_000)}"`,
      ]) {
        await raw.publish(channel, forged);
      }
      // A well-formed one still arrives, so the ones before it were seen and dropped.
      const task = await create(b, ALICE);
      const real = nextChange(a, task.taskId, 2_000);
      await b.cancel(ALICE, task.taskId, null);
      await real;
      assert.deepEqual(heard, [{ scope: ALICE, taskId: task.taskId, status: "cancelled" }]);
    } finally {
      await nodes.close();
    }
  });

  it("fails closed for reads and creates during a Redis stall (SIGSTOP)", async () => {
    const nodes = new Nodes(server.url);
    try {
      const a = await nodes.node({ nodeId: "node-a", commandTimeoutMs: 200, leaseMs: 30_000 });
      const b = await nodes.node({ nodeId: "node-b", commandTimeoutMs: 200, leaseMs: 30_000 });
      const task = await create(a, ALICE);
      server.freeze();
      try {
        await assert.rejects(b.get(ALICE, task.taskId), TaskStoreUnavailableError);
        await assert.rejects(
          a.create({ scope: ALICE, taskId: newTaskId(), ttlMs: 1_000, pollIntervalMs: 1_000 }),
          TaskStoreUnavailableError,
        );
        // (A call that timed out may still run when Redis answers again: an id nobody holds.)
        await assert.rejects(b.cancel(BOB, newTaskId(), null), TaskStoreUnavailableError);
        await assert.rejects(b.list(ALICE, { after: null, limit: 5 }), TaskStoreUnavailableError);
      } finally {
        server.thaw();
      }
      let read: TaskRecord | undefined;
      for (let i = 0; i < 300 && read === undefined; i++) {
        read = await b.get(ALICE, task.taskId).catch(() => undefined);
        if (read === undefined) await sleep(10);
      }
      assert.equal(read?.status, "working", "the task was there all along");
    } finally {
      await nodes.close();
    }
  });

  it("a Redis stall longer than a lease fails no live node's task; a node that died meanwhile is still found", async () => {
    const nodes = new Nodes(server.url);
    const dying = new Redis(server.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    dying.on("error", () => {});
    try {
      const a = await nodes.node({ nodeId: "node-a", leaseMs: 300, commandTimeoutMs: 100 });
      const b = await nodes.node({ nodeId: "node-b", leaseMs: 300, commandTimeoutMs: 100 });
      const c = new RedisTaskStore({
        redis: dying,
        prefix: nodes.prefix,
        nodeId: "node-c",
        leaseMs: 300,
        logger: () => {},
      });
      nodes.stores.push(c);
      assert.ok(await c.ready(5_000));
      const alive = await create(a, ALICE);
      const dead = await create(c, ALICE);
      // Node C dies during the stall; every lease lapses while Redis is frozen for 3 leases.
      server.freeze();
      dying.disconnect();
      await sleep(900);
      server.thaw();
      let first: TaskRecord | undefined;
      for (let i = 0; i < 300 && first === undefined; i++) {
        first = await b.get(ALICE, alive.taskId).catch(() => undefined);
        if (first === undefined) await sleep(10);
      }
      assert.equal(first?.status, "working", "a live node's task was failed after the stall");
      assert.equal((await b.get(ALICE, dead.taskId))?.status, "working", "not judged yet");
      // One lease later the live nodes have renewed; the dead one has not.
      let read: TaskRecord | undefined;
      for (let i = 0; i < 200; i++) {
        read = await b.get(ALICE, dead.taskId);
        if (read?.status === "failed") break;
        await sleep(10);
      }
      assert.equal(read?.status, "failed");
      assert.equal(read?.statusMessage, ORPHANED_TASK_MESSAGE);
      assert.equal((await b.get(ALICE, alive.taskId))?.status, "working");
    } finally {
      await nodes.close();
      dying.disconnect();
    }
  });

  it("a node that lost Redis keeps its runs' writes and writes them when it is back", async () => {
    const nodes = new Nodes(server.url);
    const own = new Redis(server.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    own.on("error", () => {});
    try {
      const a = new RedisTaskStore({
        redis: own,
        prefix: nodes.prefix,
        nodeId: "node-a",
        leaseMs: 30_000,
        logger: () => {},
      });
      nodes.stores.push(a);
      assert.ok(await a.ready(5_000));
      const b = await nodes.node({ nodeId: "node-b", leaseMs: 30_000 });
      const done = await create(a, ALICE);
      const stopped = await create(a, ALICE);
      const others = await create(b, BOB);
      const heard: TaskChange[] = [];
      a.onChange((change) => heard.push(change));
      // Node A's connection is gone: nothing is sent while it is away.
      own.disconnect();
      for (let i = 0; i < 200 && own.status !== "end"; i++) await sleep(5);
      assert.equal(own.status, "end");
      assert.equal(await a.update(ALICE, done.taskId, { statusMessage: "90 %" }), true);
      assert.equal(
        await a.finish(ALICE, done.taskId, { status: "completed", result: '{"ok":true}' }),
        "finished",
      );
      assert.equal(await a.update(ALICE, done.taskId, { statusMessage: "late" }), false);
      await assert.rejects(
        a.cancel(ALICE, stopped.taskId, "the node is closing"),
        TaskStoreUnavailableError,
      );
      await assert.rejects(a.get(ALICE, done.taskId), TaskStoreUnavailableError);
      // A task this node does not run cannot be written while Redis is away.
      assert.equal(
        await a.finish(BOB, others.taskId, { status: "completed", result: "{}" }),
        "not_running",
      );
      assert.equal((await b.get(ALICE, done.taskId))?.status, "working", "nothing written yet");
      await own.connect();
      let read: TaskRecord | undefined;
      for (let i = 0; i < 300; i++) {
        read = await b.get(ALICE, stopped.taskId);
        if (read?.status === "cancelled") break;
        await sleep(10);
      }
      assert.equal(read?.status, "cancelled");
      assert.equal(read?.statusMessage, "the node is closing");
      const finished = await b.get(ALICE, done.taskId);
      assert.equal(finished?.status, "completed");
      assert.equal(finished?.result, '{"ok":true}');
      assert.equal(finished?.statusMessage, "90 %");
      assert.equal((await b.get(BOB, others.taskId))?.status, "working", "untouched");
      assert.deepEqual(
        heard.map((change) => change.status).sort(),
        ["cancelled", "completed"],
        "the node's own listeners hear the writes once they are made",
      );
    } finally {
      await nodes.close();
      own.disconnect();
    }
  });

  it("an outage is reported once (log line and store:outage event, part tasks), and its end", async () => {
    const lines: string[] = [];
    const events: StoreOutageMessage[] = [];
    const onOutage = (message: unknown) => events.push(message as StoreOutageMessage);
    diagnosticsChannel.subscribe(ChannelName.storeOutage, onOutage);
    const store = new RedisTaskStore({
      redis: server.url,
      prefix: freshPrefix("toutage"),
      commandTimeoutMs: 200,
      logger: (line) => lines.push(line),
    });
    try {
      assert.ok(await store.ready(5_000));
      await server.pause();
      for (let i = 0; i < 5; i++) {
        await assert.rejects(store.get(ALICE, newTaskId()), TaskStoreUnavailableError);
      }
      await server.start();
      assert.ok(await store.ready(10_000), "the store reconnects by itself");
      await store.get(ALICE, newTaskId());
      const mine = events.filter((e) => e.part === "tasks");
      assert.deepEqual(
        mine.map((e) => e.state),
        ["down", "up"],
      );
      assert.equal(lines.length, 1, lines.join("\n"));
      assert.match(lines[0] as string, /Redis task store unreachable .*failing closed/);
    } finally {
      diagnosticsChannel.unsubscribe(ChannelName.storeOutage, onOutage);
      await store.close();
    }
  });
});
