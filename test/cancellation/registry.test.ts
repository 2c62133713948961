import assert from "node:assert/strict";
import diagnosticsChannel from "node:diagnostics_channel";
import { describe, it } from "node:test";

import { MemoryCancellationStore } from "../../src/cancellation/memory-store.js";
import { CancellationRegistry } from "../../src/cancellation/registry.js";
import type {
  CancellationStore,
  RemoteCancellation,
  RequestHandle,
} from "../../src/cancellation/types.js";
import { ChannelName } from "../../src/diagnostics.js";
import { InvalidOptionError, RequestCancelledError } from "../../src/errors.js";

const INF = Number.POSITIVE_INFINITY;

/** A registry without a janitor and with a controllable clock. */
function makeRegistry(
  options: { maxRows?: number; maxRowsPerScope?: number; store?: CancellationStore } = {},
) {
  const clock = { now: 1_700_000_000_000 };
  const registry = new CancellationRegistry({
    ...options,
    janitor: false,
    clock: () => clock.now,
  });
  return { registry, clock };
}

/** Collects the messages of one diagnostics channel while `body` runs. */
async function capture(channel: string, body: () => Promise<void>): Promise<unknown[]> {
  const messages: unknown[] = [];
  const listener = (message: unknown) => messages.push(message);
  diagnosticsChannel.subscribe(channel, listener);
  try {
    await body();
  } finally {
    diagnosticsChannel.unsubscribe(channel, listener);
  }
  return messages;
}

function reasonOf(handle: RequestHandle): RequestCancelledError {
  assert.ok(handle.signal.reason instanceof RequestCancelledError);
  return handle.signal.reason;
}

describe("CancellationRegistry: options", () => {
  it("rejects bad option values at construction, naming the option", () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ["maxRows", { maxRows: 0 }],
      ["maxRows", { maxRows: -5 }],
      ["maxRows", { maxRows: 2.5 }],
      ["maxRows", { maxRows: Number.NaN }],
      ["maxRowsPerScope", { maxRowsPerScope: "256" }],
      ["maxRowsPerScope", { maxRowsPerScope: 0 }],
      ["ttlMs", { ttlMs: 0 }],
      ["ttlMs", { ttlMs: INF }],
      ["ttlMs", { ttlMs: -1 }],
      ["janitorIntervalMs", { janitorIntervalMs: 0 }],
      ["janitorIntervalMs", { janitorIntervalMs: INF }],
      ["janitor", { janitor: "yes" }],
      ["clock", { clock: 42 }],
      ["store", { store: {} }],
      ["maxRows", { store: new MemoryCancellationStore(), maxRows: 10 }],
      ["maxRowsPerScope", { store: new MemoryCancellationStore(), maxRowsPerScope: 10 }],
    ];
    for (const [option, options] of cases) {
      assert.throws(
        () => new CancellationRegistry({ janitor: false, ...options }),
        (error) => error instanceof InvalidOptionError && error.option === option,
        JSON.stringify(options),
      );
    }
  });

  it("Infinity is accepted for both row bounds", async () => {
    const { registry } = makeRegistry({ maxRows: INF, maxRowsPerScope: INF });
    for (let i = 0; i < 300; i++)
      assert.deepEqual(await registry.cancel(i, null, "s"), { ok: true });
    assert.equal(await registry.size(), 300);
    await registry.close();
  });

  it("passes its bounds to the default memory store; a given store keeps its own", async () => {
    const { registry } = makeRegistry({ maxRowsPerScope: 1 });
    assert.ok(registry.store instanceof MemoryCancellationStore);
    assert.equal(registry.store.maxRowsPerScope, 1);
    await registry.close();
    const store = new MemoryCancellationStore({ maxRows: 7 });
    const withStore = new CancellationRegistry({ store, janitor: false });
    assert.equal(withStore.store, store);
    await withStore.close();
  });
});

