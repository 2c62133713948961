/**
 * The HTTP benchmark's round order (bench/lib/round-order.ts): the two rows of every "× bare"
 * ratio are measured back to back, and no row is always first.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { roundOrder } from "../../bench/lib/round-order.js";

interface Row {
  readonly path: string;
  readonly target: string;
}

const PATHS = ["call", "call@2026", "read"];
const TARGETS = ["bare", "conduit", "redis", "sdk2"];
// Table order, target by target, as the benchmark builds its rows; sdk2 lacks one path.
const ROWS: Row[] = TARGETS.flatMap((target) =>
  PATHS.filter((path) => !(target === "sdk2" && path === "call@2026")).map((path) => ({
    path,
    target,
  })),
);

const label = (row: Row): string => `${row.target}/${row.path}`;

test("every round measures every row once", () => {
  for (let round = 0; round < 6; round++) {
    const order = roundOrder(ROWS, PATHS, round);
    assert.deepEqual(order.map(label).sort(), ROWS.map(label).sort());
  }
});

test("bare and conduit-mcp on one path are measured back to back in every round", () => {
  for (let round = 0; round < 6; round++) {
    const order = roundOrder(ROWS, PATHS, round);
    for (const path of PATHS) {
      const bare = order.findIndex((r) => r.path === path && r.target === "bare");
      const conduit = order.findIndex((r) => r.path === path && r.target === "conduit");
      assert.equal(Math.abs(bare - conduit), 1, `round ${round}, ${path}: ${order.map(label)}`);
    }
  }
});

test("a path's rows stay together, and alternate rounds run them in reverse", () => {
  const even = roundOrder(ROWS, PATHS, 0);
  const odd = roundOrder(ROWS, PATHS, 1);
  assert.deepEqual(
    even.filter((r) => r.path === "read").map((r) => r.target),
    ["bare", "conduit", "redis", "sdk2"],
  );
  assert.deepEqual(
    odd.filter((r) => r.path === "read").map((r) => r.target),
    ["sdk2", "redis", "conduit", "bare"],
  );
  for (const order of [even, odd]) {
    const paths = order.map((r) => r.path).filter((p, i, all) => i === 0 || all[i - 1] !== p);
    assert.equal(paths.length, PATHS.length, `groups split: ${order.map(label)}`);
  }
});

test("the paths' order rotates, so no path is always measured first", () => {
  const firsts = [0, 1, 2].map((round) => roundOrder(ROWS, PATHS, round)[0]?.path);
  assert.deepEqual(firsts, ["call", "call@2026", "read"]);
});

test("rows of a path not asked for are left out", () => {
  const order = roundOrder(ROWS, ["read"], 0);
  assert.deepEqual(order.map(label), ["bare/read", "conduit/read", "redis/read", "sdk2/read"]);
});
