/**
 * Resources, resource templates, completions, rich tools, lists (paging, cursors, caching hints),
 * runtime changes, visibility and scopes — over HTTP against a real server on 127.0.0.1, in both
 * eras (MCP 2025-11-25 and 2026-07-28).
 */
import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";

import { InvalidOptionError } from "../../src/errors.js";
import { createPrincipal } from "../../src/identity/index.js";
import {
  type CollectionChange,
  defineResource,
  defineResourceTemplate,
  defineTool,
} from "../../src/protocol/index.js";
import { definePrompt } from "../../src/protocol/prompts/define-prompt.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { cancelBody, rpc, until } from "./fixtures.js";

const V = "2026-07-28";

/** A 2025-era body. */
function legacy(id: number | string, method: string, params?: Record<string, unknown>) {
  return params === undefined
    ? { jsonrpc: "2.0", id, method }
    : { jsonrpc: "2.0", id, method, params };
}

/** A 2026-07-28 body and its headers. */
function modern(id: number | string, method: string, params: Record<string, unknown> = {}) {
  const body = {
    jsonrpc: "2.0",
    id,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  };
  const headers: Record<string, string> = { "mcp-protocol-version": V, "mcp-method": method };
  const name = method === "resources/read" ? params.uri : params.name;
  if (
    typeof name === "string" &&
    ["tools/call", "prompts/get", "resources/read"].includes(method)
  ) {
    headers["mcp-name"] = name;
  }
  return { body, headers };
}

async function modernRpc(
  url: string,
  id: number,
  method: string,
  params: Record<string, unknown> = {},
  extra: Record<string, string> = {},
) {
  const { body, headers } = modern(id, method, params);
  return rpc(url, body, { ...headers, ...extra });
}

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const started = new Map<string, AbortSignal>();

function fixtures() {
  return {
    resources: [
      defineResource({
        uri: "test://static-text",
        name: "static-text",
        description: "Text",
        mimeType: "text/plain",
        cacheScope: "public",
        icons: [{ src: "https://example.com/t.png", mimeType: "image/png" }],
        read: () => "This is the content of the static text resource.",
      }),
      defineResource({
        uri: "test://static-binary",
        name: "static-binary",
        mimeType: "image/png",
        size: PNG.length,
        read: () => PNG,
      }),
      defineResource({
        uri: "test://slow",
        name: "slow",
        read: async (_request, ctx) => {
          started.set(String(ctx.requestId), ctx.signal);
          await sleep(60_000, undefined, { signal: ctx.signal });
          return "never";
        },
      }),
      defineResource({
        uri: "test://broken",
        name: "broken",
        read: () => [] as never,
      }),
    ],
    resourceTemplates: [
      defineResourceTemplate({
        uriTemplate: "test://template/{id}/data",
        name: "template",
        mimeType: "application/json",
        complete: {
          id: (value, context) =>
            Array.from({ length: 150 }, (_, i) => `${context.arguments.prefix ?? ""}${value}${i}`),
        },
        read: ({ variables }) => JSON.stringify({ id: variables.id, templateTest: true }),
      }),
      defineResourceTemplate({
        uriTemplate: "test://pair/{a}/{b}",
        name: "pair",
        complete: { b: (value, context) => [`${context.arguments.a}-${value}`] },
        read: ({ variables }) => `${variables.a}+${variables.b}`,
      }),
    ],
    prompts: [
      definePrompt({
        name: "review",
        description: "Review code",
        arguments: z.object({ code: z.string(), language: z.string().optional() }),
        complete: {
          language: (value, context) =>
            ["python", "pytorch", "perl"].filter(
              (l) => l.startsWith(value) && context.arguments.code !== "none",
            ),
        },
        get: ({ code, language }) => `Review this ${language ?? "code"}: ${code}`,
      }),
      definePrompt({
        name: "slow-prompt",
        get: async (_args, ctx) => {
          started.set(`prompt-${String(ctx.requestId)}`, ctx.signal);
          await sleep(60_000, undefined, { signal: ctx.signal });
          return "never";
        },
      }),
    ],
    tools: [
      defineTool({
        name: "stats",
        title: "Statistics",
        icons: [{ src: "https://example.com/s.png" }],
        _meta: { "example.com/ui": { template: "x" } },
        input: z.object({ numbers: z.array(z.number()).min(1) }),
        output: z.object({ mean: z.number(), count: z.number().int() }),
        handler: ({ numbers }) => ({
          mean: numbers.reduce((a, b) => a + b, 0) / numbers.length,
          count: numbers.length,
        }),
      }),
      defineTool({
        name: "liar",
        output: z.object({ mean: z.number() }),
        handler: () =>
          ({ content: [], structuredContent: { mean: "secret-internal-value" } }) as never,
      }),
    ],
  };
}

