/**
 * Ask first, then become a task: a tool's `beforeTask` (docs/tasks.md; SEP-2663, "Composition
 * with Multi Round-Trip Requests": https://modelcontextprotocol.io/extensions/tasks/overview)
 * against a real server on 127.0.0.1, over raw HTTP and with the official 2.x client pinned to
 * 2026-07-28 (which drives input_required rounds itself but does not implement tasks).
 *
 * - 2026-07-28 with the extension: round 1 is a plain input_required result (no task exists, the
 *   handler has not run); round 2 with the answer is a `CreateTaskResult` without `requestState`
 *   or `inputRequests`; the task's result carries the answer. A `beforeTask` that throws answers
 *   the request and creates no task; one that swallows its pending ask still answers
 *   input_required and creates none.
 * - Without the extension (optional tool): both run on the request, through the same rounds.
 * - 2025-11-25 `params.task`: the task is created at once, `beforeTask` runs inside it (its ask
 *   goes through the task: `tasks/result`, with the SDK 1.x client); a plain 2025 call asks on
 *   its own stream.
 * - defineTool refuses `beforeTask` where it cannot work.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { InvalidOptionError, InvalidParamsError } from "../../src/errors.js";
import { isolatedHandler } from "../../src/isolation/index.js";
import { defineTool, InputPending } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { MemoryTaskStore } from "../../src/tasks/memory-task-store.js";
import { until } from "../server/fixtures.js";
import { legacy, modern, untilTerminal } from "./wire.js";

const NAME_FORM = {
  type: "object",
  properties: { name: { type: "string" } },
  required: ["name"],
} as const;
const ELICITATION = { elicitation: {} };
/** The scope of an unauthenticated 2026-07-28 caller on 127.0.0.1 (its IP bucket). */
const SCOPE = "ip:127.0.0.1";
const RELATED = "io.modelcontextprotocol/related-task";
const ISOLATED = new URL("../fixtures/isolated-tools.ts", import.meta.url);

/** What the tools saw: how often each phase ran, and with what. */
const seen = {
  before: 0,
  handled: [] as unknown[],
  /** Opens the gate `gated`'s beforeTask waits at (one per waiting run). */
  gates: [] as (() => void)[],
  /** The signal of each `gated` beforeTask run. */
  signals: [] as AbortSignal[],
};

const greetLater = defineTool({
  name: "greet_later",
  description: "Asks a name on the request, then greets as a task",
  task: "required",
  beforeTask: async (_args, ctx) => {
    seen.before++;
    const answer = await ctx.elicit("What is your name?", NAME_FORM, { key: "user_name" });
    if (answer.action !== "accept") throw new InvalidParamsError("No name, no greeting.");
    return { name: String(answer.content.name) };
  },
  handler: (_args, _ctx, prepared) => {
    seen.handled.push(prepared);
    return `Hello, ${prepared.name}!`;
  },
});

const greetMaybe = defineTool({
  name: "greet_maybe",
  description: "Asks a name, then greets; a task when the client declares the extension",
  task: "optional",
  beforeTask: async (_args, ctx) => {
    const answer = await ctx.elicit("What is your name?", NAME_FORM, { key: "user_name" });
    return answer.action === "accept" ? String(answer.content.name) : "stranger";
  },
  handler: (_args, _ctx, name) => {
    seen.handled.push(name);
    return `Hi, ${name}!`;
  },
});

const swallows = defineTool({
  name: "swallows",
  description: "Catches its pending ask in beforeTask",
  task: "required",
  beforeTask: async (_args, ctx) => {
    try {
      await ctx.elicit("Name?", NAME_FORM, { key: "n" });
    } catch (error) {
      assert.ok(error instanceof InputPending);
    }
    return "went on";
  },
  handler: (_args, _ctx, prepared) => {
    seen.handled.push(prepared);
    return String(prepared);
  },
});

const gated = defineTool({
  name: "gated",
  description: "beforeTask waits for the test's gate (no ask)",
  task: "optional",
  beforeTask: async (_args, ctx) => {
    seen.signals.push(ctx.signal);
    await new Promise<void>((resolve) => {
      seen.gates.push(resolve);
    });
    return 42;
  },
  handler: (_args, _ctx, prepared) => {
    seen.handled.push(prepared);
    return `prepared ${prepared}`;
  },
});

/** The task id in a response body, JSON or SSE, when it is a CreateTaskResult. */
function createdTaskId(text: string): string | null {
  if (!text.includes('"resultType":"task"')) return null;
  return /"taskId":"([^"]+)"/.exec(text)?.[1] ?? null;
}

