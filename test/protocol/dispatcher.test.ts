/**
 * The dispatcher over a fake sink (no HTTP): notifications/cancelled (scope gate, quota),
 * track/untrack/clear for every request method, logging threshold, progress rules.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { CancellationRegistry } from "../../src/cancellation/index.js";
import {
  Dispatcher,
  defineTool,
  type JsonRpcRequest,
  type ResponseSink,
  type SinkListener,
  type ToolContext,
} from "../../src/protocol/index.js";

class FakeSink implements ResponseSink {
  streamable = true;
  ended = false;
  lifetime = new AbortController().signal;
  notes: string[] = [];
  answer: { json: string; status: number } | null = null;
  cancelledWith: string | null = null;
  sessionId: string | null = null;
  listener: SinkListener | null = null;
  notify(json: string): Promise<void> {
    if (!this.ended) this.notes.push(json);
    return Promise.resolve();
  }
  respond(json: string, status = 200): void {
    if (this.ended) return;
    this.ended = true;
    this.answer = { json, status };
  }
  cancel(json: string): void {
    if (this.ended) return;
    this.ended = true;
    this.cancelledWith = json;
  }
  setSessionId(id: string): void {
    this.sessionId = id;
  }
  setListener(listener: SinkListener | null): void {
    this.listener = listener;
  }
}

function setup(maxRowsPerScope = 256) {
  const registry = new CancellationRegistry({ janitor: false, maxRowsPerScope });
  let release: () => void = () => {};
  let seen: ToolContext | null = null;
  const tools = [
    defineTool({
      name: "block",
      handler: async (_args, ctx) => {
        seen = ctx;
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return String(ctx.cancelled());
      },
    }),
    defineTool({ name: "quick", handler: () => "done" }),
    defineTool({
      name: "noisy",
      handler: async (_args, ctx) => {
        await ctx.progress(1);
        await ctx.progress(1); // not increasing: dropped
        await ctx.progress(Number.NaN);
        await ctx.progress(2, 10, "two");
        await ctx.log("debug", "d");
        await ctx.log("warning", "w");
        await ctx.log("nonsense" as never, "x");
        return "ok";
      },
    }),
  ];
  const dispatcher = new Dispatcher({
    name: "t",
    version: "1",
    tools,
    registry,
    streamCancelTimeoutMs: 50,
    cancelOnDisconnect: true,
  });
  return { registry, dispatcher, release: () => release(), ctx: () => seen };
}

const call = (id: string | number, name: string, meta?: object): JsonRpcRequest => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {}, ...(meta === undefined ? {} : { _meta: meta }) },
});
const meta = (scope: string) => ({ scope, principal: null, sessionId: null, logLevel: null });

describe("Dispatcher", () => {
  test("a cancel from the same scope aborts; another scope is ignored and records nothing", async () => {
    const { registry, dispatcher, ctx } = setup();
    const sink = new FakeSink();
    const running = dispatcher.handleRequest(call("x", "block"), meta("s:a"), sink);
    await sleep(5);
    assert.equal(await registry.isInFlight("x", "s:a"), true);
    const cancel = {
      jsonrpc: "2.0" as const,
      method: "notifications/cancelled",
      params: { requestId: "x" },
    };
    assert.equal(await dispatcher.handleNotification(cancel, "s:b"), null);
    assert.equal(ctx()?.signal.aborted, false);
    assert.equal(await registry.size(), 0);
    assert.equal(
      await dispatcher.handleNotification(
        { ...cancel, params: { requestId: "x", reason: "stop" } },
        "s:a",
      ),
      null,
    );
    assert.equal(ctx()?.signal.aborted, true);
    assert.match(sink.cancelledWith ?? "", /-32800/);
    assert.equal(await registry.reason("x", "s:a"), "stop");
    await sleep(80); // past the stream cancel timeout: abandoned
    assert.equal(registry.inFlightCount, 0);
    void running;
    await registry.close();
  });

  test("the quota rejection is -32000 'Too many outstanding cancellations'", async () => {
    const { registry, dispatcher } = setup(1);
    const sinks = [new FakeSink(), new FakeSink()];
    void dispatcher.handleRequest(call(1, "block"), meta("q"), sinks[0] as FakeSink);
    void dispatcher.handleRequest(call(2, "block"), meta("q"), sinks[1] as FakeSink);
    await sleep(5);
    const cancel = (requestId: number) => ({
      jsonrpc: "2.0" as const,
      method: "notifications/cancelled",
      params: { requestId },
    });
    assert.equal(await dispatcher.handleNotification(cancel(1), "q"), null);
    const refused = await dispatcher.handleNotification(cancel(2), "q");
    assert.match(
      refused ?? "",
      /"code":-32000,"message":"Too many outstanding cancellations; try again shortly."/,
    );
    dispatcher.abortAll();
    await sleep(80);
    await registry.close();
  });

  test("every request method is tracked while it runs and untracked + cleared after", async () => {
    const { registry, dispatcher, release } = setup();
    const sink = new FakeSink();
    const running = dispatcher.handleRequest(call(9, "block"), meta("m"), sink);
    await sleep(5);
    assert.equal(registry.inFlightCount, 1);
    release();
    await running;
    assert.equal(registry.inFlightCount, 0);
    assert.deepEqual(JSON.parse(sink.answer?.json ?? ""), {
      jsonrpc: "2.0",
      id: 9,
      result: { content: [{ type: "text", text: "false" }] },
    });
    const ping = new FakeSink();
    await dispatcher.handleRequest({ jsonrpc: "2.0", id: 1, method: "ping" }, meta("m"), ping);
    assert.equal(ping.answer?.json, '{"jsonrpc":"2.0","id":1,"result":{}}');
    assert.equal(registry.inFlightCount, 0);
    await registry.close();
  });

  test("an answered call echoes its id as sent and clears its key's row (the handle's key, its numeric text made once)", async () => {
    const { registry, dispatcher } = setup();
    const ids = [
      0,
      -0,
      -7,
      42,
      2 ** 31,
      Number.MAX_SAFE_INTEGER,
      -Number.MAX_SAFE_INTEGER,
      "5",
      'a"b\\',
    ];
    for (const id of ids) {
      await registry.cancel(id, "stale", "m");
      assert.equal(await registry.isCancelled(id, "m"), true);
      const sink = new FakeSink();
      await dispatcher.handleRequest(call(id, "quick"), meta("m"), sink);
      const json = sink.answer?.json ?? "";
      assert.equal(
        json,
        `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"done"}]}}`,
      );
      assert.equal(
        await registry.isCancelled(id, "m"),
        false,
        `row of ${JSON.stringify(id)} cleared`,
      );
      assert.equal(registry.inFlightCount, 0);
    }
    await registry.close();
  });

  test("a disconnect cancels under the call's own scope", async () => {
    const { registry, dispatcher, ctx } = setup();
    const sink = new FakeSink();
    void dispatcher.handleRequest(call("d", "block"), meta("s:d"), sink);
    await sleep(5);
    sink.ended = true;
    sink.listener?.onDisconnect();
    await sleep(5);
    const reason = ctx()?.signal.reason as { source: string } | undefined;
    assert.equal(reason?.source, "disconnect");
    assert.equal(await registry.isCancelled("d", "s:d"), true);
    await sleep(80);
    await registry.close();
  });

  test("progress must increase and needs a token; logs respect the level threshold", async () => {
    const { registry, dispatcher } = setup();
    const withToken = new FakeSink();
    await dispatcher.handleRequest(
      call(1, "noisy", { progressToken: "t" }),
      { ...meta("p"), logLevel: "info" },
      withToken,
    );
    const methods = withToken.notes.map((n) => JSON.parse(n));
    assert.deepEqual(
      methods.map((m) => [m.method, m.params.progress ?? m.params.level]),
      [
        ["notifications/progress", 1],
        ["notifications/progress", 2],
        ["notifications/message", "warning"],
      ],
    );
    assert.deepEqual(methods[1].params, {
      progressToken: "t",
      progress: 2,
      total: 10,
      message: "two",
    });
    const noToken = new FakeSink();
    await dispatcher.handleRequest(call(2, "noisy"), meta("p"), noToken);
    assert.equal(noToken.notes.filter((n) => n.includes("progress")).length, 0);
    const jsonOnly = new FakeSink();
    jsonOnly.streamable = false;
    await dispatcher.handleRequest(call(3, "noisy", { progressToken: 1 }), meta("p"), jsonOnly);
    assert.equal(jsonOnly.notes.length, 0);
    await registry.close();
  });
});
