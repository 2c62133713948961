/**
 * Tasks in the 2026-07-28 era (the `io.modelcontextprotocol/tasks` extension, SEP-2663:
 * https://modelcontextprotocol.io/extensions/tasks/overview) over raw HTTP against a real server
 * on 127.0.0.1: the official 2.x client does not serve tasks, so requests are built by hand.
 */
import assert from "node:assert/strict";
import diagnosticsChannel from "node:diagnostics_channel";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";

import { countTool, sleepTool } from "../../src/cli/demo-tools.js";
import { ChannelName, type ToolKilledMessage } from "../../src/diagnostics.js";
import { RequestCancelledError } from "../../src/errors.js";
import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { until } from "../server/fixtures.js";
import {
  askNameTaskTool,
  modern,
  TASKS_EXTENSION,
  taskTestTools,
  untilTerminal,
  type WatchedRun,
  watchedTool,
} from "./wire.js";

describe("tasks, 2026-07-28 (tasks extension)", () => {
  let server: McpServer;
  let url: string;
  const runs = new Map<string, WatchedRun>();

  before(async () => {
    server = createMcpServer({
      name: "tasks-2026",
      version: "1.0.0",
      tools: [
        sleepTool,
        countTool,
        watchedTool(runs),
        ...taskTestTools(),
        askNameTaskTool(),
        defineTool({
          name: "throws",
          description: "Throws",
          task: "optional",
          handler: () => {
            throw new Error("secret internals /etc/passwd");
          },
        }),
      ],
      onError: false,
      streamCancelTimeoutMs: 300,
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
  });

  after(async () => {
    await server.close();
  });

  test("server/discover advertises the extension, never a tasks capability", async () => {
    const answer = await modern(url, "server/discover", {});
    assert.equal(answer.status, 200, answer.text);
    const { capabilities } = answer.json.result;
    assert.deepEqual(capabilities.extensions, { [TASKS_EXTENSION]: {} });
    assert.equal(capabilities.tasks, undefined);
  });

  test("a call declaring the extension gets a task at once; tasks/get inlines the result", async () => {
    const created = await modern(url, "tools/call", {
      name: "count",
      arguments: { to: 3, intervalMs: 50 },
    });
    assert.equal(created.status, 200, created.text);
    const task = created.json.result;
    assert.equal(task.resultType, "task");
    assert.equal(task.status, "working");
    assert.match(task.taskId, /^[A-Za-z0-9_-]{22}$/);
    assert.equal(typeof task.ttlMs, "number");
    assert.equal(typeof task.pollIntervalMs, "number");
    assert.ok(!("ttl" in task) && !("pollInterval" in task) && !("task" in task));
    // Durable at once: a get right after the create resolves.
    const first = await modern(url, "tasks/get", { taskId: task.taskId });
    assert.equal(first.json.result.taskId, task.taskId);
    assert.equal(first.json.result.resultType, "complete");
    const done = await untilTerminal(() => modern(url, "tasks/get", { taskId: task.taskId }));
    assert.equal(done.status, "completed");
    assert.deepEqual(done.result, { content: [{ type: "text", text: "counted to 3" }] });
    assert.equal(done.statusMessage, "step 3 of 3", "progress became the status message");
    assert.ok(Date.parse(String(done.lastUpdatedAt)) >= Date.parse(String(done.createdAt)));
  });

  test("a tool error completes the task with isError; a thrown error fails it with a bare -32603", async () => {
    const toolError = await modern(url, "tools/call", { name: "tool_error", arguments: {} });
    const completed = await untilTerminal(() =>
      modern(url, "tasks/get", { taskId: toolError.json.result.taskId }),
    );
    assert.equal(completed.status, "completed");
    assert.equal((completed.result as { isError: boolean }).isError, true);

    const thrown = await modern(url, "tools/call", { name: "throws", arguments: {} });
    const failed = await untilTerminal(() =>
      modern(url, "tasks/get", { taskId: thrown.json.result.taskId }),
    );
    assert.equal(failed.status, "failed");
    assert.equal((failed.error as { code: number }).code, -32603);
    assert.equal(failed.result, undefined);
    assert.ok(!JSON.stringify(failed).includes("passwd"), "nothing internal leaks");
  });

  test("tasks/cancel answers an empty ack and aborts the handler's signal", async () => {
    const created = await modern(url, "tools/call", {
      name: "watched",
      arguments: { key: "cancel-2026", ms: 60_000 },
    });
    const { taskId } = created.json.result;
    await until(() => runs.has("cancel-2026"), 5_000, "the run to start");
    const ack = await modern(url, "tasks/cancel", { taskId });
    assert.equal(ack.status, 200, ack.text);
    assert.deepEqual(ack.json.result, { resultType: "complete" });
    const run = runs.get("cancel-2026") as WatchedRun;
    await until(() => run.abortedAt !== null, 2_000, "the handler's signal to abort");
    assert.ok(run.reason instanceof RequestCancelledError);
    const read = await modern(url, "tasks/get", { taskId });
    assert.equal(read.json.result.status, "cancelled");
    // Cancelling a terminal task is the same empty ack.
    const again = await modern(url, "tasks/cancel", { taskId });
    assert.deepEqual(again.json.result, { resultType: "complete" });
  });

  test("a handler that ignores its signal is abandoned; the task stays cancelled", async () => {
    const created = await modern(url, "tools/call", {
      name: "watched",
      arguments: { key: "stubborn-2026", ms: 1_500, ignoreSignal: true },
    });
    const { taskId } = created.json.result;
    const killed: ToolKilledMessage[] = [];
    const onKilled = (message: unknown) => killed.push(message as ToolKilledMessage);
    diagnosticsChannel.subscribe(ChannelName.toolKilled, onKilled);
    try {
      await until(() => runs.has("stubborn-2026"), 5_000, "the run to start");
      await modern(url, "tasks/cancel", { taskId });
      // Abandoned after streamCancelTimeoutMs (300 ms), like a call that ignores its signal.
      await until(() => killed.length > 0, 5_000, "the stubborn run to be abandoned");
    } finally {
      diagnosticsChannel.unsubscribe(ChannelName.toolKilled, onKilled);
    }
    assert.equal(killed[0]?.tool, "watched");
    await delay(1_600);
    const read = await modern(url, "tasks/get", { taskId });
    assert.equal(read.json.result.status, "cancelled", "its late result is discarded");
  });

  test("without the extension: task-supporting tools run synchronously, tasks/* are -32021", async () => {
    const call = await modern(
      url,
      "tools/call",
      { name: "sleep", arguments: { ms: 1 } },
      { extension: false },
    );
    assert.equal(call.json.result.resultType, "complete");
    assert.equal(call.json.result.taskId, undefined);
    assert.deepEqual(call.json.result.content, [{ type: "text", text: "slept 1 ms" }]);
    for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
      const params: Record<string, unknown> = { taskId: "AAAAAAAAAAAAAAAAAAAAAA" };
      if (method === "tasks/update") params.inputResponses = {};
      const answer = await modern(url, method, params, { extension: false });
      assert.equal(answer.status, 400, `${method}: ${answer.text}`);
      assert.equal(answer.json.error.code, -32021);
      assert.deepEqual(answer.json.error.data.requiredCapabilities, {
        extensions: { [TASKS_EXTENSION]: {} },
      });
    }
    const required = await modern(
      url,
      "tools/call",
      { name: "only_task", arguments: {} },
      { extension: false },
    );
    assert.equal(required.status, 400, required.text);
    assert.equal(required.json.error.code, -32021);
  });

  test("tasks/result and tasks/list do not exist in this era (-32601)", async () => {
    for (const method of ["tasks/result", "tasks/list"]) {
      const answer = await modern(url, method, { taskId: "AAAAAAAAAAAAAAAAAAAAAA" });
      assert.equal(answer.json.error.code, -32601, `${method}: ${answer.text}`);
    }
  });

  test("unknown and malformed task ids are -32602; Mcp-Name must match the task id", async () => {
    for (const taskId of ["AAAAAAAAAAAAAAAAAAAAAA", "x", "../../etc"]) {
      const answer = await modern(url, "tasks/get", { taskId });
      assert.equal(answer.json.error.code, -32602, answer.text);
      assert.equal(answer.json.error.message, "Task not found");
    }
    const created = await modern(url, "tools/call", { name: "sleep", arguments: { ms: 1 } });
    const mismatch = await modern(
      url,
      "tasks/get",
      { taskId: created.json.result.taskId },
      { name: "another-task" },
    );
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.json.error.code, -32020);
  });

  test("tasks/update acknowledges a known task and refuses malformed input", async () => {
    const created = await modern(url, "tools/call", { name: "sleep", arguments: { ms: 1 } });
    const { taskId } = created.json.result;
    const ack = await modern(url, "tasks/update", { taskId, inputResponses: { nothing: {} } });
    assert.deepEqual(ack.json.result, { resultType: "complete" });
    const bad = await modern(url, "tasks/update", { taskId, inputResponses: 5 });
    assert.equal(bad.json.error.code, -32602);
    const unknown = await modern(url, "tasks/update", {
      taskId: "AAAAAAAAAAAAAAAAAAAAAA",
      inputResponses: {},
    });
    assert.equal(unknown.json.error.code, -32602);
  });

  test("an ask parks the task in input_required; tasks/update answers it and the handler resumes", async () => {
    const elicitation = { elicitation: {} };
    const created = await modern(
      url,
      "tools/call",
      { name: "ask_name", arguments: {} },
      { capabilities: elicitation },
    );
    const { taskId } = created.json.result;
    let parked: Record<string, unknown> = {};
    await until(
      async () => {
        parked = (await modern(url, "tasks/get", { taskId })).json.result;
        return parked.status === "input_required";
      },
      5_000,
      "the task to wait for input",
    );
    const requests = parked.inputRequests as Record<string, { method: string }>;
    assert.deepEqual(Object.keys(requests), ["name"]);
    assert.equal(requests.name?.method, "elicitation/create");
    const invalid = await modern(url, "tasks/update", {
      taskId,
      inputResponses: { name: { action: "accept", content: { name: 42 } } },
    });
    assert.equal(invalid.json.error.code, -32602, invalid.text);
    assert.equal((await modern(url, "tasks/get", { taskId })).json.result.status, "input_required");
    const ack = await modern(url, "tasks/update", {
      taskId,
      inputResponses: { name: { action: "accept", content: { name: "Ada" } }, other: {} },
    });
    assert.deepEqual(ack.json.result, { resultType: "complete" });
    const done = await untilTerminal(() => modern(url, "tasks/get", { taskId }));
    assert.equal(done.status, "completed");
    assert.deepEqual(done.result, { content: [{ type: "text", text: "Hello, Ada!" }] });
    assert.equal(done.inputRequests, undefined);
  });
});