describe("CancellationRegistry: cancel, isCancelled, reason, clear", () => {
  it('integer 42 and string "42" are one key', async () => {
    const { registry } = makeRegistry();
    assert.deepEqual(await registry.cancel(42, "user pressed stop", "s"), { ok: true });
    assert.equal(await registry.isCancelled(42, "s"), true);
    assert.equal(await registry.isCancelled("42", "s"), true);
    assert.equal(await registry.isCancelled(42, "other"), false);
    await registry.close();
  });

  it("the reason is stored and read back", async () => {
    const { registry } = makeRegistry();
    await registry.cancel("req-1", "timeout", "s");
    assert.equal(await registry.reason("req-1", "s"), "timeout");
    assert.equal(await registry.reason("missing", "s"), null);
    await registry.cancel("req-2", undefined, "s");
    assert.equal(await registry.reason("req-2", "s"), null, 'no reason is null, not ""');
    assert.equal(await registry.reason(null, "s"), null);
    assert.equal(await registry.reason({}, "s"), null);
    await registry.close();
  });

  it("a null id is ok, records nothing, publishes nothing", async () => {
    const { registry } = makeRegistry();
    const events = await capture(ChannelName.requestCancelled, async () => {
      assert.deepEqual(await registry.cancel(null, null, "s"), { ok: true });
      assert.deepEqual(await registry.cancel(undefined), { ok: true });
    });
    assert.deepEqual(events, []);
    assert.equal(await registry.isCancelled(null, "s"), false);
    assert.equal(await registry.size(), 0);
    await registry.close();
  });

  it("invalid ids are an error value and leave the table alone", async () => {
    const { registry } = makeRegistry();
    const invalid = { ok: false, error: "invalid_request_id" };
    const events = await capture(ChannelName.requestCancelled, async () => {
      for (const id of [{}, [1, 2], 1.5, true, 2 ** 53, "a".repeat(257), "é".repeat(129)]) {
        assert.deepEqual(await registry.cancel(id, null, "s"), invalid);
      }
    });
    assert.deepEqual(events, []);
    assert.equal(await registry.size(), 0);
    assert.deepEqual(await registry.cancel("a".repeat(256), null, "s"), { ok: true });
    assert.equal(await registry.size(), 1);
    assert.equal(await registry.isCancelled({}, "s"), false);
    await registry.close();
  });

  it("reasons are sanitised by reflectText(reason, 200)", async () => {
    const { registry } = makeRegistry();
    await registry.cancel("r", `abort\u0000\u001b[31m${"x".repeat(500)}`, "s");
    const reason = (await registry.reason("r", "s")) ?? "";
    assert.equal(reason.length, 200);
    assert.ok(!reason.includes("\u0000"));
    assert.ok(!reason.includes("\u001b"));
    assert.ok(reason.startsWith("abort[31m"));
    await registry.close();
  });

  it("a non-string reason is stored as a string", async () => {
    const { registry } = makeRegistry();
    await registry.cancel("r", { why: "because" }, "s");
    const reason = await registry.reason("r", "s");
    assert.equal(typeof reason, "string");
    assert.ok(reason?.includes("because"));
    await registry.cancel("n", 0, "s");
    assert.equal(await registry.reason("n", "s"), "0", "a falsy reason is still a reason");
    await registry.close();
  });

  it("re-cancelling refreshes the reason and publishes again", async () => {
    const { registry, clock } = makeRegistry();
    const events = await capture(ChannelName.requestCancelled, async () => {
      await registry.cancel("r", "first", "s");
      clock.now += 60_000;
      await registry.cancel("r", "second", "s");
    });
    assert.equal(events.length, 2);
    assert.equal(await registry.reason("r", "s"), "second");
    assert.equal(await registry.size(), 1);
    // Refreshed now, so a 30 s cleanup keeps it.
    assert.equal((await registry.cleanup(30_000)).removed, 0);
    await registry.close();
  });

  it('the scope defaults to "global"', async () => {
    const { registry } = makeRegistry();
    await registry.cancel(1);
    assert.equal(await registry.isCancelled(1), true);
    assert.equal(await registry.isCancelled(1, "global"), true);
    assert.equal(await registry.isCancelled(1, "s"), false);
    await registry.clear(1);
    assert.equal(await registry.isCancelled(1), false);
    await registry.close();
  });

  it("clear removes the row; null and malformed ids are no-ops", async () => {
    const { registry } = makeRegistry();
    await registry.cancel("x", null, "s");
    assert.equal(await registry.clear("x", "s"), true);
    assert.equal(await registry.clear("x", "s"), false);
    assert.equal(await registry.isCancelled("x", "s"), false);
    assert.equal(await registry.clear(null, "s"), false);
    assert.equal(await registry.clear({}, "s"), false);
    await registry.close();
  });
});

describe("CancellationRegistry: cross-client isolation", () => {
  it("a cancel in one scope does not cancel the same id in another", async () => {
    const { registry } = makeRegistry();
    await registry.cancel(1, null, "session:A");
    assert.equal(await registry.isCancelled(1, "session:A"), true);
    assert.equal(await registry.isCancelled(1, "session:B"), false);
    await registry.cancel("7", null, "principal:alice");
    assert.equal(await registry.isCancelled("7", "principal:alice"), true);
    assert.equal(await registry.isCancelled("7", "principal:bob"), false);
    await registry.close();
  });

  it("prefixes keep principal and ip quotas apart", async () => {
    const { registry } = makeRegistry({ maxRowsPerScope: 1 });
    assert.deepEqual(await registry.cancel("1", null, "principal:203.0.113.9"), { ok: true });
    assert.deepEqual(await registry.cancel("2", null, "ip:203.0.113.9"), { ok: true });
    assert.equal(await registry.isCancelled("1", "ip:203.0.113.9"), false);
    await registry.close();
  });

  it("clear in scope A leaves scope B's row", async () => {
    const { registry } = makeRegistry();
    await registry.cancel("x", null, "A");
    await registry.cancel("x", null, "B");
    await registry.clear("x", "A");
    assert.equal(await registry.isCancelled("x", "A"), false);
    assert.equal(await registry.isCancelled("x", "B"), true);
    await registry.close();
  });
});

