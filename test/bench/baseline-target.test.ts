/**
 * The benchmarks' `baseline` target (bench/lib/bench-targets.ts `baselineTarget`): conduit-mcp as
 * another checkout builds it, for before/after figures in one run. It must serve, and so be
 * warmed up on, every path the `conduit` target serves, whatever `--paths` counts: a server warmed
 * on fewer paths is optimized from fewer calls and counted about 2 % more instructions per call
 * than the same build warmed as `conduit` is (docs/profile.md, "Ninth round").
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { baselineTarget, TARGETS } from "../../bench/lib/bench-targets.js";

test("baselineTarget: the other checkout's conduit-mcp, on every path the conduit target serves", () => {
  const dir = process.cwd();
  const baseline = baselineTarget(dir);
  const conduit = TARGETS.find((t) => t.key === "conduit");
  assert.ok(conduit !== undefined);
  assert.deepEqual(baseline.paths, conduit.paths);
  assert.equal(baseline.key, "baseline");
  assert.equal(baseline.script, `${dir}/bench/lib/conduit-server.ts`);
  assert.match(baseline.label, /^conduit-mcp at [0-9a-f]{7,} \(baseline\)$/);
});
