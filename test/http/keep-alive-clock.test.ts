/**
 * KeepAliveClock: one timer for every member of one interval, each member ticked at its own
 * deadline (not at an earlier member's), every interval when repeating, never after its removal.
 * Keep-alives on both kinds of door: a way back with `sharedTimers` (node:http) waits in the
 * shared clock, one without (fetch doors: on workerd a timer belongs to the request that armed
 * it) has a timer of its own; on both, request streams and session GET streams
 * (2025-11-25 basic/transports) get their comments, and none once ended.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { HttpExchange } from "../../src/http/exchange.js";
import { KeepAliveClock, sharedClockSize } from "../../src/http/keep-alive-clock.js";
import { SessionStreams } from "../../src/http/session-streams.js";
import type { CloseListener, CloseSignal, ResponseTarget } from "../../src/http/transport.js";

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("KeepAliveClock", () => {
  test("members added at different times are each ticked at their own deadline", async () => {
    const ticks: Array<{ name: string; at: number }> = [];
    const clock = new KeepAliveClock<{ name: string }>(200, false, (m) =>
      ticks.push({ name: m.name, at: performance.now() }),
    );
    const t0 = performance.now();
    clock.add({ name: "a" });
    await wait(120);
    const t1 = performance.now();
    clock.add({ name: "b" });
    await wait(400);
    assert.deepEqual(
      ticks.map((t) => t.name),
      ["a", "b"],
    );
    const a = ticks[0] as { at: number };
    const b = ticks[1] as { at: number };
    assert.ok(a.at - t0 >= 199 && a.at - t0 < 320, `a ticked after ${a.at - t0} ms`);
    assert.ok(b.at - t1 >= 199 && b.at - t1 < 320, `b ticked after ${b.at - t1} ms`);
    assert.equal(clock.size, 0, "a one-shot clock forgets a member once ticked");
  });

  test("a repeating clock ticks every interval until the member is removed", async () => {
    let ticks = 0;
    const member = {};
    const clock = new KeepAliveClock<object>(60, true, () => {
      ticks++;
    });
    clock.add(member);
    await wait(400);
    assert.ok(ticks >= 3 && ticks <= 7, `${ticks} ticks in 400 ms at 60 ms`);
    clock.remove(member);
    const seen = ticks;
    await wait(200);
    assert.equal(ticks, seen, "no tick after removal");
    assert.equal(clock.size, 0);
  });

  test("a burst of deadlines is ticked in turns: the event loop runs between them", async () => {
    const order: string[] = [];
    let turned = false;
    const clock = new KeepAliveClock<{ n: number }>(30, false, (m) => {
      if (m.n === 0)
        setImmediate(() => {
          turned = true;
        });
      order.push(turned ? "after" : "before");
    });
    for (let n = 0; n < 1_000; n++) clock.add({ n });
    // Busy past every deadline: all 1 000 are due when the clock's timer first fires.
    const until = performance.now() + 45;
    while (performance.now() < until) {}
    await wait(200);
    assert.equal(order.length, 1_000, "every member ticked");
    assert.equal(clock.size, 0);
    const before = order.filter((o) => o === "before").length;
    assert.ok(before <= 256, `${before} members ticked before the event loop turned`);
  });

  test("a member whose tick throws does not stop the others", async () => {
    const ticked: string[] = [];
    const clock = new KeepAliveClock<{ name: string }>(50, false, (m) => {
      ticked.push(m.name);
      if (m.name === "bad") throw new Error("boom");
    });
    clock.add({ name: "bad" });
    clock.add({ name: "good" });
    await wait(200);
    assert.deepEqual(ticked, ["bad", "good"]);
  });
});

/** A target recording its writes; never behind. `shared`: a door whose timers any request may arm. */
class Target implements ResponseTarget, CloseSignal {
  constructor(readonly sharedTimers = false) {}
  headersSent = false;
  ended = false;
  closed = false;
  bufferedBytes = 0;
  chunks: string[] = [];
  writeHead(): void {
    this.headersSent = true;
  }
  flushHeaders(): void {}
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return true;
  }
  end(): void {
    this.ended = true;
  }
  onDrain(): void {}
  closeAfterAnswer(): void {}
  destroy(): void {}
  onClose(_listener: CloseListener | (() => void)): void {}
}