describe("CancellationRegistry: quota and cap", () => {
  it("max_rows=2 keeps at most 2 rows and the newest is present", async () => {
    const { registry, clock } = makeRegistry({ maxRows: 2, maxRowsPerScope: INF });
    for (const id of ["a", "b", "c"]) {
      assert.deepEqual(await registry.cancel(id, null, "s"), { ok: true });
      clock.now++;
    }
    assert.ok((await registry.size()) <= 2);
    assert.equal(await registry.isCancelled("c", "s"), true);
    assert.equal(await registry.isCancelled("a", "s"), false);
    await registry.close();
  });

  it("the quota rejects with cancellation_limit_reached; the victim is served", async () => {
    const { registry } = makeRegistry({ maxRowsPerScope: 3 });
    for (let i = 1; i <= 3; i++) {
      assert.deepEqual(await registry.cancel(`flood-${i}`, null, "attacker"), { ok: true });
    }
    const events = await capture(ChannelName.requestCancelled, async () => {
      assert.deepEqual(await registry.cancel("flood-4", null, "attacker"), {
        ok: false,
        error: "cancellation_limit_reached",
      });
    });
    assert.deepEqual(events, [], "a rejected cancel publishes nothing");
    assert.deepEqual(await registry.cancel("mine", null, "victim"), { ok: true });
    assert.equal(await registry.isCancelled("mine", "victim"), true);
    await registry.close();
  });

  it("6 x 20 attacker rows under a cap of 100; the victim is served, then capped", async () => {
    const { registry, clock } = makeRegistry({ maxRows: 100, maxRowsPerScope: 20 });
    for (let a = 0; a < 6; a++) {
      for (let i = 0; i < 20; i++) {
        await registry.cancel(`f${i}`, null, `attacker-${a}`);
        clock.now++;
      }
    }
    assert.ok((await registry.size()) <= 100);
    assert.deepEqual(await registry.cancel("mine", null, "victim"), { ok: true });
    for (let i = 0; i < 19; i++) await registry.cancel(`v${i}`, null, "victim");
    assert.deepEqual(await registry.cancel("v-over", null, "victim"), {
      ok: false,
      error: "cancellation_limit_reached",
    });
    await registry.close();
  });

  it("bystander/hog through the registry", async () => {
    const { registry, clock } = makeRegistry({ maxRows: 100, maxRowsPerScope: INF });
    for (const id of ["bystander-1", "bystander-2"]) {
      await registry.cancel(id, null, "bystander");
      clock.now++;
    }
    for (let i = 1; i <= 98; i++) {
      await registry.cancel(`hog-${i}`, null, "hog");
      clock.now++;
    }
    await registry.cancel("small-1", null, "small");
    assert.equal(await registry.size(), 96);
    assert.equal(await registry.isCancelled("bystander-1", "bystander"), true);
    assert.equal(await registry.isCancelled("hog-5", "hog"), false);
    assert.equal(await registry.isCancelled("hog-6", "hog"), true);
    assert.equal(await registry.isCancelled("small-1", "small"), true);
    await registry.close();
  });
});

describe("CancellationRegistry: track, untrack, isInFlight", () => {
  it('track(7, "a") is in flight under 7 and "7" in a only, until untracked', async () => {
    const { registry } = makeRegistry();
    const handle = await registry.track(7, "a");
    assert.equal(handle.requestId, "7");
    assert.equal(handle.scope, "a");
    assert.equal(handle.alive, true);
    assert.equal(await registry.isInFlight(7, "a"), true);
    assert.equal(await registry.isInFlight("7", "a"), true);
    assert.equal(await registry.isInFlight(7, "b"), false);
    assert.equal(await registry.isInFlight(70, "a"), false);
    assert.equal(registry.inFlightCount, 1);
    await registry.untrack(handle);
    assert.equal(handle.alive, false);
    assert.equal(await registry.isInFlight(7, "a"), false);
    assert.equal(registry.inFlightCount, 0);
    await registry.untrack(handle); // idempotent
    assert.equal(registry.inFlightCount, 0);
    await registry.close();
  });

  it("untracking one of two namesakes leaves the other in flight", async () => {
    const { registry } = makeRegistry();
    const first = await registry.track("dup", "s");
    const second = await registry.track("dup", "s");
    assert.notEqual(first.handleId, second.handleId);
    await registry.untrack(second);
    assert.equal(await registry.isInFlight("dup", "s"), true);
    await registry.untrack(first);
    assert.equal(await registry.isInFlight("dup", "s"), false);
    await registry.close();
  });

  it("null and invalid ids give untracked handles that can still be aborted locally", async () => {
    const { registry } = makeRegistry();
    const none = await registry.track(null, "s");
    const long = await registry.track("a".repeat(257), "s");
    assert.equal(none.requestId, null);
    assert.equal(long.requestId, null);
    assert.equal(await registry.isInFlight(null, "s"), false);
    assert.equal(await registry.isInFlight("a".repeat(257), "s"), false);
    assert.equal(registry.inFlightCount, 2);
    none.abort(new RequestCancelledError("disconnect"));
    assert.equal(none.signal.aborted, true);
    await registry.untrack(none);
    await registry.untrack(long);
    assert.equal(registry.inFlightCount, 0);
    await registry.close();
  });

  it("handle ids are unique", async () => {
    const { registry } = makeRegistry();
    const ids = new Set<string>();
    for (let i = 0; i < 1_000; i++) {
      const handle = await registry.track(i % 3, "s");
      ids.add(handle.handleId);
      await registry.untrack(handle);
    }
    assert.equal(ids.size, 1_000);
    await registry.close();
  });

  it("a failed store write rejects track and leaves nothing registered", async () => {
    const store = new MemoryCancellationStore();
    const failing: CancellationStore = Object.assign(Object.create(store) as CancellationStore, {
      addInFlight: () => Promise.reject(new Error("store down")),
    });
    const registry = new CancellationRegistry({ store: failing, janitor: false });
    await assert.rejects(registry.track(1, "s"), /store down/);
    assert.equal(registry.inFlightCount, 0);
    // The half-registered handle is gone: a cancel now finds nothing to abort.
    assert.deepEqual(await registry.cancel(1, null, "s"), { ok: true });
    await registry.close();
    await store.close();
  });
});

