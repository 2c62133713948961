/**
 * A task that asks the client, across three `conduit-mcp serve <probe module> --redis --sessions`
 * processes on one private Redis, with two principals (bearer tokens):
 *
 * - 2026-07-28 (`io.modelcontextprotocol/tasks` extension, SEP-2663, "Task Update Requests"): a
 *   task created on node 1 asks; `tasks/get` on node 2 shows the question in `inputRequests`;
 *   `tasks/update` on node 3 answers it; the run on node 1 continues and completes with the
 *   answer. Bob's `tasks/update` of alice's task, sent to node 3, is the unknown-task error and
 *   reaches nothing; an answer to a key never asked is ignored.
 * - 2025-11-25 (experimental tasks, "Input Required Status"): a task created in a session on
 *   node 1 asks; `tasks/get` on node 2 reads `input_required`; `tasks/result` on node 2 streams
 *   the `elicitation/create` (with the related-task `_meta`); the answer POSTed to node 3 reaches
 *   node 1; the same `tasks/result` stream then ends with the result. Another session's answer
 *   to that request id is ignored. The session's GET stream, held by node 3, hears
 *   `notifications/tasks/status` for the task parking (change feed) and completing (task store).
 * - 2025-11-25 with the SDK 1.x client (`client.experimental.tasks.callToolStream`) behind a
 *   round-robin proxy over the three nodes: it polls, opens `tasks/result`, answers the
 *   elicitation and gets the result, its requests spread over every node.
 * - 2025-11-25, timing: a question asked on node 1 while a `tasks/result` waits on node 2 reaches
 *   that stream at once through the change feed (median of 5 rounds under 400 ms; without the
 *   feed it would wait for the stream's next one-second re-read: the ask comes 300 ms after the
 *   task is created, the stream opens after that creation, so about 700 ms or more).
 * - 2026-07-28 `notifications/tasks` (SEP-2663, "Task Status Notifications"): a
 *   `subscriptions/listen` on node 3 naming a task that runs on node 1 hears it park on its second
 *   question (carried by the change feed) and complete (announced by the task store).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  answer,
  isRequest,
  isResponseTo,
  openCall,
  openSession,
  sessionHeaders,
} from "../asking/stream.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { startRoundRobinProxy } from "../helpers/round-robin-proxy.js";
import { rpc } from "../server/fixtures.js";
import { openListen } from "../subscriptions/listen-helpers.js";
import { legacy, modern, TASKS_EXTENSION, untilTerminal } from "../tasks/wire.js";
import { epochNow, startTaskNodes, type TaskNode } from "./task-nodes.js";

const skip = redisSkipReason();
const ALICE = "alice-secret-0123456789";
const BOB = "bob-secret-0123456789";
const ELICITATION = { elicitation: {} };

/** Polls `read` (at most `ms`, 25 ms apart) until it resolves something `ok` accepts. */
async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  let last = await read();
  for (let i = 0; i < 2_000 && !ok(last) && Date.now() < deadline; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    last = await read();
  }
  return last;
}

