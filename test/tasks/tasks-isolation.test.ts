/**
 * Tasks are scoped and bounded (docs/tasks.md; docs/architecture.md, "Decisions and why"):
 * another tenant's get, cancel, update, list and result of a task id, and a sweep of guessed ids,
 * touch nothing and learn nothing; a scope at its quota is refused while others are served; the
 * global cap and the TTL janitor keep the table bounded under a flood. Real server on 127.0.0.1,
 * tenants told apart by bearer tokens (principal scopes).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";

import { sleepTool } from "../../src/cli/demo-tools.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { MemoryTaskStore } from "../../src/tasks/memory-task-store.js";
import { newTaskId } from "../../src/tasks/task-id.js";
import { until } from "../server/fixtures.js";
import { legacy, modern, type WatchedRun, watchedTool } from "./wire.js";

const ALICE = "secret-alice-0123456789";
const BOB = "secret-bob-0123456789";

/** The answer without its id: what a caller learns from it. */
function learnt(answer: { status: number; json: { error?: unknown; result?: unknown } }) {
  return JSON.stringify({
    status: answer.status,
    error: answer.json.error,
    result: answer.json.result,
  });
}

describe("tasks: tenant isolation and quota", () => {
  let server: McpServer;
  let url: string;
  const runs = new Map<string, WatchedRun>();
  const store = new MemoryTaskStore({ maxTasksPerScope: 3 });

  before(async () => {
    server = createMcpServer({
      name: "tasks-isolation",
      version: "1.0.0",
      tools: [sleepTool, watchedTool(runs)],
      auth: { tokens: { [ALICE]: "alice", [BOB]: "bob" } },
      tasks: { store },
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
  });

  after(async () => {
    await server.close();
  });

  test("another scope's get, cancel, update, list and result answer as for an unknown id", async () => {
    const created = await modern(
      url,
      "tools/call",
      { name: "watched", arguments: { key: "alice-1", ms: 60_000 } },
      { token: ALICE },
    );
    const { taskId } = created.json.result;
    await until(() => runs.has("alice-1"), 5_000, "alice's run to start");
    const unknown = newTaskId();
    for (const id of [taskId, unknown]) {
      assert.equal((await modern(url, "tasks/get", { taskId: id }, { token: BOB })).status, 200);
    }
    const calls: Array<[string, Record<string, unknown>]> = [
      ["tasks/get", {}],
      ["tasks/cancel", {}],
      ["tasks/update", { inputResponses: {} }],
    ];
    for (const [method, extra] of calls) {
      const theirs = await modern(url, method, { taskId, ...extra }, { token: BOB });
      const nobody = await modern(url, method, { taskId: unknown, ...extra }, { token: BOB });
      assert.equal(theirs.json.error.code, -32602, `${method}: ${theirs.text}`);
      assert.equal(learnt(theirs), learnt(nobody), `${method} learns nothing`);
    }
    for (const method of ["tasks/get", "tasks/cancel", "tasks/result"]) {
      const theirs = await legacy(url, method, { taskId }, { token: BOB });
      const nobody = await legacy(url, method, { taskId: unknown }, { token: BOB });
      assert.equal(learnt(theirs), learnt(nobody), `2025 ${method} learns nothing`);
    }
    const listed = await legacy(url, "tasks/list", {}, { token: BOB });
    assert.deepEqual(listed.json.result.tasks, []);
    // Alice's task ran on, untouched.
    assert.equal((runs.get("alice-1") as WatchedRun).abortedAt, null);
    const mine = await modern(url, "tasks/get", { taskId }, { token: ALICE });
    assert.equal(mine.json.result.status, "working");
    const aliceList = await legacy(url, "tasks/list", {}, { token: ALICE });
    assert.deepEqual(
      aliceList.json.result.tasks.map((t: { taskId: string }) => t.taskId),
      [taskId],
    );
    await modern(url, "tasks/cancel", { taskId }, { token: ALICE });
  });

  test("a sweep of guessed ids touches nothing and every answer is the same", async () => {
    const created = await modern(
      url,
      "tools/call",
      { name: "watched", arguments: { key: "alice-sweep", ms: 60_000 } },
      { token: ALICE },
    );
    const { taskId } = created.json.result;
    // Near misses of the real id, random ids and malformed ones.
    const guesses = [
      `${taskId.slice(0, -1)}${taskId.endsWith("A") ? "B" : "A"}`,
      taskId.toLowerCase() === taskId ? taskId.toUpperCase() : taskId.toLowerCase(),
      ...Array.from({ length: 100 }, () => newTaskId()),
      "",
      "*",
      `${taskId} `,
    ];
    const answers = new Set<string>();
    for (const guess of guesses) {
      if (guess === taskId) continue;
      answers.add(
        learnt(
          await modern(url, "tasks/get", { taskId: guess }, { token: ALICE, name: guess || "x" }),
        ),
      );
      answers.add(
        learnt(
          await modern(url, "tasks/cancel", { taskId: guess }, { token: BOB, name: guess || "x" }),
        ),
      );
    }
    // Empty and padded ids fail the Mcp-Name check; every other guess is the one not-found answer.
    const notFound = [...answers].filter((a) => a.includes("Task not found"));
    assert.equal(notFound.length, 1, [...answers].join("\n"));
    const mine = await modern(url, "tasks/get", { taskId }, { token: ALICE });
    assert.equal(mine.json.result.status, "working");
    await modern(url, "tasks/cancel", { taskId }, { token: ALICE });
  });

  test("a scope at its task quota is refused with a clear error while another is served", async () => {
    const keys = ["q1", "q2", "q3"];
    const ids: string[] = [];
    // Earlier tests left alice finished (cancelled) tasks: they make room; running ones do not.
    for (const key of keys) {
      const created = await modern(
        url,
        "tools/call",
        { name: "watched", arguments: { key, ms: 60_000 } },
        { token: ALICE },
      );
      assert.equal(created.status, 200, created.text);
      ids.push(created.json.result.taskId);
    }
    const refused = await modern(
      url,
      "tools/call",
      { name: "watched", arguments: { key: "q4", ms: 60_000 } },
      { token: ALICE },
    );
    assert.equal(refused.status, 429);
    assert.equal(refused.json.error.code, -32000);
    assert.match(refused.json.error.message, /Too many tasks/);
    assert.equal(runs.has("q4"), false, "the refused tool never ran");
    const bob = await modern(
      url,
      "tools/call",
      { name: "sleep", arguments: { ms: 1 } },
      { token: BOB },
    );
    assert.equal(bob.json.result.resultType, "task", "bob is served");
    // Cancelling one frees a place at once (a finished task makes room).
    await modern(url, "tasks/cancel", { taskId: ids[0] }, { token: ALICE });
    const again = await modern(
      url,
      "tools/call",
      { name: "sleep", arguments: { ms: 1 } },
      { token: ALICE },
    );
    assert.equal(again.json.result.resultType, "task");
    for (const taskId of ids) await modern(url, "tasks/cancel", { taskId }, { token: ALICE });
  });
});

describe("tasks: the global cap and the TTL janitor under a flood", () => {
  let server: McpServer;
  let url: string;
  const store = new MemoryTaskStore({ maxTasks: 20, maxTasksPerScope: 5 });
  const tokens = Array.from({ length: 8 }, (_, i) => `secret-tenant-${i}-0123456789`);

  before(async () => {
    server = createMcpServer({
      name: "tasks-flood",
      version: "1.0.0",
      tools: [sleepTool],
      auth: { tokens: Object.fromEntries(tokens.map((token, i) => [token, `tenant-${i}`])) },
      tasks: { store, defaultTtlMs: 300, sweepIntervalMs: 50 },
      maxConcurrentRequestsPerScope: 1_000,
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
  });

  after(async () => {
    await server.close();
  });

  test("the table never exceeds the cap, and finished tasks are swept after their TTL", async () => {
    let created = 0;
    let max = 0;
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(
        tokens.map((token) =>
          modern(url, "tools/call", { name: "sleep", arguments: { ms: 20 } }, { token }),
        ),
      );
      for (const answer of answers) if (answer.json.result?.resultType === "task") created++;
      max = Math.max(max, await store.size());
      assert.ok((await store.size()) <= 20, "at most the cap");
    }
    assert.ok(created >= 40, `the flood was served (${created} tasks)`);
    assert.ok(max > 0);
    await until(async () => (await store.size()) === 0, 5_000, "the janitor to sweep every task");
    // Swept, not just hidden: nothing is left to read.
    await delay(10);
    assert.equal(await store.size(), 0);
  });
});
