/**
 * Hostile inputs over HTTP: each hostile input gets
 * the right status and code, nothing internal leaks, and the server keeps serving afterwards.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { callBody, cancelBody, probes, rpc, testTools, until } from "../server/fixtures.js";

const PING = { jsonrpc: "2.0", id: "alive", method: "ping" };
const MAX_MESSAGE = 300;

describe("hostile inputs over HTTP", () => {
  let server: McpServer;
  let url: string;

  before(async () => {
    server = createMcpServer({ tools: testTools() });
    ({ url } = await server.listen());
  });

  after(async () => {
    await server.close();
  });

  async function assertAlive(): Promise<void> {
    const answer = await rpc(url, PING);
    assert.deepEqual(answer.json, { jsonrpc: "2.0", id: "alive", result: {} });
  }

  function assertCleanMessage(message: string): void {
    assert.ok(message.length <= MAX_MESSAGE, `message of ${message.length} characters`);
    assert.doesNotMatch(message, /[\x00-\x08\x0b-\x1f\x7f]/);
    assert.equal(Buffer.from(message, "utf8").toString("utf8"), message, "valid UTF-8");
  }

  test("52: a throwing tool is -32603 'Internal server error', nothing leaks, the id is kept", async () => {
    const answer = await rpc(url, callBody(42, "boom", {}));
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.json, {
      jsonrpc: "2.0",
      id: 42,
      error: { code: -32603, message: "Internal server error" },
    });
    assert.doesNotMatch(answer.text, /database|10\.0\.0\.5|sensitive|%|Error|\.ts/);
    await assertAlive();
  });

  test("53: a 10 000-character method is -32601 with a bounded message; control characters are stripped", async () => {
    const long = await rpc(url, { jsonrpc: "2.0", id: 1, method: "a".repeat(10_000) });
    assert.equal(long.json.error.code, -32601);
    assertCleanMessage(long.json.error.message);
    const control = await rpc(url, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call\u0000\u0001\u0002",
    });
    assert.equal(control.json.error.message, "Method not found: tools/call");
    await assertAlive();
  });

  test("54: {} and a null or numeric method are -32600 (with the id when there is one)", async () => {
    const empty = await rpc(url, {});
    assert.equal(empty.status, 400);
    assert.deepEqual(empty.json, {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Invalid JSON-RPC 2.0 request" },
    });
    for (const method of [null, 12345]) {
      const answer = await rpc(url, { jsonrpc: "2.0", id: 7, method });
      assert.equal(answer.status, 400);
      assert.deepEqual(answer.json, {
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32600, message: "Invalid JSON-RPC 2.0 request" },
      });
    }
    const noVersion = await rpc(url, { id: 8, method: "ping" });
    assert.equal(noVersion.json.error.code, -32600);
    assert.equal(noVersion.json.id, 8);
    await assertAlive();
  });

  test("55: a non-string protocolVersion is -32602; a 1 MB one is -32600 with a bounded message", async () => {
    const object = await rpc(url, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: {} },
    });
    assert.equal(object.json.error.code, -32602);
    assert.match(object.json.error.message, /^protocolVersion must be a string/);
    const missing = await rpc(url, { jsonrpc: "2.0", id: 1, method: "initialize", params: {} });
    assert.equal(missing.json.error.message, "protocolVersion must be a string, got: ");
    const huge = await rpc(url, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "9".repeat(1_000_000) },
    });
    assert.equal(huge.json.error.code, -32600);
    assertCleanMessage(huge.json.error.message);
    assert.ok(huge.text.length < 2000);
    const old = await rpc(url, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "1999-01-01" },
    });
    assert.equal(old.json.error.code, -32600);
    assert.match(old.json.error.message, /Supported versions: 2025-11-25, 2025-06-18, 2025-03-26/);
    await assertAlive();
  });

  test("56: 300 euro signs as method or protocolVersion give valid UTF-8 errors", async () => {
    const method = await rpc(url, { jsonrpc: "2.0", id: 1, method: "€".repeat(300) });
    assert.equal(method.json.error.code, -32601);
    assertCleanMessage(method.json.error.message);
    const version = await rpc(url, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "€".repeat(300) },
    });
    assert.equal(version.json.error.code, -32600);
    assertCleanMessage(version.json.error.message);
    await assertAlive();
  });

  test("57: array reasons on a tracked id are accepted and stored as text", async () => {
    for (const [i, reason] of [[1.5], [{}], [-1], [1, 2]].entries()) {
      const tag = `reason-${i}`;
      const id = `r-${i}`;
      // Long enough that its row is still there when the reason is read on a loaded machine.
      const call = rpc(url, callBody(id, "stubborn", { ms: 1_000, tag }), {
        accept: "application/json",
      });
      await until(() => probes.has(tag));
      const answer = await rpc(url, cancelBody(id, reason));
      assert.equal(answer.status, 202);
      assert.equal(typeof (await server.registry.reason(id, "ip:127.0.0.1")), "string");
      assert.equal((await call).json.error.code, -32800);
    }
    // The stubborn tools outlive their -32800 answers; their rows are cleared when they finish,
    // and the next test counts rows.
    await until(async () => (await server.registry.size()) === 0, 10_000, "rows cleared");
    await assertAlive();
  });

  test("58: tasks methods with hostile taskIds are not -32603 and have bounded, clean messages", async () => {
    const odd = await rpc(url, {
      jsonrpc: "2.0",
      id: 1,
      method: "tasks/get",
      params: { taskId: [1.5] },
    });
    assert.notEqual(odd.json.error.code, -32603);
    assertCleanMessage(odd.json.error.message);
    const long = await rpc(url, {
      jsonrpc: "2.0",
      id: 2,
      method: "tasks/get",
      params: { taskId: `${"t".repeat(5000)}\u0000` },
    });
    assert.notEqual(long.json.error.code, -32603);
    assertCleanMessage(long.json.error.message);
    await assertAlive();
  });

  test("59: notifications/cancelled with non-object params is 200 with -32602; no params is 202", async () => {
    for (const params of [null, [1], "x", 5]) {
      const answer = await rpc(url, { jsonrpc: "2.0", method: "notifications/cancelled", params });
      assert.equal(answer.status, 200);
      assert.equal(answer.json.id, null);
      assert.equal(answer.json.error.code, -32602);
      assert.match(answer.json.error.message, /requires a params object/);
    }
    const none = await rpc(url, { jsonrpc: "2.0", method: "notifications/cancelled" });
    assert.equal(none.status, 202);
    assert.equal(none.text, "");
    await assertAlive();
  });

  test("2.5: an invalid requestId is -32602 even when nothing is in flight; a null one is ignored", async () => {
    for (const requestId of [{}, 1.5, "x".repeat(257), true]) {
      const answer = await rpc(url, cancelBody(requestId));
      assert.equal(answer.status, 200);
      assert.equal(answer.json.error.code, -32602);
      assert.match(answer.json.error.message, /string or integer requestId/);
    }
    assert.equal((await rpc(url, cancelBody(null))).status, 202);
    assert.equal((await rpc(url, cancelBody("not-in-flight"))).status, 202);
    assert.equal(await server.registry.size(), 0);
    await assertAlive();
  });

  test("params present but not an object on a request is -32602, not a crash", async () => {
    for (const params of [null, [1, 2], "x", 3]) {
      for (const method of ["ping", "tools/call", "initialize"]) {
        const answer = await rpc(url, { jsonrpc: "2.0", id: 5, method, params });
        assert.equal(answer.json.error.code, -32602, `${method} ${JSON.stringify(params)}`);
        assert.equal(answer.json.id, 5);
      }
    }
    const args = await rpc(url, callBody(6, "echo", "nope" as unknown as Record<string, unknown>));
    assert.equal(args.json.error.code, -32602);
    await assertAlive();
  });

  test("an unknown tool is -32602; invalid arguments are an isError result with bounded details", async () => {
    const unknown = await rpc(url, callBody(1, `x\u0000${"y".repeat(1000)}`, {}));
    assert.equal(unknown.json.error.code, -32602);
    assert.match(unknown.json.error.message, /^Unknown tool: xy+$/);
    assertCleanMessage(unknown.json.error.message);
    const invalid = await rpc(url, callBody(2, "echo", { text: 5 }));
    assert.equal(invalid.json.result.isError, true);
    assert.match(invalid.json.result.content[0].text, /^Invalid arguments: text: /);
    const hostileKey = { [`k\u0000${"z".repeat(5000)}`]: 1, text: 5 };
    const bounded = await rpc(url, callBody(3, "echo", hostileKey));
    assert.ok(bounded.text.length < 6000, "issues are bounded");
    await assertAlive();
  });

  test("request ids are echoed as sent; a response body is accepted and ignored", async () => {
    for (const id of [0, -1, "0", "", "é".repeat(200), Number.MAX_SAFE_INTEGER]) {
      const answer = await rpc(url, { jsonrpc: "2.0", id, method: "ping" });
      assert.equal(answer.json.id, id);
    }
    // MCP ids are strings or integers; an id JSON.parse cannot hold exactly is never echoed
    // altered: the message is invalid, answered with a null id.
    for (const raw of [
      '{"jsonrpc":"2.0","id":1152921504606846977,"method":"ping"}',
      '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
    ]) {
      const answer = await rpc(url, raw);
      assert.equal(answer.json.id, null);
      assert.equal(answer.json.error.code, -32600);
    }
    const response = await rpc(url, { jsonrpc: "2.0", id: 1, result: {} });
    assert.equal(response.status, 202);
    await assertAlive();
  });
});
