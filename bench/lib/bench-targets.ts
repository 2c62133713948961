/**
 * The HTTP benchmarks' targets: every server `bench:http`, `npm run bench` and
 * `bench:instructions` measure (bare `node:http`, conduit-mcp's library and CLI, the Redis store,
 * the SDKs, the semi-space and inlining-budget variants, another checkout as the baseline), and how a target's
 * script becomes what the measured process runs (bundled with esbuild, or the compiled build).
 *
 * @example
 * ```ts
 * const conduit = TARGETS.find((t) => t.key === "conduit");
 * const script = plainScript(conduit.script, process.cwd());
 * ```
 */
import { execFileSync } from "node:child_process";
import { basename, isAbsolute, resolve } from "node:path";

import { buildSync } from "esbuild";

import type { BenchPathKey } from "./bench-paths.js";

/** The targets the benchmark knows. */
export type TargetKey =
  | "bare"
  | "conduit"
  | "cli"
  | "conduit-redis"
  | "sdk2"
  | "sdk1"
  | "baseline"
  | SemiSpaceKey
  | InlineBudgetKey
  | NodeFlagKey;

/** A variant of bare or conduit-mcp run with `--max-semi-space-size=N` (see semiSpaceTargets). */
export type SemiSpaceKey = `${"bare" | "conduit"}@ss${number}`;

/**
 * A variant of bare, conduit-mcp or its CLI run with `--max-inlined-bytecode-size-cumulative=N`
 * (see inlineBudgetTargets).
 */
export type InlineBudgetKey = `${"bare" | "conduit" | "cli"}@inl${number}`;

/**
 * A variant of bare, conduit-mcp or its CLI run under the Nth flag given with `--node-flag` (see
 * nodeFlagTargets).
 */
export type NodeFlagKey = `${"bare" | "conduit" | "cli"}@flag${number}`;

/** How a target that is not a bench script starts: what `node` runs, and its URL line. */
export interface TargetLaunch {
  readonly argv: readonly string[];
  readonly announcement: string;
}

/** One target: a server script and the paths it serves. */
export interface TargetSpec {
  readonly key: TargetKey;
  readonly label: string;
  /** The bench script (`node --import tsx <script>`), or what names a {@link launch}ed target. */
  readonly script: string;
  readonly paths: readonly BenchPathKey[];
  /**
   * Starts the target some other way than its script: given the compiled build's directory
   * (null: run the TypeScript sources through tsx).
   */
  readonly launch?: (dist: string | null) => TargetLaunch;
  /** Extra `node` flags for this target alone (the semi-space and inlining-budget variants). */
  readonly nodeArgs?: readonly string[];
  /** The target whose script, build and paths this variant shares (a variant's base). */
  readonly base?: TargetKey;
}

/**
 * The semi-space variants of bare and conduit-mcp for `--semi-space 1,2,...`: each runs the
 * same script as its base under `node --max-semi-space-size=N` (MB; Node docs, "Command-line
 * options": V8 options), which caps how far V8 grows the young generation between scavenges.
 * bare gets the same flag as conduit-mcp, so a change in both says "V8", one in conduit-mcp alone
 * says "conduit-mcp's heap". conduit-mcp's variants come first, so in each round they run right
 * after (or, backwards, right before) the default conduit-mcp they are compared with.
 *
 * @example
 * ```ts
 * semiSpaceTargets(TARGETS, [2]).map((t) => t.key); // ["conduit@ss2", "bare@ss2"]
 * ```
 */
export function semiSpaceTargets(
  specs: readonly TargetSpec[],
  sizes: readonly number[],
): TargetSpec[] {
  return flagVariants(specs, ["conduit", "bare"], sizes, (size) => ({
    key: `@ss${size}`,
    flag: `--max-semi-space-size=${size}`,
  }));
}

/**
 * The inlining-budget variants of conduit-mcp, its CLI and bare for `--inline-budget N,...`: each
 * runs the same script as its base under `node --max-inlined-bytecode-size-cumulative=N`, the
 * bytes of bytecode V8's optimizing compiler inlines into one optimized function at most (V8's
 * default: 920; `node --v8-options`). Past that budget every further function on a request's way
 * is a call of its own, compiled apart (docs/profile.md, "Tenth round"). bare gets the same flag,
 * so a gain in both says "V8", the difference between the gains says "conduit-mcp's layers".
 *
 * @example
 * ```ts
 * inlineBudgetTargets(TARGETS, [5000]).map((t) => t.key); // ["conduit@inl5000", "cli@inl5000", "bare@inl5000"]
 * ```
 */
