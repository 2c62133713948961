/**
 * Tasks in the 2025-11-25 era (experimental tasks:
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks) with the
 * official 1.x client's experimental task API against a real server on 127.0.0.1, plus raw
 * requests where the client hides the wire.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";

import { countTool, sleepTool } from "../../src/cli/demo-tools.js";
import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { MemoryTaskStore } from "../../src/tasks/memory-task-store.js";
import { until } from "../server/fixtures.js";
import { legacy, taskTestTools, type WatchedRun, watchedTool } from "./wire.js";

describe("tasks, 2025-11-25 (experimental tasks)", () => {
  let server: McpServer;
  let url: string;
  const runs = new Map<string, WatchedRun>();
  const store = new MemoryTaskStore();
  /** Runs of `plain`, a tool that never runs as a task. */
  const plainRuns: number[] = [];
  const plainTool = defineTool({
    name: "plain",
    description: "Never a task (task support forbidden, the default)",
    handler: () => {
      plainRuns.push(Date.now());
      return `plain ${plainRuns.length}`;
    },
  });

  before(async () => {
    server = createMcpServer({
      name: "tasks-2025",
      version: "1.0.0",
      tools: [sleepTool, countTool, watchedTool(runs), plainTool, ...taskTestTools()],
      sessions: true,
      tasks: { store },
      onError: false,
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
  });

  after(async () => {
    await server.close();
  });

  async function connect(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const client = new Client({ name: "tasks-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(url));
    await client.connect(transport);
    return { client, transport };
  }

  test("initialize advertises tasks; tools/list publishes execution.taskSupport", async () => {
    const { client } = await connect();
    try {
      assert.deepEqual(client.getServerCapabilities()?.tasks, {
        list: {},
        cancel: {},
        requests: { tools: { call: {} } },
      });
      const { tools } = await client.listTools();
      const byName = new Map(tools.map((tool) => [tool.name, tool]));
      assert.deepEqual(byName.get("count")?.execution, { taskSupport: "optional" });
      assert.deepEqual(byName.get("only_task")?.execution, { taskSupport: "required" });
    } finally {
      await client.close();
    }
  });

  test("the official client runs a task to its result, then reads it with getTask and listTasks", async () => {
    const { client } = await connect();
    try {
      await client.listTools();
      const seen: string[] = [];
      let taskId = "";
      let result: unknown;
      const stream = client.experimental.tasks.callToolStream({
        name: "count",
        arguments: { to: 3, intervalMs: 50 },
      });
      for await (const message of stream) {
        seen.push(message.type);
        if (message.type === "taskCreated") taskId = message.task.taskId;
        if (message.type === "result") result = message.result;
        if (message.type === "error") throw message.error;
      }
      assert.equal(seen[0], "taskCreated");
      assert.deepEqual((result as { content: unknown }).content, [
        { type: "text", text: "counted to 3" },
      ]);
      const task = await client.experimental.tasks.getTask(taskId);
      assert.equal(task.status, "completed");
      assert.equal(task.statusMessage, "step 3 of 3");
      const listed = await client.experimental.tasks.listTasks();
      assert.ok(listed.tasks.some((t) => t.taskId === taskId));
    } finally {
      await client.close();
    }
  });

  test("cancelTask answers the cancelled task, aborts the handler; a second cancel is -32602", async () => {
    const { client } = await connect();
    try {
      const created = await client.request(
        {
          method: "tools/call",
          params: { name: "watched", arguments: { key: "cancel-2025", ms: 60_000 }, task: {} },
        },
        CreateTaskResultSchema,
      );
      const { taskId } = created.task;
      assert.equal(created.task.status, "working");
      await until(() => runs.has("cancel-2025"), 5_000, "the run to start");
      const cancelled = await client.experimental.tasks.cancelTask(taskId);
      assert.equal(cancelled.status, "cancelled");
      const run = runs.get("cancel-2025") as WatchedRun;
      await until(() => run.abortedAt !== null, 2_000, "the handler's signal to abort");
      await assert.rejects(client.experimental.tasks.cancelTask(taskId), (error: unknown) => {
        return (error as { code?: number }).code === -32602;
      });
      assert.equal((await client.experimental.tasks.getTask(taskId)).status, "cancelled");
    } finally {
      await client.close();
    }
  });

  test("tasks/result blocks until the task ends and carries the related-task _meta", async () => {
    const { client } = await connect();
    try {
      const created = await client.request(
        { method: "tools/call", params: { name: "sleep", arguments: { ms: 300 }, task: {} } },
        CreateTaskResultSchema,
      );
      const started = performance.now();
      const result = await client.experimental.tasks.getTaskResult(
        created.task.taskId,
        CallToolResultSchema,
      );
      assert.ok(performance.now() - started >= 150, "it waited for the task");
      assert.deepEqual(result.content, [{ type: "text", text: "slept 300 ms" }]);
      assert.deepEqual(result._meta?.["io.modelcontextprotocol/related-task"], {
        taskId: created.task.taskId,
      });
    } finally {
      await client.close();
    }
  });

  test("a tool error fails the task; tasks/result still returns the tool's result", async () => {
    const created = await legacy(url, "tools/call", {
      name: "tool_error",
      arguments: {},
      task: { ttl: 60_000 },
    });
    const { taskId, ttl } = created.json.result.task;
    assert.equal(ttl, 60_000, "the asked ttl is kept");
    const result = await legacy(url, "tasks/result", { taskId });
    assert.equal(result.json.result.isError, true);
    const read = await legacy(url, "tasks/get", { taskId });
    assert.equal(read.json.result.status, "failed");
  });

  test("a required tool without params.task is -32601; a ttl out of bounds is -32602 naming them; unknown ids are -32602", async () => {
    const refused = await legacy(url, "tools/call", { name: "only_task", arguments: {} });
    assert.equal(refused.json.error.code, -32601);
    const plain = await legacy(url, "tools/call", { name: "sleep", arguments: { ms: 1 } });
    assert.deepEqual(plain.json.result.content, [{ type: "text", text: "slept 1 ms" }]);
    // Refused, never silently clamped: the client would believe a retention it does not get.
    for (const ttl of [10 ** 12, 86_400_001, 999, 0, -5, "60000", {}]) {
      const refusedTtl = await legacy(url, "tools/call", {
        name: "sleep",
        arguments: { ms: 1 },
        task: { ttl },
      });
      assert.equal(refusedTtl.json.error?.code, -32602, `${ttl}: ${refusedTtl.text}`);
      assert.equal(
        refusedTtl.json.error.message,
        "params.task.ttl must be a number of milliseconds from 1000 to 86400000",
      );
    }
    const longest = await legacy(url, "tools/call", {
      name: "sleep",
      arguments: { ms: 1 },
      task: { ttl: 86_400_000 },
    });
    assert.equal(longest.json.result.task.ttl, 86_400_000, "maxTtlMs itself is accepted");
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      const answer = await legacy(url, method, { taskId: "AAAAAAAAAAAAAAAAAAAAAA" });
      assert.equal(answer.json.error.code, -32602, `${method}: ${answer.text}`);
      assert.equal(answer.json.error.message, "Failed to retrieve task: Task not found");
    }
    const badCursor = await legacy(url, "tasks/list", { cursor: "forged" });
    assert.equal(badCursor.json.error.code, -32602);
  });

  test("a forbidden tool called with params.task is -32601 and does not run; without it, it runs", async () => {
    plainRuns.length = 0;
    for (const task of [{}, { ttl: 60_000 }]) {
      const refused = await legacy(url, "tools/call", { name: "plain", arguments: {}, task });
      assert.equal(refused.json.error?.code, -32601, refused.text);
      assert.equal(
        refused.json.error.message,
        "This tool does not run as a task: call it without params.task",
      );
    }
    assert.equal(plainRuns.length, 0, "the handler never ran");
    const ran = await legacy(url, "tools/call", { name: "plain", arguments: {} });
    assert.deepEqual(ran.json.result.content, [{ type: "text", text: "plain 1" }]);
    const listed = await legacy(url, "tools/list", {});
    const plain = listed.json.result.tools.find((t: { name: string }) => t.name === "plain");
    assert.equal(plain.execution, undefined, "forbidden is the default: no execution published");
  });

  test("closing the client without DELETE leaves the task running; DELETE of its session cancels it", async () => {
    const { client, transport } = await connect();
    const created = await client.request(
      {
        method: "tools/call",
        params: { name: "watched", arguments: { key: "session-2025", ms: 60_000 }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    const sessionId = transport.sessionId as string;
    await until(() => runs.has("session-2025"), 5_000, "the run to start");
    const run = runs.get("session-2025") as WatchedRun;
    // The creating request has long been answered and its connection gone: the task runs on.
    assert.equal(run.abortedAt, null);
    assert.equal((await store.get(`session:${sessionId}`, taskId))?.status, "working");
    await transport.terminateSession();
    await until(() => run.abortedAt !== null, 2_000, "the session's DELETE to abort the task");
    await until(
      async () => (await store.get(`session:${sessionId}`, taskId))?.status === "cancelled",
      2_000,
      "the task to read cancelled",
    );
    const read = await store.get(`session:${sessionId}`, taskId);
    assert.equal(
      read?.statusMessage,
      "The session that owned this task ended (closed, or expired while idle).",
    );
    await client.close();
  });
});