describe("CancellationRegistry: local aborts", () => {
  it("a recorded cancel aborts every handle of the key before it resolves", async () => {
    const { registry } = makeRegistry();
    const a = await registry.track(5, "s");
    const b = await registry.track("5", "s");
    const otherScope = await registry.track(5, "t");
    const otherId = await registry.track(6, "s");
    const order: string[] = [];
    a.signal.addEventListener("abort", () => order.push("a"), { once: true });
    b.signal.addEventListener("abort", () => order.push("b"), { once: true });
    const pending = registry.cancel(5, "stop \u0007now", "s", "notification");
    order.push("called");
    await pending;
    order.push("resolved");
    assert.deepEqual(order, ["called", "a", "b", "resolved"]);
    for (const handle of [a, b]) {
      const reason = reasonOf(handle);
      assert.equal(reason.source, "notification");
      assert.equal(reason.reason, "stop now", "the sanitised reason");
      assert.equal(reason.code, "CONDUIT_ERR_REQUEST_CANCELLED");
    }
    assert.equal(otherScope.signal.aborted, false);
    assert.equal(otherId.signal.aborted, false);
    await registry.close();
  });

  it("an abort listener may untrack synchronously without disturbing its namesakes", async () => {
    const { registry } = makeRegistry();
    const handles = await Promise.all([1, 2, 3].map(() => registry.track("k", "s")));
    for (const handle of handles) {
      handle.signal.addEventListener("abort", () => void registry.untrack(handle), { once: true });
    }
    await registry.cancel("k", null, "s");
    assert.ok(handles.every((handle) => handle.signal.aborted));
    assert.equal(registry.inFlightCount, 0);
    assert.equal(await registry.isInFlight("k", "s"), false);
    await registry.close();
  });

  it("a handle aborted stays aborted: clear and untrack do not undo it", async () => {
    const { registry } = makeRegistry();
    const handle = await registry.track(1, "s");
    await registry.cancel(1, "first", "s");
    await registry.clear(1, "s");
    await registry.untrack(handle);
    assert.equal(handle.signal.aborted, true);
    assert.equal(reasonOf(handle).reason, "first");
    // A later cancel (or abort) does not replace the first reason.
    handle.abort(new RequestCancelledError("shutdown"));
    assert.equal(reasonOf(handle).source, "library");
    await registry.close();
  });

  it("a request tracked after the cancel is not aborted by the stale row (no stale cancel)", async () => {
    const { registry } = makeRegistry();
    await registry.cancel(9, null, "s");
    const late = await registry.track(9, "s");
    assert.equal(late.signal.aborted, false);
    assert.equal(
      await registry.isCancelled(9, "s"),
      true,
      "the row itself remains until cleared or expired",
    );
    await registry.untrack(late);
    await registry.close();
  });

  it("a cancel rejected by the quota aborts nothing", async () => {
    const { registry } = makeRegistry({ maxRowsPerScope: 1 });
    await registry.cancel("other", null, "s");
    const handle = await registry.track("k", "s");
    assert.equal((await registry.cancel("k", null, "s")).ok, false);
    assert.equal(handle.signal.aborted, false);
    await registry.close();
  });

  it("handle.abort aborts that handle only and writes nothing", async () => {
    const { registry } = makeRegistry();
    const a = await registry.track(1, "s");
    const b = await registry.track(1, "s");
    const events = await capture(ChannelName.requestCancelled, async () => {
      a.abort(new RequestCancelledError("disconnect"));
    });
    assert.equal(a.signal.aborted, true);
    assert.equal(reasonOf(a).source, "disconnect");
    assert.equal(b.signal.aborted, false);
    assert.equal(await registry.isCancelled(1, "s"), false);
    assert.equal(await registry.size(), 0);
    assert.deepEqual(events, []);
    await registry.close();
  });

  it("abortAll aborts tracked and untracked handles and untracks nothing", async () => {
    const { registry } = makeRegistry();
    const tracked = await registry.track(1, "s");
    const untracked = await registry.track(null, "s");
    const reason = new RequestCancelledError("shutdown");
    registry.abortAll(reason);
    assert.equal(tracked.signal.reason, reason);
    assert.equal(untracked.signal.reason, reason);
    assert.equal(registry.inFlightCount, 2);
    assert.equal(await registry.isInFlight(1, "s"), true);
    await registry.close();
  });

  it("cancellations announced by the store as remote abort the local handles", async () => {
    const inner = new MemoryCancellationStore();
    let listener: ((event: RemoteCancellation) => void) | undefined;
    let unsubscribed = false;
    const store: CancellationStore = Object.assign(Object.create(inner) as CancellationStore, {
      onRemoteCancellation(fn: (event: RemoteCancellation) => void) {
        listener = fn;
        return () => {
          unsubscribed = true;
        };
      },
    });
    const registry = new CancellationRegistry({ store, janitor: false });
    const handle = await registry.track("7", "session:x");
    const bystander = await registry.track("7", "session:y");
    assert.ok(listener);
    // A disconnect elsewhere concerned one handle on that node: nothing aborts here.
    listener({ scope: "session:x", requestId: "7", reason: "gone", source: "disconnect" });
    assert.equal(handle.signal.aborted, false);
    listener({ scope: "session:x", requestId: "7", reason: "remote", source: "notification" });
    assert.equal(handle.signal.aborted, true);
    assert.equal(reasonOf(handle).source, "notification");
    assert.equal(reasonOf(handle).reason, "remote");
    assert.equal(bystander.signal.aborted, false);
    await registry.close();
    assert.equal(unsubscribed, true);
    await inner.close();
  });
});

