/**
 * The HTTP benchmark's `--semi-space` variants (bench/lib/bench-targets.ts `semiSpaceTargets`):
 * bare and conduit-mcp again under `node --max-semi-space-size=N`, same script and paths, after
 * the defaults (conduit-mcp's first, next to the default they are compared with), so one run
 * compares every size with the default side by side.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";

import { semiSpaceTargets, TARGETS } from "../../bench/lib/bench-targets.js";
import { cpuRatio, type RowResult } from "../../bench/lib/http-bench.js";

test("each size adds a bare and a conduit-mcp variant with the flag, sharing script and paths", () => {
  const variants = semiSpaceTargets(TARGETS, [1, 8]);
  assert.deepEqual(
    variants.map((t) => t.key),
    ["conduit@ss1", "conduit@ss8", "bare@ss1", "bare@ss8"],
  );
  for (const variant of variants) {
    const base = TARGETS.find((t) => t.key === variant.base);
    assert.ok(base !== undefined, variant.key);
    assert.equal(variant.script, base.script);
    assert.deepEqual(variant.paths, base.paths);
    const size = variant.key.split("@ss")[1];
    assert.deepEqual(variant.nodeArgs, [`--max-semi-space-size=${size}`]);
    assert.ok(variant.label.endsWith(`--max-semi-space-size=${size}`), variant.label);
    assert.notEqual(variant.label, base.label);
  }
});

test("only the selected targets get variants, and no sizes means none", () => {
  const conduitOnly = TARGETS.filter((t) => t.key === "conduit");
  assert.deepEqual(
    semiSpaceTargets(conduitOnly, [2]).map((t) => t.key),
    ["conduit@ss2"],
  );
  assert.deepEqual(semiSpaceTargets(TARGETS, []), []);
});

test("bench:http refuses a size that is not a positive integer before starting anything", () => {
  const run = spawnSync(
    process.execPath,
    ["--import", "tsx", "bench/http.ts", "--semi-space", "2,0", "--no-write"],
    { encoding: "utf8", timeout: 60_000 },
  );
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, /--semi-space must be a positive integer; got "0"/);
});

test("cpuRatio is the median of the per-round ratios of CPU per request", () => {
  const row = (cpuUs: number[]) => ({ cpuUs }) as unknown as RowResult;
  assert.equal(cpuRatio(row([50, 60, 90]), row([100, 60, 100])), 0.9);
  assert.ok(Number.isNaN(cpuRatio(row([50]), undefined)));
});
