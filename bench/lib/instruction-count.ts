/**
 * One count of `npm run bench:instructions` (bench/instructions.ts): a fresh target process under
 * callgrind (bench/lib/callgrind-target.ts), checked with the path's pre-flight, warmed up with
 * counting off, then a fixed number of calls counted; the main thread's instructions divided by
 * the number of calls. A fresh process per count, so a count does not depend on which other
 * paths or targets the run measures.
 *
 * @example
 * ```ts
 * const { perCall } = await countInstructions({
 *   label: "bare", script: "bench/lib/bare-server.ts", path: BENCH_PATHS["tools/call"],
 *   warmPaths: DEFAULT_PATHS.map((key) => BENCH_PATHS[key]), warmup: 2_000, calls: 3_000,
 *   connections: 10, breakdown: 0,
 * });
 * ```
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import type { BenchPath } from "./bench-paths.js";
import { namedSelfCosts, readCallgrind, type SelfRow, topSelf } from "./callgrind.js";
import { startUnderCallgrind } from "./callgrind-target.js";
import { type KindRow, sumByKind } from "./code-kind.js";
import { simulatedCosts } from "./estimated-cycles.js";
import { sendCalls } from "./fixed-calls.js";
import { preflight } from "./http-bench.js";
import { readPerfMap } from "./perf-map.js";

/** What to count. */
export interface InstructionCountOptions {
  /** Names the target in messages. */
  readonly label: string;
  readonly script: string;
  readonly env?: Readonly<Record<string, string>>;
  /** What `node` runs instead of the script, and its URL line (bench/lib/child.ts). */
  readonly argv?: readonly string[];
  readonly announcement?: string;
  /** Extra `node` flags (a flag variant's, bench/lib/bench-targets.ts). */
  readonly nodeArgs?: readonly string[];
  /** The path counted. */
  readonly path: BenchPath;
  /** Each is sent `warmup` calls first, then `path` `warmup` more, all uncounted. */
  readonly warmPaths: readonly BenchPath[];
  readonly warmup: number;
  /** How many calls are counted. */
  readonly calls: number;
  readonly connections: number;
  /**
   * When above 0, the target also runs with `node --perf-basic-prof` (so its JIT code has names)
   * and the count comes with this many functions by self instructions (by estimated cycles with
   * {@link cacheSim}: bench/lib/estimated-cycles.ts), and every function's costs summed by kind of
   * code (bench/lib/code-kind.ts).
   */
  readonly breakdown: number;
  /**
   * Also simulate the caches and the branch predictor (callgrind's `--cache-sim=yes
   * --branch-sim=yes`): the count then has {@link InstructionCount.events}. Slower (about 2×).
   */
  readonly cacheSim?: boolean;
}

/** The simulation's flags: see https://valgrind.org/docs/manual/cl-manual.html#cl-manual.options.cachesimulation. */
export const CACHE_SIM_FLAGS: readonly string[] = ["--cache-sim=yes", "--branch-sim=yes"];

/** A count. */
export interface InstructionCount {
  /** The main thread's instructions per counted call. */
  readonly perCall: number;
  /**
   * The functions with the most self instructions (estimated cycles with the cache simulation),
   * their costs per call; empty without `breakdown`.
   */
  readonly top: readonly SelfRow[];
  /** Every function's self costs per call, summed by kind of code; empty without `breakdown`. */
  readonly kinds: readonly KindRow[];
  /**
   * Every event callgrind counted, per counted call (`Ir`, and with {@link
   * InstructionCountOptions.cacheSim} also `Dr`, `Dw`, `I1mr`, `D1mr`, `D1mw`, `ILmr`, `DLmr`,
   * `DLmw`, `Bc`, `Bcm`, `Bi`, `Bim`).
   */
  readonly events: ReadonlyMap<string, number>;
}

/** Node's perf map names code by `file://` URL: the part from the tree's root on is enough. */
const shorten = (name: string): string =>
  name.replace(/file:\/\/\S*?\/(dist|node_modules|bench|src)\//, "$1/");

/**
 * Runs one count; throws (the target stopped) when the target does not come up, a pre-flight
 * answer is wrong, or a call is not answered 200.
 *
 * @example
 * ```ts
 * (await countInstructions(options)).perCall; // 107_215
 * ```
 */
export async function countInstructions(
  options: InstructionCountOptions,
): Promise<InstructionCount> {
  const outDir = mkdtempSync(join(tmpdir(), "bench-instructions-"));
  let perfMap: string | null = null;
  try {
    const target = await startUnderCallgrind({
      script: options.script,
      outDir,
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.argv === undefined ? {} : { argv: options.argv }),
      ...(options.announcement === undefined ? {} : { announcement: options.announcement }),
      nodeArgs: [
        ...(options.nodeArgs ?? []),
        ...(options.breakdown > 0 ? ["--perf-basic-prof"] : []),
      ],
      ...(options.cacheSim === true ? { toolArgs: CACHE_SIM_FLAGS } : {}),
    });
    perfMap = `/tmp/perf-${target.pid}.map`;
    let dump: string;
    try {
      await preflight(options.label, target.url, options.path);
      let id = 1_000;
      const send = async (path: BenchPath, calls: number): Promise<void> => {
        const { connections } = options;
        await sendCalls({ url: target.url, path, calls, connections, firstId: id });
        id += calls;
      };
      for (const path of options.warmPaths) await send(path, options.warmup);
      await send(options.path, options.warmup);
      await target.instrument(true);
      await send(options.path, options.calls);
      await target.instrument(false);
      dump = await target.dump();
    } finally {
      await target.stop();
    }
    const profile = readCallgrind(dump);
    if (profile.events[0] !== "Ir") {
      throw new Error(`callgrind counted ${profile.events.join(", ")}, not Ir first`);
    }
    let top: SelfRow[] = [];
    let kinds: KindRow[] = [];
    if (options.breakdown > 0) {
      // Read once the target has exited: node may still hold lines in its buffer before.
      const map = readPerfMap(readFileSync(perfMap, "utf8"));
      // Named once: both the top functions and the sums by kind read these.
      const named = namedSelfCosts(profile, {
        nameAt: (address: number) => map.nameAt(address),
        shorten,
      });
      const perCall = (costs: Readonly<Record<string, number>>): Record<string, number> =>
        Object.fromEntries(Object.entries(costs).map(([e, v]) => [e, v / options.calls]));
      top = topSelf(profile, {
        top: options.breakdown,
        named,
        ...(options.cacheSim === true
          ? { rank: (costs) => simulatedCosts((event) => costs[event] ?? 0).cycles }
          : {}),
      }).map((row) => ({
        name: row.name,
        self: row.self / options.calls,
        costs: perCall(row.costs),
      }));
      kinds = sumByKind(named, profile.events).map((row) => ({
        ...row,
        costs: perCall(row.costs),
      }));
    }
    const events = new Map(
      [...profile.totalsByEvent].map(([event, total]) => [event, total / options.calls] as const),
    );
    return { perCall: profile.totals / options.calls, top, kinds, events };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
    if (perfMap !== null) rmSync(perfMap, { force: true });
  }
}
