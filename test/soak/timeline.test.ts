/**
 * The soak's timeline (scripts/soak/timeline.ts): which Redis restart can have lost a record. A
 * restart begins when the stop is sent; Redis still acknowledges writes until its process exits
 * (`down`), and comes back empty, so a record written in between is lost with it as well.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { Timeline } from "../../scripts/soak/timeline.js";

function withRestart(from: number, down: number, to: number): Timeline {
  const timeline = new Timeline();
  timeline.events.push({ kind: "redis-restart", from, down, to });
  return timeline;
}

test("lastRestart: a record written after the stop was sent, before Redis exited, is lost with it", () => {
  // Written at 1 020 ms (the stop sent at 1 000, the process gone at 1 300), found gone at 3 500.
  assert.equal(withRestart(1_000, 1_300, 3_000).lastRestart(1_020, 3_500)?.from, 1_000);
  // Written before the stop, found gone after the restart began.
  assert.equal(withRestart(1_000, 1_300, 3_000).lastRestart(500, 1_100)?.from, 1_000);
});

test("lastRestart: not a restart whose process had exited before the write, nor one after the read", () => {
  // Written at 1 400, after the stopped process exited at 1 300: not lost by that restart.
  assert.equal(withRestart(1_000, 1_300, 3_000).lastRestart(1_400, 3_500), undefined);
  // Found gone at 900, before the restart began at 1 000.
  assert.equal(withRestart(1_000, 1_300, 3_000).lastRestart(500, 900), undefined);
  // A node kill is not a restart.
  const timeline = new Timeline();
  timeline.events.push({ kind: "node-kill", node: 1, from: 1_000, to: 2_000 });
  assert.equal(timeline.lastRestart(500, 3_000), undefined);
});

test("lastRestart: of two restarts that can have lost it, the later one", () => {
  const timeline = withRestart(1_000, 1_300, 3_000);
  timeline.events.push({ kind: "redis-restart", from: 5_000, down: 5_200, to: 7_000 });
  assert.equal(timeline.lastRestart(500, 8_000)?.from, 5_000);
  assert.equal(timeline.lastRestart(500, 4_000)?.from, 1_000);
});
