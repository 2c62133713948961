/**
 * A 2026-07-28 result carries `resultType: "complete"` (2026-07-28 basic, "Result Types"), added
 * to whatever the handler's result holds: the members are kept, a `resultType` of the handler's
 * own is replaced, and a 2025-11-25 result carries none. Over a real server on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { z } from "zod";

import { defineTool } from "../../src/protocol/tools/define-tool.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { legacy, modern } from "../tasks/wire.js";

/** The result of one `tools/call` of `name`, in either era (test/tasks/wire.ts sends it). */
async function call(
  url: string,
  name: string,
  era: "2026" | "2025",
): Promise<Record<string, unknown>> {
  const params = { name, arguments: { n: 2 } };
  const answer =
    era === "2026"
      ? await modern(url, "tools/call", params, { extension: false })
      : await legacy(url, "tools/call", params);
  assert.equal(answer.status, 200);
  return answer.json.result as Record<string, unknown>;
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
    const result = await call(url, "text", "2026");
    assert.equal(result.resultType, "complete");
    assert.deepEqual(result.content, [{ type: "text", text: "plain" }]);
  });

  test("added to a structured result, structuredContent kept", async () => {
    const result = await call(url, "structured", "2026");
    assert.equal(result.resultType, "complete");
    assert.deepEqual(result.structuredContent, { doubled: 4 });
  });

  test("a resultType of the handler's own is replaced by complete", async () => {
    const result = await call(url, "own-type", "2026");
    assert.equal(result.resultType, "complete");
    assert.deepEqual(result.content, [{ type: "text", text: "mine" }]);
  });

  test("a 2025-11-25 result carries none", async () => {
    const result = await call(url, "text", "2025");
    assert.equal("resultType" in result, false);
    assert.deepEqual(result.content, [{ type: "text", text: "plain" }]);
  });
});