const pings = (t: Target) => t.chunks.filter((c) => c === ": keepalive\n\n").length;

function exchange(target: Target, keepAliveMs: number): HttpExchange {
  return new HttpExchange({
    target,
    closed: target,
    jsonAccepted: true,
    sseAccepted: true,
    settings: { keepAliveMs, maxBufferedBytes: 1_048_576, recorder: null },
    method: "tools/call",
  });
}

for (const shared of [true, false]) {
  const door = shared ? "node:http (shared clock)" : "a fetch door (a timer each)";
  // A distinct interval per door: the shared clocks are the process's, by interval.
  const ms = shared ? 71 : 73;

  describe(`keep-alives on ${door}`, () => {
    test("a request stream gets a comment every keepAliveMs, none once it ended", async () => {
      const first = new Target(shared);
      const second = new Target(shared);
      const a = exchange(first, ms);
      await a.notify("{}"); // a progress notification: the exchange is a stream now
      await wait(30);
      const b = exchange(second, ms);
      await b.notify("{}");
      assert.equal(sharedClockSize("ping", ms), shared ? 2 : 0);
      await wait(260);
      assert.ok(pings(first) >= 2, `first stream: ${pings(first)} keep-alives`);
      assert.ok(pings(second) >= 2, `second stream: ${pings(second)} keep-alives`);
      a.respond('{"x":1}');
      const seen = pings(first);
      assert.equal(sharedClockSize("ping", ms), shared ? 1 : 0);
      await wait(180);
      assert.equal(pings(first), seen, "no keep-alive after the answer");
      b.cancel("{}");
      assert.equal(sharedClockSize("ping", ms), 0);
    });

    test("a call still pending after keepAliveMs becomes a stream with a first comment, then pings", async () => {
      const target = new Target(shared);
      const call = exchange(target, ms);
      call.keepAliveWhilePending();
      await wait(5); // armed after the turn's ticks
      assert.equal(sharedClockSize("upgrade", ms), shared ? 1 : 0);
      await wait(ms + 120);
      assert.ok(target.headersSent, "upgraded to a stream");
      assert.equal(sharedClockSize("upgrade", ms), 0);
      assert.ok(pings(target) >= 2, `${pings(target)} keep-alives`);
      call.respond('{"x":1}');
      assert.ok(target.ended);
      assert.equal(sharedClockSize("ping", ms), 0);
    });

    test("a call answered before its upgrade leaves no wait behind", async () => {
      const target = new Target(shared);
      const call = exchange(target, ms);
      call.keepAliveWhilePending();
      await wait(5);
      call.respond('{"x":1}');
      assert.equal(sharedClockSize("upgrade", ms), 0);
      await wait(ms + 60);
      assert.equal(pings(target), 0, "no keep-alive after the answer");
    });
  });

  describe(`session GET streams on ${door}`, () => {
    test("get a keep-alive comment every keepAliveMs while open, none once closed", async () => {
      const streams = new SessionStreams({ keepAliveMs: 80, maxBufferedBytes: 1_048_576 });
      const first = new Target(shared);
      const second = new Target(shared);
      streams.open("s1", first, first);
      await wait(40);
      streams.open("s2", second, second);
      await wait(300);
      assert.ok(pings(first) >= 2, `first stream: ${pings(first)} keep-alives`);
      assert.ok(pings(second) >= 2, `second stream: ${pings(second)} keep-alives`);
      streams.close("s1");
      const seen = pings(first);
      await wait(200);
      assert.equal(pings(first), seen, "no keep-alive after the stream closed");
      assert.ok(first.ended);
      streams.closeAll();
    });
  });
}
