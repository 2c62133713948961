/**
 * The benchmarks' `--inline-budget` variants (bench/lib/bench-targets.ts `inlineBudgetTargets`):
 * conduit-mcp, its CLI and bare again under `node --max-inlined-bytecode-size-cumulative=N`,
 * same script, launch and paths, so one run compares V8's default inlining budget with a larger
 * one on every server (docs/profile.md, "Tenth round"); and how bench:http states each variant
 * against its base and against bare under the same flag.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";

import { BENCH_PATHS } from "../../bench/lib/bench-paths.js";
import { inlineBudgetTargets, TARGETS, type TargetSpec } from "../../bench/lib/bench-targets.js";
import { type HttpBenchResult, httpRatios, type RowResult } from "../../bench/lib/http-bench.js";

test("each budget adds a conduit-mcp, a CLI and a bare variant with the flag, sharing how they start", () => {
  const variants = inlineBudgetTargets(TARGETS, [2000, 5000]);
  assert.deepEqual(
    variants.map((t) => t.key),
    [
      "conduit@inl2000",
      "conduit@inl5000",
      "cli@inl2000",
      "cli@inl5000",
      "bare@inl2000",
      "bare@inl5000",
    ],
  );
  for (const variant of variants) {
    const base = TARGETS.find((t) => t.key === variant.base);
    assert.ok(base !== undefined, variant.key);
    assert.equal(variant.script, base.script);
    assert.deepEqual(variant.paths, base.paths);
    assert.equal(variant.launch, base.launch);
    const budget = variant.key.split("@inl")[1];
    assert.deepEqual(variant.nodeArgs, [`--max-inlined-bytecode-size-cumulative=${budget}`]);
    assert.ok(variant.label.endsWith(`--max-inlined-bytecode-size-cumulative=${budget}`));
  }
});

test("only the selected targets get variants, and no budget means none", () => {
  const cliOnly = TARGETS.filter((t) => t.key === "cli");
  assert.deepEqual(
    inlineBudgetTargets(cliOnly, [920]).map((t) => t.key),
    ["cli@inl920"],
  );
  assert.deepEqual(inlineBudgetTargets(TARGETS, []), []);
});

test("a variant's ratios are against its base and against bare under the same flag, round by round", () => {
  const path = BENCH_PATHS["tools/call"];
  const spec = (key: string): TargetSpec => {
    const found = [...TARGETS, ...inlineBudgetTargets(TARGETS, [5000])].find((t) => t.key === key);
    assert.ok(found !== undefined, key);
    return found;
  };
  const row = (key: string, rps: number[], cpuUs: number[], p99 = 2): RowResult => ({
    target: spec(key),
    path,
    answer: "application/json",
    rounds: rps.map((r) => ({ rps: r, p50: 1, p99 })) as unknown as RowResult["rounds"],
    cpuUs,
  });
  const result = {
    options: { paths: ["tools/call"] },
    rows: [
      row("bare", [100, 100, 100], [30, 30, 30]),
      row("conduit", [80, 70, 90], [40, 40, 40]),
      row("conduit@inl5000", [88, 84, 90], [36, 36, 36], 3),
      row("bare@inl5000", [110, 100, 100], [29, 29, 29], 2.5),
    ],
  } as unknown as HttpBenchResult;
  const line = httpRatios(result).join("\n");
  // Per round: 88/80, 84/70, 90/90 → median 1.1; CPU 36/40 = 0.9; p99 3/2 and 3/2.5.
  assert.match(
    line,
    /conduit@inl5000 \/ conduit 1\.10×, CPU\/req 0\.90×, p99 1\.50×, \/ bare@inl5000 0\.84×, p99 1\.20× bare@inl5000's/,
  );
  // bare's variant has no "bare under the same flag" of its own.
  assert.match(line, /bare@inl5000 \/ bare 1\.00×, CPU\/req 0\.97×, p99 1\.25×(;|$)/);
});

test("bench:http and bench:instructions refuse a budget that is not a positive integer before starting anything", () => {
  const http = spawnSync(
    process.execPath,
    ["--import", "tsx", "bench/http.ts", "--inline-budget", "5000,x", "--no-write"],
    { encoding: "utf8", timeout: 60_000 },
  );
  assert.equal(http.status, 2, http.stderr);
  assert.match(http.stderr, /--inline-budget must be a positive integer; got "x"/);
  const instructions = spawnSync(
    process.execPath,
    ["--import", "tsx", "bench/instructions.ts", "--inline-budget", "0"],
    { encoding: "utf8", timeout: 60_000 },
  );
  assert.equal(instructions.status, 2, instructions.stderr);
  assert.match(instructions.stderr, /--inline-budget must be an integer ≥ 1; got "0"/);
});
