/**
 * 2026-07-28 `notifications/tasks` over `subscriptions/listen` (the `io.modelcontextprotocol/tasks`
 * extension, SEP-2663, "Task Status Notifications": https://modelcontextprotocol.io/extensions/tasks/overview),
 * one node, raw HTTP against a real server on 127.0.0.1:
 *
 * - the acknowledgement lists only the caller's own task ids (another tenant's id and a malformed
 *   one are left out, alike);
 * - each status change of a named task arrives as the full `DetailedTask` (`inputRequests` while
 *   it waits, `result` once completed), tagged with the subscription id; nothing of another
 *   tenant's task arrives;
 * - task ids without the extension declared are -32021;
 * - a task that ends while the listen reads its state (before the acknowledgement) is still told
 *   once the acknowledgement is sent, and a list change heard then comes after the
 *   acknowledgement; a store failure during those reads answers -32603 (nothing of the error)
 *   and frees the listener, and so does a cancel (stdio `notifications/cancelled`) heard then; a
 *   scope at its listener bound is refused before any task is read.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { z } from "zod";

import { createMcpServer, defineTool, type McpServer } from "../../src/server/index.js";
import { MemoryTaskStore } from "../../src/tasks/memory-task-store.js";
import type { TaskRecord } from "../../src/tasks/task-store.js";
import { connectPeer, type Line } from "../hosting/stdio-peer.js";
import { openListen } from "../subscriptions/listen-helpers.js";
import { modern, TASKS_EXTENSION } from "./wire.js";

const ALICE = "alice-token-0123456789";
const BOB = "bob-token-0123456789";
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";

describe("notifications/tasks on subscriptions/listen", () => {
  let server: McpServer;
  let url: string;
  /** Opens the gate of the `gated_ask` run waiting under that name. */
  const gates = new Map<string, () => void>();

  before(async () => {
    server = createMcpServer({
      tools: [
        defineTool({
          name: "gated_ask",
          description: "Waits for the test's gate, then asks a name, as a task",
          task: "required",
          input: z.object({ gate: z.string() }),
          handler: async ({ gate }, ctx) => {
            await new Promise<void>((open) => gates.set(gate, open));
            const answer = await ctx.elicit(
              "Your name?",
              { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
              { key: "name" },
            );
            return answer.action === "accept" ? `Hi ${answer.content.name}` : "no name";
          },
        }),
      ],
      auth: { tokens: { [ALICE]: "alice", [BOB]: "bob" } },
      onError: false,
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
  });
  after(() => server.close());

  async function create(token: string, gate: string): Promise<string> {
    const created = await modern(
      url,
      "tools/call",
      { name: "gated_ask", arguments: { gate } },
      { token, capabilities: { elicitation: {} } },
    );
    assert.equal(created.json?.result?.resultType, "task", created.text);
    return created.json.result.taskId;
  }

  async function waitForGate(gate: string): Promise<() => void> {
    for (let i = 0; i < 400; i++) {
      const open = gates.get(gate);
      if (open !== undefined) return open;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`the run behind gate ${gate} never started`);
  }

  test("own tasks only are acknowledged; each state change arrives as the full task", async () => {
    const mine = await create(ALICE, "a1");
    const theirs = await create(BOB, "b1");
    const listen = await openListen(
      url,
      { taskIds: [mine, theirs, "not a task id"] },
      {
        capabilities: { extensions: { [TASKS_EXTENSION]: {} } },
        headers: { authorization: `Bearer ${ALICE}` },
      },
    );
    try {
      assert.equal(listen.status, 200);
      const ack = await listen.next((m) => m.method === "notifications/subscriptions/acknowledged");
      assert.deepEqual((ack.params as Record<string, unknown>).notifications, { taskIds: [mine] });

      (await waitForGate("a1"))();
      (await waitForGate("b1"))();
      const isTask = (status: string) => (m: Record<string, unknown>) =>
        m.method === "notifications/tasks" &&
        (m.params as Record<string, unknown>).status === status;
      const parked = (await listen.next(isTask("input_required"), 10_000)).params as Record<
        string,
        unknown
      >;
      assert.equal(parked.taskId, mine);
      assert.deepEqual(Object.keys(parked.inputRequests as object), ["name"]);
      assert.deepEqual(parked._meta, { [SUBSCRIPTION_ID]: listen.id });
      assert.equal(typeof parked.ttlMs, "number");

      const ack2 = await modern(
        url,
        "tasks/update",
        { taskId: mine, inputResponses: { name: { action: "accept", content: { name: "Ada" } } } },
        { token: ALICE },
      );
      assert.deepEqual(ack2.json.result, { resultType: "complete" });
      const done = (await listen.next(isTask("completed"), 10_000)).params as Record<
        string,
        unknown
      >;
      assert.equal(done.taskId, mine);
      assert.deepEqual(done.result, { content: [{ type: "text", text: "Hi Ada" }] });
      // Bob's task parked too, but nothing of it reached alice's stream.
      assert.ok(
        listen.messages.every(
          (m) => (m.params as Record<string, unknown> | undefined)?.taskId !== theirs,
        ),
        listen.text,
      );
      await modern(url, "tasks/cancel", { taskId: theirs }, { token: BOB });
    } finally {
      listen.close();
    }
  });

  test("task ids without the extension declared are -32021", async () => {
    const mine = await create(ALICE, "a2");
    const listen = await openListen(
      url,
      { taskIds: [mine] },
      { headers: { authorization: `Bearer ${ALICE}` } },
    );
    try {
      await listen.ended;
      const error = listen.messages[0]?.error as Record<string, unknown> | undefined;
      assert.equal(error?.code, -32021, listen.text);
      assert.deepEqual(error?.data, {
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    } finally {
      listen.close();
      await modern(url, "tasks/cancel", { taskId: mine }, { token: ALICE });
    }
  });
});

/** A memory store whose reads of one armed task id return the state read, but only once released. */
class HeldReadStore extends MemoryTaskStore {
  reads = 0;
  armed: string | null = null;
  /** Resolves when an armed read has started; its state is already read then. */
  started: Promise<void> = new Promise(() => {});
  private release: () => void = () => {};
  private startedNow: () => void = () => {};

  arm(taskId: string): () => void {
    this.armed = taskId;
    this.started = new Promise((resolve) => {
      this.startedNow = resolve;
    });
    const held = new Promise<void>((resolve) => {
      this.release = resolve;
    });
    this.heldUntil = held;
    return () => this.release();
  }

  private heldUntil: Promise<void> = Promise.resolve();

  /** The next read of this id fails, as during an outage. */
  failing: string | null = null;

  override async get(scope: string, taskId: string): Promise<TaskRecord | undefined> {
    this.reads++;
    if (taskId === this.failing) {
      this.failing = null;
      throw new Error("store unreachable: redis://secret-host:6379");
    }
    const task = await super.get(scope, taskId);
    if (taskId === this.armed) {
      this.armed = null;
      this.startedNow();
      await this.heldUntil;
    }
    return task;
  }
}

describe("subscriptions/listen naming tasks, while their state is read", () => {
  let server: McpServer;
  let url: string;
  const store = new HeldReadStore();
  const finishes = new Map<string, () => void>();

  before(async () => {
    server = createMcpServer({
      tools: [
        defineTool({
          name: "finish_on_cue",
          description: "Runs as a task until the test finishes it",
          task: "required",
          input: z.object({ cue: z.string() }),
          handler: async ({ cue }) => {
            await new Promise<void>((done) => finishes.set(cue, done));
            return `finished ${cue}`;
          },
        }),
      ],
      tasks: { store },
      auth: { tokens: { [ALICE]: "alice" } },
      maxListenersPerScope: 1,
      onError: false,
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
  });
  after(() => server.close());

  const extension = {
    capabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    headers: { authorization: `Bearer ${ALICE}` },
  };

  async function create(cue: string): Promise<string> {
    const created = await modern(
      url,
      "tools/call",
      { name: "finish_on_cue", arguments: { cue } },
      { token: ALICE },
    );
    assert.equal(created.json?.result?.resultType, "task", created.text);
    return created.json.result.taskId;
  }

  async function finish(cue: string): Promise<void> {
    for (let i = 0; i < 400 && !finishes.has(cue); i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const done = finishes.get(cue);
    assert.ok(done !== undefined, `the run ${cue} never started`);
    done();
  }

  test("a task that ends while the listen reads it is told once acknowledged", async () => {
    const taskId = await create("c1");
    const release = store.arm(taskId);
    // The response head comes with the acknowledgement, so the listen is awaited only below.
    const opening = openListen(url, { taskIds: [taskId], toolsListChanged: true }, extension);
    let listening: Awaited<typeof opening> | undefined;
    try {
      // The listen has read "working"; the task completes before that read returns.
      await store.started;
      // A list change heard meanwhile waits for the acknowledgement, which goes first.
      server.tools.add(
        defineTool({
          name: "added",
          description: "Added while the listen reads",
          handler: () => "",
        }),
      );
      await finish("c1");
      for (let i = 0; i < 400; i++) {
        const got = await modern(url, "tasks/get", { taskId }, { token: ALICE });
        if (got.json?.result?.status === "completed") break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      release();
      const listen = await opening;
      listening = listen;
      const ack = await listen.next((m) => m.method === "notifications/subscriptions/acknowledged");
      assert.deepEqual((ack.params as Record<string, unknown>).notifications, {
        toolsListChanged: true,
        taskIds: [taskId],
      });
      assert.equal(listen.messages[0], ack);
      await listen.next((m) => m.method === "notifications/tools/list_changed");
      const done = await listen.next(
        (m) =>
          m.method === "notifications/tasks" &&
          (m.params as Record<string, unknown>).status === "completed",
        10_000,
      );
      assert.deepEqual((done.params as Record<string, unknown>).result, {
        content: [{ type: "text", text: "finished c1" }],
      });
    } finally {
      release();
      (listening ?? (await opening)).close();
    }
  });

  test("a store failure while the tasks are read answers -32603 and frees the listener", async () => {
    const taskId = await create("c2");
    store.failing = taskId;
    const failed = await openListen(url, { taskIds: [taskId] }, extension);
    await failed.ended;
    const error = failed.messages[0]?.error as Record<string, unknown> | undefined;
    assert.equal(error?.code, -32603, failed.text);
    assert.doesNotMatch(failed.text, /secret-host/);
    // The scope's one listener slot is free again.
    const next = await openListen(url, { taskIds: [taskId] }, extension);
    try {
      const ack = await next.next((m) => m.method === "notifications/subscriptions/acknowledged");
      assert.deepEqual((ack.params as Record<string, unknown>).notifications, {
        taskIds: [taskId],
      });
    } finally {
      next.close();
      await finish("c2");
    }
  });

  test("a scope at its listener bound is refused before any task is read", async () => {
    const first = await openListen(url, { toolsListChanged: true }, extension);
    try {
      await first.next((m) => m.method === "notifications/subscriptions/acknowledged");
      const ids = Array.from({ length: 64 }, (_, i) => `t${String(i).padStart(21, "0")}`);
      const before = store.reads;
      const refused = await openListen(url, { taskIds: ids }, extension);
      await refused.ended;
      const error = refused.messages[0]?.error as Record<string, unknown> | undefined;
      assert.equal(error?.code, -32000, refused.text);
      assert.equal(store.reads, before);
    } finally {
      first.close();
    }
  });
});

describe("a listen cancelled while its tasks are read (stdio)", () => {
  const META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": { extensions: { [TASKS_EXTENSION]: {} } },
  };
  const store = new HeldReadStore();
  let finishRun: () => void = () => {};
  const server = createMcpServer({
    tools: [
      defineTool({
        name: "runs_until_told",
        description: "Runs as a task until the test ends it",
        task: "required",
        handler: async () => {
          await new Promise<void>((done) => {
            finishRun = done;
          });
          return "done";
        },
      }),
    ],
    tasks: { store },
    maxListenersPerScope: 1,
    onError: false,
  });
  after(() => server.close());

  test("the cancel frees the listener once the reads are done", async () => {
    const peer = connectPeer(server);
    try {
      peer.send({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "runs_until_told", arguments: {}, _meta: META },
      });
      const created: Line = await peer.response(1);
      const taskId = created.result?.taskId;
      assert.equal(typeof taskId, "string", JSON.stringify(created));
      const release = store.arm(taskId);
      const listen = (id: number) => ({
        jsonrpc: "2.0",
        id,
        method: "subscriptions/listen",
        params: { notifications: { taskIds: [taskId] }, _meta: META },
      });
      peer.send(listen(2));
      await store.started;
      peer.send({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: 2, reason: "changed my mind" },
      });
      // Let the cancel be read before the reads end.
      await new Promise((resolve) => setTimeout(resolve, 200));
      release();
      // The scope's one listener slot is free again: a second listen is acknowledged.
      peer.send(listen(3));
      const ack: Line = await peer.next(
        (line) =>
          line.method === "notifications/subscriptions/acknowledged" &&
          line.params?._meta?.["io.modelcontextprotocol/subscriptionId"] === 3,
      );
      assert.deepEqual(ack.params.notifications, { taskIds: [taskId] });
      assert.equal(
        peer.lines.find((line: Line) => line.id === 3 && line.error !== undefined),
        undefined,
        JSON.stringify(peer.lines),
      );
    } finally {
      finishRun();
      peer.stdin.end();
      await peer.serving.closed;
    }
  });
});
