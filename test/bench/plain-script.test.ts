/**
 * The HTTP benchmark's plain-node targets (bench/lib/bench-targets.ts `plainScript`): a bench
 * script bundled into one JavaScript file runs under `node` alone, with no tsx loader in the
 * measured process, and serves the benchmark's paths.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { BENCH_PATHS } from "../../bench/lib/bench-paths.js";
import { plainScript } from "../../bench/lib/bench-targets.js";
import { startTarget } from "../../bench/lib/child.js";
import { preflight } from "../../bench/lib/http-bench.js";

test("a bundled bench script runs under plain node and answers the benchmark's paths", async () => {
  const file = plainScript("bench/lib/bare-server.ts", process.cwd());
  assert.match(file, /bench\/out\/targets\/bare-server\.mjs$/);
  // One file: the bench modules it imports are inside it.
  assert.doesNotMatch(readFileSync(file, "utf8"), /from "\.\/listening\.js"/);
  const target = await startTarget("bench/lib/bare-server.ts", { argv: [file], timeoutMs: 30_000 });
  try {
    const pid = target.child.pid as number;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    assert.ok(!cmdline.includes("tsx"), `tsx in ${cmdline.join(" ")}`);
    for (const key of ["tools/call", "resources/read"] as const) {
      assert.equal(await preflight("bare", target.url, BENCH_PATHS[key]), "application/json");
    }
  } finally {
    await target.stop();
  }
});