describe("resources, templates, completion and rich tools over HTTP", () => {
  let server: McpServer;
  let url: string;

  before(async () => {
    server = createMcpServer({
      ...fixtures(),
      title: "Primitives test",
      instructions: "Read the resources first.",
      websiteUrl: "https://example.com/docs",
      icons: [{ src: "https://example.com/server.png", sizes: ["48x48"] }],
      cacheTtlMs: 4321,
      streamCancelTimeoutMs: 500,
      maxTemplateValueLength: 64,
    });
    ({ url } = await server.listen());
  });

  after(async () => {
    await server.close();
  });

  test("initialize and server/discover carry title, icons, websiteUrl, instructions and every capability", async () => {
    const init = await rpc(
      url,
      legacy(1, "initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      }),
    );
    const result = init.json.result;
    assert.equal(result.serverInfo.title, "Primitives test");
    assert.equal(result.serverInfo.websiteUrl, "https://example.com/docs");
    assert.deepEqual(result.serverInfo.icons, [
      { src: "https://example.com/server.png", sizes: ["48x48"] },
    ]);
    assert.equal(result.instructions, "Read the resources first.");
    for (const capability of ["tools", "resources", "prompts", "completions", "logging"]) {
      assert.ok(capability in result.capabilities, capability);
    }
    const discover = await modernRpc(url, 2, "server/discover");
    const d = discover.json.result;
    assert.equal(d.instructions, "Read the resources first.");
    assert.equal(d._meta["io.modelcontextprotocol/serverInfo"].title, "Primitives test");
    assert.ok("completions" in d.capabilities && "resources" in d.capabilities);
    assert.equal(d.ttlMs, 4321);
  });

  test("resources/list and templates/list in both eras; 2026-07-28 adds resultType and caching hints", async () => {
    const old = await rpc(url, legacy(1, "resources/list"));
    assert.deepEqual(
      old.json.result.resources.map((r: { uri: string }) => r.uri),
      ["test://static-text", "test://static-binary", "test://slow", "test://broken"],
      "in definition order",
    );
    assert.equal(old.json.result.ttlMs, undefined, "no caching hints in the 2025 era");
    const text = old.json.result.resources.find(
      (r: { uri: string }) => r.uri === "test://static-text",
    );
    assert.deepEqual(text.icons, [{ src: "https://example.com/t.png", mimeType: "image/png" }]);
    const binary = old.json.result.resources.find(
      (r: { uri: string }) => r.uri === "test://static-binary",
    );
    assert.equal(binary.size, 8);
    const now = await modernRpc(url, 2, "resources/list");
    assert.equal(now.json.result.resultType, "complete");
    assert.equal(now.json.result.ttlMs, 4321);
    assert.equal(now.json.result.cacheScope, "public", "nothing depends on the caller");
    const templates = await modernRpc(url, 3, "resources/templates/list");
    assert.deepEqual(
      templates.json.result.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate),
      ["test://template/{id}/data", "test://pair/{a}/{b}"],
    );
    assert.equal(templates.json.result.resourceTemplates[0].mimeType, "application/json");
  });

  test("resources/read: text, base64 blob and template matches, with caching hints in 2026-07-28", async () => {
    const t = await rpc(url, legacy(1, "resources/read", { uri: "test://static-text" }));
    assert.deepEqual(t.json.result, {
      contents: [
        {
          uri: "test://static-text",
          mimeType: "text/plain",
          text: "This is the content of the static text resource.",
        },
      ],
    });
    const b = await modernRpc(url, 2, "resources/read", { uri: "test://static-binary" });
    assert.equal(b.json.result.contents[0].blob, Buffer.from(PNG).toString("base64"));
    assert.equal(b.json.result.contents[0].mimeType, "image/png");
    assert.equal(b.json.result.cacheScope, "private", "reads are private unless declared public");
    assert.equal(b.json.result.ttlMs, 4321);
    const pub = await modernRpc(url, 3, "resources/read", { uri: "test://static-text" });
    assert.equal(pub.json.result.cacheScope, "public");
    const m = await modernRpc(url, 4, "resources/read", { uri: "test://template/123/data" });
    assert.deepEqual(JSON.parse(m.json.result.contents[0].text), { id: "123", templateTest: true });
    assert.equal(m.json.result.contents[0].uri, "test://template/123/data");
    assert.equal(m.json.result.resultType, "complete");
  });

  test("an unknown resource: -32002 in 2025-11-25, -32602 in 2026-07-28, both with data.uri", async () => {
    const uri = "test://nonexistent-resource";
    const old = await rpc(url, legacy(1, "resources/read", { uri }));
    assert.equal(old.json.error.code, -32002);
    assert.deepEqual(old.json.error.data, { uri });
    const now = await modernRpc(url, 2, "resources/read", { uri });
    assert.equal(now.status, 200);
    assert.equal(now.json.error.code, -32602);
    assert.deepEqual(now.json.error.data, { uri });
    // A template that does not match (one segment too many) is not found either.
    const near = await rpc(url, legacy(3, "resources/read", { uri: "test://template/1/2/data" }));
    assert.equal(near.json.error.code, -32002);
  });

  test("bad URIs and huge template values: -32602, no 5xx, nothing echoed", async () => {
    const huge = "9".repeat(100_000);
    for (const uri of [
      "no scheme",
      "test://has space",
      "test://bad%zzescape",
      "test://\u0000nul",
      42,
      null,
      `test://x/${"a".repeat(9_000)}`,
    ]) {
      const answer = await rpc(url, legacy(1, "resources/read", { uri }));
      assert.equal(answer.status, 200);
      assert.equal(answer.json.error.code, -32602, String(uri).slice(0, 30));
      assert.ok(answer.text.length < 300, "the URI is not echoed");
    }
    const long = await rpc(
      url,
      legacy(2, "resources/read", { uri: `test://template/${huge.slice(0, 65)}/data` }),
    );
    assert.equal(long.json.error.code, -32602);
    assert.match(long.json.error.message, /longer than 64/);
    const ok = await rpc(
      url,
      legacy(3, "resources/read", { uri: `test://template/${huge.slice(0, 64)}/data` }),
    );
    assert.ok(ok.json.result, "64 characters is within the bound");
    const broken = await rpc(url, legacy(4, "resources/read", { uri: "test://broken" }));
    assert.equal(broken.json.error.code, -32603, "an empty contents array is never sent");
  });

  test("completion/complete: template variables with context, at most 100 values, total and hasMore", async () => {
    const many = await rpc(
      url,
      legacy(1, "completion/complete", {
        ref: { type: "ref/resource", uri: "test://template/{id}/data" },
        argument: { name: "id", value: "7" },
        context: { arguments: { prefix: "p" } },
      }),
    );
    const completion = many.json.result.completion;
    assert.equal(completion.values.length, 100);
    assert.equal(completion.values[0], "p70");
    assert.equal(completion.total, 150);
    assert.equal(completion.hasMore, true);
    const pair = await modernRpc(url, 2, "completion/complete", {
      ref: { type: "ref/resource", uri: "test://pair/{a}/{b}" },
      argument: { name: "b", value: "x" },
      context: { arguments: { a: "left" } },
    });
    assert.deepEqual(pair.json.result.completion, { values: ["left-x"], total: 1, hasMore: false });
    assert.equal(pair.json.result.resultType, "complete");
    const none = await rpc(
      url,
      legacy(3, "completion/complete", {
        ref: { type: "ref/resource", uri: "test://pair/{a}/{b}" },
        argument: { name: "a", value: "" },
      }),
    );
    assert.deepEqual(none.json.result.completion, { values: [], total: 0, hasMore: false });
  });

  test("completion/complete for unknown references or bad params: -32602", async () => {
    for (const params of [
      { ref: { type: "ref/prompt", name: "nope" }, argument: { name: "a", value: "" } },
      { ref: { type: "ref/resource", uri: "test://none/{x}" }, argument: { name: "x", value: "" } },
      {
        ref: { type: "ref/resource", uri: "test://pair/{a}/{b}" },
        argument: { name: "zz", value: "" },
      },
      { ref: { type: "ref/other", name: "x" }, argument: { name: "a", value: "" } },
      { ref: { type: "ref/prompt", name: "x" } },
      {
        ref: { type: "ref/resource", uri: "test://pair/{a}/{b}" },
        argument: { name: "a", value: "" },
        context: { arguments: { a: 5 } },
      },
    ]) {
      const answer = await rpc(url, legacy(1, "completion/complete", params));
      assert.equal(answer.status, 200);
      assert.equal(answer.json.error.code, -32602, JSON.stringify(params));
    }
  });

  test("tools: outputSchema, icons, title and _meta are listed; structured results are validated", async () => {
    const list = await modernRpc(url, 1, "tools/list");
    const stats = list.json.result.tools.find((t: { name: string }) => t.name === "stats");
    assert.equal(stats.title, "Statistics");
    assert.deepEqual(stats.icons, [{ src: "https://example.com/s.png" }]);
    assert.deepEqual(stats._meta, { "example.com/ui": { template: "x" } });
    assert.equal(stats.outputSchema.type, "object");
    assert.deepEqual(stats.outputSchema.required, ["mean", "count"]);
    const call = await rpc(
      url,
      legacy(2, "tools/call", { name: "stats", arguments: { numbers: [1, 2, 3] } }),
    );
    assert.deepEqual(call.json.result.structuredContent, { mean: 2, count: 3 });
    assert.deepEqual(JSON.parse(call.json.result.content[0].text), { mean: 2, count: 3 });
    const liar = await rpc(url, legacy(3, "tools/call", { name: "liar", arguments: {} }));
    assert.equal(liar.json.result.isError, true);
    assert.equal(liar.json.result.structuredContent, undefined, "the invalid data is never sent");
    assert.ok(!liar.text.includes("secret-internal-value"));
  });

  test("invalid tool arguments are an isError result saying what is wrong; an unknown tool stays -32602", async () => {
    for (const answer of [
      await rpc(url, legacy(1, "tools/call", { name: "stats", arguments: { numbers: "x" } })),
      await modernRpc(url, 2, "tools/call", { name: "stats", arguments: { numbers: [] } }),
    ]) {
      assert.equal(answer.json.error, undefined, answer.text);
      assert.equal(answer.json.result.isError, true);
      assert.match(answer.json.result.content[0].text, /^Invalid arguments: numbers: /);
    }
    const unknown = await rpc(url, legacy(3, "tools/call", { name: "nope", arguments: {} }));
    assert.equal(unknown.json.error.code, -32602);
  });

  test("prompts/list, prompts/get and prompt-argument completion in both eras", async () => {
    const list = await modernRpc(url, 1, "prompts/list");
    assert.deepEqual(
      list.json.result.prompts.map((p: { name: string }) => p.name),
      ["review", "slow-prompt"],
    );
    assert.equal(list.json.result.cacheScope, "public");
    const got = await rpc(
      url,
      legacy(2, "prompts/get", { name: "review", arguments: { code: "x=1", language: "python" } }),
    );
    assert.equal(got.json.result.messages[0].content.text, "Review this python: x=1");
    const bad = await modernRpc(url, 3, "prompts/get", { name: "review", arguments: { code: 5 } });
    assert.equal(bad.json.error.code, -32602);
    const unknown = await rpc(url, legacy(4, "prompts/get", { name: "nope" }));
    assert.equal(unknown.json.error.code, -32602);
    const done = await modernRpc(url, 5, "completion/complete", {
      ref: { type: "ref/prompt", name: "review" },
      argument: { name: "language", value: "py" },
      context: { arguments: { code: "x" } },
    });
    assert.deepEqual(done.json.result.completion, {
      values: ["python", "pytorch"],
      total: 2,
      hasMore: false,
    });
  });

  test("a slow prompts/get is cancelled by notifications/cancelled (2025) and by disconnect (2026-07-28)", async () => {
    const pending = rpc(url, legacy("p-1", "prompts/get", { name: "slow-prompt" }));
    await until(() => started.has("prompt-p-1"), 3_000, "the prompt to start");
    assert.equal((await rpc(url, cancelBody("p-1"))).status, 202);
    assert.equal((await pending).json.error.code, -32800);
    assert.ok(started.get("prompt-p-1")?.aborted);
    const { body, headers } = modern(78, "prompts/get", { name: "slow-prompt" });
    const controller = new AbortController();
    const modernPending = fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body: JSON.stringify(body),
      signal: controller.signal,
    }).catch(() => null);
    await until(() => started.has("prompt-78"), 3_000, "the modern prompt to start");
    controller.abort();
    await modernPending;
    await until(() => started.get("prompt-78")?.aborted === true, 2_000, "the signal to abort");
    await until(() => server.registry.inFlightCount === 0, 2_000, "nothing in flight");
  });

  test("a slow resources/read is cancelled by notifications/cancelled (2025) within the stream cancel bounds; another tenant's cancel does nothing", async () => {
    const id = "read-cancel-1";
    const pending = rpc(url, legacy(id, "resources/read", { uri: "test://slow" }), {
      "x-test": "a",
    });
    await until(() => started.has(id), 3_000, "the read to start");
    assert.equal(server.registry.inFlightCount, 1);
    const signal = started.get(id) as AbortSignal;
    const t0 = performance.now();
    const cancel = await rpc(url, cancelBody(id, "stop"));
    assert.equal(cancel.status, 202);
    const answer = await pending;
    const elapsed = performance.now() - t0;
    assert.ok(signal.aborted, "the handler's signal aborted");
    assert.equal(answer.json.error.code, -32800);
    assert.ok(elapsed < 2_000, `cancelled in ${elapsed} ms`);
    await until(() => server.registry.inFlightCount === 0, 2_000, "nothing in flight");
  });

  test("a slow 2026-07-28 resources/read is cancelled when its client disconnects", async () => {
    const { body, headers } = modern(77, "resources/read", { uri: "test://slow" });
    const controller = new AbortController();
    const pending = fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body: JSON.stringify(body),
      signal: controller.signal,
    }).catch(() => null);
    await until(() => started.has("77"), 3_000, "the read to start");
    const signal = started.get("77") as AbortSignal;
    // 2026-07-28 requests are never reachable by notifications/cancelled, even with their id.
    assert.equal((await rpc(url, cancelBody(77))).status, 202);
    await sleep(50);
    assert.equal(signal.aborted, false, "a notification did not reach the modern read");
    controller.abort();
    await pending;
    await until(() => signal.aborted, 2_000, "the handler's signal to abort");
    await until(() => server.registry.inFlightCount === 0, 2_000, "nothing in flight");
  });
});

