/**
 * KeepAliveClock: one timer for every member of one interval, each member ticked at its own
 * deadline (not at an earlier member's), every interval when repeating, never after its removal;
 * and the session GET streams' keep-alive comments that use it (2025-11-25 basic/transports,
 * "Listening for Messages from the Server").
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { KeepAliveClock } from "../../src/http/keep-alive-clock.js";
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

/** A target recording its writes; never behind. */
class Target implements ResponseTarget, CloseSignal {
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

describe("session GET streams", () => {
  test("get a keep-alive comment every keepAliveMs while open, none once closed", async () => {
    const streams = new SessionStreams({ keepAliveMs: 80, maxBufferedBytes: 1_048_576 });
    const first = new Target();
    const second = new Target();
    streams.open("s1", first, first);
    await wait(40);
    streams.open("s2", second, second);
    await wait(300);
    const pings = (t: Target) => t.chunks.filter((c) => c === ": keepalive\n\n").length;
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
