/**
 * The HTTP benchmark's CLI target (bench/lib/bench-targets.ts `cliLaunch`): `conduit-mcp serve` as
 * a user starts it, started by the harness, announcing its URL with the CLI's own line and
 * passing the pre-flight of the paths the benchmark measures it on.
 */
import assert from "node:assert/strict";
import { resolve } from "node:path";
import { test } from "node:test";

import { BENCH_PATHS } from "../../bench/lib/bench-paths.js";
import { cliLaunch, TARGETS } from "../../bench/lib/bench-targets.js";
import { startTarget } from "../../bench/lib/child.js";
import { preflight } from "../../bench/lib/http-bench.js";

test("the CLI target runs the package's bin from the build, serve on a free port, no tsx", () => {
  const launch = cliLaunch("/pkg/dist");
  assert.deepEqual(launch.argv, [resolve("/pkg/dist", "cli/main.js"), "serve", "--port", "0"]);
  assert.equal(launch.announcement, "conduit-mcp listening on ");
  assert.ok(!launch.argv.includes("tsx"));
});

test("the CLI target starts, announces its URL and answers both tools/call paths", async () => {
  const spec = TARGETS.find((t) => t.key === "cli");
  assert.ok(spec?.launch !== undefined);
  // The sources through tsx (as `npm start`): the build is the benchmark's, not this test's.
  const target = await startTarget(spec.script, { ...spec.launch(null), timeoutMs: 60_000 });
  try {
    assert.match(target.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.deepEqual(spec.paths, ["tools/call", "tools/call@2026"]);
    for (const key of spec.paths) {
      const type = await preflight(spec.label, target.url, BENCH_PATHS[key]);
      assert.equal(type, "application/json");
    }
  } finally {
    await target.stop();
  }
});