describe("lists change while serving; visibility, scopes and cursors", () => {
  let server: McpServer;
  let url: string;
  const tool = (name: string, extra: Record<string, unknown> = {}) =>
    defineTool({ name, handler: () => name, ...extra });

  before(async () => {
    server = createMcpServer({
      tools: ["e", "c", "a", "d", "b"].map((name) => tool(name)),
      pageSize: 2,
      auth: {
        verify: (req: IncomingMessage) => {
          const who = req.headers["x-user"];
          if (typeof who !== "string") return null;
          const scopes = String(req.headers["x-scopes"] ?? "")
            .split(" ")
            .filter(Boolean);
          return createPrincipal({ id: who, scopes });
        },
      },
    });
    ({ url } = await server.listen());
  });

  after(async () => {
    await server.close();
  });

  const alice = { "x-user": "alice", "x-scopes": "read" };
  const bob = { "x-user": "bob" };

  async function names(
    headers: Record<string, string>,
    era: "2025" | "2026" = "2025",
  ): Promise<string[]> {
    const all: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const params = cursor === undefined ? {} : { cursor };
      const answer =
        era === "2025"
          ? await rpc(url, legacy(page, "tools/list", params), headers)
          : await modernRpc(url, page, "tools/list", params, headers);
      assert.equal(answer.status, 200, answer.text);
      all.push(...answer.json.result.tools.map((t: { name: string }) => t.name));
      cursor = answer.json.result.nextCursor;
      if (cursor === undefined) return all;
    }
    throw new Error("too many pages");
  }

  test("paging in a deterministic order, in both eras", async () => {
    assert.deepEqual(await names(alice), ["e", "c", "a", "d", "b"]);
    assert.deepEqual(await names(alice, "2026"), ["e", "c", "a", "d", "b"]);
  });

  test("forged, cross-list and cross-tenant cursors are -32602", async () => {
    const first = await rpc(url, legacy(1, "tools/list"), alice);
    const cursor: string = first.json.result.nextCursor;
    assert.equal(typeof cursor, "string");
    const forged = `${Buffer.from("a").toString("base64url")}.${cursor.split(".")[1]}`;
    for (const [method, c, headers] of [
      ["tools/list", forged, alice],
      ["tools/list", "garbage", alice],
      ["tools/list", "", alice],
      ["tools/list", 5, alice],
      ["tools/list", "x".repeat(10_000), alice],
      ["prompts/list", cursor, alice],
      ["resources/list", cursor, alice],
      ["tools/list", cursor, bob],
    ] as const) {
      const answer = await rpc(url, legacy(2, method, { cursor: c }), headers);
      assert.equal(answer.status, 200);
      assert.equal(answer.json.error?.code, -32602, `${method} ${String(c).slice(0, 20)}`);
    }
    const again = await rpc(url, legacy(3, "tools/list", { cursor }), alice);
    assert.deepEqual(
      again.json.result.tools.map((t: { name: string }) => t.name),
      ["a", "d"],
    );
  });

  test("add, remove, disable and enable while serving; change events; duplicates refused", async () => {
    const changes: CollectionChange[] = [];
    const stop = server.tools.onChanged((change) => changes.push(change));
    server.tools.add(tool("aa"));
    assert.throws(() => server.tools.add(tool("aa")), InvalidOptionError);
    assert.deepEqual(await names(alice), ["e", "c", "a", "d", "b", "aa"]);
    assert.ok(server.tools.disable("a"));
    const hidden = await rpc(url, legacy(1, "tools/call", { name: "a", arguments: {} }), alice);
    assert.equal(hidden.json.error.code, -32602, "a disabled tool answers as unknown");
    assert.deepEqual(await names(alice), ["e", "c", "d", "b", "aa"]);
    assert.ok(server.tools.enable("a"));
    // A cursor after an item that has since gone is invalid: the client starts over.
    const page1 = await rpc(url, legacy(2, "tools/list"), alice);
    const after = page1.json.result.nextCursor;
    assert.ok(server.tools.disable("c"));
    const stale = await rpc(url, legacy(3, "tools/list", { cursor: after }), alice);
    assert.equal(stale.json.error.code, -32602);
    assert.ok(server.tools.enable("c"));
    assert.ok(server.tools.remove("aa"));
    assert.equal(server.tools.remove("aa"), false);
    stop();
    server.tools.add(tool("zz"));
    server.tools.remove("zz");
    assert.deepEqual(
      changes.map((c) => `${c.list}:${c.change}:${c.key}`),
      [
        "tools:added:aa",
        "tools:disabled:a",
        "tools:enabled:a",
        "tools:disabled:c",
        "tools:enabled:c",
        "tools:removed:aa",
      ],
    );
  });

  test("visible(ctx) hides per caller, answered exactly as unknown; lists become private", async () => {
    server.tools.add(
      tool("only-alice", {
        visible: (ctx: { principal: { id: string } | null }) => ctx.principal?.id === "alice",
      }),
    );
    try {
      assert.ok((await names(alice)).includes("only-alice"));
      assert.ok(!(await names(bob)).includes("only-alice"));
      const asBob = await rpc(
        url,
        legacy(1, "tools/call", { name: "only-alice", arguments: {} }),
        bob,
      );
      const unknown = await rpc(
        url,
        legacy(1, "tools/call", { name: "only-alicf", arguments: {} }),
        bob,
      );
      assert.equal(asBob.status, unknown.status);
      assert.equal(asBob.json.error.code, unknown.json.error.code);
      assert.equal(
        asBob.json.error.message.replace("only-alice", "X"),
        unknown.json.error.message.replace("only-alicf", "X"),
      );
      const list = await modernRpc(url, 2, "tools/list", {}, alice);
      assert.equal(list.json.result.cacheScope, "private");
      const ok = await rpc(
        url,
        legacy(3, "tools/call", { name: "only-alice", arguments: {} }),
        alice,
      );
      assert.equal(ok.json.result.content[0].text, "only-alice");
    } finally {
      server.tools.remove("only-alice");
    }
  });

  test("another tenant's notifications/cancelled never touches a running read; its own does", async () => {
    server.resources.add(
      defineResource({
        uri: "test://slow",
        name: "slow",
        read: async (_request, ctx) => {
          started.set(`tenant-${String(ctx.requestId)}`, ctx.signal);
          await sleep(60_000, undefined, { signal: ctx.signal });
          return "never";
        },
      }),
    );
    try {
      const pending = rpc(url, legacy("same-id", "resources/read", { uri: "test://slow" }), alice);
      await until(() => started.has("tenant-same-id"), 3_000, "the read to start");
      const signal = started.get("tenant-same-id") as AbortSignal;
      assert.equal((await rpc(url, cancelBody("same-id"), bob)).status, 202);
      await sleep(100);
      assert.equal(signal.aborted, false, "bob's cancel did not reach alice's read");
      assert.equal((await rpc(url, cancelBody("same-id"), alice)).status, 202);
      const answer = await pending;
      assert.equal(answer.json.error.code, -32800);
      assert.ok(signal.aborted);
    } finally {
      server.resources.remove("test://slow");
    }
  });

  test("per-item scopes: hidden from lists without them; use answers 403 with a challenge", async () => {
    server.tools.add(tool("admin", { scopes: ["admin"] }));
    try {
      assert.ok(!(await names(alice)).includes("admin"));
      assert.ok((await names({ "x-user": "root", "x-scopes": "admin read" })).includes("admin"));
      const denied = await rpc(
        url,
        legacy(1, "tools/call", { name: "admin", arguments: {} }),
        alice,
      );
      assert.equal(denied.status, 403);
      assert.ok(denied.json.error, denied.text);
      assert.match(
        denied.headers.get("www-authenticate") ?? "",
        /^Bearer error="insufficient_scope", scope="admin"$/,
      );
      const allowed = await rpc(url, legacy(2, "tools/call", { name: "admin", arguments: {} }), {
        "x-user": "root",
        "x-scopes": "admin",
      });
      assert.equal(allowed.json.result.content[0].text, "admin");
    } finally {
      server.tools.remove("admin");
    }
  });
});

