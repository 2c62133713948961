/**
 * Asking the client from a 2025-11-25 task
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks, "Input Required
 * Status", "Task-Augmented Tool Call With Elicitation"), one node, a real server on 127.0.0.1:
 *
 * - raw HTTP: the task reads `input_required`; `tasks/result` streams `elicitation/create`,
 *   `sampling/createMessage` and `roots/list` one after the other, each with the related-task
 *   `_meta`; the client's answer POSTs reach the handler and the same stream ends with the
 *   result; the task reads `working` again between questions;
 * - a session that did not declare the capability is not asked (the ask rejects as in a call);
 * - an unanswered question times out (`serverRequests.timeoutMs`): it leaves the record and the
 *   table, and the task goes on; a `tasks/result` stream that sent it is told with
 *   `notifications/cancelled` (an answered one is not); a task cancelled while it waits leaves
 *   nothing in the table;
 * - a session's GET stream hears `notifications/tasks/status` for its own tasks (parked, then
 *   completed) and nothing of another session's;
 * - the SDK 1.x client (`client.experimental.tasks.callToolStream`): it polls, sees
 *   `input_required`, opens `tasks/result`, answers the elicitation, and gets the result.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { ClientRequestFailedError } from "../../src/errors.js";
import { createMcpServer, defineTool, type McpServer } from "../../src/server/index.js";
import { transportCore } from "../../src/server/transport-core.js";
import {
  answer,
  isRequest,
  isResponseTo,
  type Message,
  openCall,
  openSession,
  sessionHeaders,
} from "../asking/stream.js";
import { rpc, until } from "../server/fixtures.js";
import { legacy, untilTerminal } from "./wire.js";

const RELATED = "io.modelcontextprotocol/related-task";
const EVERYTHING = { elicitation: {}, sampling: {}, roots: {} };

const askAll = defineTool({
  name: "ask_all",
  description: "Asks a name, a model and the roots, one after the other, as a task",
  task: "required",
  handler: async (_args, ctx) => {
    const named = await ctx.elicit("Your name?", {
      type: "object",
      properties: { name: { type: "string" } },
      required: ["name"],
    });
    const name = named.action === "accept" ? String(named.content.name) : "nobody";
    const sampled = await ctx.sample({
      messages: [{ role: "user", content: { type: "text", text: "A word?" } }],
      maxTokens: 10,
    });
    const content = Array.isArray(sampled.content) ? sampled.content[0] : sampled.content;
    const roots = await ctx.roots();
    return `${name} ${String((content as { text?: unknown }).text)} ${roots.roots.length}`;
  },
});

/** Asks once, then works on for 1 s (the status notification test watches that stretch). */
const askThenWork = defineTool({
  name: "ask_then_work",
  description: "Asks a name as a task, then works 1 s",
  task: "required",
  handler: async (_args, ctx) => {
    const named = await ctx.elicit("Your name?", {
      type: "object",
      properties: { name: { type: "string" } },
    });
    await delay(1_000, undefined, { signal: ctx.signal });
    return `worked for ${named.action === "accept" ? String(named.content.name) : "nobody"}`;
  },
});

/** Asks once; says how the ask ended instead of failing (the timeout test reads it). */
const askOnce = defineTool({
  name: "ask_once",
  description: "Asks a name as a task and reports how the ask ended",
  task: "required",
  handler: async (_args, ctx) => {
    try {
      const named = await ctx.elicit("Your name?", {
        type: "object",
        properties: { name: { type: "string" } },
      });
      return `answered ${named.action}`;
    } catch (error) {
      if (error instanceof ClientRequestFailedError) return `failed ${error.reason}`;
      return `refused ${(error as Error).name}`;
    }
  },
});

