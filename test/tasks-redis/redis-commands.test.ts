/**
 * What a task costs Redis, counted with `INFO commandstats` on a private redis-server: a
 * `tasks/get` of a running task reads (one `HGETALL`, the clock and the lease bookkeeping in one
 * `MGET`) and writes nothing; a finish writes its outcome, its byte count and the finished indexes
 * once each. And the byte counts a finish leaves (the task's, its bucket's, the shard's) are those
 * of its fields, as the budgets need.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Redis } from "ioredis";

import { RedisTaskStore } from "../../src/redis/index.js";
import { COMMON } from "../../src/redis/tasks/task-lua-helpers.js";
import * as scripts from "../../src/redis/tasks/task-scripts.js";
import { newTaskId } from "../../src/tasks/task-id.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { commandCalls, commandsBetween, freshPrefix } from "../redis/helpers.js";

const skip = redisSkipReason();

const total = (m: Map<string, number>) => [...m.values()].reduce((s, v) => s + v, 0);
const WRITES = ["set", "hset", "hdel", "zadd", "zrem", "sadd", "srem", "incr", "incrby", "zincrby"];
const writes = (m: Map<string, number>) => WRITES.reduce((s, k) => s + (m.get(k) ?? 0), 0);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("task scripts: each defines every helper it calls", () => {
  // get and create take only part of COMMON: a helper missing there would fail only on the path
  // that calls it (a dead owner's task, an eviction).
  const helpers = [...COMMON.matchAll(/^local function (\w+)/gm)].map((m) => m[1] as string);
  for (const [name, lua] of Object.entries(scripts)) {
    it(name, () => {
      const defined = new Set([...lua.matchAll(/^local function (\w+)/gm)].map((m) => m[1]));
      const called = [...lua.matchAll(/\b(\w+)\(/g)].map((m) => m[1] as string);
      const missing = called.filter((n) => helpers.includes(n) && !defined.has(n));
      assert.deepEqual([...new Set(missing)], []);
      if (/TERMINAL\[/.test(lua)) assert.match(lua, /^local TERMINAL = /m);
    });
  }
  it("get and create are smaller than the whole of COMMON", () => {
    assert.ok(scripts.TASK_GET_SCRIPT.length < COMMON.length);
    assert.ok(scripts.TASK_CREATE_SCRIPT.length < COMMON.length);
  });
});

describe("RedisTaskStore: commands per task", { skip: skip ?? false }, () => {
  let server: RedisServer;
  let inspect: Redis;
  const stores: RedisTaskStore[] = [];
  async function make(prefix: string) {
    const store = new RedisTaskStore({ redis: server.url, prefix, logger: () => {} });
    stores.push(store);
    assert.ok(await store.ready(5_000));
    return store;
  }

  before(async () => {
    server = await startRedisServer();
    inspect = new Redis(server.url);
  });
  after(async () => {
    await Promise.all(stores.map((s) => s.close()));
    inspect?.disconnect();
    await server?.stop();
  });

  it("a get of a running task on another node reads and writes nothing; a finish writes each thing once", async () => {
    const prefix = freshPrefix("task-commands");
    const a = await make(prefix);
    const b = await make(prefix);
    const scope = "session:s1";
    const taskId = newTaskId();
    const created = await a.create({
      scope,
      bucket: "ip:127.0.0.1",
      taskId,
      ttlMs: 60_000,
      pollIntervalMs: 1_000,
      statusMessage: "starting",
    });
    assert.equal(created.ok, true);
    assert.equal(await a.update(scope, taskId, { inputRequests: '{"q":{"method":"x"}}' }), true);
    // Ten polls from another node, a few ms apart (a clock that moves).
    const t0 = await commandCalls(inspect);
    for (let i = 0; i < 10; i++) {
      assert.equal((await b.get(scope, taskId))?.status, "working");
      await pause(3);
    }
    const polls = commandsBetween(t0, await commandCalls(inspect));
    assert.equal(writes(polls), 0, `a poll writes nothing: ${JSON.stringify([...polls])}`);
    // The check script (TIME, MGET of the lease bookkeeping, HMGET of status, expiry and owner,
    // the owner's lease) and a plain HGETALL beside it: 6 at most, the fields never through Lua.
    assert.ok(total(polls) <= 60, `10 polls cost ${total(polls)}: ${JSON.stringify([...polls])}`);
    assert.equal(polls.get("hgetall"), 10);
    assert.equal(polls.get("hmget"), 10, "the check reads three fields");

    const t1 = await commandCalls(inspect);
    const result = JSON.stringify({ content: [{ type: "text", text: "done" }] });
    assert.equal(
      await a.finish(scope, taskId, { status: "completed", result, statusMessage: "finished" }),
      "finished",
    );
    const finish = commandsBetween(t1, await commandCalls(inspect));
    assert.ok(
      total(finish) <= 20,
      `a finish cost ${total(finish)}: ${JSON.stringify([...finish])}`,
    );
    assert.equal(finish.get("hset"), 2, "the outcome with its bytes, then the terminal status");
    assert.equal(finish.get("publish"), 1);

    // The byte counts are the fields': result and message (the input requests went).
    const key = `{${prefix}}:tk:${scope.length}:${scope}${taskId}`;
    const fields = await inspect.hgetall(key);
    assert.equal(fields.s, "completed");
    assert.equal(fields.ir, undefined);
    const bytes = result.length + JSON.stringify("finished").length;
    assert.equal(Number(fields.n), bytes);
    assert.equal(Number(await inspect.zscore(`{${prefix}}:tbbytes`, "ip:127.0.0.1")), bytes);
    assert.equal(Number(await inspect.get(`{${prefix}}:tbytes`)), bytes);
    const done = await b.get(scope, taskId);
    assert.equal(done?.result, result);
    assert.equal(done?.statusMessage, "finished");
  });

  it("a get still answers after Redis's script cache was flushed, and a dead owner's task reads failed", async () => {
    const prefix = freshPrefix("task-commands-flush");
    const a = await make(prefix);
    const scope = "principal:bob";
    const taskId = newTaskId();
    await a.create({ scope, taskId, ttlMs: 60_000, pollIntervalMs: 1_000 });
    assert.equal((await a.get(scope, taskId))?.status, "working");
    await inspect.script("FLUSH");
    assert.equal((await a.get(scope, taskId))?.status, "working", "the script is sent again");
    assert.equal(await a.get(scope, newTaskId()), undefined);
    // The owner's lease is gone, and Redis has served long enough to judge it: failed at once,
    // the fields read being those the check wrote.
    await inspect.hset(`{${prefix}}:tk:${scope.length}:${scope}${taskId}`, "o", "ghost-node");
    await inspect.set(`{${prefix}}:tgrace`, "0");
    const read = await a.get(scope, taskId);
    assert.equal(read?.status, "failed");
    assert.equal(read?.owner, null);
    assert.match(read?.error ?? "", /-32603/);
  });

  it("a failed task's error is counted with its message, and a cleared message is gone", async () => {
    const prefix = freshPrefix("task-commands-error");
    const a = await make(prefix);
    const scope = "principal:alice";
    const taskId = newTaskId();
    await a.create({ scope, taskId, ttlMs: 60_000, pollIntervalMs: 1_000, statusMessage: "go" });
    const error = JSON.stringify({ code: -32603, message: "broke" });
    assert.equal(
      await a.finish(scope, taskId, { status: "failed", error, statusMessage: null }),
      "finished",
    );
    const key = `{${prefix}}:tk:${scope.length}:${scope}${taskId}`;
    const fields = await inspect.hgetall(key);
    assert.equal(fields.m, undefined);
    assert.equal(Number(fields.n), error.length);
    assert.equal(Number(await inspect.zscore(`{${prefix}}:tbbytes`, scope)), error.length);
    assert.equal(Number(await inspect.get(`{${prefix}}:tbytes`)), error.length);
  });
});