describe("definitions refuse what they cannot serve", () => {
  test("schemas that are not Standard Schemas and non-object schemas are refused at definition", () => {
    const zod3Like = { _def: { typeName: "ZodObject" }, parse: () => ({}), safeParse: () => ({}) };
    assert.throws(
      () => defineTool({ name: "t", input: zod3Like as never, handler: () => "" }),
      /zod 3/,
    );
    assert.throws(
      () => defineTool({ name: "t", input: { type: "string" } as never, handler: () => "" }),
      InvalidOptionError,
    );
    assert.throws(
      () => defineTool({ name: "t", output: zod3Like as never, handler: () => "" }),
      /Standard Schema/,
    );
  });

  test("bad resources and templates are refused with the field named", () => {
    assert.throws(
      () => defineResource({ uri: "no scheme", name: "x", read: () => "" }),
      /resource.uri/,
    );
    assert.throws(() => defineResource({ uri: "x://a", name: "", read: () => "" }), /name/);
    assert.throws(
      () => defineResourceTemplate({ uriTemplate: "x://{a*}", name: "t", read: () => "" }),
      /explode/,
    );
    assert.throws(
      () => defineResourceTemplate({ uriTemplate: "x://fixed", name: "t", read: () => "" }),
      /variable/,
    );
    assert.throws(
      () =>
        defineResourceTemplate({
          uriTemplate: "x://{a}",
          name: "t",
          complete: { b: () => [] },
          read: () => "",
        }),
      /complete\.b/,
    );
    assert.throws(
      () =>
        createMcpServer({
          resources: [
            defineResource({ uri: "x://a", name: "a", read: () => "" }),
            defineResource({ uri: "x://a", name: "b", read: () => "" }),
          ],
        }),
      /already defined/,
    );
  });
});