describe("CancellationRegistry: isInFlight during a store outage", () => {
  it("answers from this process's live handles when the store fails open with false", async () => {
    const inner = new MemoryCancellationStore();
    // A store that lost its backend: in-flight writes vanish and reads answer false (fail-open).
    const store: CancellationStore = Object.assign(Object.create(inner) as CancellationStore, {
      addInFlight: () => Promise.resolve(),
      isInFlight: () => Promise.resolve(false),
    });
    const registry = new CancellationRegistry({ store, janitor: false });
    const handle = await registry.track("local-1", "principal:alice");
    assert.equal(await registry.isInFlight("local-1", "principal:alice"), true);
    assert.equal(await registry.isInFlight("local-1", "principal:bob"), false);
    await registry.untrack(handle);
    assert.equal(await registry.isInFlight("local-1", "principal:alice"), false);
    await registry.close();
    await inner.close();
  });
});

describe("CancellationRegistry: handle signal and listener slot", () => {
  it("a handle aborted before its signal is read hands out an already-aborted signal", async () => {
    const { registry } = makeRegistry();
    const handle = await registry.track(1, "s");
    assert.equal(handle.aborted, false);
    assert.deepEqual(await registry.cancel(1, "early", "s", "notification"), { ok: true });
    assert.equal(handle.aborted, true);
    assert.equal(handle.signal.aborted, true);
    assert.equal(reasonOf(handle).reason, "early");
    await registry.close();
  });

  it("the listener slot is called once, before the signal's listeners, and can be cleared", async () => {
    const { registry } = makeRegistry();
    const order: string[] = [];
    const first = await registry.track(1, "s");
    first.signal.addEventListener("abort", () => order.push("signal"));
    first.setAbortListener({ handleEvent: () => order.push("slot") });
    first.abort(new RequestCancelledError("disconnect"));
    first.abort(new RequestCancelledError("shutdown"));
    assert.deepEqual(order, ["slot", "signal"]);
    assert.equal(reasonOf(first).source, "disconnect", "the first cause stays");
    const second = await registry.track(2, "s");
    let called = false;
    second.setAbortListener({ handleEvent: () => (called = true) });
    second.setAbortListener(null);
    second.abort(new RequestCancelledError("shutdown"));
    assert.equal(called, false);
    await registry.close();
  });
});

