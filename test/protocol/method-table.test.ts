/**
 * The dispatcher's method table (src/protocol/calls/method-table.ts): a feature registers its
 * methods and capabilities; `initialize` (2025-11-25) and `server/discover` (2026-07-28) publish
 * the capabilities of what is registered, a method is served only in the eras it names, a
 * params check answers -32602 before the method runs, two features may not define one method,
 * and a collection refuses an item that is not what its `define*` function makes.
 */
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";

import { CancellationRegistry } from "../../src/cancellation/index.js";
import { InvalidOptionError } from "../../src/errors.js";
import {
  Dispatcher,
  type JsonRpcRequest,
  type ResponseSink,
  type SinkListener,
  successResponseJson,
} from "../../src/protocol/index.js";

class Sink implements ResponseSink {
  streamable = false;
  ended = false;
  lifetime = new AbortController().signal;
  answer: { json: string; status: number } | null = null;
  notify(): Promise<void> {
    return Promise.resolve();
  }
  respond(json: string, status = 200): void {
    if (this.ended) return;
    this.ended = true;
    this.answer = { json, status };
  }
  cancel(): void {
    this.ended = true;
  }
  setSessionId(): void {}
  setListener(_listener: SinkListener | null): void {}
}

const meta = {
  scope: "ip:127.0.0.1",
  principal: null,
  sessionId: null,
  logLevel: null,
  clientCapabilities: null,
};
const registries: CancellationRegistry[] = [];
after(async () => {
  for (const registry of registries) await registry.close();
});

function dispatcher(tasks = true): Dispatcher {
  const registry = new CancellationRegistry({ janitor: false });
  registries.push(registry);
  return new Dispatcher({
    name: "t",
    version: "1",
    registry,
    streamCancelTimeoutMs: 30,
    cancelOnDisconnect: true,
    ...(tasks ? {} : { tasks: false as const }),
  });
}

function request(id: number, method: string, params?: Record<string, unknown>): JsonRpcRequest {
  return (params === undefined
    ? { jsonrpc: "2.0", id, method }
    : { jsonrpc: "2.0", id, method, params }) as unknown as JsonRpcRequest;
}

async function legacy(d: Dispatcher, method: string, params?: Record<string, unknown>) {
  const sink = new Sink();
  await d.handleRequest(request(1, method, params), meta, sink);
  return { status: sink.answer?.status, body: JSON.parse(sink.answer?.json ?? "null") };
}

async function modern(d: Dispatcher, method: string, params?: Record<string, unknown>) {
  const sink = new Sink();
  await d.handleModernRequest(request(2, method, params), meta, sink, { clientCapabilities: {} });
  return { status: sink.answer?.status, body: JSON.parse(sink.answer?.json ?? "null") };
}

const INITIALIZE = {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "c", version: "1" },
};

describe("method table", () => {
  test("initialize and server/discover publish the capabilities of the registered features, in order", async () => {
    const d = dispatcher();
    const init = await legacy(d, "initialize", INITIALIZE);
    assert.deepEqual(Object.keys(init.body.result.capabilities), [
      "tools",
      "resources",
      "prompts",
      "completions",
      "logging",
      "tasks",
    ]);
    const discover = await modern(d, "server/discover", {});
    assert.deepEqual(Object.keys(discover.body.result.capabilities), [
      "tools",
      "resources",
      "prompts",
      "completions",
      "logging",
      "extensions",
    ]);
    // Without the tasks feature neither era advertises tasks.
    const plain = dispatcher(false);
    assert.equal(
      (await legacy(plain, "initialize", INITIALIZE)).body.result.capabilities.tasks,
      undefined,
    );
    assert.equal(
      (await modern(plain, "server/discover", {})).body.result.capabilities.extensions,
      undefined,
    );
    assert.equal((await legacy(plain, "tasks/get", { taskId: "x" })).body.error.code, -32601);
  });

  test("a registered feature's methods are served in their eras and its capabilities published", async () => {
    const d = dispatcher();
    d.register({
      id: "example",
      methods: {
        "example/hello": {
          eras: "2026",
          checkParams: (params) =>
            typeof params?.who === "string" ? null : "who must be a string",
          run: (r) => d.answerResult(r, { hello: r.params?.who }),
        },
      },
      capabilities2026: { extensions: { "com.example/hello": {} } },
    });
    const hello = await modern(d, "example/hello", { who: "ada" });
    assert.deepEqual(hello.body.result, { hello: "ada", resultType: "complete" });
    const bad = await modern(d, "example/hello", { who: 1 });
    assert.equal(bad.body.error.code, -32602);
    assert.equal(bad.body.error.message, "who must be a string");
    assert.equal((await legacy(d, "example/hello", { who: "ada" })).body.error.code, -32601);
    const discover = await modern(d, "server/discover", {});
    // Extensions merge by id: the tasks extension stays beside the new one.
    assert.deepEqual(Object.keys(discover.body.result.capabilities.extensions).sort(), [
      "com.example/hello",
      "io.modelcontextprotocol/tasks",
    ]);
  });

  test("two features may not define one method", () => {
    const d = dispatcher();
    assert.throws(
      () =>
        d.register({
          id: "again",
          methods: {
            "tools/call": {
              eras: "both",
              run: (r) => d.answer(r, successResponseJson(r.id, "{}")),
            },
          },
        }),
      /again defines tools\/call, already defined by tools/,
    );
  });

  test("a collection refuses what its define* function did not make, naming what it expected", () => {
    const registry = new CancellationRegistry({ janitor: false });
    registries.push(registry);
    const base = {
      name: "t",
      version: "1",
      registry,
      streamCancelTimeoutMs: 30,
      cancelOnDisconnect: true,
    };
    const tool = { name: "x", descriptor: {}, scopes: [], checkArguments() {}, toResult() {} };
    assert.throws(
      () => new Dispatcher({ ...base, tools: [tool as never] }),
      (error: unknown) =>
        error instanceof InvalidOptionError && /a defineTool\(\) result/.test(error.message),
    );
    const prompt = {
      name: "p",
      descriptor: {},
      checkArguments() {},
      get() {},
      toResult() {},
      complete() {},
    };
    assert.throws(
      () => new Dispatcher({ ...base, prompts: [prompt as never] }),
      (error: unknown) =>
        error instanceof InvalidOptionError && /a definePrompt\(\) result/.test(error.message),
    );
  });
});
