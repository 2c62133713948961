/**
 * Asking the client on 2026-07-28 requests over raw HTTP (docs/asking-the-client.md;
 * https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr): `ctx.elicit`,
 * `ctx.sample` and `ctx.roots` end the request with an `input_required` result whose sealed
 * `requestState` lets ANY node holding the key resume it (two servers here, first round on A,
 * retry on B); several questions in one round and several rounds; `ctx.saveState` carries work
 * across rounds; the capability check; a tampered, expired, other-tenant, other-tool or
 * other-arguments state refused with one generic -32602 that leaks nothing; 2025-11-25 requests
 * get a catchable CannotAskClientError; a retry waiting in its handler is cancelled by closing its
 * stream like any call, and nothing stays in any table.
 */
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";

import { MemoryCancellationStore } from "../../src/cancellation/memory-store.js";
import { CancellationRegistry } from "../../src/cancellation/registry.js";
import { CannotAskClientError, MissingClientCapabilityError } from "../../src/errors.js";
import { definePrompt, defineTool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { until } from "../server/fixtures.js";

/** A parsed JSON answer, read loosely (the assertions check its shape). */
// biome-ignore lint/suspicious/noExplicitAny: JSON read by assertions
type Json = Record<string, any>;

const V = "2026-07-28";
const KEY = "k".repeat(32);
const NEW_KEY = "n".repeat(32);
const ALL_CAPABILITIES = { elicitation: {}, sampling: {}, roots: {} };
const NAME_FORM = {
  type: "object",
  properties: { name: { type: "string" } },
  required: ["name"],
} as const;
const SECRET = "answer-only-the-client-should-know";

/** How many times `plan` did its expensive step (a saved state skips it on later rounds). */
let expensiveRuns = 0;
/** What the cancellable retry's handler saw. */
const waiting = { started: 0, aborted: 0, finished: 0 };

function tools() {
  return [
    defineTool({
      name: "greet",
      description: "Asks the user's name",
      input: z.object({ greeting: z.string().default("Hello") }),
      handler: async ({ greeting }, ctx) => {
        const answer = await ctx.elicit("What is your name?", NAME_FORM, { key: "name" });
        return answer.action === "accept" ? `${greeting}, ${answer.content.name}!` : "Bye.";
      },
    }),
    defineTool({
      name: "plan",
      description: "Expensive step, then three questions in one round, then a fourth",
      handler: async (_args, ctx) => {
        let plan = ctx.savedState as { steps: number } | undefined;
        if (plan === undefined) {
          expensiveRuns++;
          plan = { steps: 3 };
          ctx.saveState(plan);
        }
        const [who, model, { roots }] = await Promise.all([
          ctx.elicit("Who?", z.object({ name: z.string(), age: z.number().int() })),
          ctx.sample({
            messages: [{ role: "user", content: { type: "text", text: "Say hi" } }],
            maxTokens: 10,
          }),
          ctx.roots(),
        ]);
        const sure = await ctx.elicit("Sure?", {
          type: "object",
          properties: { ok: { type: "boolean" } },
          required: ["ok"],
        });
        if (who.action !== "accept" || sure.action !== "accept") return "declined";
        const text = (model.content as { text?: string }).text;
        return `${who.content.name} (${who.content.age}) ${text} ${roots.length} roots, ok=${sure.content.ok}, steps=${plan.steps}`;
      },
    }),
    defineTool({
      name: "fallback",
      description: "Elicits if it can, else says so",
      handler: async (_args, ctx) => {
        try {
          await ctx.elicit("Name?", NAME_FORM);
          return "asked";
        } catch (error) {
          if (error instanceof MissingClientCapabilityError) {
            return `cannot elicit: ${JSON.stringify(error.requiredCapabilities)}`;
          }
          if (error instanceof CannotAskClientError) return "cannot ask on this request";
          throw error;
        }
      },
    }),
    defineTool({
      name: "must_elicit",
      description: "Elicits without catching",
      handler: async (_args, ctx) => {
        await ctx.elicit("Name?", NAME_FORM);
        return "asked";
      },
    }),
    defineTool({
      name: "swallow",
      description: "Catches everything, still asks",
      handler: async (_args, ctx) => {
        try {
          await ctx.roots();
        } catch {
          return "swallowed";
        }
        return "had roots";
      },
    }),
    defineTool({
      name: "wait_after_answer",
      description: "Gets an answer, then waits until cancelled",
      handler: async (_args, ctx) => {
        await ctx.elicit("Go?", NAME_FORM, { key: "go" });
        waiting.started++;
        try {
          await sleep(60_000, undefined, { signal: ctx.signal });
        } catch {
          waiting.aborted++;
        } finally {
          waiting.finished++;
        }
        return "done";
      },
    }),
  ];
}

function prompts() {
  return [
    definePrompt({
      name: "workspace",
      description: "Asks for the client's roots",
      get: async (_args, ctx) => {
        const { roots } = await ctx.roots({ key: "roots" });
        return `Work in ${roots.map((root) => root.uri).join(" ")}`;
      },
    }),
  ];
}

interface Answer {
  readonly status: number;
  readonly json: { id?: unknown; result?: Json; error?: Json };
  readonly text: string;
}

let nextId = 1;

/** One 2026-07-28 POST, from `localAddress` (a second "client" is 127.0.0.2). */
function post(
  url: string,
  method: string,
  params: Record<string, unknown>,
  options: {
    capabilities?: Record<string, unknown>;
    localAddress?: string;
    signal?: AbortSignal;
  } = {},
): Promise<Answer> {
  const id = nextId++;
  const name = (params.name ?? params.uri) as string | undefined;
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": options.capabilities ?? ALL_CAPABILITIES,
      },
    },
  });
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": V,
    "mcp-method": method,
  };
  if (name !== undefined) headers["mcp-name"] = name;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: "POST", headers, localAddress: options.localAddress, signal: options.signal },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => {
          const json = text.startsWith("{") ? JSON.parse(text) : parseSse(text);
          resolve({ status: res.statusCode ?? 0, json, text });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function parseSse(text: string): Answer["json"] {
  const data = text
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => JSON.parse(line.slice(5)));
  return data.find((message) => "result" in message || "error" in message) ?? {};
}