describe("CancellationRegistry: cancelHandle", () => {
  it("aborts that handle only, records a row under its scope and publishes it", async () => {
    const { registry } = makeRegistry();
    const mine = await registry.track(1, "ip:192.0.2.1");
    const namesake = await registry.track(1, "ip:192.0.2.1");
    const messages = await capture(ChannelName.requestCancelled, async () => {
      assert.deepEqual(await registry.cancelHandle(mine, "client disconnected", "disconnect"), {
        ok: true,
      });
    });
    assert.equal(mine.signal.aborted, true);
    assert.equal(reasonOf(mine).source, "disconnect");
    assert.equal(reasonOf(mine).reason, "client disconnected");
    assert.equal(namesake.signal.aborted, false, "a namesake keeps running");
    assert.equal(await registry.isCancelled(1, "ip:192.0.2.1"), true);
    assert.deepEqual(messages, [
      {
        requestId: "1",
        scope: "ip:192.0.2.1",
        reason: "client disconnected",
        source: "disconnect",
      },
    ]);
    await registry.close();
  });

  it("aborts the handle even when no row can be written (null id, quota reached)", async () => {
    const { registry } = makeRegistry({ maxRowsPerScope: 1 });
    const untracked = await registry.track(null, "s");
    assert.deepEqual(await registry.cancelHandle(untracked, "bye"), { ok: true });
    assert.equal(untracked.signal.aborted, true);
    assert.equal(await registry.size(), 0);
    assert.deepEqual(await registry.cancel("other", null, "s"), { ok: true });
    const handle = await registry.track("x", "s");
    assert.deepEqual(await registry.cancelHandle(handle, "bye", "shutdown"), {
      ok: false,
      error: "cancellation_limit_reached",
    });
    assert.equal(handle.signal.aborted, true);
    assert.equal(reasonOf(handle).source, "shutdown");
    await registry.close();
  });
});

describe("CancellationRegistry: cleanup", () => {
  it("removes rows strictly older than the TTL; publishes the counts", async () => {
    const { registry, clock } = makeRegistry();
    await registry.cancel("stale", null, "s");
    clock.now += 30_000;
    await registry.cancel("edge", null, "s");
    clock.now += 30_000;
    await registry.cancel("fresh", null, "s");
    const events = await capture(ChannelName.cancellationCleanup, async () => {
      assert.deepEqual(await registry.cleanup(30_000), { removed: 1, inFlightRemoved: 0 });
    });
    assert.deepEqual(events, [{ removed: 1, inFlightRemoved: 0 }]);
    assert.equal(await registry.isCancelled("stale", "s"), false);
    assert.equal(await registry.isCancelled("edge", "s"), true, "exactly the TTL old is kept");
    assert.equal(await registry.isCancelled("fresh", "s"), true);
    await registry.close();
  });

  it("cleanup() defaults to the registry's ttlMs", async () => {
    const clock = { now: 0 };
    const registry = new CancellationRegistry({
      janitor: false,
      ttlMs: 1_000,
      clock: () => clock.now,
    });
    await registry.cancel(1);
    clock.now = 1_001;
    assert.equal((await registry.cleanup()).removed, 1);
    assert.equal(registry.ttlMs, 1_000);
    assert.equal(new CancellationRegistry({ janitor: false }).ttlMs, 300_000);
    await registry.close();
  });

  it("removes dead handles (lifetime ended) and their in-flight entries, keeps live ones", async () => {
    const { registry } = makeRegistry();
    const exchange = new AbortController();
    const leaked = await registry.track("leaked", "s", { lifetime: exchange.signal });
    const live = await registry.track("live", "s", { lifetime: new AbortController().signal });
    exchange.abort();
    assert.equal(leaked.alive, false);
    assert.equal(live.alive, true);
    const events = await capture(ChannelName.cancellationCleanup, async () => {
      assert.deepEqual(await registry.cleanup(30_000), { removed: 0, inFlightRemoved: 1 });
    });
    assert.deepEqual(events, [{ removed: 0, inFlightRemoved: 1 }]);
    assert.equal(await registry.isInFlight("leaked", "s"), false);
    assert.equal(await registry.isInFlight("live", "s"), true);
    assert.equal(registry.inFlightCount, 1);
    // A swept handle is no longer reached by a cancel.
    await registry.cancel("leaked", null, "s");
    assert.equal(leaked.signal.aborted, false);
    assert.deepEqual(await registry.cleanup(30_000), { removed: 0, inFlightRemoved: 0 });
    await registry.close();
  });

  it("a dead and a live handle share a key; only the dead one's entry goes", async () => {
    const { registry } = makeRegistry();
    const exchange = new AbortController();
    await registry.track("shared", "s", { lifetime: exchange.signal });
    const live = await registry.track("shared", "s");
    exchange.abort();
    assert.equal((await registry.cleanup(30_000)).inFlightRemoved, 1);
    assert.equal(await registry.isInFlight("shared", "s"), true);
    await registry.untrack(live);
    assert.equal(
      await registry.isInFlight("shared", "s"),
      false,
      "the live one held the last entry",
    );
    await registry.close();
  });

  it("untracked handles with an ended lifetime are swept too", async () => {
    const { registry } = makeRegistry();
    const exchange = new AbortController();
    await registry.track(null, "s", { lifetime: exchange.signal });
    exchange.abort();
    assert.equal((await registry.cleanup(30_000)).inFlightRemoved, 1);
    assert.equal(registry.inFlightCount, 0);
    await registry.close();
  });

  it("rejects a negative or non-numeric TTL", async () => {
    const { registry } = makeRegistry();
    await assert.rejects(registry.cleanup(-1), InvalidOptionError);
    await assert.rejects(registry.cleanup(Number.NaN), InvalidOptionError);
    await registry.close();
  });
});

