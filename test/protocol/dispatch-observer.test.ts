/**
 * The DispatchObserver: every handler invocation (tool, resource read, prompt get, completion)
 * reports its start and its end with outcome, error and cancellation source; the method table
 * takes new methods without a switch.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { CancellationRegistry } from "../../src/cancellation/index.js";
import {
  Dispatcher,
  type DispatchObserver,
  defineResource,
  defineResourceTemplate,
  defineTool,
  type HandlerEnd,
  type HandlerInfo,
  type JsonRpcRequest,
  type ResponseSink,
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
  cancel(json: string): void {
    this.respond(json, 200);
  }
  setSessionId(): void {}
  setListener(): void {}
}

const request = (id: number, method: string, params: object): JsonRpcRequest => ({
  jsonrpc: "2.0",
  id,
  method,
  params: params as Record<string, unknown>,
});
const meta = { scope: "ip:1", principal: null, sessionId: null, logLevel: null };

/** A dispatcher with one tool, `ok`, answering "fine", watched by `observer`. */
const okDispatcher = (registry: CancellationRegistry, observer: DispatchObserver): Dispatcher =>
  new Dispatcher({
    name: "t",
    version: "1",
    registry,
    streamCancelTimeoutMs: 30,
    cancelOnDisconnect: true,
    tools: [defineTool({ name: "ok", handler: () => "fine" })],
    observer,
  });

