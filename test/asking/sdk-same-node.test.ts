/**
 * 2025-11-25 server-to-client requests end to end with `@modelcontextprotocol/sdk` 1.x on one
 * node: `ctx.elicit`, `ctx.sample` and `ctx.roots` in a tool become `elicitation/create`,
 * `sampling/createMessage` and `roots/list` requests on the call's SSE stream; the SDK answers
 * with a POST, and the handler gets the answer
 * (https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation, …/client/sampling,
 * …/client/roots). A client that did not declare a capability is not asked.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { askTools } from "./tools.js";

function textOf(result: unknown): string {
  const content = (result as { content: { type: string; text: string }[] }).content;
  return content.map((block) => block.text).join("");
}

describe("2025-11-25 asks with the SDK 1.x client, one node", () => {
  let server: McpServer;
  let url: URL;

  before(async () => {
    server = createMcpServer({ tools: askTools, sessions: true, onError: false });
    url = new URL((await server.listen()).url);
  });
  after(() => server.close());

  test("elicitation, sampling and roots reach the client and the handler gets the answers", async () => {
    const client = new Client(
      { name: "ask-test", version: "1.0.0" },
      { capabilities: { elicitation: {}, sampling: {}, roots: {} } },
    );
    const seen: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      seen.push(`elicit:${request.params.message}`);
      return { action: "accept", content: { ok: true } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const first = request.params.messages[0]?.content as { text?: string };
      seen.push(`sample:${first.text}`);
      return { role: "assistant", model: "test-model", content: { type: "text", text: "42" } };
    });
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      seen.push("roots");
      return { roots: [{ uri: "file:///work", name: "work" }] };
    });
    await client.connect(new StreamableHTTPClientTransport(url));
    try {
      const confirmed = await client.callTool({ name: "confirm", arguments: { action: "deploy" } });
      assert.equal(textOf(confirmed), "did deploy");
      const sampled = await client.callTool({ name: "ask-model", arguments: { question: "6*7?" } });
      assert.equal(textOf(sampled), "test-model: 42");
      const roots = await client.callTool({ name: "list-roots", arguments: {} });
      assert.equal(textOf(roots), "file:///work");
      assert.deepEqual(seen, ["elicit:Really deploy?", "sample:6*7?", "roots"]);
    } finally {
      await client.close();
    }
  });

  test("a client that did not declare a capability is not asked", async () => {
    const client = new Client({ name: "ask-test-bare", version: "1.0.0" }, { capabilities: {} });
    await client.connect(new StreamableHTTPClientTransport(url));
    try {
      const roots = await client.callTool({ name: "list-roots", arguments: {} });
      assert.equal(textOf(roots), "cannot ask: MissingClientCapabilityError");
      const confirmed = await client.callTool({ name: "confirm", arguments: { action: "x" } });
      assert.equal(confirmed.isError, true);
      assert.match(textOf(confirmed), /did not declare the elicitation capability/);
    } finally {
      await client.close();
    }
  });
});
