/**
 * A 2026-07-28 `tools/call` still waiting `keepAliveMs` after it began becomes a stream with
 * keep-alive comments before any progress (docs/server-options.md: `keepAliveMs`), so proxies do
 * not reap a silent call; one answered sooner stays a plain JSON answer. Over a real server on
 * 127.0.0.1.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { z } from "zod";

import { defineTool } from "../../src/protocol/tools/define-tool.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { modern } from "../tasks/wire.js";

/** One 2026-07-28 `tools/call` of `name` (test/tasks/wire.ts sends it; the client accepts SSE). */
function post(url: string, id: number, name: string, args: Record<string, unknown>) {
  return modern(url, "tools/call", { name, arguments: args }, { id, extension: false });
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
      const answer = await post(url, id, "quick", {});
      assert.equal(answer.headers.get("content-type"), "application/json");
      assert.deepEqual(answer.json.result.content, [{ type: "text", text: "at once" }]);
    }
  });

  test("a silent call becomes a stream with keep-alive comments, then its result", async () => {
    const answer = await post(url, 50, "silent", { ms: 300 });
    assert.equal(answer.headers.get("content-type"), "text/event-stream");
    const text = answer.text;
    const keepAlives = text.split(": keepalive").length - 1;
    assert.ok(keepAlives >= 2, `keep-alive comments while it waited (got ${keepAlives})`);
    assert.ok(text.indexOf(": keepalive") < text.indexOf('"result"'), "keep-alives come first");
    assert.match(text, /"text":"done"/);
  });

  test("calls started in one turn each get their own keep-alive", async () => {
    const answers = await Promise.all(
      [51, 52, 53].map((id) => post(url, id, "silent", { ms: 200 })),
    );
    for (const answer of answers) {
      assert.equal(answer.headers.get("content-type"), "text/event-stream");
      assert.match(answer.text, /: keepalive[\s\S]*"text":"done"/);
    }
  });
});
