/**
 * `npm run bench:instructions` — the instructions a server's main thread executes per call,
 * counted with valgrind's callgrind, for bare `node:http` (the floor) and conduit-mcp's compiled
 * build, on the benchmark paths (bench/lib/bench-paths.ts). The count moves about 2 % from run
 * to run where req/s on a shared machine moves by tens of percent, so it is how a per-call CPU
 * cut is judged (docs/profile.md, "Second round", describes the procedure).
 *
 * Per target and path, a fresh target process (its bench script bundled into plain JavaScript and
 * run by `node` alone, as `bench:http` runs it; the CLI from the build) runs under `valgrind --tool=callgrind
 * --instr-atstart=no --separate-threads=yes --smc-check=all-non-file` (bench/lib/
 * callgrind-target.ts; Debian/Ubuntu package `valgrind`); it gets the path's pre-flight, then
 * `--warmup` calls on each of the three benchmark paths and `--warmup` more on the measured one,
 * uncounted; `callgrind_control -i on`, `--calls` calls from 10 keep-alive connections,
 * `callgrind_control -i off`, a dump; the main thread's `totals:` over the number of calls
 * (bench/lib/instruction-count.ts). V8's compiler and GC threads are left out. Every call must be
 * answered 200. One count takes about 20-40 s on a 2-core machine; the run prints a Markdown table
 * (path, target, instructions per call, × bare) and writes nothing.
 *
 * Options: `--targets bare,conduit,cli` (all by default; `cli` is `conduit-mcp serve` from the
 * build, demo set, default options, on the paths it serves), `--paths a,b` (default: the three
 * benchmark paths; `prompts/get` too), `--calls N` (3000), `--warmup N` (2000 per path),
 * `--baseline DIR` (conduit-mcp as built from another checkout, e.g. `git worktree add /tmp/base
 * <commit>` with a `node_modules` link, as a third target: before/after in one run),
 * `--cache-sim` (also simulate the caches and the branch predictor, callgrind's `--cache-sim=yes
 * --branch-sim=yes`, and print their misses per call and an estimate of cycles from them; the
 * simulated machine is valgrind's model of this one's caches, not the real processor, so read the
 * misses next to bare's), `--breakdown N` (also print the N functions with the most self instructions per call, JIT code
 * named through node's `--perf-basic-prof` map, and every function's cost summed by kind of code:
 * the server's own JavaScript, packages', node's, V8's builtins and IC stubs, regular
 * expressions, native code (bench/lib/code-kind.ts); with `--cache-sim` the functions are ranked
 * by estimated cycles and show their misses (bench/lib/estimated-cycles.ts); the targets then run
 * with `--perf-basic-prof`, which writes a line each time V8 makes code, not per call), `--no-build` (use the dist/ builds as they are
 * instead of compiling with `tsc -p tsconfig.build.json` first), `--inline-budget N,...` (also
 * count each target chosen under `node --max-inlined-bytecode-size-cumulative=N`, for each N;
 * docs/profile.md "Tenth round").
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";

import { BENCH_PATHS, type BenchPathKey, DEFAULT_PATHS } from "./lib/bench-paths.js";
import {
  baselineTarget,
  buildDist,
  inlineBudgetTargets,
  plainScript,
  TARGETS,
  type TargetSpec,
} from "./lib/bench-targets.js";
import { requireCallgrind } from "./lib/callgrind-target.js";
import { CYCLE_WEIGHTS_TEXT, simulatedCosts } from "./lib/estimated-cycles.js";
import { countInstructions, type InstructionCount } from "./lib/instruction-count.js";
import { loadAverage, machineLine } from "./lib/machine.js";

const NAME = "bench:instructions";
const CONNECTIONS = 10;
const KNOWN_TARGETS = ["bare", "conduit", "cli"] as const;

function fail(message: string, code = 1): never {
  console.error(`${NAME}: ${message}`);
  process.exit(code);
}

function parse() {
  try {
    return parseArgs({
      options: {
        targets: { type: "string", default: KNOWN_TARGETS.join(",") },
        paths: { type: "string", default: DEFAULT_PATHS.join(",") },
        calls: { type: "string", default: "3000" },
        warmup: { type: "string", default: "2000" },
        baseline: { type: "string" },
        breakdown: { type: "string", default: "0" },
        "cache-sim": { type: "boolean", default: false },
        "no-build": { type: "boolean", default: false },
        "inline-budget": { type: "string" },
      },
      strict: true,
    }).values;
  } catch (error) {
    return fail((error as Error).message, 2);
  }
}
const flags = parse();

function count(name: string, text: string, min: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) {
    fail(`--${name} must be an integer ≥ ${min}; got ${JSON.stringify(text)}`, 2);
  }
  return value;
}

function listOf<T extends string>(name: string, text: string, known: readonly T[]): T[] {
  const items = text.split(",").map((s) => s.trim()) as T[];
  if (items.length === 0 || items.some((item) => !known.includes(item))) {
    fail(`--${name} takes a list of ${known.join(", ")}; got ${text}`, 2);
  }
  return items;
}

const targetKeys = listOf("targets", flags.targets, KNOWN_TARGETS);
const pathKeys = listOf("paths", flags.paths, Object.keys(BENCH_PATHS) as BenchPathKey[]);
const calls = count("calls", flags.calls, 1);
const warmup = count("warmup", flags.warmup, 0);
const breakdown = count("breakdown", flags.breakdown, 0);
const inlineBudgets =
  flags["inline-budget"] === undefined
    ? []
    : flags["inline-budget"].split(",").map((text) => count("inline-budget", text.trim(), 1));

let valgrind: string;
try {
  valgrind = requireCallgrind();
} catch (error) {
  fail((error as Error).message);
}

/** A target and the compiled build it runs. */
interface Target {
  readonly spec: TargetSpec;
  readonly env: Record<string, string>;
  /** The compiled build a launched target (the CLI) runs from. */
  readonly dist?: string;
}

