/**
 * `npm run bench:http` — requests/s, p50/p99 latency and server CPU per request of conduit-mcp
 * next to bare `node:http`, the official SDK 2.x `createMcpHandler` and SDK 1.x stateless
 * server, and conduit-mcp on the Redis store, on three paths: 2025-11-25 `tools/call echo`,
 * 2026-07-28 `tools/call echo`, `resources/read` (bench/lib/bench-paths.ts).
 *
 * The load comes from `wrk` (Debian/Ubuntu package `wrk`) pinned to one CPU with `taskset`, each
 * server in its own process pinned to another (bench/lib/load-generator.ts,
 * bench/lib/http-bench.ts); without wrk it falls back to autocannon and says so. A full run
 * rewrites the "## HTTP" section of docs/benchmarks.md.
 *
 * Options: `--rounds N` (3), `--duration S` (5), `--warmup S` (2), `--connections N` (50),
 * `--targets bare,conduit,cli,conduit-redis,sdk2,sdk1` (a subset: printed only; `cli` is
 * `conduit-mcp serve` from the build, demo set, default options),
 * `--paths tools/call,tools/call@2026,resources/read[,prompts/get]` (a subset: printed only),
 * `--quick` (1 round of 2 s, 1 s warm-up: a smoke run, printed only), `--no-write`,
 * `--baseline DIR` (adds conduit-mcp as built from another checkout as a target of its own, for
 * before/after figures in one run: `git worktree add /tmp/base <commit>` and link
 * `node_modules`; printed only), `--cpu-prof DIR` (the conduit targets, memory and Redis store,
 * run under `node --cpu-prof --cpu-prof-dir DIR`; each writes its profile when it stops), `--src` (run
 * conduit-mcp's TypeScript sources through tsx instead of compiling them first: the default
 * compiles with `tsc -p tsconfig.build.json` into dist/ and measures the build, as it ships),
 * `--semi-space N,...` (adds conduit-mcp and bare under `node --max-semi-space-size=N` for each
 * N; printed only), `--inline-budget N,...` (adds conduit-mcp, the CLI and bare under `node
 * --max-inlined-bytecode-size-cumulative=N` for each N, docs/profile.md "Tenth round"; printed
 * only), `--node-flag=F` (once or more: conduit-mcp, the CLI and bare again under `node F`, a flag
 * of node's or V8's, e.g. `--node-flag=--single-threaded-gc`; the `=` is needed for a value that
 * starts with dashes; printed only), `--contend P` (a neighbour process pinned to the servers' CPU
 * keeps it busy P % of every 20 ms through every warm-up and measured run, every row alike:
 * bench/lib/cpu-contention.ts, docs/profile.md "Eleventh round"; printed only).
 */
import { parseArgs } from "node:util";

import { BENCH_PATHS, type BenchPathKey, DEFAULT_PATHS } from "./lib/bench-paths.js";
import { DEFAULT_TARGETS, nodeFlag, type TargetKey } from "./lib/bench-targets.js";
import { httpRatios, httpSection, httpTable, runHttpBench } from "./lib/http-bench.js";
import { BENCHMARKS_DOC, writeSection } from "./lib/markdown-section.js";
import { positiveInt } from "./lib/positive-int.js";

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    duration: { type: "string", default: "5" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "50" },
    targets: { type: "string", default: DEFAULT_TARGETS.join(",") },
    paths: { type: "string", default: DEFAULT_PATHS.join(",") },
    quick: { type: "boolean", default: false },
    "no-write": { type: "boolean", default: false },
    baseline: { type: "string" },
    "cpu-prof": { type: "string" },
    src: { type: "boolean", default: false },
    "semi-space": { type: "string" },
    "inline-budget": { type: "string" },
    "node-flag": { type: "string", multiple: true },
    contend: { type: "string" },
  },
  strict: true,
});

function listOf<T extends string>(name: string, text: string, known: readonly T[]): T[] {
  const items = text.split(",").map((s) => s.trim()) as T[];
  const unknown = items.filter((item) => !known.includes(item));
  if (unknown.length > 0 || items.length === 0) {
    console.error(`bench:http: --${name} takes a list of ${known.join(", ")}; got ${text}`);
    process.exit(2);
  }
  return items;
}

const quick = flags.quick;
const targets = listOf<TargetKey>("targets", flags.targets, DEFAULT_TARGETS);
const paths = listOf<BenchPathKey>(
  "paths",
  flags.paths,
  Object.keys(BENCH_PATHS) as BenchPathKey[],
);
/** A flag's comma-separated positive integers; none when the flag is absent. */
function integers(name: "semi-space" | "inline-budget"): number[] {
  const text = flags[name];
  return text === undefined ? [] : text.split(",").map((s) => positiveInt(name, s.trim()));
}
const semiSpaces = integers("semi-space");
const inlineBudgets = integers("inline-budget");
const nodeFlags = (flags["node-flag"] ?? []).map((text) => {
  const flag = nodeFlag(text);
  if (flag === null) {
    console.error(
      `bench:http: --node-flag takes one node flag, --name or --name=value (letters, digits, - _ . ,); got ${JSON.stringify(text)}`,
    );
    process.exit(2);
  }
  return flag;
});
const contend = flags.contend === undefined ? undefined : positiveInt("contend", flags.contend);
if (contend !== undefined && contend > 100) {
  console.error(`bench:http: --contend takes a percent from 1 to 100; got ${contend}`);
  process.exit(2);
}
const options = {
  semiSpaces,
  inlineBudgets,
  nodeFlags,
  ...(contend === undefined ? {} : { contendPercent: contend }),
  targets,
  paths,
  rounds: quick ? 1 : positiveInt("rounds", flags.rounds),
  duration: quick ? 2 : positiveInt("duration", flags.duration),
  warmup: quick ? 1 : positiveInt("warmup", flags.warmup),
  connections: positiveInt("connections", flags.connections),
  build: flags.src ? ("src" as const) : ("dist" as const),
  ...(flags.baseline === undefined ? {} : { baselineDir: flags.baseline }),
  ...(flags["cpu-prof"] === undefined
    ? {}
    : { conduitNodeArgs: ["--cpu-prof", "--cpu-prof-dir", flags["cpu-prof"]] }),
};
const fullRun =
  !quick &&
  flags.baseline === undefined &&
  flags["cpu-prof"] === undefined &&
  !flags.src &&
  semiSpaces.length === 0 &&
  inlineBudgets.length === 0 &&
  nodeFlags.length === 0 &&
  contend === undefined &&
  DEFAULT_TARGETS.every((t) => targets.includes(t)) &&
  DEFAULT_PATHS.every((p) => paths.includes(p));

try {
  const result = await runHttpBench(options);
  console.log(`\n${httpTable(result)}\n\n${httpRatios(result).join("\n")}\n`);
  if (fullRun && !flags["no-write"]) {
    const args = process.argv.slice(2).join(" ");
    const command = `npm run bench:http${args === "" ? "" : ` -- ${args}`}`;
    writeSection(BENCHMARKS_DOC, "HTTP", httpSection(result, command));
  } else if (!flags["no-write"]) {
    console.error(
      "not a full run (subset, --quick, --baseline, --cpu-prof, --semi-space, --inline-budget, --node-flag or --contend): nothing written",
    );
  }
} catch (error) {
  console.error(`bench:http failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
