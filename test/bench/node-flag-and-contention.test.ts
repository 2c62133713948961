/**
 * The HTTP benchmark's `--node-flag` variants (bench/lib/bench-targets.ts `nodeFlagTargets`:
 * conduit-mcp, its CLI and bare again under one node or V8 flag) and its `--contend` neighbour
 * (bench/lib/cpu-contention.ts: a busy loop pinned to the servers' CPU).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { test } from "node:test";

import { nodeFlag, nodeFlagTargets, TARGETS } from "../../bench/lib/bench-targets.js";
import { startContention } from "../../bench/lib/cpu-contention.js";

test("each flag adds a conduit-mcp, a CLI and a bare variant under it, sharing script and paths", () => {
  const flags = ["--single-threaded-gc", "--max-semi-space-size=2"];
  const variants = nodeFlagTargets(TARGETS, flags);
  assert.deepEqual(
    variants.map((t) => t.key),
    ["conduit@flag1", "conduit@flag2", "cli@flag1", "cli@flag2", "bare@flag1", "bare@flag2"],
  );
  for (const variant of variants) {
    const base = TARGETS.find((t) => t.key === variant.base);
    assert.ok(base !== undefined, variant.key);
    assert.equal(variant.script, base.script);
    assert.deepEqual(variant.paths, base.paths);
    const flag = flags[Number(variant.key.split("@flag")[1]) - 1];
    assert.deepEqual(variant.nodeArgs, [flag]);
    assert.equal(variant.label, `${base.label} ${flag}`);
  }
  assert.deepEqual(nodeFlagTargets(TARGETS, []), []);
});

test("a node flag is one long flag with an optional plain value, nothing else", () => {
  assert.equal(nodeFlag("--single-threaded-gc"), "--single-threaded-gc");
  assert.equal(nodeFlag("--max-semi-space-size=2"), "--max-semi-space-size=2");
  for (const bad of ["single-threaded-gc", "-x", "--", "--a b", "--require=x y", "--a=$(id)", ""]) {
    assert.equal(nodeFlag(bad), null, bad);
  }
});

test("bench:http refuses a malformed --node-flag and a --contend outside 1-100 before starting anything", () => {
  const run = (args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", "bench/http.ts", ...args, "--no-write"], {
      encoding: "utf8",
      timeout: 60_000,
    });
  const flag = run(["--node-flag=--a=$(id)"]);
  assert.equal(flag.status, 2, flag.stderr);
  assert.match(flag.stderr, /--node-flag takes one node flag/);
  const zero = run(["--contend", "0"]);
  assert.equal(zero.status, 2, zero.stderr);
  assert.match(zero.stderr, /--contend must be a positive integer; got "0"/);
  const over = run(["--contend", "101"]);
  assert.equal(over.status, 2, over.stderr);
  assert.match(over.stderr, /--contend takes a percent from 1 to 100; got 101/);
});

test("the neighbour runs pinned to the CPU it was given, uses that CPU, and is gone once stopped", async (t) => {
  if (spawnSync("taskset", ["-V"]).status !== 0) {
    t.skip("taskset not installed (Debian package util-linux): the neighbour cannot be pinned");
    return;
  }
  const cpu = cpus().length - 1;
  const neighbour = startContention({ cpu, percent: 50 });
  try {
    // taskset execs node in place: the pid is the neighbour's own once the exec happened.
    const deadline = Date.now() + 5_000;
    let status = "";
    while (Date.now() < deadline) {
      status = readFileSync(`/proc/${neighbour.pid}/status`, "utf8");
      if (/^Name:\s+node/m.test(status)) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.match(status, /^Name:\s+node/m);
    assert.match(status, new RegExp(`^Cpus_allowed_list:\\s+${cpu}$`, "m"));
    const ticks = (): number => {
      const fields = readFileSync(`/proc/${neighbour.pid}/stat`, "utf8").split(") ")[1]?.split(" ");
      return Number(fields?.[11]) + Number(fields?.[12]);
    };
    const before = ticks();
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Busy half of every 20 ms: about 25 ticks of 10 ms in 500 ms alone on its CPU; at least two
    // on a host whose other work shares that CPU with it.
    assert.ok(ticks() - before >= 2, `the neighbour used ${ticks() - before} ticks in 500 ms`);
    assert.match(neighbour.description, new RegExp(`pinned to CPU ${cpu}, busy 50 %`));
  } finally {
    await neighbour.stop();
  }
  assert.throws(() => readFileSync(`/proc/${neighbour.pid}/status`, "utf8"), /ENOENT/);
});

test("a share outside 1-100 or a negative CPU is refused", () => {
  assert.throws(() => startContention({ cpu: 0, percent: 0 }), RangeError);
  assert.throws(() => startContention({ cpu: 0, percent: 101 }), RangeError);
  assert.throws(() => startContention({ cpu: -1, percent: 50 }), RangeError);
});
