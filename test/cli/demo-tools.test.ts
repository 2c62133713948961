import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  askModelTool,
  confirmTool,
  countTool,
  crunchTool,
  demoTools,
  echoTool,
  MAX_DEMO_MS,
  MAX_ECHO_CHARS,
  sleepTool,
  statsTool,
  stubbornTool,
} from "../../src/cli/demo-tools.js";
import type { ToolContext } from "../../src/protocol/calls/tool-context.js";
import type { Tool } from "../../src/protocol/tools/define-tool.js";
import { noAsking } from "../helpers/no-asking.js";
import { sync } from "../helpers/sync-check.js";

interface FakeContext {
  readonly ctx: ToolContext;
  readonly controller: AbortController;
  readonly progress: Array<[number, number | undefined, string | undefined]>;
}

/** A context like the server's, with the abort in the test's hands. */
function fakeContext(): FakeContext {
  const controller = new AbortController();
  const progress: FakeContext["progress"] = [];
  const ctx: ToolContext = {
    signal: controller.signal,
    cancelled: () => controller.signal.aborted,
    requestId: 1,
    scope: "ip:127.0.0.1",
    principal: null,
    request: null,
    progress: async (value, total, message) => {
      progress.push([value, total, message]);
    },
    log: async () => {},
    ...noAsking,
  };
  return { ctx, controller, progress };
}

/** Validates like the server does, then runs the handler. */
async function call(tool: Tool, args: unknown, ctx: ToolContext): Promise<unknown> {
  const checked = sync(tool.checkArguments(args));
  assert.ok(checked.ok, `arguments refused: ${JSON.stringify(checked)}`);
  return (tool.handler as (a: unknown, c: ToolContext) => Promise<unknown>)(checked.args, ctx);
}

function refused(tool: Tool, args: unknown): boolean {
  return !sync(tool.checkArguments(args)).ok;
}

