/**
 * A 2026-07-28 result carries `resultType: "complete"` (2026-07-28 basic, "Result Types"), added
 * to whatever the handler's result holds: the members are kept, a `resultType` of the handler's
 * own is replaced, and a 2025-11-25 result carries none. Over a real server on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { z } from "zod";

import { defineTool } from "../../src/protocol/define-tool.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
};

async function call(url: string, name: string, modern: boolean): Promise<Record<string, unknown>> {
  const params: Record<string, unknown> = { name, arguments: { n: 2 } };
  if (modern) params._meta = MODERN_META;
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json",
      "mcp-protocol-version": modern ? "2026-07-28" : "2025-11-25",
      ...(modern ? { "mcp-method": "tools/call", "mcp-name": name } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params }),
  });
  assert.equal(response.status, 200);
  const message = (await response.json()) as { result: Record<string, unknown> };
  return message.result;
}

describe("resultType of a 2026-07-28 tool result", () => {
  let server: McpServer;
  let url: string;
  before(async () => {
    server = createMcpServer({
      tools: [
        defineTool({ name: "text", handler: () => "plain" }),
        defineTool({
          name: "structured",
          input: z.object({ n: z.number() }),
          output: z.object({ doubled: z.number() }),
          handler: ({ n }) => ({ doubled: n * 2 }),
        }),
        defineTool({
          name: "own-type",
          handler: () => ({
            content: [{ type: "text", text: "mine" }],
            resultType: "task",
            _meta: { note: "kept" },
          }),
        }),
      ],
    });
    ({ url } = await server.listen({ host: "127.0.0.1" }));
  });
  after(() => server.close());

  test("added to a text result, every member kept", async () => {
    const result = await call(url, "text", true);
    assert.equal(result.resultType, "complete");
    assert.deepEqual(result.content, [{ type: "text", text: "plain" }]);
  });

  test("added to a structured result, structuredContent kept", async () => {
    const result = await call(url, "structured", true);
    assert.equal(result.resultType, "complete");
    assert.deepEqual(result.structuredContent, { doubled: 4 });
  });

  test("a resultType of the handler's own is replaced by complete", async () => {
    const result = await call(url, "own-type", true);
    assert.equal(result.resultType, "complete");
    assert.deepEqual(result.content, [{ type: "text", text: "mine" }]);
  });

  test("a 2025-11-25 result carries none", async () => {
    const result = await call(url, "text", false);
    assert.equal("resultType" in result, false);
    assert.deepEqual(result.content, [{ type: "text", text: "plain" }]);
  });
});
