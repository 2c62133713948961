/**
 * `prompts/get` over real HTTP (2025-11-25, https://modelcontextprotocol.io/specification/2025-11-25/server/prompts):
 * the three result shapes a handler may return are normalised, every message is checked before it
 * leaves (an invalid one is -32603 with nothing of the handler's value in it), bad arguments are
 * -32602 with bounded details, and a completer's bad answer is -32603.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { z } from "zod";

import { definePrompt } from "../../src/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { rpc } from "../server/fixtures.js";

const SECRET = "internal-token-do-not-leak";

describe("prompts/get results and errors over HTTP", () => {
  let server: McpServer;
  let url: string;

  before(async () => {
    server = createMcpServer({
      prompts: [
        definePrompt({
          name: "shapes",
          description: "Default description",
          arguments: z.object({ shape: z.enum(["string", "messages", "result"]) }),
          get: ({ shape }) => {
            if (shape === "string") return "plain text";
            const messages = [
              { role: "user" as const, content: { type: "text", text: "hi", internal: SECRET } },
              {
                role: "assistant" as const,
                content: {
                  type: "resource",
                  resource: { uri: "test://doc", mimeType: "text/plain", text: "doc" },
                },
              },
            ];
            return shape === "messages" ? messages : { description: "Own description", messages };
          },
        }),
        definePrompt({
          name: "broken",
          get: () => [
            {
              role: "user",
              content: { type: "image", data: `not base64 ${SECRET}`, mimeType: "image/png" },
            },
          ],
        }),
        definePrompt({
          name: "bad-completer",
          arguments: z.object({ a: z.string() }),
          complete: { a: () => [SECRET, 42] as never },
          get: () => "",
        }),
      ],
    });
    ({ url } = await server.listen());
  });

  after(async () => {
    await server.close();
  });

  function get(id: number, name: string, args?: unknown) {
    return rpc(url, {
      jsonrpc: "2.0",
      id,
      method: "prompts/get",
      params: args === undefined ? { name } : { name, arguments: args },
    });
  }

  test("a string is one user text message with the prompt's description", async () => {
    const answer = await get(1, "shapes", { shape: "string" });
    assert.deepEqual(answer.json.result, {
      description: "Default description",
      messages: [{ role: "user", content: { type: "text", text: "plain text" } }],
    });
  });

  test("messages and whole results are copied with the schema's fields only", async () => {
    const messages = [
      { role: "user", content: { type: "text", text: "hi" } },
      {
        role: "assistant",
        content: {
          type: "resource",
          resource: { uri: "test://doc", mimeType: "text/plain", text: "doc" },
        },
      },
    ];
    const list = await get(2, "shapes", { shape: "messages" });
    assert.deepEqual(list.json.result, { description: "Default description", messages });
    const whole = await get(3, "shapes", { shape: "result" });
    assert.deepEqual(whole.json.result, { description: "Own description", messages });
    assert.doesNotMatch(list.text + whole.text, new RegExp(SECRET));
  });

  test("an invalid message is -32603 and nothing of it is sent", async () => {
    const answer = await get(4, "broken");
    assert.equal(answer.status, 200);
    assert.equal(answer.json.id, 4);
    assert.equal(answer.json.error.code, -32603, answer.text);
    assert.equal(answer.json.result, undefined);
    assert.doesNotMatch(answer.text, new RegExp(`${SECRET}|base64|stack`));
  });

  test("bad arguments are -32602 with bounded, clean details", async () => {
    const answer = await get(5, "shapes", { shape: "circle\r\nInjected: yes" });
    assert.equal(answer.json.error.code, -32602, answer.text);
    const errors = answer.json.error.data.errors as { path: string; message: string }[];
    assert.deepEqual(
      errors.map((e) => e.path),
      ["shape"],
    );
    assert.doesNotMatch(answer.text, /\\r\\nInjected/);
    const notStrings = await get(6, "shapes", { shape: 7 });
    assert.equal(notStrings.json.error.code, -32602);
    const notObject = await get(7, "shapes", "shape=string");
    assert.equal(notObject.json.error.code, -32602);
  });

  test("a completer that answers something other than strings is -32603, nothing leaked", async () => {
    const answer = await rpc(url, {
      jsonrpc: "2.0",
      id: 8,
      method: "completion/complete",
      params: {
        ref: { type: "ref/prompt", name: "bad-completer" },
        argument: { name: "a", value: "" },
      },
    });
    assert.equal(answer.json.error.code, -32603, answer.text);
    assert.doesNotMatch(answer.text, new RegExp(SECRET));
  });
});