describe("DispatchObserver and the method table", () => {
  test("start and end of every handler kind, with outcome, error and cancellation source", async () => {
    const registry = new CancellationRegistry({ janitor: false });
    const events: string[] = [];
    const ends: { info: HandlerInfo; end: HandlerEnd }[] = [];
    const failure = new Error("boom");
    const dispatcher = new Dispatcher({
      name: "t",
      version: "1",
      registry,
      streamCancelTimeoutMs: 30,
      cancelOnDisconnect: true,
      tools: [
        defineTool({ name: "ok", handler: () => "fine" }),
        defineTool({
          name: "throws",
          handler: () => {
            throw failure;
          },
        }),
        defineTool({ name: "stubborn", handler: () => sleep(200).then(() => "late") }),
      ],
      resources: [defineResource({ uri: "x://r", name: "r", read: () => "text" })],
      resourceTemplates: [
        defineResourceTemplate({
          uriTemplate: "x://t/{v}",
          name: "t",
          complete: { v: () => ["a"] },
          read: ({ variables }) => variables.v ?? "",
        }),
      ],
      observer: {
        handlerStarted: (info) => events.push(`start ${info.method} ${info.name}`),
        handlerEnded: (info, end) => {
          events.push(`end ${info.method} ${info.name} ${end.outcome}`);
          ends.push({ info, end });
        },
        toolCall: (tool, outcome) => events.push(`tool ${tool} ${outcome}`),
      },
    });
    const run = (id: number, method: string, params: object) => {
      const sink = new Sink();
      return dispatcher.handleRequest(request(id, method, params), meta, sink).then(() => sink);
    };
    await run(1, "tools/call", { name: "ok", arguments: {} });
    await run(2, "tools/call", { name: "throws", arguments: {} });
    await run(3, "resources/read", { uri: "x://r" });
    await run(4, "resources/read", { uri: "x://t/7" });
    await run(5, "completion/complete", {
      ref: { type: "ref/resource", uri: "x://t/{v}" },
      argument: { name: "v", value: "" },
    });
    const stubborn = run(6, "tools/call", { name: "stubborn", arguments: {} });
    await sleep(5);
    await dispatcher.handleNotification(
      { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 6 } },
      "ip:1",
    );
    await stubborn;
    await sleep(80); // past the stream cancel timeout: abandoned → killed
    assert.deepEqual(events, [
      "start tools/call ok",
      "tool ok ok",
      "end tools/call ok ok",
      "start tools/call throws",
      "tool throws error",
      "end tools/call throws error",
      "start resources/read x://r",
      "end resources/read x://r ok",
      "start resources/read x://t/7",
      "end resources/read x://t/7 ok",
      "start completion/complete x://t/{v}",
      "end completion/complete x://t/{v} ok",
      "start tools/call stubborn",
      "tool stubborn killed",
      "end tools/call stubborn killed",
    ]);
    const thrown = ends.find((e) => e.info.name === "throws");
    assert.equal(thrown?.end.error, failure, "the observer gets what the handler threw");
    const killed = ends.find((e) => e.info.name === "stubborn");
    assert.equal(killed?.end.cancellationSource, "notification");
    assert.deepEqual(
      { ...killed?.info },
      {
        method: "tools/call",
        kind: "tool",
        name: "stubborn",
        requestId: 6,
        scope: "ip:1",
        sessionId: null,
        protocolEra: "2025-11-25",
        principalId: null,
        request: null,
      },
    );
    await registry.close();
  });

  test("a request an observer follows keeps one HandlerInfo from start to end; one it does not follow has request null and no start or context hook", async () => {
    const registry = new CancellationRegistry({ janitor: false });
    const seen: { started: HandlerInfo | null; ran: HandlerInfo | null; ended: HandlerInfo }[] = [];
    let started: HandlerInfo | null = null;
    let ran: HandlerInfo | null = null;
    const dispatcher = okDispatcher(registry, {
      // Follows (stands a sink in front of) the requests of scope ip:1 only.
      requestStarted: (info, sink) =>
        info.meta.scope === "ip:1" ? Object.assign(Object.create(sink), { sink }) : undefined,
      handlerStarted: (info) => {
        started = info;
      },
      runHandler: (info, run) => {
        ran = info;
        return run();
      },
      handlerEnded: (info) => {
        seen.push({ started, ran, ended: info });
        started = null;
        ran = null;
      },
    });
    const call = (id: number, scope: string) =>
      dispatcher.handleRequest(
        request(id, "tools/call", { name: "ok", arguments: {} }),
        { ...meta, scope },
        new Sink(),
      );
    await call(1, "ip:1");
    await call(2, "ip:2");
    const [followed, unfollowed] = seen;
    assert.ok(followed !== undefined && unfollowed !== undefined);
    assert.equal(followed.started, followed.ran);
    assert.equal(followed.started, followed.ended);
    assert.equal(followed.ended.request?.requestId, 1);
    assert.equal(unfollowed.ended.request, null);
    assert.equal(unfollowed.ended.requestId, 2);
    // Nobody follows it: the per-handler hooks of the followers are skipped (tracing's are).
    assert.equal(unfollowed.started, null);
    assert.equal(unfollowed.ran, null);
    await registry.close();
  });

  test("while followsRequests() says false, requestStarted is not called and the handler still runs; once it says true, it is", async () => {
    const registry = new CancellationRegistry({ janitor: false });
    let follows = false;
    const started: number[] = [];
    const dispatcher = okDispatcher(registry, {
      followsRequests: () => follows,
      requestStarted: (info) => {
        started.push(info.requestId as number);
        return undefined;
      },
    });
    const call = async (id: number) => {
      const sink = new Sink();
      await dispatcher.handleRequest(
        request(id, "tools/call", { name: "ok", arguments: {} }),
        meta,
        sink,
      );
      return sink.answer?.json;
    };
    assert.match((await call(1)) ?? "", /"text":"fine"/);
    assert.deepEqual(started, []);
    follows = true;
    assert.match((await call(2)) ?? "", /"text":"fine"/);
    assert.deepEqual(started, [2]);
    await registry.close();
  });

  test("wantsEnd: an end that concerns the observer reaches toolCall and handlerEnded, one that does not reaches neither", async () => {
    const registry = new CancellationRegistry({ janitor: false });
    const asked: string[] = [];
    const heard: string[] = [];
    const dispatcher = new Dispatcher({
      name: "t",
      version: "1",
      registry,
      streamCancelTimeoutMs: 30,
      cancelOnDisconnect: true,
      tools: [
        defineTool({ name: "ok", handler: () => "fine" }),
        defineTool({
          name: "throws",
          handler: () => {
            throw new Error("boom");
          },
        }),
      ],
      observer: {
        // Concerned by failures only, as the error reporter is.
        wantsEnd: (outcome, followed) => {
          asked.push(`${outcome} ${followed}`);
          return outcome === "error";
        },
        toolCall: (tool, outcome) => heard.push(`toolCall ${tool} ${outcome}`),
        handlerEnded: (info, end) => heard.push(`ended ${info.name} ${end.outcome}`),
      },
    });
    for (const [id, name] of [
      [1, "ok"],
      [2, "throws"],
    ] as const) {
      const sink = new Sink();
      await dispatcher.handleRequest(
        request(id, "tools/call", { name, arguments: {} }),
        meta,
        sink,
      );
      assert.ok(sink.answer !== null);
    }
    assert.deepEqual(asked, ["ok false", "error false"]);
    assert.deepEqual(heard, ["toolCall throws error", "ended throws error"]);
  });

  test("a method is added to the table and served in the era it names only", async () => {
    const registry = new CancellationRegistry({ janitor: false });
    const dispatcher = new Dispatcher({
      name: "t",
      version: "1",
      registry,
      streamCancelTimeoutMs: 30,
      cancelOnDisconnect: true,
    });
    dispatcher.defineMethod("example/hello", {
      eras: "2025",
      run: (r) => dispatcher.answer(r, successResponseJson(r.id, '{"hello":true}')),
    });
    const old = new Sink();
    await dispatcher.handleRequest(request(1, "example/hello", {}), meta, old);
    assert.equal(old.answer?.json, '{"jsonrpc":"2.0","id":1,"result":{"hello":true}}');
    const modern = new Sink();
    await dispatcher.handleModernRequest(request(2, "example/hello", {}), meta, modern, {
      clientCapabilities: {},
    });
    assert.equal(modern.answer?.status, 404);
    assert.equal(registry.inFlightCount, 0);
    await registry.close();
  });
});