export function inlineBudgetTargets(
  specs: readonly TargetSpec[],
  budgets: readonly number[],
): TargetSpec[] {
  return flagVariants(specs, ["conduit", "cli", "bare"], budgets, (budget) => ({
    key: `@inl${budget}`,
    flag: `--max-inlined-bytecode-size-cumulative=${budget}`,
  }));
}

/**
 * The variants of conduit-mcp, its CLI and bare for `--node-flag=F` (given once or more): each
 * runs the same script as its base under `node F`, a flag of node's or V8's own (Node docs,
 * "Command-line options"), e.g. `--single-threaded-gc` (V8 collects garbage on the main thread
 * alone, without helper threads; docs/profile.md "Eleventh round"). bare gets the same flag, so a
 * change in both says "V8", one in conduit-mcp alone says "conduit-mcp".
 *
 * @example
 * ```ts
 * nodeFlagTargets(TARGETS, ["--single-threaded-gc"]).map((t) => t.key); // ["conduit@flag1", "cli@flag1", "bare@flag1"]
 * ```
 */
export function nodeFlagTargets(
  specs: readonly TargetSpec[],
  flags: readonly string[],
): TargetSpec[] {
  return flagVariants(specs, ["conduit", "cli", "bare"], flags, (flag, index) => ({
    key: `@flag${index + 1}`,
    flag,
  }));
}

/**
 * What `--node-flag` accepts: one long flag, `--name` or `--name=value`, of letters, digits and
 * `-`, `_`, `.`, `,` (nothing a shell or node would read as another argument); null otherwise.
 *
 * @example
 * ```ts
 * nodeFlag("--single-threaded-gc"); // "--single-threaded-gc"
 * nodeFlag("--max-semi-space-size=2"); // "--max-semi-space-size=2"
 * nodeFlag("--require=x y"); // null
 * ```
 */
export function nodeFlag(text: string): string | null {
  return /^--[a-z][a-z0-9_-]*(=[A-Za-z0-9_.,-]+)?$/.test(text) ? text : null;
}

/** Each of `bases` found in `specs` once per value, under the flag `variant` makes of it. */
function flagVariants<V>(
  specs: readonly TargetSpec[],
  bases: ReadonlyArray<"bare" | "conduit" | "cli">,
  values: readonly V[],
  variant: (value: V, index: number) => { key: `@${string}`; flag: string },
): TargetSpec[] {
  const out: TargetSpec[] = [];
  for (const key of bases) {
    const base = specs.find((t) => t.key === key);
    if (base === undefined) continue;
    for (const [index, value] of values.entries()) {
      const { key: suffix, flag } = variant(value, index);
      out.push({
        ...base,
        key: `${key}${suffix}` as TargetKey,
        label: `${base.label} ${flag}`,
        nodeArgs: [flag],
        base: key,
      });
    }
  }
  return out;
}

/**
 * `conduit-mcp serve` as a user starts it: the package's `bin` (dist/cli/main.js, what
 * `npx conduit-mcp serve` execs; no tsx loaded) with every option at its default and the demo
 * set, on a free port. With `dist` null it runs `src/cli/main.ts` through tsx, as `npm start`
 * does (tsx's transform adds a naming call per closure the shipped build does not have).
 *
 * @example
 * ```ts
 * cliLaunch("/repo/dist").argv; // ["/repo/dist/cli/main.js", "serve", "--port", "0"]
 * ```
 */
export function cliLaunch(dist: string | null): TargetLaunch {
  const serve = ["serve", "--port", "0"];
  return {
    argv:
      dist === null
        ? ["--import", "tsx", "src/cli/main.ts", ...serve]
        : [resolve(dist, "cli/main.js"), ...serve],
    announcement: "conduit-mcp listening on ",
  };
}