describe("CancellationRegistry: diagnostics and lifecycle", () => {
  it("a recorded cancel publishes {requestId, scope, reason, source}", async () => {
    const { registry } = makeRegistry();
    const events = await capture(ChannelName.requestCancelled, async () => {
      await registry.cancel("evt-1", "client abort", "s");
      await registry.cancel(12, null, "principal:p", "notification");
    });
    assert.deepEqual(events, [
      { requestId: "evt-1", scope: "s", reason: "client abort", source: "library" },
      { requestId: "12", scope: "principal:p", reason: null, source: "notification" },
    ]);
    await registry.close();
  });

  it("the janitor runs by default and stops with stopJanitor and close", async () => {
    const registry = new CancellationRegistry();
    assert.equal(registry.janitorRunning, true);
    registry.stopJanitor();
    assert.equal(registry.janitorRunning, false);
    await registry.close();
    const other = new CancellationRegistry();
    await other.close();
    assert.equal(other.janitorRunning, false);
    assert.equal(new CancellationRegistry({ janitor: false }).janitorRunning, false);
  });

  it("close closes the store it created, not one it was given; it is idempotent", async () => {
    const { registry } = makeRegistry();
    await registry.close();
    await registry.close();
    await assert.rejects(registry.size(), { code: "CONDUIT_ERR_STORE_CLOSED" });
    const store = new MemoryCancellationStore();
    const borrowing = new CancellationRegistry({ store, janitor: false });
    await borrowing.close();
    assert.equal(await store.size(), 0);
    await store.close();
  });
});

describe("CancellationRegistry.trackNow", () => {
  it("with the memory store: the handle itself, tracked and cancellable at once; a closed store is a rejection", async () => {
    const registry = new CancellationRegistry({ janitor: false });
    const tracked = registry.trackNow(7, "ip:1");
    assert.ok(!(tracked instanceof Promise), "no promise with the memory store");
    assert.equal(await registry.isInFlight(7, "ip:1"), true);
    await registry.cancel(7, "stop", "ip:1");
    assert.equal(tracked.aborted, true);
    await registry.untrack(tracked);
    assert.equal(await registry.isInFlight(7, "ip:1"), false);
    assert.equal(registry.inFlightCount, 0);
    await registry.store.close();
    const refused = registry.trackNow(8, "ip:1");
    assert.ok(refused instanceof Promise);
    await assert.rejects(refused, { name: "StoreClosedError" });
    assert.equal(registry.inFlightCount, 0, "a refused handle is not left registered");
    await registry.close();
  });

  it("with another store, or a memory store whose addInFlight was replaced (a subclass, or on the instance): a promise, through that addInFlight", async () => {
    const added: string[] = [];
    class CountingStore extends MemoryCancellationStore {
      override addInFlight(scope: string, requestId: string, handleId: string): Promise<void> {
        added.push(requestId);
        return super.addInFlight(scope, requestId, handleId);
      }
    }
    const registry = new CancellationRegistry({ store: new CountingStore(), janitor: false });
    const tracked = registry.trackNow(9, "ip:1");
    assert.ok(tracked instanceof Promise);
    const handle = await tracked;
    assert.deepEqual(added, ["9"]);
    assert.equal(await registry.isInFlight(9, "ip:1"), true);
    await registry.untrack(handle);
    await registry.close();
    const patched = new MemoryCancellationStore();
    const original = patched.addInFlight.bind(patched);
    patched.addInFlight = (scope, requestId, handleId) => {
      added.push(`patched ${requestId}`);
      return original(scope, requestId, handleId);
    };
    const second = new CancellationRegistry({ store: patched, janitor: false });
    const pending = second.trackNow(10, "ip:1");
    assert.ok(pending instanceof Promise);
    await second.untrack(await pending);
    assert.deepEqual(added, ["9", "patched 10"]);
    await second.close();
  });
});