function call(
  url: string,
  tool: string,
  args: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
  options = {},
) {
  return post(url, "tools/call", { name: tool, arguments: args, ...extra }, options);
}

describe("input-required results (2026-07-28) over raw HTTP, two nodes sharing the key", () => {
  let nodeA: McpServer;
  let nodeB: McpServer;
  let lonely: McpServer;
  let urlA: string;
  let urlB: string;
  let urlLonely: string;
  const store = new MemoryCancellationStore();
  const registry = new CancellationRegistry({ store });

  before(async () => {
    // Mid-rotation: A still seals with the old key but already opens the new one; B seals with
    // the new key and still opens the old one. Either node resumes the other's flows.
    nodeA = createMcpServer({
      tools: tools(),
      prompts: prompts(),
      inputRequired: { keys: [KEY, NEW_KEY] },
    });
    nodeB = createMcpServer({
      tools: tools(),
      prompts: prompts(),
      registry,
      inputRequired: { keys: [NEW_KEY, KEY] },
    });
    lonely = createMcpServer({ tools: tools() }); // default: its own random key
    ({ url: urlA } = await nodeA.listen({ host: "127.0.0.1", port: 0 }));
    ({ url: urlB } = await nodeB.listen({ host: "127.0.0.1", port: 0 }));
    ({ url: urlLonely } = await lonely.listen({ host: "127.0.0.1", port: 0 }));
  });

  after(async () => {
    await Promise.all([nodeA.close(), nodeB.close(), lonely.close()]);
    await registry.close();
  });

  test("one question: input_required on node A, the retry completes on node B", async () => {
    const first = await call(urlA, "greet", { greeting: "Hi" });
    assert.equal(first.status, 200, first.text);
    const result = first.json.result as Json;
    assert.equal(result.resultType, "input_required");
    assert.deepEqual(result.inputRequests, {
      name: {
        method: "elicitation/create",
        params: { mode: "form", message: "What is your name?", requestedSchema: NAME_FORM },
      },
    });
    assert.equal(typeof result.requestState, "string");
    const retry = await call(
      urlB,
      "greet",
      { greeting: "Hi" },
      {
        inputResponses: { name: { action: "accept", content: { name: "Ada" } } },
        requestState: result.requestState,
      },
    );
    assert.equal(retry.status, 200, retry.text);
    assert.deepEqual(retry.json.result, {
      content: [{ type: "text", text: "Hi, Ada!" }],
      resultType: "complete",
    });
  });

  test("three questions in one round, a fourth in the next, saved state across rounds, alternating nodes", async () => {
    expensiveRuns = 0;
    const r1 = (await call(urlA, "plan")).json.result as Json;
    assert.equal(r1.resultType, "input_required");
    assert.deepEqual(Object.keys(r1.inputRequests).sort(), ["elicit-1", "roots-3", "sample-2"]);
    assert.equal(r1.inputRequests["elicit-1"].params.requestedSchema.type, "object");
    assert.deepEqual(r1.inputRequests["elicit-1"].params.requestedSchema.required, ["name", "age"]);
    assert.equal(r1.inputRequests["sample-2"].method, "sampling/createMessage");
    assert.equal(r1.inputRequests["roots-3"].method, "roots/list");

    const r2 = (
      await call(
        urlB,
        "plan",
        {},
        {
          requestState: r1.requestState,
          inputResponses: {
            "elicit-1": { action: "accept", content: { name: "Ada", age: 36 } },
            "sample-2": { role: "assistant", content: { type: "text", text: "hi!" }, model: "m" },
            "roots-3": { roots: [{ uri: "file:///src" }, { uri: "file:///docs", name: "Docs" }] },
            unrelated: { anything: true },
          },
        },
      )
    ).json.result as Json;
    assert.equal(r2.resultType, "input_required", JSON.stringify(r2));
    assert.deepEqual(Object.keys(r2.inputRequests), ["elicit-4"]);
    assert.notEqual(r2.requestState, r1.requestState);

    // Round 3 answers only the new question: the earlier answers come from the sealed state.
    // A resent earlier key cannot rewrite it (sealed answers win).
    const r3 = await call(
      urlA,
      "plan",
      {},
      {
        requestState: r2.requestState,
        inputResponses: {
          "elicit-4": { action: "accept", content: { ok: true } },
          "elicit-1": { action: "accept", content: { name: "Mallory", age: 1 } },
        },
      },
    );
    assert.deepEqual(r3.json.result?.content, [
      { type: "text", text: "Ada (36) hi! 2 roots, ok=true, steps=3" },
    ]);
    assert.equal(expensiveRuns, 1, "the expensive step ran once; later rounds read ctx.savedState");
  });

  test("prompts/get asks too (roots), resumed on the other node", async () => {
    const first = await post(urlB, "prompts/get", { name: "workspace" });
    const result = first.json.result as Json;
    assert.equal(result.resultType, "input_required");
    assert.deepEqual(result.inputRequests, { roots: { method: "roots/list", params: {} } });
    const retry = await post(urlA, "prompts/get", {
      name: "workspace",
      requestState: result.requestState,
      inputResponses: { roots: { roots: [{ uri: "file:///w" }] } },
    });
    assert.equal(retry.json.result?.resultType, "complete");
    assert.equal(retry.json.result?.messages[0].content.text, "Work in file:///w");
  });

  test("an unanswered or wrongly keyed retry asks again; an answer without state is used", async () => {
    const wrong = await call(
      urlA,
      "greet",
      {},
      {
        inputResponses: { other: { action: "accept", content: { name: "x" } } },
      },
    );
    assert.equal(wrong.json.result?.resultType, "input_required");
    const direct = await call(
      urlA,
      "greet",
      {},
      {
        inputResponses: { name: { action: "accept", content: { name: "Bo" } } },
      },
    );
    assert.equal(direct.json.result?.content[0].text, "Hello, Bo!");
  });

  test("a handler that swallows the pending ask still answers input_required", async () => {
    const answer = await call(urlA, "swallow");
    assert.equal(answer.json.result?.resultType, "input_required");
  });

  test("capabilities: an undeclared one is never asked; caught → handled, uncaught → -32021 (HTTP 400)", async () => {
    const caught = await call(urlA, "fallback", {}, {}, { capabilities: { sampling: {} } });
    assert.equal(caught.json.result?.content[0].text, 'cannot elicit: {"elicitation":{}}');
    const urlOnly = await call(
      urlA,
      "fallback",
      {},
      {},
      { capabilities: { elicitation: { url: {} } } },
    );
    assert.match(urlOnly.json.result?.content[0].text, /cannot elicit/);
    const uncaught = await call(urlA, "must_elicit", {}, {}, { capabilities: {} });
    assert.equal(uncaught.status, 400, uncaught.text);
    assert.equal(uncaught.json.error?.code, -32021);
    assert.deepEqual(uncaught.json.error?.data, { requiredCapabilities: { elicitation: {} } });
    const formOnly = await call(urlA, "must_elicit", {}, {}, { capabilities: { elicitation: {} } });
    assert.equal(formOnly.json.result?.resultType, "input_required", "{} declares form mode");
  });

  test("malformed inputResponses and answers are -32602", async () => {
    for (const inputResponses of [null, 5, [], { name: 12345 }, { name: "yes" }]) {
      const answer = await call(urlA, "greet", {}, { inputResponses });
      assert.equal(
        answer.json.error?.code,
        -32602,
        `${JSON.stringify(inputResponses)}: ${answer.text}`,
      );
    }
    for (const name of [
      { action: "maybe" },
      { action: "accept", content: { name: 42 } },
      { action: "accept", content: {} },
    ]) {
      const answer = await call(urlA, "greet", {}, { inputResponses: { name } });
      assert.equal(answer.json.error?.code, -32602, answer.text);
      assert.match(answer.json.error?.message, /^Invalid inputResponses entry name: /);
    }
    const tooMany = Object.fromEntries(
      Array.from({ length: 33 }, (_, i) => [`k${i}`, { action: "cancel" }]),
    );
    const answer = await call(urlA, "greet", {}, { inputResponses: tooMany });
    assert.equal(answer.json.error?.code, -32602);
  });

  describe("security: a state opens only where it was made for", () => {
    async function stateOf(
      url: string,
      tool = "greet",
      args: Record<string, unknown> = {},
    ): Promise<string> {
      const first = await call(url, tool, args);
      return (first.json.result as Json).requestState as string;
    }
    const answer = { name: { action: "accept", content: { name: SECRET } } };

    function assertRefused(refused: Answer): void {
      assert.equal(refused.status, 200, refused.text);
      assert.equal(refused.json.error?.code, -32602, refused.text);
      assert.equal(
        refused.json.error?.message,
        "requestState is invalid or expired; retry the request without it",
      );
      assert.equal(refused.json.error?.data, undefined);
      assert.ok(!refused.text.includes(SECRET));
      assert.ok(!refused.text.includes("127.0.0"), "no scope in the answer");
      assert.ok(!/at |Error|stack/.test(refused.text), "no stack or class names");
    }

    test("tampered: appended, flipped, truncated, junk", async () => {
      const state = await stateOf(urlA);
      const flipped = `${state.slice(0, 20)}${state[20] === "A" ? "B" : "A"}${state.slice(21)}`;
      for (const bad of [`${state}-TAMPERED`, flipped, state.slice(0, -2), "garbage", 42, ""]) {
        assertRefused(await call(urlB, "greet", {}, { requestState: bad, inputResponses: answer }));
      }
    });

    test("another tenant (127.0.0.2) presenting 127.0.0.1's state", async () => {
      const state = await stateOf(urlA);
      const stolen = await call(
        urlA,
        "greet",
        {},
        { requestState: state, inputResponses: answer },
        {
          localAddress: "127.0.0.2",
        },
      );
      assertRefused(stolen);
      // The rightful owner still can.
      const owner = await call(urlA, "greet", {}, { requestState: state, inputResponses: answer });
      assert.equal(owner.json.result?.content[0].text, `Hello, ${SECRET}!`);
    });

    test("another tool, another method, other arguments", async () => {
      const state = await stateOf(urlA, "greet", { greeting: "Hi" });
      assertRefused(
        await call(urlA, "must_elicit", {}, { requestState: state, inputResponses: answer }),
      );
      assertRefused(
        await call(
          urlA,
          "greet",
          { greeting: "Yo" },
          { requestState: state, inputResponses: answer },
        ),
      );
      // A prompt's state on a tool of the same name space: refused too.
      const promptFirst = await post(urlA, "prompts/get", { name: "workspace" });
      const promptState = (promptFirst.json.result as Json).requestState;
      assertRefused(
        await call(urlA, "greet", {}, { requestState: promptState, inputResponses: answer }),
      );
    });

    test("a node without the shared key cannot open it", async () => {
      const state = await stateOf(urlA);
      assertRefused(
        await call(urlLonely, "greet", {}, { requestState: state, inputResponses: answer }),
      );
    });

    test("expired: refused after the flow's ttlMs, and a later round does not extend it", async () => {
      const short = createMcpServer({ tools: tools(), inputRequired: { keys: [KEY], ttlMs: 400 } });
      const { url } = await short.listen({ host: "127.0.0.1", port: 0 });
      try {
        const r1 = (await call(url, "plan")).json.result as Json;
        await sleep(250);
        const r2 = (
          await call(
            url,
            "plan",
            {},
            {
              requestState: r1.requestState,
              inputResponses: {
                "elicit-1": { action: "accept", content: { name: "A", age: 1 } },
                "sample-2": { role: "assistant", content: { type: "text", text: "x" }, model: "m" },
                "roots-3": { roots: [] },
              },
            },
          )
        ).json.result as Json;
        assert.equal(r2.resultType, "input_required", "still within the flow's 400 ms");
        await sleep(250); // 500 ms after the flow began: r2's state carries r1's expiry
        const late = await call(
          url,
          "plan",
          {},
          {
            requestState: r2.requestState,
            inputResponses: { "elicit-4": { action: "accept", content: { ok: true } } },
          },
        );
        assertRefused(late);
      } finally {
        await short.close();
      }
    });

    test("an oversized requestState is refused before any work", async () => {
      assertRefused(
        await call(urlA, "greet", {}, { requestState: "A".repeat(70_000), inputResponses: answer }),
      );
    });
  });

  test("README recipe (Asking the client): confirm with a zod form acts only after a yes", async () => {
    const acted: string[] = [];
    const confirm = defineTool({
      name: "confirm",
      input: z.object({ action: z.string() }),
      handler: async ({ action }, ctx) => {
        try {
          const answer = await ctx.elicit(
            `Do you want to ${action}?`,
            z.object({ confirm: z.boolean() }),
          );
          if (answer.action !== "accept" || !answer.content.confirm) return `Not done: ${action}`;
        } catch (error) {
          if (!(error instanceof CannotAskClientError)) throw error;
          return `Not done: the client cannot be asked here (${error.message})`;
        }
        acted.push(action);
        return `Done: ${action}`;
      },
    });
    const server = createMcpServer({ tools: [confirm] });
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    try {
      const first = (await call(url, "confirm", { action: "ship it" })).json.result as Json;
      assert.deepEqual(first.inputRequests["elicit-1"].params.requestedSchema, {
        type: "object",
        properties: { confirm: { type: "boolean" } },
        required: ["confirm"],
      });
      assert.deepEqual(acted, [], "nothing acted before the answer");
      const no = await call(
        url,
        "confirm",
        { action: "ship it" },
        {
          requestState: first.requestState,
          inputResponses: { "elicit-1": { action: "accept", content: { confirm: false } } },
        },
      );
      assert.equal(no.json.result?.content[0].text, "Not done: ship it");
      const wrongType = await call(
        url,
        "confirm",
        { action: "ship it" },
        {
          requestState: first.requestState,
          inputResponses: { "elicit-1": { action: "accept", content: { confirm: "yes" } } },
        },
      );
      assert.equal(wrongType.json.error?.code, -32602, "the zod form parses the answer");
      const yes = await call(
        url,
        "confirm",
        { action: "ship it" },
        {
          requestState: first.requestState,
          inputResponses: { "elicit-1": { action: "accept", content: { confirm: true } } },
        },
      );
      assert.equal(yes.json.result?.content[0].text, "Done: ship it");
      assert.deepEqual(acted, ["ship it"]);
    } finally {
      await server.close();
    }
  });

  test("a form the spec does not allow (nested, null) is a handler bug: -32603, nothing asked", async () => {
    const nested = defineTool({
      name: "nested",
      input: z.object({ shape: z.enum(["nested", "nullable", "fine"]) }),
      handler: async ({ shape }, ctx) => {
        const form =
          shape === "nested"
            ? z.object({ address: z.object({ city: z.string() }) })
            : shape === "nullable"
              ? z.object({ name: z.string().nullable() })
              : z.object({ tags: z.array(z.enum(["a", "b"])), n: z.number().int() });
        await ctx.elicit("?", form);
        return "asked";
      },
    });
    const server = createMcpServer({ tools: [nested], onError: false });
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    try {
      for (const shape of ["nested", "nullable"]) {
        const answer = await call(url, "nested", { shape });
        assert.equal(answer.json.error?.code, -32603, answer.text);
        assert.equal(answer.json.error?.message, "Internal server error");
      }
      const fine = await call(url, "nested", { shape: "fine" });
      assert.equal(fine.json.result?.resultType, "input_required", fine.text);
    } finally {
      await server.close();
    }
  });

  test("a flow whose state would exceed maxStateBytes answers -32603, without internals", async () => {
    const hoarder = defineTool({
      name: "hoarder",
      handler: async (_args, ctx) => {
        ctx.saveState("x".repeat(5_000));
        await ctx.roots();
        return "never";
      },
    });
    const server = createMcpServer({ tools: [hoarder], inputRequired: { maxStateBytes: 1_000 } });
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    try {
      const answer = await call(url, "hoarder");
      assert.equal(answer.json.error?.code, -32603, answer.text);
      assert.ok(!answer.text.includes("xxxx"));
    } finally {
      await server.close();
    }
  });

  test("2025-11-25 without a session (capabilities unknown, rule refuse): a catchable CannotAskClientError; uncaught, an isError result", async () => {
    const init = await fetch(urlA, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: { elicitation: {} },
          clientInfo: { name: "t", version: "1" },
        },
      }),
    });
    assert.equal(init.status, 200);
    const legacy = async (name: string) =>
      (await (
        await fetch(urlA, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 2,
            method: "tools/call",
            params: { name, arguments: {} },
          }),
        })
      ).json()) as { result: { content: { text: string }[]; isError?: boolean } };
    // The fallback tool catches MissingClientCapabilityError first: capabilities are unknown.
    assert.equal(
      (await legacy("fallback")).result.content[0]?.text,
      'cannot elicit: {"elicitation":{}}',
    );
    const uncaught = await legacy("must_elicit");
    assert.equal(uncaught.result.isError, true);
    assert.match(
      uncaught.result.content[0]?.text ?? "",
      /did not declare the elicitation capability/,
    );
  });

  test("cancellation: a retry running after its answer is cancelled by closing its stream; nothing stays", async () => {
    waiting.started = 0;
    waiting.aborted = 0;
    waiting.finished = 0;
    const first = (await call(urlB, "wait_after_answer")).json.result as Json;
    assert.equal(first.resultType, "input_required");
    // Between rounds the server holds nothing: the first request is over.
    assert.equal(registry.inFlightCount, 0);
    assert.equal(await store.size(), 0);
    const controller = new AbortController();
    const retry = call(
      urlB,
      "wait_after_answer",
      {},
      {
        requestState: first.requestState,
        inputResponses: { go: { action: "accept", content: { name: "x" } } },
      },
      { signal: controller.signal },
    );
    retry.catch(() => {}); // aborted below
    await until(() => waiting.started === 1);
    assert.equal(registry.inFlightCount, 1);
    controller.abort();
    await until(() => waiting.finished === 1);
    assert.equal(waiting.aborted, 1, "the handler's signal fired");
    await until(() => registry.inFlightCount === 0);
    await until(async () => (await store.size()) === 0);
  });
});