const EVERY_PATH: readonly BenchPathKey[] = [
  "tools/call",
  "tools/call@2026",
  "resources/read",
  "prompts/get",
];

/** Every target but the baseline, in the order of the tables. */
export const TARGETS: readonly TargetSpec[] = [
  {
    key: "bare",
    label: "bare node:http (floor)",
    script: "bench/lib/bare-server.ts",
    paths: EVERY_PATH,
  },
  {
    key: "conduit",
    label: "conduit-mcp (memory store)",
    script: "bench/lib/conduit-server.ts",
    paths: EVERY_PATH,
  },
  {
    key: "cli",
    label: "conduit-mcp serve (CLI, demo set)",
    script: "dist/cli/main.js",
    // The demo's own demo://readme is not the benchmark's resource: tools/call only.
    paths: ["tools/call", "tools/call@2026"],
    launch: cliLaunch,
  },
  {
    key: "conduit-redis",
    label: "conduit-mcp (Redis store)",
    script: "bench/lib/conduit-redis-server.ts",
    paths: EVERY_PATH,
  },
  {
    key: "sdk2",
    label: "SDK 2.x createMcpHandler",
    script: "bench/lib/sdk2-server.ts",
    paths: ["tools/call", "tools/call@2026", "resources/read"],
  },
  {
    key: "sdk1",
    label: "SDK 1.x stateless",
    script: "bench/lib/sdk-server.ts",
    // The SDK 1.x speaks 2025-11-25 only.
    paths: ["tools/call", "resources/read"],
  },
];

/** The default target set (all of them). */
export const DEFAULT_TARGETS: readonly TargetKey[] = TARGETS.map((t) => t.key);

/**
 * conduit-mcp as another checkout has it (its bench/lib/conduit-server.ts), labelled with that
 * checkout's commit: the `baseline` target, for before/after figures in one run. It serves what
 * the `conduit` target serves, so both are warmed up on the same paths: a server warmed on fewer
 * paths has had fewer calls and other feedback when V8 optimized it, and counted about 2 % more
 * instructions per call than the same build warmed as `conduit` is (docs/profile.md, "Ninth
 * round").
 *
 * @example
 * ```ts
 * baselineTarget("/tmp/base").label; // "conduit-mcp at 703a662 (baseline)"
 * ```
 */
export function baselineTarget(dir: string): TargetSpec {
  const commit = execFileSync("git", ["-C", dir, "rev-parse", "--short", "HEAD"], {
    encoding: "utf8",
  }).trim();
  return {
    key: "baseline",
    label: `conduit-mcp at ${commit} (baseline)`,
    script: `${dir}/bench/lib/conduit-server.ts`,
    paths: EVERY_PATH,
  };
}

const built = new Set<string>();

/**
 * A bench target script (TypeScript) as one plain JavaScript file, bundled with esbuild into
 * `root`/bench/out/targets/ (packages stay imports, resolved from `root`'s node_modules), so that
 * `node <file>` runs it without tsx: the measured process then holds what a production server
 * holds. Under `--import tsx` the loader's own start-up work made V8 grow the young generation
 * of a large module graph (conduit-mcp's) to twice what the same server grows it to under plain
 * node, and every collection cycle then swept twice the memory.
 *
 * @example
 * ```ts
 * plainScript("bench/lib/bare-server.ts", process.cwd()); // "/repo/bench/out/targets/bare-server.mjs"
 * ```
 */
export function plainScript(script: string, root: string): string {
  const entry = isAbsolute(script) ? script : resolve(root, script);
  const outfile = resolve(root, "bench/out/targets", basename(entry).replace(/\.ts$/, ".mjs"));
  buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    outfile,
    logLevel: "warning",
  });
  return outfile;
}

/** Compiles `dir`'s sources into `dir`/dist (once per process); returns that directory. */
export function buildDist(dir: string): string {
  if (built.has(dir)) return resolve(dir, "dist");
  built.add(dir);
  const started = Date.now();
  execFileSync(
    process.execPath,
    [resolve(dir, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"],
    { cwd: dir, stdio: ["ignore", "inherit", "inherit"] },
  );
  console.error(`built ${dir}/dist (${((Date.now() - started) / 1_000).toFixed(0)} s)`);
  return resolve(dir, "dist");
}