describe("CancellationRegistry.finish", () => {
  it("untracks the handle and clears the request's row, at once with the memory store", async () => {
    const registry = new CancellationRegistry({ janitor: false });
    const handle = registry.trackNow(3, "ip:1");
    assert.ok(!(handle instanceof Promise));
    await registry.cancel(3, "stop", "ip:1");
    assert.equal(await registry.isCancelled(3, "ip:1"), true);
    assert.equal(registry.finish(handle, 3, "ip:1"), undefined, "nothing to wait for");
    assert.equal(await registry.isInFlight(3, "ip:1"), false);
    assert.equal(await registry.isCancelled(3, "ip:1"), false, "the row is cleared");
    assert.equal(registry.inFlightCount, 0);
    await registry.close();
  });

  it("with another store: the clear's promise, which resolves even when the store fails", async () => {
    class FailingClear extends MemoryCancellationStore {
      override clear(): Promise<boolean> {
        return Promise.reject(new Error("store down"));
      }
    }
    const registry = new CancellationRegistry({ store: new FailingClear(), janitor: false });
    const handle = await registry.track(4, "ip:1");
    const finishing = registry.finish(handle, 4, "ip:1");
    assert.ok(finishing instanceof Promise);
    await finishing; // does not reject
    assert.equal(await registry.isInFlight(4, "ip:1"), false);
    await registry.close();
  });
});

describe("CancellationRegistry.finishTracked", () => {
  it('clears the key the handle was tracked under (5 and "5" are one key), at once with the memory store', async () => {
    const registry = new CancellationRegistry({ janitor: false });
    const handle = await registry.track(5, "ip:1");
    await registry.cancel("5", "stop", "ip:1");
    await registry.cancel(5, "stop", "ip:2");
    assert.equal(registry.finishTracked(handle), undefined, "nothing to wait for");
    assert.equal(handle.alive, false);
    assert.equal(await registry.isInFlight(5, "ip:1"), false);
    assert.equal(await registry.isCancelled(5, "ip:1"), false, "its own row is cleared");
    assert.equal(await registry.isCancelled(5, "ip:2"), true, "another scope's row stays");
    assert.equal(registry.inFlightCount, 0);
    await registry.close();
  });

  it("a handle without an id clears no row; another store's clear is a promise that never rejects", async () => {
    const plain = new CancellationRegistry({ janitor: false });
    const untracked = await plain.track(null, "ip:1");
    assert.equal(plain.finishTracked(untracked), undefined);
    assert.equal(plain.inFlightCount, 0);
    await plain.close();
    class FailingClear extends MemoryCancellationStore {
      override clear(): Promise<boolean> {
        return Promise.reject(new Error("store down"));
      }
    }
    const registry = new CancellationRegistry({ store: new FailingClear(), janitor: false });
    const handle = await registry.track("x", "ip:1");
    const finishing = registry.finishTracked(handle);
    assert.ok(finishing instanceof Promise);
    await finishing;
    assert.equal(await registry.isInFlight("x", "ip:1"), false);
    await registry.close();
  });
});

describe("CancellationRegistry with the memory store it made", () => {
  /** The number of in-flight entries the store keeps in its own table (no public reading). */
  function storedInFlight(store: unknown): number {
    let n = 0;
    const table = (store as { inFlight: Map<string, { size: number }> }).inFlight;
    for (const ids of table.values()) n += ids.size;
    return n;
  }

  it("answers the store's isInFlight from its own handles, writing no second entry per call", async () => {
    const registry = new CancellationRegistry({ janitor: false });
    const store = registry.store as MemoryCancellationStore;
    const first = await registry.track(7, "ip:1");
    const namesake = await registry.track("7", "ip:1");
    assert.equal(storedInFlight(store), 0, "no entry of its own calls in the store's table");
    assert.equal(await store.isInFlight("ip:1", "7"), true);
    assert.equal(await store.isInFlight("ip:2", "7"), false);
    await registry.untrack(first);
    assert.equal(await store.isInFlight("ip:1", "7"), true, "its namesake is still in flight");
    await registry.untrack(namesake);
    assert.equal(await store.isInFlight("ip:1", "7"), false);
    // Entries written through the store itself are kept and read as before.
    await store.addInFlight("ip:3", "9", "elsewhere.1");
    assert.equal(await store.isInFlight("ip:3", "9"), true);
    assert.equal(await registry.isInFlight(9, "ip:3"), true);
    await store.removeInFlight("ip:3", "9", "elsewhere.1");
    assert.equal(await registry.isInFlight(9, "ip:3"), false);
    await registry.close();
    await assert.rejects(store.isInFlight("ip:1", "7"), { name: "StoreClosedError" });
  });

  it("a store given to it is written as before; handle ids are unique and stable", async () => {
    const store = new MemoryCancellationStore();
    const registry = new CancellationRegistry({ store, janitor: false });
    const a = await registry.track(1, "ip:1");
    const b = await registry.track(1, "ip:1");
    assert.equal(storedInFlight(store), 1, "one key, both handle ids under it");
    assert.notEqual(a.handleId, b.handleId);
    assert.equal(a.handleId, a.handleId);
    assert.match(a.handleId, /^[A-Za-z0-9_-]{8}\.[0-9a-z]+$/);
    await registry.untrack(a);
    assert.equal(await store.isInFlight("ip:1", "1"), true);
    await registry.untrack(b);
    assert.equal(storedInFlight(store), 0);
    await registry.close();
  });
});
