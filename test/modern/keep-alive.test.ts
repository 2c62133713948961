/**
 * A 2026-07-28 `tools/call` still waiting `keepAliveMs` after it began becomes a stream with
 * keep-alive comments before any progress (README, "Server options": `keepAliveMs`), so proxies do
 * not reap a silent call; one answered sooner stays a plain JSON answer. Over a real server on
 * 127.0.0.1.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { z } from "zod";

import { defineTool } from "../../src/protocol/define-tool.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";

function post(url: string, id: number, name: string, args: Record<string, unknown>) {
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": name,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: {
        name,
        arguments: args,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
}

describe("keep-alive of a waiting 2026-07-28 call", () => {
  let server: McpServer;
  let url: string;
  before(async () => {
    server = createMcpServer({
      keepAliveMs: 40,
      tools: [
        defineTool({ name: "quick", handler: () => "at once" }),
        defineTool({
          name: "silent",
          input: z.object({ ms: z.number() }),
          handler: async ({ ms }, ctx) => {
            await sleep(ms, undefined, { signal: ctx.signal });
            return "done";
          },
        }),
      ],
    });
    ({ url } = await server.listen({ host: "127.0.0.1" }));
  });
  after(() => server.close());

  test("a call answered at once is plain JSON", async () => {
    for (let id = 1; id <= 20; id++) {
      const response = await post(url, id, "quick", {});
      assert.equal(response.headers.get("content-type"), "application/json");
      const message = (await response.json()) as { result: { content: unknown } };
      assert.deepEqual(message.result.content, [{ type: "text", text: "at once" }]);
    }
  });

  test("a silent call becomes a stream with keep-alive comments, then its result", async () => {
    const response = await post(url, 50, "silent", { ms: 300 });
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    const text = await response.text();
    const keepAlives = text.split(": keepalive").length - 1;
    assert.ok(keepAlives >= 2, `keep-alive comments while it waited (got ${keepAlives})`);
    assert.ok(text.indexOf(": keepalive") < text.indexOf('"result"'), "keep-alives come first");
    assert.match(text, /"text":"done"/);
  });

  test("calls started in one turn each get their own keep-alive", async () => {
    const responses = await Promise.all(
      [51, 52, 53].map((id) => post(url, id, "silent", { ms: 200 })),
    );
    for (const response of responses) {
      assert.equal(response.headers.get("content-type"), "text/event-stream");
      assert.match(await response.text(), /: keepalive[\s\S]*"text":"done"/);
    }
  });
});
