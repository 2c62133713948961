/**
 * Resource reads and prompts are handlers like tools: a 2025-11-25 client that accepts SSE and
 * sends a `progressToken` gets their progress on the request's stream before the result
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/progress), and
 * `/metrics` counts their requests and outcomes next to tool calls.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { definePrompt, defineResource, defineTool, InvalidParamsError } from "../../src/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { rpc } from "../server/fixtures.js";

describe("resources/read and prompts/get on streams and in metrics", () => {
  let server: McpServer;
  let url: string;

  before(async () => {
    server = createMcpServer({
      metrics: true,
      resources: [
        defineResource({
          uri: "test://slow",
          name: "slow",
          read: async (_uri, ctx) => {
            await ctx.progress(1, 2, "half");
            return "done";
          },
        }),
        defineResource({
          uri: "test://broken",
          name: "broken",
          read: () => {
            throw new Error("disk on fire");
          },
        }),
      ],
      prompts: [
        definePrompt({
          name: "slow",
          get: async (_args, ctx) => {
            await ctx.progress(1, 2, "half");
            return "prompt text";
          },
        }),
      ],
    });
    ({ url } = await server.listen());
  });

  after(async () => {
    await server.close();
  });

  /** The JSON-RPC messages of an SSE body, in order. */
  function events(text: string): Array<Record<string, unknown>> {
    return text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice("data: ".length)) as Record<string, unknown>);
  }

  for (const [method, params] of [
    ["resources/read", { uri: "test://slow" }],
    ["prompts/get", { name: "slow" }],
  ] as const) {
    test(`${method} with a progressToken streams its progress, then its result`, async () => {
      const answer = await rpc(url, {
        jsonrpc: "2.0",
        id: 7,
        method,
        params: { ...params, _meta: { progressToken: "p" } },
      });
      assert.equal(answer.status, 200);
      assert.match(answer.headers.get("content-type") ?? "", /^text\/event-stream/);
      const messages = events(answer.text);
      assert.deepEqual(messages[0], {
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: "p", progress: 1, total: 2, message: "half" },
      });
      assert.equal(messages.at(-1)?.id, 7);
      assert.ok("result" in (messages.at(-1) ?? {}));
    });
  }

  test("a running read holds one of its scope's SSE streams, like a tool call", async () => {
    let release = (): void => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holding = createMcpServer({
      maxOpenStreamsPerScope: 1,
      resources: [
        defineResource({ uri: "test://held", name: "held", read: () => held.then(() => "x") }),
      ],
    });
    const { url: heldUrl } = await holding.listen();
    try {
      const first = rpc(heldUrl, {
        jsonrpc: "2.0",
        id: 1,
        method: "resources/read",
        params: { uri: "test://held" },
      });
      const deadline = Date.now() + 5_000;
      while (holding.concurrency().requests === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(holding.concurrency().streams, 1);
      // The scope's one stream is taken: an SSE-only read is refused at once.
      const sseOnly = await rpc(
        heldUrl,
        { jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "test://held" } },
        { accept: "text/event-stream" },
      );
      assert.equal(sseOnly.status, 429);
      release();
      assert.equal((await first).status, 200);
    } finally {
      release();
      await holding.close();
    }
  });

  test("JSON-only clients still get one JSON body", async () => {
    const answer = await rpc(
      url,
      {
        jsonrpc: "2.0",
        id: 8,
        method: "resources/read",
        params: { uri: "test://slow", _meta: { progressToken: "p" } },
      },
      { accept: "application/json" },
    );
    assert.equal(answer.status, 200);
    assert.deepEqual((answer.json as { result: unknown }).result, {
      contents: [{ uri: "test://slow", text: "done" }],
    });
  });

  test("/metrics counts reads and prompts by method and outcome", async () => {
    await rpc(url, {
      jsonrpc: "2.0",
      id: 9,
      method: "resources/read",
      params: { uri: "test://broken" },
    });
    const text = await (await fetch(url.replace("/mcp", "/metrics"))).text();
    const lines = text.split("\n");
    for (const line of [
      "# TYPE conduit_mcp_handler_calls_total counter",
      'conduit_mcp_handler_calls_total{method="resources/read",outcome="ok"} 2',
      'conduit_mcp_handler_calls_total{method="resources/read",outcome="error"} 1',
      'conduit_mcp_handler_calls_total{method="prompts/get",outcome="ok"} 1',
      'conduit_mcp_handler_calls_total{method="tools/call",outcome="ok"} 0',
      'conduit_mcp_requests_total{method="resources/read",status="200"} 3',
      'conduit_mcp_requests_total{method="prompts/get",status="200"} 1',
    ]) {
      assert.ok(lines.includes(line), `missing: ${line}`);
    }
  });
});

describe("InvalidParamsError: a handler's refusal meant for the client", () => {
  test("a read or prompt answers -32602 with its message, a tool an isError result; other errors stay -32603", async () => {
    const server = createMcpServer({
      tools: [
        defineTool({
          name: "picky",
          handler: () => {
            throw new InvalidParamsError("pick a smaller number");
          },
        }),
      ],
      resources: [
        defineResource({
          uri: "test://picky",
          name: "picky",
          read: () => {
            throw new InvalidParamsError(`bad ${"x".repeat(2_000)}`);
          },
        }),
        defineResource({
          uri: "test://secret",
          name: "secret",
          read: () => {
            throw new Error("password=hunter2");
          },
        }),
      ],
      prompts: [
        definePrompt({
          name: "picky",
          get: () => {
            throw new InvalidParamsError("no such review style");
          },
        }),
      ],
    });
    const { url } = await server.listen();
    try {
      const body = (id: number, method: string, params: unknown) => ({
        jsonrpc: "2.0",
        id,
        method,
        params,
      });
      const read = await rpc(url, body(1, "resources/read", { uri: "test://picky" }));
      const error = (read.json as { error: { code: number; message: string } }).error;
      assert.equal(error.code, -32602);
      assert.equal(error.message, `bad ${"x".repeat(508)}`);

      const prompt = await rpc(url, body(2, "prompts/get", { name: "picky" }));
      assert.deepEqual((prompt.json as { error: unknown }).error, {
        code: -32602,
        message: "no such review style",
      });

      const call = await rpc(url, body(3, "tools/call", { name: "picky", arguments: {} }));
      assert.deepEqual((call.json as { result: unknown }).result, {
        content: [{ type: "text", text: "pick a smaller number" }],
        isError: true,
      });

      const secret = await rpc(url, body(4, "resources/read", { uri: "test://secret" }));
      assert.equal((secret.json as { error: { code: number } }).error.code, -32603);
      assert.doesNotMatch(secret.text, /hunter2/);
    } finally {
      await server.close();
    }
  });
});