function distOf(dir: string): string {
  if (!flags["no-build"]) return buildDist(dir);
  const dist = resolve(dir, "dist");
  if (!existsSync(resolve(dist, "index.js"))) {
    fail(`--no-build, but ${dist} has no build: run npm run build there, or drop --no-build`, 2);
  }
  return dist;
}

const targets: Target[] = [];
try {
  for (const key of targetKeys) {
    const spec = TARGETS.find((t) => t.key === key) as TargetSpec;
    const dist = key === "bare" ? undefined : distOf(process.cwd());
    targets.push({
      spec,
      env: key === "conduit" && dist !== undefined ? { BENCH_CONDUIT_BUILD: dist } : {},
      ...(dist === undefined ? {} : { dist }),
    });
  }
  // Each variant runs as its base does, under its flag (bench/lib/bench-targets.ts).
  const bases = targets.map((t) => t.spec);
  for (const spec of inlineBudgetTargets(bases, inlineBudgets)) {
    const base = targets.find((t) => t.spec.key === spec.base) as Target;
    targets.push({ ...base, spec });
  }
  if (flags.baseline !== undefined) {
    const dir = resolve(flags.baseline);
    targets.push({
      spec: baselineTarget(dir),
      env: { BENCH_CONDUIT_BUILD: distOf(dir) },
    });
  }
} catch (error) {
  fail(`cannot prepare the targets: ${(error as Error).message.split("\n")[0]}`);
}

const warmPaths = DEFAULT_PATHS.map((key) => BENCH_PATHS[key]);
const kilo = (n: number): string => `${(n / 1_000).toFixed(1)} k`;
const n = (value: number): string => Math.round(value).toLocaleString("en-US");
/** The simulated costs of a whole count (its events per call). */
const simulatedOf = (count: InstructionCount) =>
  simulatedCosts((event) => count.events.get(event) ?? 0);
const loadBefore = loadAverage();
const results = new Map<string, InstructionCount>();
const started = Date.now();

try {
  for (const pathKey of pathKeys) {
    for (const { spec, env, dist } of targets) {
      if (!spec.paths.includes(pathKey)) continue;
      const path = BENCH_PATHS[pathKey];
      const began = Date.now();
      const result = await countInstructions({
        label: spec.label,
        script: spec.script,
        env,
        // As bench:http runs them: the CLI from the build, a bench script bundled (no tsx).
        ...(spec.launch?.(dist ?? null) ?? {
          argv: [
            plainScript(
              spec.script,
              flags.baseline !== undefined && spec.key === "baseline"
                ? resolve(flags.baseline)
                : process.cwd(),
            ),
          ],
        }),
        ...(spec.nodeArgs === undefined ? {} : { nodeArgs: spec.nodeArgs }),
        path,
        // The paths the target serves (the CLI's demo set has not the benchmark's resource).
        warmPaths: warmPaths.filter((p) => spec.paths.includes(p.key)),
        warmup,
        calls,
        connections: CONNECTIONS,
        breakdown,
        cacheSim: flags["cache-sim"],
      });
      results.set(`${spec.key} ${pathKey}`, result);
      console.error(
        `${spec.label}, ${path.label}: ${kilo(result.perCall)} instructions per call (${((Date.now() - began) / 1_000).toFixed(0)} s)`,
      );
    }
  }
} catch (error) {
  fail((error as Error).message.split("\n")[0] as string);
}