describe("beforeTask: ask first, then become a task", () => {
  let server: McpServer;
  let url: string;
  const store = new MemoryTaskStore();

  before(async () => {
    server = createMcpServer({
      name: "before-task",
      version: "1.0.0",
      tools: [greetLater, greetMaybe, swallows, gated],
      sessions: true, // the SDK 1.x client's session carries its declared capabilities
      tasks: { store },
      onError: false,
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
  });

  after(async () => {
    await server.close();
  });

  test("2026-07-28 with the extension: input_required first, then a task carrying the answer", async () => {
    seen.before = 0;
    seen.handled.length = 0;
    const call = { name: "greet_later", arguments: {} };
    const first = await modern(url, "tools/call", call, { capabilities: ELICITATION });
    assert.equal(first.status, 200, first.text);
    const round1 = first.json.result;
    assert.equal(round1.resultType, "input_required");
    assert.equal("taskId" in round1, false, "no task before the asks are answered");
    assert.deepEqual(Object.keys(round1.inputRequests), ["user_name"]);
    assert.equal(round1.inputRequests.user_name.method, "elicitation/create");
    assert.equal(typeof round1.requestState, "string");
    assert.equal(seen.handled.length, 0, "the handler has not run");

    const second = await modern(
      url,
      "tools/call",
      {
        ...call,
        inputResponses: { user_name: { action: "accept", content: { name: "Alice" } } },
        requestState: round1.requestState,
      },
      { capabilities: ELICITATION },
    );
    assert.equal(second.status, 200, second.text);
    const created = second.json.result;
    assert.equal(created.resultType, "task");
    assert.equal(typeof created.taskId, "string");
    assert.equal(created.status, "working");
    assert.equal("requestState" in created, false);
    assert.equal("inputRequests" in created, false);
    assert.equal(seen.before, 2, "beforeTask ran once per round");

    const done = await untilTerminal(() =>
      modern(url, "tasks/get", { taskId: created.taskId }, { capabilities: ELICITATION }),
    );
    assert.equal(done.status, "completed");
    assert.deepEqual(done.result, { content: [{ type: "text", text: "Hello, Alice!" }] });
    assert.deepEqual(seen.handled, [{ name: "Alice" }], "the handler ran once, as the task");
  });

  test("a beforeTask that throws answers the request and creates no task", async () => {
    seen.handled.length = 0;
    const call = { name: "greet_later", arguments: {} };
    const first = await modern(url, "tools/call", call, { capabilities: ELICITATION });
    const declined = await modern(
      url,
      "tools/call",
      {
        ...call,
        inputResponses: { user_name: { action: "decline" } },
        requestState: first.json.result.requestState,
      },
      { capabilities: ELICITATION },
    );
    assert.deepEqual(declined.json.result, {
      content: [{ type: "text", text: "No name, no greeting." }],
      isError: true,
      resultType: "complete",
    });
    assert.equal(seen.handled.length, 0);
  });

  test("a beforeTask that swallows its pending ask still answers input_required, no task", async () => {
    seen.handled.length = 0;
    const answer = await modern(
      url,
      "tools/call",
      { name: "swallows", arguments: {} },
      { capabilities: ELICITATION },
    );
    assert.equal(answer.json.result.resultType, "input_required", answer.text);
    assert.deepEqual(Object.keys(answer.json.result.inputRequests), ["n"]);
    assert.equal(seen.handled.length, 0);
  });

  test("a request cancelled while its beforeTask runs creates no task", async () => {
    seen.gates.length = 0;
    seen.signals.length = 0;
    seen.handled.length = 0;
    const before = (await store.list(SCOPE, { after: null, limit: 100 }))?.tasks.length ?? 0;
    const abort = new AbortController();
    const call = modern(
      url,
      "tools/call",
      { name: "gated", arguments: {} },
      { signal: abort.signal },
    );
    await until(() => seen.gates.length === 1, 5_000, "beforeTask to start");
    // 2026-07-28: closing the request's stream is its cancellation.
    abort.abort();
    await call.catch(() => {});
    await until(() => seen.signals[0]?.aborted === true, 5_000, "the request's signal to abort");
    seen.gates.shift()?.();
    await delay(200);
    const after = (await store.list(SCOPE, { after: null, limit: 100 }))?.tasks.length ?? 0;
    assert.equal(after, before, "no task was stored");
    assert.equal(seen.handled.length, 0, "the handler never ran");
  });

  test("2026-07-28 without the extension: an optional tool asks and answers on the request", async () => {
    seen.handled.length = 0;
    const call = { name: "greet_maybe", arguments: {} };
    const first = await modern(url, "tools/call", call, {
      capabilities: ELICITATION,
      extension: false,
    });
    assert.equal(first.json.result.resultType, "input_required", first.text);
    const second = await modern(
      url,
      "tools/call",
      {
        ...call,
        inputResponses: { user_name: { action: "accept", content: { name: "Bo" } } },
        requestState: first.json.result.requestState,
      },
      { capabilities: ELICITATION, extension: false },
    );
    assert.deepEqual(second.json.result, {
      content: [{ type: "text", text: "Hi, Bo!" }],
      resultType: "complete",
    });
    // A required tool is refused before anything is asked (-32021 names the extension).
    const refused = await modern(
      url,
      "tools/call",
      { name: "greet_later", arguments: {} },
      { capabilities: ELICITATION, extension: false },
    );
    assert.equal(refused.status, 400);
    assert.equal(refused.json.error.code, -32021);
  });

  test("2025-11-25 params.task: the task is created at once and beforeTask runs inside it", async () => {
    seen.gates.length = 0;
    const created = await legacy(url, "tools/call", { name: "gated", arguments: {}, task: {} });
    const taskId = created.json.result?.task?.taskId;
    assert.equal(typeof taskId, "string", created.text);
    // The request was answered while beforeTask is still waiting: it runs in the task.
    await until(() => seen.gates.length === 1, 5_000, "beforeTask to start in the task");
    assert.equal((await legacy(url, "tasks/get", { taskId })).json.result.status, "working");
    seen.gates.shift()?.();
    const result = await legacy(url, "tasks/result", { taskId });
    assert.deepEqual(result.json.result.content, [{ type: "text", text: "prepared 42" }]);
    // Without params.task: both on the request.
    const plain = legacy(url, "tools/call", { name: "gated", arguments: {} });
    await until(() => seen.gates.length === 1, 5_000, "beforeTask to start");
    seen.gates.shift()?.();
    assert.deepEqual((await plain).json.result.content, [{ type: "text", text: "prepared 42" }]);
  });

  test("the SDK 1.x client (2025): beforeTask asks on the call's stream, or through the task", async () => {
    const client = new LegacyClient(
      { name: "before-task-legacy", version: "1.0.0" },
      { capabilities: { elicitation: {} } },
    );
    const names = ["Eve", "Fay"];
    const asked: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params._meta?.[RELATED] ?? null);
      return { action: "accept", content: { name: names[asked.length - 1] as string } };
    });
    await client.connect(new LegacyTransport(new URL(url)));
    try {
      const plain = await client.callTool({ name: "greet_maybe", arguments: {} });
      assert.deepEqual(plain.content, [{ type: "text", text: "Hi, Eve!" }]);
      let taskId = "";
      let text = "";
      const stream = client.experimental.tasks.callToolStream(
        { name: "greet_maybe", arguments: {} },
        CallToolResultSchema,
        { task: { ttl: 60_000 } },
      );
      for await (const message of stream) {
        if (message.type === "taskCreated") taskId = message.task.taskId;
        if (message.type === "result") {
          text = (message.result.content as { text: string }[]).map((b) => b.text).join("");
        }
        if (message.type === "error") assert.fail(String(message.error));
      }
      assert.equal(text, "Hi, Fay!");
      // The first question came on the call's own stream; the second one, asked by beforeTask
      // inside the task, came through tasks/result with the related-task _meta.
      assert.deepEqual(asked, [null, { taskId }]);
    } finally {
      await client.close();
    }
  });

  test("the official 2.x client answers the round, then gets the task (which it cannot run)", async () => {
    seen.handled.length = 0;
    const bodies: string[] = [];
    const recording = async (input: string | URL | Request, init?: RequestInit) => {
      const response = await fetch(input, init);
      bodies.push(await response.clone().text());
      return response;
    };
    const client = new Client(
      { name: "before-task-test", version: "1.0.0" },
      {
        versionNegotiation: { mode: { pin: "2026-07-28" } },
        capabilities: { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } },
      },
    );
    const asked: unknown[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params);
      return { action: "accept", content: { name: "Carol" } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recording }));
    try {
      await assert.rejects(client.callTool({ name: "greet_later", arguments: {} }), (error) => {
        const data = (error as { data?: { resultType?: unknown } }).data;
        return data?.resultType === "task";
      });
      assert.equal(asked.length, 1, "the client answered the pre-task round");
      const taskId = bodies.map(createdTaskId).find((id) => id !== null);
      assert.ok(taskId !== undefined && taskId !== null, "the final round answered a task");
      const done = await untilTerminal(() =>
        modern(url, "tasks/get", { taskId }, { capabilities: ELICITATION }),
      );
      assert.deepEqual(done.result, { content: [{ type: "text", text: "Hello, Carol!" }] });
    } finally {
      await client.close();
    }
  });

  test("the official 2.x client without the extension: the optional tool's answer comes back", async () => {
    const client = new Client(
      { name: "before-task-test", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities: { elicitation: {} } },
    );
    client.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { name: "Dee" },
    }));
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const result = await client.callTool({ name: "greet_maybe", arguments: {} });
      assert.deepEqual(result.content, [{ type: "text", text: "Hi, Dee!" }]);
    } finally {
      await client.close();
    }
  });

  test("defineTool refuses beforeTask where it cannot work", () => {
    const handler = () => "x";
    const bad = [
      { name: "a", beforeTask: () => 1, handler },
      { name: "b", task: "forbidden", beforeTask: () => 1, handler },
      { name: "c", task: "optional", beforeTask: "no", handler },
      {
        name: "d",
        task: "optional",
        beforeTask: () => 1,
        isolated: isolatedHandler(ISOLATED, "spin"),
      },
    ];
    for (const definition of bad) {
      assert.throws(() => defineTool(definition as never), InvalidOptionError, definition.name);
    }
  });
});
