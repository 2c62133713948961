/**
 * `npm run bench:after-idle` — what the first seconds of load cost a server after a full
 * collection in its idle time, conduit-mcp next to bare `node:http`.
 *
 * A server with no request in flight keeps no object of its per-request hidden classes, and V8
 * holds map transitions and the maps in optimized code weakly: a full collection then (V8's memory
 * reducer runs one after about 30 s of idle) drops them, marks the optimized code built on them
 * for deoptimization, and the next load runs unoptimized code and compiles again
 * (docs/profile.md, "Eighth round"). This script measures it: each target (compiled build, bundled
 * bench script, plain `node --expose-gc`, pinned as in bench:http) gets `--warmup` s of each path,
 * then per trial: 5 s of 2025-11-25 `tools/call`, `--seconds` loads of 1 s each (the reference),
 * 2 s of nothing, two full collections (bench/lib/full-gc-on-signal.ts, on SIGUSR2), 1 s of
 * nothing, then `--seconds` loads of 1 s each. Per second after the collection: CPU per request
 * and p99 as multiples of the medians of the same trial's 1 s loads before it, medians over
 * trials. Printed only.
 *
 * Options: `--trials N` (3), `--seconds N` (6), `--warmup S` (2).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";

import { BENCH_PATHS, DEFAULT_PATHS } from "./lib/bench-paths.js";
import { buildDist, plainScript, TARGETS } from "./lib/bench-targets.js";
import { startTarget } from "./lib/child.js";
import { processCpuMs } from "./lib/http-bench.js";
import { cpuPlan, loadGenerator } from "./lib/load-generator.js";
import { loadAverage, machineLine } from "./lib/machine.js";
import { positiveInt } from "./lib/positive-int.js";
import { median } from "./lib/stats.js";

const { values: flags } = parseArgs({
  options: {
    trials: { type: "string", default: "3" },
    seconds: { type: "string", default: "6" },
    warmup: { type: "string", default: "2" },
  },
});
const TRIALS = positiveInt("trials", flags.trials);
const SECONDS = positiveInt("seconds", flags.seconds);
const WARMUP = positiveInt("warmup", flags.warmup);

/** bench:http's own bare and conduit-mcp targets: the same scripts, labels and build. */
const COMPARED = TARGETS.filter((t) => t.key === "bare" || t.key === "conduit");

/** One 1 s load's figures as multiples of its trial's 1 s loads before the collection. */
interface Second {
  readonly cpu: number;
  readonly p99: number;
}

/** What one load gave: wrk's figures and the server's CPU per request (µs, all threads). */
interface LoadFigures {
  readonly p99: number;
  readonly cpuUs: number;
}

const root = process.cwd();
const dist = buildDist(root);
const preload = plainScript("bench/lib/full-gc-on-signal.ts", root);
const cpu = cpuPlan();
const generator = loadGenerator();
const path = BENCH_PATHS["tools/call"];
console.error(
  `${machineLine()}; load average ${loadAverage()}; load generator ${generator.description}`,
);

const rows: string[] = [];
for (const spec of COMPARED) {
  const target = await startTarget(spec.script, {
    cpu: cpu.server,
    env: { BENCH_CONDUIT_BUILD: dist },
    argv: [plainScript(spec.script, root)],
    nodeArgs: ["--expose-gc", "--import", preload],
  });
  const pid = target.child.pid;
  const load = async (seconds: number, key = path.key): Promise<LoadFigures> => {
    const p = BENCH_PATHS[key];
    const before = processCpuMs(pid);
    const r = await generator.run({
      url: target.url,
      headers: p.headers,
      body: p.body,
      seconds,
      connections: 50,
      label: `${spec.label} ${p.label}`,
    });
    return { ...r, cpuUs: ((processCpuMs(pid) - before) * 1_000) / r.requests };
  };
  try {
    for (const key of DEFAULT_PATHS) await load(WARMUP, key);
    const bySecond: Second[][] = Array.from({ length: SECONDS }, () => []);
    for (let trial = 1; trial <= TRIALS; trial++) {
      await load(5);
      // The reference: 1 s loads like the ones after the collection (wrk's own start weighs on
      // a 1 s load's p99, so a 5 s load's would not compare).
      const before: LoadFigures[] = [];
      for (let s = 0; s < SECONDS; s++) before.push(await load(1));
      const cpuBefore = median(before.map((r) => r.cpuUs));
      const p99Before = median(before.map((r) => r.p99));
      await sleep(2_000);
      target.child.kill("SIGUSR2");
      await sleep(1_000);
      const line: string[] = [];
      for (let s = 0; s < SECONDS; s++) {
        const r = await load(1);
        bySecond[s]?.push({ cpu: r.cpuUs / cpuBefore, p99: r.p99 / p99Before });
        line.push(`${r.cpuUs.toFixed(0)} µs ${r.p99.toFixed(1)} ms`);
      }
      console.error(
        `${spec.label} trial ${trial}: before, median of ${SECONDS} s: ${cpuBefore.toFixed(0)} µs/req, p99 ${p99Before.toFixed(1)} ms; after the collection, per second: ${line.join(" | ")}`,
      );
    }
    const cells = bySecond.map(
      (s) =>
        `${median(s.map((x) => x.cpu)).toFixed(2)}× / ${median(s.map((x) => x.p99)).toFixed(1)}×`,
    );
    rows.push(`| ${spec.label} | ${cells.join(" | ")} |`);
  } finally {
    await target.stop();
  }
}

const seconds = Array.from({ length: SECONDS }, (_, i) => `second ${i + 1}`);
console.log(
  `CPU per request / p99 in each second of 2025-11-25 tools/call load after two full collections in idle time, × the same trial's 1 s loads before them (medians of ${TRIALS} trials):\n`,
);
console.log(`| server | ${seconds.join(" | ")} |`);
console.log(`| --- | ${seconds.map(() => "---:").join(" | ")} |`);
for (const row of rows) console.log(row);