/** Each count made, by path then target, with bare's count of the same path (if made). */
function eachCount(
  visit: (
    pathKey: BenchPathKey,
    spec: TargetSpec,
    result: InstructionCount,
    bare: InstructionCount | undefined,
  ) => void,
): void {
  for (const pathKey of pathKeys) {
    const bare = results.get(`bare ${pathKey}`);
    for (const { spec } of targets) {
      const result = results.get(`${spec.key} ${pathKey}`);
      if (result !== undefined) visit(pathKey, spec, result, bare);
    }
  }
}

const lines = [
  `Main-thread instructions per call (callgrind \`Ir\`), ${calls} calls from ${CONNECTIONS} keep-alive connections after ${warmup} warm-up calls per path; ${valgrind}; ${machineLine()}; load average ${loadBefore} before, ${loadAverage()} after; ${((Date.now() - started) / 1_000).toFixed(0)} s.`,
  "",
  "| path | target | instructions per call | × bare |",
  "| --- | --- | ---: | ---: |",
];
eachCount((pathKey, spec, result, bare) => {
  const ratio = bare === undefined ? "n/a" : (result.perCall / bare.perCall).toFixed(2);
  lines.push(
    `| ${BENCH_PATHS[pathKey].label} | ${spec.label} | ${kilo(result.perCall)} | ${ratio} |`,
  );
});
if (flags["cache-sim"]) {
  lines.push(
    "",
    `Simulated caches and branch predictor per call (callgrind \`--cache-sim=yes --branch-sim=yes\`). Estimated cycles: ${CYCLE_WEIGHTS_TEXT}.`,
    "",
    "| path | target | instructions | I1 misses | LL instruction misses | D1 misses | LL data misses | branch mispredictions | estimated cycles | × bare |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  );
  eachCount((pathKey, spec, result, bare) => {
    const m = simulatedOf(result);
    const ratio = bare === undefined ? "n/a" : (m.cycles / simulatedOf(bare).cycles).toFixed(2);
    lines.push(
      `| ${BENCH_PATHS[pathKey].label} | ${spec.label} | ${kilo(result.perCall)} | ${n(m.i1)} | ${n(m.il)} | ${n(m.d1)} | ${n(m.dl)} | ${n(m.branches)} | ${kilo(m.cycles)} | ${ratio} |`,
    );
  });
}
if (breakdown > 0) {
  const sim = flags["cache-sim"];
  // With the simulation a row shows its misses and estimated cycles, without it its instructions.
  const costHead = sim
    ? [
        "estimated cycles",
        "share",
        "instructions",
        "I1 misses",
        "D1 misses",
        "LL misses",
        "mispredictions",
      ]
    : ["instructions", "share"];
  const costCells = (costs: Readonly<Record<string, number>>, total: number): string[] => {
    const c = simulatedCosts((event) => costs[event] ?? 0);
    const share = `${(((sim ? c.cycles : c.instructions) / total) * 100).toFixed(1)} %`;
    return sim
      ? [n(c.cycles), share, n(c.instructions), n(c.i1), n(c.d1), n(c.il + c.dl), n(c.branches)]
      : [n(c.instructions), share];
  };
  /** A Markdown table; the columns named in `text` are left-aligned, the others numbers. */
  const table = (head: string[], rows: string[][], text: string[]): string[] => [
    `| ${head.join(" | ")} |`,
    `| ${head.map((name) => (text.includes(name) ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((row) => `| ${row.map((cell) => cell.replaceAll("|", "\\|")).join(" | ")} |`),
  ];
  eachCount((pathKey, spec, result) => {
    const where = `${spec.label}, ${BENCH_PATHS[pathKey].label}`;
    const total = sim ? simulatedOf(result).cycles : result.perCall;
    const by = sim ? `estimated cycles (${CYCLE_WEIGHTS_TEXT})` : "instructions";
    lines.push(
      "",
      `${where}: self cost per call of the functions costliest by ${by}`,
      "",
      ...table(
        [...costHead, "function"],
        result.top.map((row) => [...costCells(row.costs, total), row.name]),
        ["function"],
      ),
      "",
      `${where}: every function's self cost per call, by kind of code (bench/lib/code-kind.ts)`,
      "",
      ...table(
        ["kind of code", "functions", ...costHead],
        result.kinds.map((row) => [
          row.kind,
          String(row.functions),
          ...costCells(row.costs, total),
        ]),
        ["kind of code"],
      ),
    );
  });
}
console.log(`\n${lines.join("\n")}\n`);