describe("a task's asks across three --redis nodes", { skip: skip ?? false }, () => {
  let server: RedisServer;
  let nodes: TaskNode[] = [];
  const node = (i: number): TaskNode => nodes[i] as TaskNode;

  before(async () => {
    server = await startRedisServer();
    nodes = await startTaskNodes(server.url, 3, [
      "--sessions",
      "--token",
      `alice=${ALICE}`,
      "--token",
      `bob=${BOB}`,
    ]);
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.cli.kill()));
    await server?.stop();
  });

  /** Alice's 2026 task of tool `name` created on node 1, once node 2 reads it input_required. */
  async function parkOnNode1(name: string) {
    const created = await modern(
      node(0).url,
      "tools/call",
      { name, arguments: {} },
      { token: ALICE, capabilities: ELICITATION },
    );
    assert.equal(created.json?.result?.resultType, "task", created.text);
    const taskId: string = created.json.result.taskId;
    const parked = await until(
      async () =>
        (await modern(node(1).url, "tasks/get", { taskId }, { token: ALICE })).json.result,
      (task) => task?.status === "input_required",
      10_000,
    );
    return { taskId, parked };
  }

  it("2026-07-28: asked on node 1, seen on node 2, answered on node 3, completed on node 1", async () => {
    const { taskId, parked } = await parkOnNode1("ask_name");
    assert.equal(parked.status, "input_required", JSON.stringify(parked));
    assert.deepEqual(Object.keys(parked.inputRequests), ["name"]);
    assert.equal(parked.inputRequests.name.method, "elicitation/create");

    // Bob cannot answer alice's task from any node: the unknown-task answer, nothing delivered.
    const foreign = await modern(
      node(2).url,
      "tasks/update",
      { taskId, inputResponses: { name: { action: "accept", content: { name: "Mallory" } } } },
      { token: BOB },
    );
    assert.equal(foreign.json.error?.code, -32602, foreign.text);
    assert.equal(foreign.json.error?.message, "Task not found");
    // A key never asked is ignored (acknowledged, nothing changes).
    const stray = await modern(
      node(2).url,
      "tasks/update",
      { taskId, inputResponses: { other: { action: "accept", content: { name: "Eve" } } } },
      { token: ALICE },
    );
    assert.deepEqual(stray.json.result, { resultType: "complete" }, stray.text);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const still = (await modern(node(1).url, "tasks/get", { taskId }, { token: ALICE })).json
      .result;
    assert.equal(still.status, "input_required", JSON.stringify(still));

    const ack = await modern(
      node(2).url,
      "tasks/update",
      { taskId, inputResponses: { name: { action: "accept", content: { name: "Ada" } } } },
      { token: ALICE },
    );
    assert.deepEqual(ack.json.result, { resultType: "complete" }, ack.text);
    const done = await untilTerminal(
      () => modern(node(1).url, "tasks/get", { taskId }, { token: ALICE }),
      15_000,
    );
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.deepEqual(done.result, {
      content: [{ type: "text", text: `Hello, Ada! (pid ${node(0).cli.child.pid})` }],
    });
  });

  it("2025-11-25: asked on node 1, streamed by tasks/result on node 2, answered on node 3", async () => {
    const auth = { authorization: `Bearer ${ALICE}` };
    const sessionId = await openSession(node(0).url, ELICITATION, auth);
    const headers = sessionHeaders(sessionId, auth);
    // The session's GET stream, held by node 3, hears the task's status changes on node 1.
    const get = await openCall(node(2).url, null, headers);
    const created = await rpc(
      node(0).url,
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "ask_name", arguments: {}, task: { ttl: 60_000 } },
      },
      headers,
    );
    const taskId = (created.json as { result?: { task?: { taskId?: string } } }).result?.task
      ?.taskId;
    assert.ok(typeof taskId === "string", created.text);
    const parked = await until(
      async () =>
        (await legacy(node(1).url, "tasks/get", { taskId }, { token: ALICE, sessionId })).json
          .result,
      (task) => task?.status === "input_required",
      10_000,
    );
    assert.equal(parked.status, "input_required", JSON.stringify(parked));

    const stream = await openCall(
      node(1).url,
      { jsonrpc: "2.0", id: "result-1", method: "tasks/result", params: { taskId } },
      headers,
    );
    try {
      const asked = await stream.next(isRequest("elicitation/create"), 10_000);
      assert.deepEqual(asked.params._meta, {
        "io.modelcontextprotocol/related-task": { taskId },
      });
      assert.equal(asked.params.message, "Your name?");

      // Another session (another scope) answering that id is ignored.
      const other = await openSession(node(2).url, ELICITATION, auth);
      const intruder = await answer(
        node(2).url,
        asked.id,
        { result: { action: "accept", content: { name: "Mallory" } } },
        sessionHeaders(other, auth),
      );
      assert.equal(intruder.status, 202);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const waiting = (
        await legacy(node(2).url, "tasks/get", { taskId }, { token: ALICE, sessionId })
      ).json.result;
      assert.equal(waiting.status, "input_required", JSON.stringify(waiting));

      const answered = await answer(
        node(2).url,
        asked.id,
        { result: { action: "accept", content: { name: "Ada" } } },
        headers,
      );
      assert.equal(answered.status, 202);
      const result = await stream.next(isResponseTo("result-1"), 15_000);
      assert.deepEqual(result.result.content, [
        { type: "text", text: `Hello, Ada! (pid ${node(0).cli.child.pid})` },
      ]);
      assert.deepEqual(result.result._meta, { "io.modelcontextprotocol/related-task": { taskId } });
      for (const status of ["input_required", "completed"]) {
        const told = await get.next(
          (m) =>
            m?.method === "notifications/tasks/status" &&
            m.params.taskId === taskId &&
            m.params.status === status,
          10_000,
        );
        assert.equal(told.params._meta, undefined);
      }
    } finally {
      stream.abort();
      get.abort();
    }
  });

  it("2025-11-25: the SDK 1.x client behind a round-robin proxy answers a task's question", async () => {
    const proxy = await startRoundRobinProxy(nodes.map((n) => n.url));
    const client = new Client(
      { name: "task-asks-nodes", version: "1.0.0" },
      { capabilities: { elicitation: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: "accept",
      content: { name: "Grace" },
    }));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(proxy.url), {
        requestInit: { headers: { authorization: `Bearer ${ALICE}` } },
      }),
    );
    try {
      let text = "";
      for await (const message of client.experimental.tasks.callToolStream(
        { name: "ask_name", arguments: {} },
        CallToolResultSchema,
        { task: { ttl: 60_000 } },
      )) {
        if (message.type === "error") assert.fail(String(message.error));
        if (message.type === "result") {
          text = (message.result.content as { text: string }[]).map((b) => b.text).join("");
        }
      }
      const pids = nodes.map((n) => n.cli.child.pid);
      const match = /^Hello, Grace! \(pid (\d+)\)$/.exec(text);
      assert.ok(match !== null && pids.includes(Number(match[1])), text);
      assert.ok(
        proxy.counts.filter((count) => count > 0).length === nodes.length,
        JSON.stringify(proxy.counts),
      );
    } finally {
      await client.close();
      await proxy.close();
    }
  });

  it("2025-11-25: a question asked on node 1 reaches a waiting tasks/result on node 2 at once", async (t) => {
    const auth = { authorization: `Bearer ${ALICE}` };
    const sessionId = await openSession(node(0).url, ELICITATION, auth);
    const headers = sessionHeaders(sessionId, auth);
    const delays: number[] = [];
    for (let round = 0; round < 5; round++) {
      const tag = `later-${round}-${Date.now()}`;
      const created = await rpc(
        node(0).url,
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "ask_later", arguments: { tag, ms: 300 }, task: { ttl: 60_000 } },
        },
        headers,
      );
      const taskId = (created.json as { result?: { task?: { taskId?: string } } }).result?.task
        ?.taskId;
      assert.ok(typeof taskId === "string", created.text);
      const stream = await openCall(
        node(1).url,
        { jsonrpc: "2.0", id: `later-${round}`, method: "tasks/result", params: { taskId } },
        headers,
      );
      try {
        const asked = await stream.next(isRequest("elicitation/create"), 10_000);
        const arrived = epochNow();
        const at = await until(
          async () => node(0).asks.get(tag),
          (value) => value !== undefined,
          5_000,
        );
        assert.ok(at !== undefined, `node 1 never printed its ask ${tag}`);
        delays.push(arrived - at);
        await answer(node(2).url, asked.id, { result: { action: "decline" } }, headers);
        await stream.next(isResponseTo(`later-${round}`), 10_000);
      } finally {
        stream.abort();
      }
    }
    const sorted = [...delays].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)] as number;
    t.diagnostic(
      `ask on node 1 → question on node 2's tasks/result: median ${median.toFixed(1)} ms over ${sorted.length}: ${sorted.map((d) => d.toFixed(1)).join(", ")}`,
    );
    assert.ok(median < 400, `median ${median} ms: ${sorted.join(", ")}`);
  });

  it("2026-07-28: a listen stream on node 3 hears a task on node 1 park again and complete", async () => {
    const { taskId, parked } = await parkOnNode1("ask_twice");
    assert.deepEqual(Object.keys(parked.inputRequests ?? {}), ["name"], JSON.stringify(parked));
    const listen = await openListen(
      node(2).url,
      { taskIds: [taskId] },
      {
        capabilities: { extensions: { [TASKS_EXTENSION]: {} } },
        headers: { authorization: `Bearer ${ALICE}` },
      },
    );
    try {
      const ack = await listen.next((m) => m.method === "notifications/subscriptions/acknowledged");
      assert.deepEqual((ack.params as Record<string, unknown>).notifications, {
        taskIds: [taskId],
      });
      const answerWith = (key: string, value: string) =>
        modern(
          node(1).url,
          "tasks/update",
          { taskId, inputResponses: { [key]: { action: "accept", content: { value } } } },
          { token: ALICE },
        );
      await answerWith("name", "Ada");
      const second = await listen.next(
        (m) =>
          m.method === "notifications/tasks" &&
          Object.keys(((m.params as Record<string, unknown>).inputRequests as object) ?? {})[0] ===
            "colour",
        10_000,
      );
      assert.equal((second.params as Record<string, unknown>).status, "input_required");
      await answerWith("colour", "green");
      const done = await listen.next(
        (m) =>
          m.method === "notifications/tasks" &&
          (m.params as Record<string, unknown>).status === "completed",
        10_000,
      );
      assert.deepEqual((done.params as Record<string, unknown>).result, {
        content: [{ type: "text", text: `Ada likes green (pid ${node(0).cli.child.pid})` }],
      });
    } finally {
      listen.close();
    }
  });
});