/** Asks once and lets it time out, then asks again (the withdrawal test answers only the second). */
const askAgainAfterTimeout = defineTool({
  name: "ask_again_after_timeout",
  description: "Asks a name as a task; when that times out, asks a colour",
  task: "required",
  handler: async (_args, ctx) => {
    const schema = { type: "object", properties: { value: { type: "string" } } } as const;
    try {
      await ctx.elicit("Your name?", schema);
      return "answered the first";
    } catch (error) {
      if (!(error instanceof ClientRequestFailedError)) throw error;
    }
    const colour = await ctx.elicit("Your colour?", schema);
    return `second ${colour.action}`;
  },
});

async function createTask(url: string, headers: Record<string, string>, name: string) {
  const created = await rpc(
    url,
    {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name, arguments: {}, task: { ttl: 60_000 } },
    },
    headers,
  );
  const taskId = (created.json as { result?: { task?: { taskId?: string } } }).result?.task?.taskId;
  assert.ok(typeof taskId === "string", created.text);
  return taskId;
}

async function statusOf(url: string, taskId: string, sessionId: string): Promise<string> {
  return (await legacy(url, "tasks/get", { taskId }, { sessionId })).json.result.status;
}

describe("2025-11-25 tasks that ask the client", () => {
  let server: McpServer;
  let url: string;
  const table = () => transportCore(server).dispatcher.serverRequests.table;

  before(async () => {
    server = createMcpServer({
      tools: [askAll, askOnce, askThenWork, askAgainAfterTimeout],
      sessions: true,
      onError: false,
      serverRequests: { timeoutMs: 1_500 },
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
  });
  after(() => server.close());

  test("tasks/result streams each question with the related-task _meta; the answers reach the handler", async () => {
    const sessionId = await openSession(url, EVERYTHING);
    const headers = sessionHeaders(sessionId);
    const taskId = await createTask(url, headers, "ask_all");
    await until(async () => (await statusOf(url, taskId, sessionId)) === "input_required", 5_000);

    const stream = await openCall(
      url,
      { jsonrpc: "2.0", id: "r", method: "tasks/result", params: { taskId } },
      headers,
    );
    try {
      const elicit = await stream.next(isRequest("elicitation/create"));
      assert.deepEqual(elicit.params._meta, { [RELATED]: { taskId } });
      assert.equal(elicit.params.message, "Your name?");
      await answer(
        url,
        elicit.id,
        { result: { action: "accept", content: { name: "Ada" } } },
        headers,
      );

      const sample = await stream.next(isRequest("sampling/createMessage"));
      assert.deepEqual(sample.params._meta, { [RELATED]: { taskId } });
      await answer(
        url,
        sample.id,
        { result: { role: "assistant", model: "m", content: { type: "text", text: "blue" } } },
        headers,
      );
      const roots = await stream.next(isRequest("roots/list"));
      assert.deepEqual(roots.params._meta, { [RELATED]: { taskId } });
      await answer(url, roots.id, { result: { roots: [{ uri: "file:///a" }] } }, headers);

      const result: Message = await stream.next(isResponseTo("r"));
      assert.deepEqual(result.result.content, [{ type: "text", text: "Ada blue 1" }]);
      assert.deepEqual(result.result._meta, { [RELATED]: { taskId } });
      // Every question was answered: none is announced as withdrawn.
      assert.ok(
        stream.seen.every((m: Message) => m.method !== "notifications/cancelled"),
        JSON.stringify(stream.seen),
      );
    } finally {
      stream.abort();
    }
    assert.equal(await statusOf(url, taskId, sessionId), "completed");
    assert.equal(table().size, 0);
  });

  test("tasks/result sends notifications/tasks/status when the task goes back to working", async () => {
    const sessionId = await openSession(url, EVERYTHING);
    const headers = sessionHeaders(sessionId);
    const taskId = await createTask(url, headers, "ask_then_work");
    const stream = await openCall(
      url,
      { jsonrpc: "2.0", id: "r", method: "tasks/result", params: { taskId } },
      headers,
    );
    try {
      const status = (value: string) => (m: Message) =>
        m?.method === "notifications/tasks/status" && m.params.status === value;
      const asked = await stream.next(isRequest("elicitation/create"));
      await answer(
        url,
        asked.id,
        { result: { action: "accept", content: { name: "Lin" } } },
        headers,
      );
      const working = await stream.next(status("working"));
      assert.equal(working.params.taskId, taskId);
      assert.equal(working.params._meta, undefined);
      assert.equal(typeof working.params.lastUpdatedAt, "string");
      const result: Message = await stream.next(isResponseTo("r"));
      assert.deepEqual(result.result.content, [{ type: "text", text: "worked for Lin" }]);
      // The terminal status is the response itself: no notification for it.
      const order = stream.seen.map((m: Message) => m.method ?? "response");
      assert.equal(order.at(-1), "response");
      assert.ok(
        stream.seen.every(
          (m: Message) =>
            m.method !== "notifications/tasks/status" || m.params.status !== "completed",
        ),
        JSON.stringify(order),
      );
    } finally {
      stream.abort();
    }
  });

  test("a question stays outstanding for a later tasks/result; cancelling the waiting task empties the table", async () => {
    const sessionId = await openSession(url, EVERYTHING);
    const headers = sessionHeaders(sessionId);
    const taskId = await createTask(url, headers, "ask_all");
    await until(async () => (await statusOf(url, taskId, sessionId)) === "input_required", 5_000);
    // A first tasks/result receives the question, then hangs up without answering.
    const first = await openCall(
      url,
      { jsonrpc: "2.0", id: "r1", method: "tasks/result", params: { taskId } },
      headers,
    );
    const asked = await first.next(isRequest("elicitation/create"));
    first.abort();
    // A second one receives the same question again (same id): it is still outstanding.
    const second = await openCall(
      url,
      { jsonrpc: "2.0", id: "r2", method: "tasks/result", params: { taskId } },
      headers,
    );
    try {
      const again = await second.next(isRequest("elicitation/create"));
      assert.equal(again.id, asked.id);
      await answer(url, asked.id, { result: { action: "decline" } }, headers);
      await second.next(isRequest("sampling/createMessage"));
    } finally {
      second.abort();
    }
    // Parked again on the sampling question; then cancel: nothing stays in the table.
    assert.equal(await statusOf(url, taskId, sessionId), "input_required");
    const cancelled = await legacy(url, "tasks/cancel", { taskId }, { sessionId });
    assert.equal(cancelled.json.result.status, "cancelled", cancelled.text);
    await until(async () => table().size === 0, 5_000);
    assert.equal(table().size, 0);
  });

  test("a question that times out is announced on the tasks/result stream that sent it", async () => {
    const sessionId = await openSession(url, EVERYTHING);
    const headers = sessionHeaders(sessionId);
    const taskId = await createTask(url, headers, "ask_again_after_timeout");
    const stream = await openCall(
      url,
      { jsonrpc: "2.0", id: "r", method: "tasks/result", params: { taskId } },
      headers,
    );
    try {
      const first = await stream.next(isRequest("elicitation/create"));
      assert.equal(first.params.message, "Your name?");
      // Left unanswered: withdrawn at the 1.5 s timeout, and the client is told.
      const withdrawn = await stream.next(
        (m: Message) => m?.method === "notifications/cancelled",
        15_000,
      );
      assert.deepEqual(withdrawn.params, {
        requestId: first.id,
        reason: "timeout",
        _meta: { [RELATED]: { taskId } },
      });
      const second = await stream.next(
        (m: Message) => isRequest("elicitation/create")(m) && m.id !== first.id,
      );
      assert.equal(second.params.message, "Your colour?");
      await answer(url, second.id, { result: { action: "decline" } }, headers);
      const result: Message = await stream.next(isResponseTo("r"));
      assert.deepEqual(result.result.content, [{ type: "text", text: "second decline" }]);
      const cancels = stream.seen.filter((m: Message) => m.method === "notifications/cancelled");
      assert.equal(cancels.length, 1, JSON.stringify(stream.seen));
    } finally {
      stream.abort();
    }
    assert.equal(table().size, 0);
  });

  test("a session that did not declare elicitation is not asked", async () => {
    const sessionId = await openSession(url, {});
    const taskId = await createTask(url, sessionHeaders(sessionId), "ask_once");
    const done = await untilTerminal(() => legacy(url, "tasks/get", { taskId }, { sessionId }));
    assert.equal(done.status, "completed", JSON.stringify(done));
    const result = await legacy(url, "tasks/result", { taskId }, { sessionId });
    assert.deepEqual(result.json.result.content, [
      { type: "text", text: "refused MissingClientCapabilityError" },
    ]);
  });

  test("an unanswered question times out: it leaves the record and the table, the task goes on", async () => {
    const sessionId = await openSession(url, EVERYTHING);
    const taskId = await createTask(url, sessionHeaders(sessionId), "ask_once");
    await until(async () => (await statusOf(url, taskId, sessionId)) === "input_required", 5_000);
    assert.equal(table().size, 1);
    const done = await untilTerminal(
      () => legacy(url, "tasks/get", { taskId }, { sessionId }),
      10_000,
    );
    assert.equal(done.status, "completed", JSON.stringify(done));
    const result = await legacy(url, "tasks/result", { taskId }, { sessionId });
    assert.deepEqual(result.json.result.content, [{ type: "text", text: "failed timeout" }]);
    assert.equal(table().size, 0);
  });

  test("a session's GET stream hears notifications/tasks/status of its own tasks only", async () => {
    const sessionId = await openSession(url, EVERYTHING);
    const other = await openSession(url, EVERYTHING);
    const headers = sessionHeaders(sessionId);
    const mine = await openCall(url, null, headers);
    const theirs = await openCall(url, null, sessionHeaders(other));
    try {
      const taskId = await createTask(url, headers, "ask_once");
      const status = (value: string) => (m: Message) =>
        m?.method === "notifications/tasks/status" &&
        m.params.taskId === taskId &&
        m.params.status === value;
      const parked = await mine.next(status("input_required"));
      assert.equal(parked.params._meta, undefined);
      assert.equal(typeof parked.params.createdAt, "string");
      // The question itself goes out on tasks/result (not on the GET stream).
      const result = await openCall(
        url,
        { jsonrpc: "2.0", id: "r", method: "tasks/result", params: { taskId } },
        headers,
      );
      const asked = await result.next(isRequest("elicitation/create"));
      await answer(url, asked.id, { result: { action: "decline" } }, headers);
      await result.next(isResponseTo("r"));
      result.abort();
      await mine.next(status("completed"));
      assert.ok(
        mine.seen.every((m: Message) => m.method !== "elicitation/create"),
        JSON.stringify(mine.seen),
      );
      assert.ok(
        theirs.seen.every((m: Message) => m.method !== "notifications/tasks/status"),
        JSON.stringify(theirs.seen),
      );
    } finally {
      mine.abort();
      theirs.abort();
    }
  });

  test("the SDK 1.x client answers a task's elicitation through tasks/result", async () => {
    const client = new Client(
      { name: "task-asks", version: "1.0.0" },
      { capabilities: { elicitation: {} } },
    );
    const asked: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params._meta);
      return { action: "accept", content: { name: "Grace" } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const seen: string[] = [];
      let text = "";
      let taskId = "";
      const stream = client.experimental.tasks.callToolStream(
        { name: "ask_once", arguments: {} },
        CallToolResultSchema,
        { task: { ttl: 60_000 } },
      );
      for await (const message of stream) {
        seen.push(message.type);
        if (message.type === "taskCreated") taskId = message.task.taskId;
        if (message.type === "result") {
          text = (message.result.content as { text: string }[]).map((b) => b.text).join("");
        }
        if (message.type === "error") assert.fail(String(message.error));
      }
      assert.equal(text, "answered accept");
      assert.equal(seen[0], "taskCreated");
      assert.deepEqual(asked, [{ [RELATED]: { taskId } }]);
    } finally {
      await client.close();
    }
  });
});
