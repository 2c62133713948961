/**
 * Asking the client over stdio (MCP 2026-07-28 stdio transport: requests and their
 * `input_required` results travel inline, the same multi round-trip pattern as over HTTP): the
 * official 2.x client, pinned to 2026-07-28, spawns `conduit-mcp serve --stdio` (the demo tools)
 * and fulfils `confirm`'s elicitation and `ask-model`'s sampling itself, retrying on the same
 * connection; the SDK 1.x client (2025-11-25) is asked with an `elicitation/create` request on
 * stdout and answers on stdin (2025-11-25 server-to-client requests), or, without the
 * capability, gets the demo's "cannot be asked" answer.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdioTransport } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const SERVER = {
  command: process.execPath,
  args: ["--import", "tsx", "src/cli/main.ts", "serve", "--stdio"],
  cwd: fileURLToPath(new URL("../../", import.meta.url)),
  stderr: "pipe" as const,
};

function text(result: unknown): string {
  return (result as { content: { text: string }[] }).content[0]?.text ?? "";
}

describe("asking the client over stdio", () => {
  let modern: ModernClient;
  const asked: string[] = [];

  before(async () => {
    modern = new ModernClient(
      { name: "stdio-mrtr", version: "1.0.0" },
      {
        versionNegotiation: { mode: { pin: "2026-07-28" } },
        capabilities: { elicitation: {}, sampling: {} },
      },
    );
    modern.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { confirm: true } };
    });
    modern.setRequestHandler("sampling/createMessage", async () => ({
      role: "assistant",
      content: { type: "text", text: "42" },
      model: "stdio-model",
    }));
    await modern.connect(new ModernStdioTransport(SERVER));
  });

  after(async () => {
    await modern?.close();
  });

  test("2026-07-28: confirm elicits and acts; ask-model samples", async () => {
    const confirmed = await modern.callTool({ name: "confirm", arguments: { action: "tidy up" } });
    assert.equal(text(confirmed), "Done: tidy up");
    assert.deepEqual(asked, ["Do you want to tidy up?"]);
    const answered = await modern.callTool({ name: "ask-model", arguments: { question: "6×7?" } });
    assert.equal(text(answered), "42 (model: stdio-model)");
  });

  test("2025-11-25 (SDK 1.x): confirm's elicitation and ask-model's sampling go out on stdout, the answers come back on stdin", async () => {
    const legacy = new Client(
      { name: "stdio-legacy", version: "1.0.0" },
      { capabilities: { elicitation: {}, sampling: {} } },
    );
    const questions: string[] = [];
    legacy.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: "assistant",
      content: { type: "text", text: "42" },
      model: "stdio-legacy-model",
    }));
    legacy.setRequestHandler(ElicitRequestSchema, async (request) => {
      questions.push(request.params.message);
      return { action: "accept", content: { confirm: true } };
    });
    await legacy.connect(new StdioClientTransport(SERVER));
    try {
      const result = await legacy.callTool({ name: "confirm", arguments: { action: "tidy up" } });
      assert.equal(text(result), "Done: tidy up");
      assert.deepEqual(questions, ["Do you want to tidy up?"]);
      const answered = await legacy.callTool({
        name: "ask-model",
        arguments: { question: "6×7?" },
      });
      assert.equal(text(answered), "42 (model: stdio-legacy-model)");
    } finally {
      await legacy.close();
    }
  });

  test("2025-11-25 (SDK 1.x) without the capability: the handler is told it cannot ask, and says so", async () => {
    const legacy = new Client({ name: "stdio-legacy", version: "1.0.0" }, { capabilities: {} });
    await legacy.connect(new StdioClientTransport(SERVER));
    try {
      const result = await legacy.callTool({ name: "confirm", arguments: { action: "tidy up" } });
      assert.match(text(result), /^Not done: tidy up \(The client did not declare the elicitation/);
    } finally {
      await legacy.close();
    }
  });
});
