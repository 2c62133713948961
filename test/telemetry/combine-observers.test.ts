/**
 * combineObservers: metrics, error reporting and tracing share the dispatcher's one observer.
 * Each hears every call even when another throws; request sinks stack (each observer may stand
 * its own in front of the one before); handler contexts nest, the first observer outermost; an
 * observer set without request hooks exposes none, so the dispatcher builds nothing per request.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import type {
  DispatchObserver,
  HandlerInfo,
  RequestInfo,
  ResponseSink,
} from "../../src/protocol/index.js";
import { combineObservers, ErrorReporter } from "../../src/telemetry/index.js";

const info = { name: "t" } as unknown as HandlerInfo;
const request = { method: "tools/call" } as unknown as RequestInfo;
const sink = { label: "inner" } as unknown as ResponseSink;

describe("combineObservers", () => {
  test("none is null, one is itself", () => {
    const one: DispatchObserver = { toolCall() {} };
    assert.equal(combineObservers([null, undefined]), null);
    assert.equal(combineObservers([null, one]), one);
  });

  test("every observer hears every call, whatever another throws", () => {
    const heard: string[] = [];
    const throwing: DispatchObserver = {
      toolCall: () => {
        throw new Error("a");
      },
      handlerStarted: () => {
        throw new Error("b");
      },
      handlerEnded: () => {
        throw new Error("c");
      },
    };
    const listening: DispatchObserver = {
      toolCall: (tool, outcome) => heard.push(`tool ${tool} ${outcome}`),
      handlerStarted: (i) => heard.push(`start ${i.name}`),
      handlerEnded: (i, end) => heard.push(`end ${i.name} ${end.outcome}`),
    };
    const combined = combineObservers([throwing, listening]) as DispatchObserver;
    combined.toolCall?.("t", "error", 0.01);
    combined.handlerStarted?.(info);
    combined.handlerEnded?.(info, { outcome: "ok" }, 0.01);
    assert.deepEqual(heard, ["tool t error", "start t", "end t ok"]);
  });

  test("request sinks stack; a throwing or declining observer leaves the sink as it was", () => {
    const wrap =
      (label: string): NonNullable<DispatchObserver["requestStarted"]> =>
      (_request, inner) =>
        ({ label, inner }) as unknown as ResponseSink;
    const combined = combineObservers([
      { requestStarted: wrap("a") },
      {
        requestStarted: () => {
          throw new Error("no");
        },
      },
      { requestStarted: () => undefined },
      { requestStarted: wrap("b") },
    ]) as DispatchObserver;
    const result = combined.requestStarted?.(request, sink) as unknown as {
      label: string;
      inner: { label: string; inner: unknown };
    };
    assert.equal(result.label, "b");
    assert.equal(result.inner.label, "a");
    assert.equal(result.inner.inner, sink);
  });

  test("handler contexts nest, the first observer outermost", () => {
    const order: string[] = [];
    const around =
      (label: string): NonNullable<DispatchObserver["runHandler"]> =>
      (_info, run) => {
        order.push(`enter ${label}`);
        const value = run();
        order.push(`leave ${label}`);
        return value;
      };
    const combined = combineObservers([
      { runHandler: around("a") },
      { toolCall() {} },
      { runHandler: around("b") },
    ]) as DispatchObserver;
    const value = combined.runHandler?.(info, () => {
      order.push("handler");
      return 42;
    });
    assert.equal(value, 42);
    assert.deepEqual(order, ["enter a", "enter b", "handler", "leave b", "leave a"]);
  });

  test("without request or context hooks, the combination has none", () => {
    const combined = combineObservers([{ toolCall() {} }, { handlerEnded() {} }]);
    assert.equal(combined?.requestStarted, undefined);
    assert.equal(combined?.runHandler, undefined);
  });

  test("followsRequests: true while one observer of requests may follow (absent counts as may), false when none may", () => {
    let tracing = false;
    const traced: DispatchObserver = {
      followsRequests: () => tracing,
      requestStarted: () => undefined,
    };
    const quiet: DispatchObserver = {
      followsRequests: () => false,
      requestStarted: () => undefined,
    };
    const combined = combineObservers([traced, quiet, { toolCall() {} }]);
    assert.equal(combined?.followsRequests?.(), false);
    tracing = true;
    assert.equal(combined?.followsRequests?.(), true);
    const always = combineObservers([quiet, { requestStarted: () => undefined }]);
    assert.equal(always?.followsRequests?.(), true);
  });

  test("wantsEnd: the group is concerned when one member is (or has tool calls to hear); the error reporter by failures only", () => {
    const reporter = new ErrorReporter(null);
    assert.equal(reporter.wantsEnd("error"), true);
    for (const outcome of ["ok", "cancelled", "killed"] as const) {
      assert.equal(reporter.wantsEnd(outcome), false);
    }
    const tracerLike: DispatchObserver = {
      handlerEnded() {},
      wantsEnd: (_outcome, followed) => followed,
    };
    const group = combineObservers([reporter, tracerLike]) as DispatchObserver;
    assert.equal(group.wantsEnd?.("ok", false), false);
    assert.equal(group.wantsEnd?.("error", false), true);
    assert.equal(group.wantsEnd?.("ok", true), true);
    // A member without wantsEnd hears every end; so does one counting tool calls.
    const plain = combineObservers([reporter, { handlerEnded() {} }]) as DispatchObserver;
    assert.equal(plain.wantsEnd?.("ok", false), true);
    const counting = combineObservers([reporter, { toolCall() {} }]) as DispatchObserver;
    assert.equal(counting.wantsEnd?.("ok", false), true);
  });
});
