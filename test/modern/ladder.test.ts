/**
 * The 2026-07-28 error ladder and header rules over raw HTTP
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http): every rung with its HTTP status and JSON-RPC code, the
 * request's id echoed, sessions ignored, notifications dropped, `ping`/`initialize` refused,
 * results carrying `resultType`, the per-request log level.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { type RpcAnswer, rpc, testTools } from "../server/fixtures.js";

const V = "2026-07-28";
const META = {
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": {},
};

function body(id: number | string, method: string, params: Record<string, unknown> = {}) {
  return {
    jsonrpc: "2.0",
    id,
    method,
    params: { ...params, _meta: { ...META, ...(params._meta as object) } },
  };
}

function headers(method: string, extra: Record<string, string> = {}): Record<string, string> {
  return { "mcp-protocol-version": V, "mcp-method": method, ...extra };
}

describe("2026-07-28 error ladder over raw HTTP", () => {
  let server: McpServer;
  let url: string;

  before(async () => {
    server = createMcpServer({
      tools: [
        ...testTools(),
        defineTool({
          name: "needs_sampling",
          description: "Requires the sampling capability",
          requiredClientCapabilities: { sampling: {} },
          handler: () => "sampled",
        }),
      ],
      sessions: true,
      cacheTtlMs: 1234,
    });
    ({ url } = await server.listen());
  });

  after(async () => {
    await server.close();
  });

  function assertError(answer: RpcAnswer, status: number, code: number, id: unknown): void {
    assert.equal(answer.status, status, answer.text);
    assert.equal(answer.json.error.code, code, answer.text);
    assert.equal(answer.json.id, id, "the error echoes the request id");
  }

  test("server/discover: both eras' versions, capabilities, serverInfo in _meta, caching hints", async () => {
    const answer = await rpc(url, body(1, "server/discover"), headers("server/discover"));
    assert.equal(answer.status, 200);
    const result = answer.json.result;
    assert.equal(result.resultType, "complete");
    assert.deepEqual(result.supportedVersions, [
      "2026-07-28",
      "2025-11-25",
      "2025-06-18",
      "2025-03-26",
    ]);
    // subscriptions/listen is served: list changes and resource updates are announced.
    assert.deepEqual(result.capabilities.tools, { listChanged: true });
    assert.deepEqual(result.capabilities.resources, { subscribe: true, listChanged: true });
    assert.equal(result._meta["io.modelcontextprotocol/serverInfo"].name, "conduit-mcp");
    assert.equal(result.ttlMs, 1234);
    assert.equal(result.cacheScope, "public");
    assert.equal(answer.headers.get("mcp-session-id"), null, "no session is minted");
  });

  test("tools/list carries ttlMs, cacheScope and resultType; tools/call results carry resultType", async () => {
    const list = await rpc(url, body(2, "tools/list"), headers("tools/list"));
    assert.equal(list.json.result.resultType, "complete");
    assert.equal(list.json.result.ttlMs, 1234);
    assert.equal(list.json.result.cacheScope, "public");
    assert.ok(list.json.result.tools.some((t: { name: string }) => t.name === "echo"));
    const call = await rpc(
      url,
      body(3, "tools/call", { name: "echo", arguments: { text: "x" } }),
      headers("tools/call", { "mcp-name": "echo" }),
    );
    assert.deepEqual(call.json.result, {
      content: [{ type: "text", text: "x" }],
      resultType: "complete",
    });
  });

  test("MCP-Protocol-Version missing or different from _meta → 400 / -32020", async () => {
    const { "mcp-protocol-version": _, ...noVersion } = headers("tools/list");
    assertError(await rpc(url, body(10, "tools/list"), noVersion), 400, -32020, 10);
    assertError(
      await rpc(
        url,
        body(11, "tools/list"),
        headers("tools/list", { "mcp-protocol-version": "2026-08-01" }),
      ),
      400,
      -32020,
      11,
    );
    // Header and body disagree even though the header names a supported version: still -32020.
    const odd = body(12, "server/discover", {
      _meta: { "io.modelcontextprotocol/protocolVersion": "v999.0.0" },
    });
    assertError(await rpc(url, odd, headers("server/discover")), 400, -32020, 12);
  });

  test("unsupported version → 400 / -32022 with data.supported and data.requested", async () => {
    const unsupported = body(20, "server/discover", {
      _meta: { "io.modelcontextprotocol/protocolVersion": "v999.0.0" },
    });
    const answer = await rpc(
      url,
      unsupported,
      headers("server/discover", { "mcp-protocol-version": "v999.0.0" }),
    );
    assertError(answer, 400, -32022, 20);
    assert.deepEqual(answer.json.error.data, {
      supported: ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"],
      requested: "v999.0.0",
    });
  });

  test("missing required _meta keys → 400 / -32602", async () => {
    // No _meta at all, the header naming the modern version.
    assertError(
      await rpc(
        url,
        { jsonrpc: "2.0", id: 30, method: "tools/list", params: {} },
        headers("tools/list"),
      ),
      400,
      -32602,
      30,
    );
    // _meta without protocolVersion.
    const noVersion = {
      jsonrpc: "2.0",
      id: 31,
      method: "tools/list",
      params: { _meta: { "io.modelcontextprotocol/clientCapabilities": {} } },
    };
    assertError(await rpc(url, noVersion, headers("tools/list")), 400, -32602, 31);
    // _meta without clientCapabilities.
    const noCaps = {
      jsonrpc: "2.0",
      id: 32,
      method: "tools/list",
      params: { _meta: { "io.modelcontextprotocol/protocolVersion": V } },
    };
    assertError(await rpc(url, noCaps, headers("tools/list")), 400, -32602, 32);
    // A log level that is not one.
    const badLevel = body(33, "tools/list", {
      _meta: { "io.modelcontextprotocol/logLevel": "loud" },
    });
    assertError(await rpc(url, badLevel, headers("tools/list")), 400, -32602, 33);
    // clientInfo is optional (a SHOULD): served without it.
    assert.equal((await rpc(url, body(34, "tools/list"), headers("tools/list"))).status, 200);
  });

  test("Mcp-Method: missing, different, or different in case → 400 / -32020; whitespace and header-name case are fine", async () => {
    assertError(
      await rpc(url, body(40, "tools/list"), { "mcp-protocol-version": V }),
      400,
      -32020,
      40,
    );
    assertError(await rpc(url, body(41, "tools/list"), headers("prompts/list")), 400, -32020, 41);
    assertError(await rpc(url, body(42, "tools/list"), headers("TOOLS/LIST")), 400, -32020, 42);
    const spaced = await rpc(url, body(43, "tools/list"), {
      "MCP-PROTOCOL-VERSION": ` ${V} `,
      "MCP-METHOD": "  tools/list ",
    });
    assert.equal(spaced.status, 200, spaced.text);
  });

  test("Mcp-Name on tools/call: missing or different → 400 / -32020; the base64 sentinel form is decoded", async () => {
    const call = (id: number, name: string) =>
      body(id, "tools/call", { name, arguments: { text: "x" } });
    assertError(await rpc(url, call(50, "echo"), headers("tools/call")), 400, -32020, 50);
    assertError(
      await rpc(url, call(51, "echo"), headers("tools/call", { "mcp-name": "wrong_tool" })),
      400,
      -32020,
      51,
    );
    const encoded = `=?base64?${Buffer.from("echo").toString("base64")}?=`;
    const ok = await rpc(url, call(52, "echo"), headers("tools/call", { "mcp-name": encoded }));
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.json.result.content, [{ type: "text", text: "x" }]);
    // Bad padding or characters in the sentinel are refused; a plain value is literal.
    assertError(
      await rpc(url, call(53, "echo"), headers("tools/call", { "mcp-name": "=?base64?ZWNo?=" })),
      400,
      -32020,
      53,
    );
    assertError(
      await rpc(
        url,
        call(54, "echo"),
        headers("tools/call", { "mcp-name": "=?base64?ZW*obw==?=" }),
      ),
      400,
      -32020,
      54,
    );
    const plain = await rpc(url, call(55, "echo"), headers("tools/call", { "mcp-name": "echo" }));
    assert.equal(plain.status, 200);
  });

  test("a missing client capability → 400 / -32021 with data.requiredCapabilities", async () => {
    const call = body(60, "tools/call", { name: "needs_sampling", arguments: {} });
    const answer = await rpc(url, call, headers("tools/call", { "mcp-name": "needs_sampling" }));
    assertError(answer, 400, -32021, 60);
    assert.deepEqual(answer.json.error.data, { requiredCapabilities: { sampling: {} } });
    const declared = body(61, "tools/call", {
      name: "needs_sampling",
      arguments: {},
      _meta: { "io.modelcontextprotocol/clientCapabilities": { sampling: {} } },
    });
    const ok = await rpc(url, declared, headers("tools/call", { "mcp-name": "needs_sampling" }));
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.result.resultType, "complete");
  });

  test("unknown methods, ping, initialize and logging/setLevel → 404 / -32601", async () => {
    for (const [i, method] of [
      "unknown/method",
      "ping",
      "initialize",
      "logging/setLevel",
    ].entries()) {
      assertError(await rpc(url, body(70 + i, method), headers(method)), 404, -32601, 70 + i);
    }
  });

  test("handler errors stay 200: unknown tool → -32602, bad arguments → isError, a throwing tool → -32603", async () => {
    const unknown = body(80, "tools/call", { name: "nope", arguments: {} });
    assertError(
      await rpc(url, unknown, headers("tools/call", { "mcp-name": "nope" })),
      200,
      -32602,
      80,
    );
    const bad = body(81, "tools/call", { name: "echo", arguments: { text: 5 } });
    const badAnswer = await rpc(url, bad, headers("tools/call", { "mcp-name": "echo" }));
    assert.equal(badAnswer.status, 200);
    assert.equal(badAnswer.json.result.isError, true);
    assert.equal(badAnswer.json.result.resultType, "complete");
    const boom = body(82, "tools/call", { name: "boom", arguments: {} });
    const answer = await rpc(url, boom, headers("tools/call", { "mcp-name": "boom" }));
    assertError(answer, 200, -32603, 82);
    assert.doesNotMatch(answer.text, /password|10\.0\.0\.5/);
  });

  test("a modern notification POST is answered 202 and dropped; a session header is ignored", async () => {
    const cancel = {
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 1, _meta: META },
    };
    const answer = await rpc(url, cancel, headers("notifications/cancelled"));
    assert.equal(answer.status, 202);
    assert.equal(answer.text, "");
    // Also with only the header claiming the modern era.
    const bare = await rpc(
      url,
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } },
      headers("notifications/cancelled"),
    );
    assert.equal(bare.status, 202);
    assert.equal(await server.registry.size(), 0, "nothing was recorded");
    // An unknown session id would be 404 for a 2025 request; a modern one never looks at it.
    const withSession = await rpc(
      url,
      body(90, "tools/list"),
      headers("tools/list", { "mcp-session-id": "not-a-session" }),
    );
    assert.equal(withSession.status, 200);
    assert.equal(withSession.headers.get("mcp-session-id"), null);
  });

  test("the log level comes from _meta: absent → no notifications/message", async () => {
    const silent = body(100, "tools/call", { name: "chatty", arguments: {} });
    const quiet = await rpc(url, silent, headers("tools/call", { "mcp-name": "chatty" }));
    assert.equal(quiet.headers.get("content-type"), "application/json");
    assert.doesNotMatch(quiet.text, /notifications\/message/);
    const loud = body(101, "tools/call", {
      name: "chatty",
      arguments: {},
      _meta: { "io.modelcontextprotocol/logLevel": "info" },
    });
    const answer = await rpc(url, loud, headers("tools/call", { "mcp-name": "chatty" }));
    assert.equal(answer.headers.get("content-type"), "text/event-stream");
    assert.equal(answer.headers.get("x-accel-buffering"), "no");
    const messages = answer.text.match(/notifications\/message/g) ?? [];
    assert.equal(messages.length, 2, "info and error, not debug");
    assert.match(answer.text, /"resultType":"complete"/);
  });

  test("2025-era requests on the same endpoint are untouched", async () => {
    const ping = await rpc(url, { jsonrpc: "2.0", id: 1, method: "ping" });
    assert.deepEqual(ping.json, { jsonrpc: "2.0", id: 1, result: {} });
    const list = await rpc(
      url,
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { "mcp-protocol-version": "2025-11-25" },
    );
    assert.equal(list.json.result.resultType, undefined);
    assert.equal(list.json.result.ttlMs, undefined);
    // initialize without a claim is 2025 and mints a session (sessions are on here).
    const init = await rpc(url, {
      jsonrpc: "2.0",
      id: 3,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    });
    assert.equal(init.status, 200);
    assert.notEqual(init.headers.get("mcp-session-id"), null);
  });
});
