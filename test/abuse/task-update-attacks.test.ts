/**
 * `tasks/update` against a task that is asking its client (2026-07-28, the
 * `io.modelcontextprotocol/tasks` extension, https://modelcontextprotocol.io/extensions/tasks/overview):
 * another principal naming the task changes nothing and learns nothing; an answer to a question
 * nobody asked is ignored; a replayed update after the task finished changes nothing. Real server
 * on 127.0.0.1, requests built by hand (the official 2.x client does not serve tasks).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { until } from "../server/fixtures.js";
import { askNameTaskTool, modern, untilTerminal } from "../tasks/wire.js";

const ALICE = "alice-secret-0123456789";
const MALLORY = "mallory-secret-0123456789";

describe("tasks/update on a task that is asking", () => {
  let server: McpServer;
  let url: string;

  before(async () => {
    server = createMcpServer({
      tools: [askNameTaskTool()],
      auth: { tokens: { [ALICE]: "alice", [MALLORY]: "mallory" } },
      onError: false,
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
  });
  after(() => server.close());

  test("another principal cannot answer, read or disturb it; a replay after the end changes nothing", async () => {
    const elicitation = { elicitation: {} };
    const created = await modern(
      url,
      "tools/call",
      { name: "ask_name", arguments: {} },
      {
        capabilities: elicitation,
        token: ALICE,
      },
    );
    const { taskId } = created.json.result;
    assert.equal(typeof taskId, "string", created.text);
    await until(
      async () =>
        (await modern(url, "tasks/get", { taskId }, { token: ALICE })).json.result?.status ===
        "input_required",
      5_000,
      "the task to wait for input",
    );
    // Mallory answers Alice's question: refused as an unknown task, Alice's task unchanged.
    const forged = await modern(
      url,
      "tasks/update",
      { taskId, inputResponses: { name: { action: "accept", content: { name: "Mallory" } } } },
      { token: MALLORY },
    );
    assert.ok(forged.json.error !== undefined, forged.text);
    assert.doesNotMatch(forged.text, /Your name|input_required/);
    const peek = await modern(url, "tasks/get", { taskId }, { token: MALLORY });
    assert.ok(peek.json.error !== undefined, peek.text);
    const cancel = await modern(url, "tasks/cancel", { taskId }, { token: MALLORY });
    assert.ok(cancel.json.error !== undefined, cancel.text);
    assert.equal(
      (await modern(url, "tasks/get", { taskId }, { token: ALICE })).json.result.status,
      "input_required",
    );
    // An answer to a question nobody asked is ignored: still waiting.
    const stray = await modern(
      url,
      "tasks/update",
      { taskId, inputResponses: { other: { action: "accept", content: { name: "Eve" } } } },
      { token: ALICE },
    );
    assert.equal(stray.json.error, undefined, stray.text);
    assert.equal(
      (await modern(url, "tasks/get", { taskId }, { token: ALICE })).json.result.status,
      "input_required",
    );
    // Alice answers; the task completes with her answer.
    await modern(
      url,
      "tasks/update",
      { taskId, inputResponses: { name: { action: "accept", content: { name: "Ada" } } } },
      { token: ALICE },
    );
    const done = await untilTerminal(() => modern(url, "tasks/get", { taskId }, { token: ALICE }));
    assert.deepEqual(done.result, { content: [{ type: "text", text: "Hello, Ada!" }] });
    // A replay (or a late forged answer) after the end changes nothing.
    await modern(
      url,
      "tasks/update",
      { taskId, inputResponses: { name: { action: "accept", content: { name: "Replay" } } } },
      { token: ALICE },
    );
    const after = (await modern(url, "tasks/get", { taskId }, { token: ALICE })).json.result;
    assert.equal(after.status, "completed");
    assert.deepEqual(after.result, { content: [{ type: "text", text: "Hello, Ada!" }] });
  });
});