describe("demo tools", () => {
  it("are the nine demo tools, in order", () => {
    assert.deepEqual(
      demoTools.map((tool) => tool.name),
      [
        "echo",
        "sleep",
        "count",
        "crunch",
        "stubborn",
        "stats",
        "confirm",
        "ask-model",
        "roll_dice",
      ],
    );
    for (const tool of demoTools) {
      assert.equal(typeof tool.descriptor.description, "string");
      assert.equal((tool.descriptor.inputSchema as { type?: unknown }).type, "object");
    }
  });

  it("echo returns its text and bounds it", async () => {
    const { ctx } = fakeContext();
    assert.equal(await call(echoTool, { text: "héllo" }, ctx), "héllo");
    assert.ok(refused(echoTool, { text: "x".repeat(MAX_ECHO_CHARS + 1) }));
    assert.ok(refused(echoTool, {}));
    assert.ok(refused(echoTool, { text: 5 }));
  });

  it("bounds every duration to 0..10 minutes of whole milliseconds", () => {
    for (const tool of [sleepTool, crunchTool, stubbornTool]) {
      assert.ok(refused(tool, { ms: MAX_DEMO_MS + 1 }), tool.name);
      assert.ok(refused(tool, { ms: -1 }), tool.name);
      assert.ok(refused(tool, { ms: 1.5 }), tool.name);
      assert.ok(refused(tool, { ms: "10" }), tool.name);
      assert.ok(!refused(tool, { ms: MAX_DEMO_MS }), tool.name);
    }
    assert.equal(MAX_DEMO_MS, 600_000);
  });

  it("sleep returns `slept N ms`", async () => {
    const { ctx } = fakeContext();
    assert.equal(await call(sleepTool, { ms: 20 }, ctx), "slept 20 ms");
  });

  it("sleep stops as soon as its signal aborts", async () => {
    const { ctx, controller } = fakeContext();
    const started = performance.now();
    const pending = call(sleepTool, { ms: 60_000 }, ctx);
    setTimeout(() => controller.abort(new Error("cancelled")), 20);
    await assert.rejects(pending);
    assert.ok(performance.now() - started < 1_000, "sleep kept running after the abort");
  });

  it("count reports one progress per step, then its result", async () => {
    const { ctx, progress } = fakeContext();
    assert.equal(await call(countTool, { to: 3, intervalMs: 5 }, ctx), "counted to 3");
    assert.deepEqual(progress, [
      [1, 3, "step 1 of 3"],
      [2, 3, "step 2 of 3"],
      [3, 3, "step 3 of 3"],
    ]);
  });

  it("count defaults intervalMs and bounds the whole run", () => {
    const checked = sync(countTool.checkArguments({ to: 2 }));
    assert.ok(checked.ok);
    assert.deepEqual(checked.args, { to: 2, intervalMs: 100 });
    assert.ok(refused(countTool, { to: 0 }));
    assert.ok(refused(countTool, { to: 10_001, intervalMs: 0 }));
    // 1000 steps × 1000 ms = 1 000 000 ms > 10 min.
    assert.ok(refused(countTool, { to: 1_000, intervalMs: 1_000 }));
  });

  it("count stops between steps when cancelled", async () => {
    const { ctx, controller, progress } = fakeContext();
    const pending = call(countTool, { to: 100, intervalMs: 20 }, ctx);
    setTimeout(() => controller.abort(new Error("cancelled")), 50);
    await assert.rejects(pending);
    const seen = progress.length;
    assert.ok(seen >= 1 && seen < 10, `progress after cancel: ${seen}`);
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(progress.length, seen, "count reported progress after the abort");
  });

  it("crunch keeps the CPU busy for the time asked, in slices", async () => {
    const { ctx } = fakeContext();
    const started = performance.now();
    const result = await call(crunchTool, { ms: 40 }, ctx);
    assert.ok(performance.now() - started >= 40);
    assert.match(String(result), /^crunched 40 ms in \d+ slices/);
  });

  it("crunch yields between slices, so an abort fired by a timer stops it", async () => {
    const { ctx, controller } = fakeContext();
    const started = performance.now();
    const pending = call(crunchTool, { ms: 60_000 }, ctx);
    // A timer can only fire if crunch gives the event loop a turn between slices.
    setTimeout(() => controller.abort(new Error("cancelled")), 30);
    await assert.rejects(pending);
    assert.ok(performance.now() - started < 1_000, "crunch kept running after the abort");
  });

  it("stubborn ignores its signal and finishes anyway", async () => {
    const { ctx, controller } = fakeContext();
    const pending = call(stubbornTool, { ms: 40 }, ctx);
    controller.abort(new Error("cancelled"));
    assert.equal(await pending, "stubbornly slept 40 ms");
  });

  it("stats publishes an outputSchema and returns matching structured content", async () => {
    const schema = statsTool.descriptor.outputSchema as { properties: Record<string, unknown> };
    assert.deepEqual(Object.keys(schema.properties), [
      "count",
      "sum",
      "mean",
      "median",
      "min",
      "max",
    ]);
    const { ctx } = fakeContext();
    const value = await call(statsTool, { numbers: [4, 1, 3, 2] }, ctx);
    const result = sync(statsTool.toResult(value));
    assert.ok(result.ok);
    assert.deepEqual(result.result.structuredContent, {
      count: 4,
      sum: 10,
      mean: 2.5,
      median: 2.5,
      min: 1,
      max: 4,
    });
    assert.equal(result.isError ?? false, false);
    assert.ok(refused(statsTool, { numbers: [] }), "at least one number");
    assert.ok(refused(statsTool, { numbers: ["1"] }));
  });

  it("stats: a sum that overflows fails its output schema and becomes an isError result", async () => {
    const { ctx } = fakeContext();
    const value = await call(statsTool, { numbers: [Number.MAX_VALUE, Number.MAX_VALUE] }, ctx);
    const result = sync(statsTool.toResult(value));
    assert.ok(result.ok);
    assert.equal(result.isError, true, "Infinity is not a valid number in the output");
    assert.equal(result.result.structuredContent, undefined, "the invalid data is never sent");
  });

  it("confirm acts only on a yes, and says why not otherwise", async () => {
    const asked: unknown[] = [];
    const answering = (answer: unknown): ToolContext => ({
      ...fakeContext().ctx,
      elicit: (async (message: string, schema: unknown, options: unknown) => {
        asked.push([message, schema, options]);
        return answer;
      }) as ToolContext["elicit"],
    });
    const yes = { action: "accept", content: { confirm: true } };
    assert.equal(await call(confirmTool, { action: "delete x" }, answering(yes)), "Done: delete x");
    assert.deepEqual((asked[0] as unknown[])[0], "Do you want to delete x?");
    assert.deepEqual((asked[0] as unknown[])[2], { key: "confirm" });
    const no = { action: "accept", content: { confirm: false } };
    assert.match(
      String(await call(confirmTool, { action: "x" }, answering(no))),
      /^Not done: x \(the user said no\)/,
    );
    assert.match(
      String(await call(confirmTool, { action: "x" }, answering({ action: "decline" }))),
      /the user chose decline/,
    );
    // A context that cannot ask (2025-11-25): nothing done, the reason given.
    assert.match(
      String(await call(confirmTool, { action: "x" }, fakeContext().ctx)),
      /^Not done: x \(The client cannot be asked/,
    );
    assert.ok(refused(confirmTool, { action: "" }));
  });

  it("ask-model returns the model's text and name", async () => {
    const ctx: ToolContext = {
      ...fakeContext().ctx,
      sample: async (request) => {
        assert.equal(request.maxTokens, 500);
        assert.deepEqual(request.messages[0]?.content, { type: "text", text: "2+2?" });
        return { role: "assistant", content: { type: "text", text: "4" }, model: "m1" };
      },
    };
    assert.equal(await call(askModelTool, { question: "2+2?" }, ctx), "4 (model: m1)");
    assert.match(
      String(await call(askModelTool, { question: "q" }, fakeContext().ctx)),
      /^Cannot ask the model/,
    );
  });
});
