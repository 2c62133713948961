/**
 * The input-required round trip with the official 2026-07-28 client (`@modelcontextprotocol/client`
 * 2.x, pinned to 2026-07-28, which fulfils `input_required` results itself through its registered
 * elicitation/sampling/roots handlers and retries): two conduit-mcp servers on two ports share the
 * sealing key; the client's fetch sends every first request to node A and every retry (a body with
 * `requestState`) to node B. The demo tools `confirm` (elicitation) and `ask-model` (sampling)
 * complete on B with A's state; a declined confirmation does nothing; a client that declared no
 * elicitation is never asked; an aborted retry is cancelled on B and nothing stays there.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { z } from "zod";

import { askModelTool, confirmTool } from "../../src/cli/demo-tools.js";
import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { until } from "../server/fixtures.js";

const KEY = "shared key of both nodes, 32+ bytes!";
/** Where each POST went, in order: "A" or "B", with its JSON-RPC method. */
const routed: { node: "A" | "B"; method: string; retry: boolean }[] = [];
const slow = { started: 0, aborted: 0 };

const slowAfterAnswer = defineTool({
  name: "slow_after_answer",
  description: "Asks, then works until cancelled",
  input: z.object({ tag: z.string() }),
  handler: async (_args, ctx) => {
    await ctx.elicit("Start?", { type: "object", properties: { go: { type: "boolean" } } });
    slow.started++;
    try {
      await sleep(60_000, undefined, { signal: ctx.signal });
    } catch {
      slow.aborted++;
    }
    return "finished";
  },
});

describe("official 2026-07-28 client: input_required across two nodes", () => {
  let nodeA: McpServer;
  let nodeB: McpServer;
  let urlA: string;
  let urlB: string;

  before(async () => {
    const options = {
      tools: [confirmTool, askModelTool, slowAfterAnswer],
      inputRequired: { keys: [KEY] },
    };
    nodeA = createMcpServer(options);
    nodeB = createMcpServer(options);
    ({ url: urlA } = await nodeA.listen({ host: "127.0.0.1", port: 0 }));
    ({ url: urlB } = await nodeB.listen({ host: "127.0.0.1", port: 0 }));
  });

  after(async () => {
    await Promise.all([nodeA.close(), nodeB.close()]);
  });

  /** First requests to A, retries (carrying requestState) to B. */
  const splitFetch = async (
    input: string | URL | Request,
    init?: RequestInit,
  ): Promise<Response> => {
    const body = typeof init?.body === "string" ? init.body : "";
    let method = "";
    let retry = false;
    try {
      const message = JSON.parse(body) as { method?: string; params?: { requestState?: unknown } };
      method = message.method ?? "";
      retry = message.params?.requestState !== undefined;
    } catch {
      // not JSON (a GET or DELETE): route to A
    }
    const node = retry ? "B" : "A";
    routed.push({ node, method, retry });
    void input;
    return fetch(node === "A" ? urlA : urlB, init);
  };

  async function connect(capabilities: Record<string, unknown>): Promise<Client> {
    const client = new Client(
      { name: "mrtr-test", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } }, capabilities },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(urlA), { fetch: splitFetch }));
    return client;
  }

  test("confirm: elicitation answered by the client, retried on node B, acted", async () => {
    const client = await connect({ elicitation: {} });
    const questions: unknown[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      questions.push(request.params);
      return { action: "accept", content: { confirm: true } };
    });
    routed.length = 0;
    const result = await client.callTool({
      name: "confirm",
      arguments: { action: "archive the report" },
    });
    assert.deepEqual(result.content, [{ type: "text", text: "Done: archive the report" }]);
    assert.equal(questions.length, 1);
    assert.equal(
      (questions[0] as { message: string }).message,
      "Do you want to archive the report?",
    );
    const calls = routed.filter((post) => post.method === "tools/call");
    assert.deepEqual(
      calls.map((post) => post.node),
      ["A", "B"],
      "the first round on A, the retry with requestState on B",
    );
    await client.close();
  });

  test("confirm: a declined question does nothing", async () => {
    const client = await connect({ elicitation: {} });
    client.setRequestHandler("elicitation/create", async () => ({ action: "decline" }));
    const result = await client.callTool({
      name: "confirm",
      arguments: { action: "drop the table" },
    });
    assert.deepEqual(result.content, [
      { type: "text", text: "Not done: drop the table (the user chose decline)" },
    ]);
    await client.close();
  });

  test("ask-model: sampling answered by the client, retried on node B", async () => {
    const client = await connect({ sampling: {} });
    client.setRequestHandler("sampling/createMessage", async (request) => {
      const first = request.params.messages[0]?.content as { text?: string };
      assert.equal(first.text, "Capital of France?");
      return {
        role: "assistant",
        content: { type: "text", text: "Paris." },
        model: "test-model-1",
        stopReason: "endTurn",
      };
    });
    routed.length = 0;
    const result = await client.callTool({
      name: "ask-model",
      arguments: { question: "Capital of France?" },
    });
    assert.deepEqual(result.content, [{ type: "text", text: "Paris. (model: test-model-1)" }]);
    assert.deepEqual(
      routed.filter((post) => post.method === "tools/call").map((post) => post.node),
      ["A", "B"],
    );
    await client.close();
  });

  test("a client that declared no elicitation is never asked: one round, a result saying why", async () => {
    const client = await connect({});
    routed.length = 0;
    const result = await client.callTool({ name: "confirm", arguments: { action: "reboot" } });
    assert.match(
      (result.content as { text: string }[])[0]?.text ?? "",
      /^Not done: reboot \(The client did not declare the elicitation capability\)/,
    );
    assert.equal(routed.filter((post) => post.method === "tools/call").length, 1, "no retry");
    await client.close();
  });

  test("an aborted retry is cancelled on node B; nothing stays in its registry", async () => {
    const client = await connect({ elicitation: {} });
    client.setRequestHandler("elicitation/create", async () => ({
      action: "accept",
      content: { go: true },
    }));
    slow.started = 0;
    slow.aborted = 0;
    const controller = new AbortController();
    const pending = client.callTool(
      { name: "slow_after_answer", arguments: { tag: "t" } },
      { signal: controller.signal },
    );
    await until(() => slow.started === 1, 10_000, "the retry's handler to start on B");
    assert.equal(nodeB.registry.inFlightCount, 1);
    assert.equal(nodeA.registry.inFlightCount, 0, "node A holds nothing after its round");
    controller.abort();
    await assert.rejects(pending);
    await until(() => slow.aborted === 1, 5_000, "the handler's signal to fire");
    await until(() => nodeB.registry.inFlightCount === 0, 5_000, "B's registry to empty");
    await client.close();
  });
});
