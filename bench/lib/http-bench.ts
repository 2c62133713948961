/**
 * The HTTP throughput benchmark's engine, shared by `npm run bench:http` (bench/http.ts) and
 * `npm run bench` (bench/report.ts): every target in its own process pinned to one CPU, the load
 * generator (bench/lib/load-generator.ts: `wrk`) pinned to the other, every path each target
 * supports, rounds in which the rows of each ratio run back to back (bench/lib/round-order.ts),
 * server CPU per request from /proc next to req/s and p99.
 *
 * @example
 * ```ts
 * const result = await runHttpBench({ targets: ["bare", "conduit"], paths: ["tools/call"], rounds: 3, duration: 5, warmup: 2, connections: 50 });
 * console.log(httpTable(result));
 * ```
 */
import { readdirSync, readFileSync } from "node:fs";
import { cpus } from "node:os";

import { type RedisServer, startRedisServer } from "../../test/helpers/redis-server.js";
import { BENCH_PATHS, type BenchPath, type BenchPathKey } from "./bench-paths.js";
import {
  baselineTarget,
  buildDist,
  inlineBudgetTargets,
  nodeFlagTargets,
  plainScript,
  semiSpaceTargets,
  TARGETS,
  type TargetKey,
  type TargetSpec,
} from "./bench-targets.js";
import { type RunningTarget, startTarget } from "./child.js";
import { type Contention, startContention } from "./cpu-contention.js";
import {
  type CpuPlan,
  cpuPlan,
  type LoadGenerator,
  type LoadResult,
  loadGenerator,
  pinProcess,
} from "./load-generator.js";
import { loadAverage, machineLine } from "./machine.js";
import { roundOrder } from "./round-order.js";
import { finiteMedian } from "./stats.js";

/** What to run. */
export interface HttpBenchOptions {
  readonly targets: readonly TargetKey[];
  readonly paths: readonly BenchPathKey[];
  readonly rounds: number;
  /** Seconds per measured run. */
  readonly duration: number;
  /**
   * Seconds of load, not measured, right before each measured run of a row (and once per row
   * after its pre-flight). A server that idled while the other rows ran may have had a full
   * collection with no request in flight, which drops the hidden classes its optimized code was
   * built for (V8 holds map transitions weakly): its next second or two then runs deoptimized
   * code and compiles again (docs/profile.md, "Eighth round"). The warm-up right before the
   * measured run keeps that out of the steady-state figures, for every target alike.
   */
  readonly warmup: number;
  readonly connections: number;
  /**
   * Another checkout (e.g. `git worktree add /tmp/base <commit>` with a `node_modules` link):
   * its bench/lib/conduit-server.ts becomes the `baseline` target, on the paths the conduit target
   * serves (bench/lib/bench-targets.ts `baselineTarget`).
   */
  readonly baselineDir?: string;
  /** Extra node flags for the conduit targets, memory and Redis store (e.g. `--cpu-prof`). */
  readonly conduitNodeArgs?: readonly string[];
  /**
   * `--max-semi-space-size` values (MB): each adds a bare and a conduit-mcp variant under that
   * flag (semiSpaceTargets), of the targets selected.
   */
  readonly semiSpaces?: readonly number[];
  /**
   * `--max-inlined-bytecode-size-cumulative` values (bytes of bytecode): each adds a conduit-mcp,
   * a CLI and a bare variant under that flag (inlineBudgetTargets), of the targets selected.
   */
  readonly inlineBudgets?: readonly number[];
  /**
   * Node or V8 flags (`--single-threaded-gc`): each adds a conduit-mcp, a CLI and a bare variant
   * under that flag (nodeFlagTargets), of the targets selected.
   */
  readonly nodeFlags?: readonly string[];
  /**
   * Percent (1-100) of the servers' CPU a neighbour process keeps busy through every warm-up and
   * measured run (bench/lib/cpu-contention.ts), every row alike: the figures under a known
   * competition for the CPU instead of the host's. Needs the servers pinned (two CPUs, taskset).
   */
  readonly contendPercent?: number;
  /**
   * `dist` (the default): compile with `tsc -p tsconfig.build.json` first (this tree and the
   * baseline) and run conduit-mcp's compiled build, as the package ships it; `src`: run the
   * TypeScript sources through tsx (whose transform adds a per-closure naming call).
   */
  readonly build?: "dist" | "src";
}

/** One measured row: a target answering one path. */
export interface RowResult {
  readonly target: TargetSpec;
  readonly path: BenchPath;
  /** The answer's media type. */
  readonly answer: string;
  readonly rounds: LoadResult[];
  /** Server-process CPU time per request (user + system, all its threads), µs, per round. */
  readonly cpuUs: number[];
}

/** A whole run. */
export interface HttpBenchResult {
  readonly options: HttpBenchOptions;
  readonly rows: readonly RowResult[];
  readonly generator: LoadGenerator;
  readonly cpu: CpuPlan;
  readonly loadBefore: string;
  readonly loadAfter: string;
  readonly seconds: number;
  readonly date: string;
  readonly notes: readonly string[];
}

/** USER_HZ, the unit of /proc/<pid>/stat times: 100 on every mainstream Linux build. */
const CLOCK_TICKS = 100;

/**
 * CPU time (user + system) a process has used so far, ms, from /proc/<pid>/stat (Linux; NaN
 * elsewhere). Fields after the parenthesised command name; utime and stime are fields 14 and 15.
 *
 * @example
 * ```ts
 * processCpuMs(child.pid); // 1234.5
 * ```
 */
export function processCpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1_000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** The pid of the redis-server listening on `port` (its title names the port), if found. */
function redisPid(port: number): number | undefined {
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      let cmdline = "";
      try {
        cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      } catch {
        continue;
      }
      if (cmdline.includes("redis-server") && cmdline.includes(String(port))) return Number(entry);
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * Five sequential requests that must each pass the path's check; returns the media type. Throws,
 * naming the target and the path, on anything else.
 *
 * @example
 * ```ts
 * await preflight("bare", "http://127.0.0.1:4000/mcp", BENCH_PATHS["tools/call"]); // "application/json"
 * ```
 */
export async function preflight(label: string, url: string, path: BenchPath): Promise<string> {
  let type = "";
  for (let id = 1; id <= 5; id++) {
    const res = await fetch(url, {
      method: "POST",
      headers: path.headers,
      body: path.body(id),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    type = res.headers.get("content-type")?.split(";")[0] ?? "";
    try {
      path.check(res.status, res.headers.get("content-type"), text, id);
    } catch (error) {
      throw new Error(`pre-flight failed for ${label} ${path.label}: ${(error as Error).message}`);
    }
  }
  return type;
}

const fmt = (n: number, digits = 0): string =>
  Number.isFinite(n)
    ? n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : "n/a";

/**
 * Runs the benchmark: starts every target (and a private redis-server for the Redis target),
 * pre-flights every row, warms each up, then `rounds` rounds over every row in the order of
 * bench/lib/round-order.ts, each measured run right after a warm-up of its own; checks every row
 * again after the load. Progress goes to stderr.
 *
 * @example
 * ```ts
 * const result = await runHttpBench({ ...options, targets: ["conduit", "bare"] });
 * ```
 */
export async function runHttpBench(options: HttpBenchOptions): Promise<HttpBenchResult> {
  const started = Date.now();
  const loadBefore = loadAverage();
  const generator = loadGenerator();
  const cpu = cpuPlan();
  const notes: string[] = [];
  if (cpu.note !== "") notes.push(cpu.note);
  console.error(`load generator: ${generator.description}`);
  if (cpu.server !== null) console.error(`servers pinned to CPU ${cpu.server}`);

  const specs: TargetSpec[] = TARGETS.filter((t) => options.targets.includes(t.key));
  specs.push(
    ...semiSpaceTargets(specs, options.semiSpaces ?? []),
    ...inlineBudgetTargets(specs, options.inlineBudgets ?? []),
    ...nodeFlagTargets(specs, options.nodeFlags ?? []),
  );
  if (options.baselineDir !== undefined) {
    specs.push(baselineTarget(options.baselineDir));
  }
  const useDist = (options.build ?? "dist") === "dist";
  const builds = new Map<TargetKey, string>();
  if (useDist) {
    const own = buildDist(process.cwd());
    builds.set("conduit", own).set("conduit-redis", own).set("cli", own);
    if (options.baselineDir !== undefined) builds.set("baseline", buildDist(options.baselineDir));
  }
  if (options.contendPercent !== undefined && cpu.server === null) {
    throw new Error(`--contend needs the servers pinned to a CPU of their own (${cpu.note})`);
  }
  let redis: RedisServer | null = null;
  let contention: Contention | null = null;
  const running = new Map<TargetKey, RunningTarget>();
  const rows: RowResult[] = [];
  try {
    for (const spec of specs) {
      const env: Record<string, string> = {};
      const baseKey = spec.base ?? spec.key;
      const build = builds.get(baseKey);
      if (build !== undefined) env.BENCH_CONDUIT_BUILD = build;
      if (spec.key === "conduit-redis") {
        redis = await startRedisServer();
        env.BENCH_REDIS_URL = redis.url;
        // redis-server does the server side's work too: on the servers' CPU, not the load's.
        if (!pinProcess(redisPid(redis.port), cpu.server) && cpu.server !== null) {
          notes.push("redis-server could not be pinned: it ran on any CPU");
        }
      }
      // Compiled runs measure plain node: the script bundled, no tsx (see plainScript).
      const plain =
        spec.launch === undefined && useDist
          ? {
              argv: [
                plainScript(
                  spec.script,
                  spec.key === "baseline" ? (options.baselineDir as string) : process.cwd(),
                ),
              ],
            }
          : {};
      const target = await startTarget(spec.script, {
        cpu: cpu.server,
        env,
        ...plain,
        nodeArgs: [
          ...(spec.nodeArgs ?? []),
          ...(baseKey === "conduit" || baseKey === "conduit-redis" || baseKey === "cli"
            ? (options.conduitNodeArgs ?? [])
            : []),
        ],
        ...spec.launch?.(build ?? null),
      });
      running.set(spec.key, target);
      for (const key of options.paths) {
        if (!spec.paths.includes(key)) continue;
        const path = BENCH_PATHS[key];
        const answer = await preflight(spec.label, target.url, path);
        console.error(`pre-flight ok: ${spec.label} ${path.label} (${answer})`);
        rows.push({ target: spec, path, answer, rounds: [], cpuUs: [] });
      }
    }
    const target = (row: RowResult): RunningTarget => running.get(row.target.key) as RunningTarget;
    const load = (row: RowResult, seconds: number): Promise<LoadResult> =>
      generator.run({
        url: target(row).url,
        headers: row.path.headers,
        body: row.path.body,
        seconds,
        connections: options.connections,
        label: `${row.target.label} ${row.path.label}`,
      });
    if (options.contendPercent !== undefined && cpu.server !== null) {
      contention = startContention({ cpu: cpu.server, percent: options.contendPercent });
      notes.push(
        `contended: ${contention.description}, through every warm-up and measured run (every row alike)`,
      );
      console.error(`contention: ${contention.description}`);
    }
    for (const row of rows) {
      console.error(`warm-up ${row.target.label} ${row.path.label} (${options.warmup} s)`);
      await load(row, options.warmup);
    }
    for (let round = 0; round < options.rounds; round++) {
      // The two rows of each ratio back to back; groups rotate, directions alternate.
      for (const row of roundOrder(
        rows,
        options.paths.map((key) => BENCH_PATHS[key]),
        round,
      )) {
        if (options.warmup > 0) await load(row, options.warmup);
        const pid = target(row).child.pid;
        const cpuBefore = processCpuMs(pid);
        const r = await load(row, options.duration);
        const cpuMs = processCpuMs(pid) - cpuBefore;
        row.rounds.push(r);
        row.cpuUs.push((cpuMs * 1_000) / r.requests);
        console.error(
          `round ${round + 1}/${options.rounds} ${row.target.label} ${row.path.label}: ${fmt(r.rps)} req/s, p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms (wrk-corrected ${fmt(r.wrkP99 ?? Number.NaN, 2)}), ${fmt(row.cpuUs.at(-1) ?? Number.NaN)} µs CPU/req, client sleeps ${fmt(r.clientSleeps ?? Number.NaN, 2)}/req`,
        );
      }
    }
    // Still answering correctly after the load, or the figures mean nothing.
    for (const row of rows) await preflight(row.target.label, target(row).url, row.path);
  } finally {
    await (contention as Contention | null)?.stop();
    await Promise.all([...running.values()].map((t) => t.stop()));
    await (redis as RedisServer | null)?.stop();
  }
  return {
    options,
    rows,
    generator,
    cpu,
    loadBefore,
    loadAfter: loadAverage(),
    seconds: Math.round((Date.now() - started) / 1_000),
    date: new Date().toISOString().slice(0, 10),
    notes,
  };
}

/** The row of a target on a path, if it ran. */
export function rowOf(
  result: HttpBenchResult,
  target: TargetKey,
  path: BenchPathKey,
): RowResult | undefined {
  return result.rows.find((r) => r.target.key === target && r.path.key === path);
}

/**
 * Median of a row's rounds for one figure; NaN when the row did not run, or for `wrkP99` when the
 * load generator was not wrk.
 */
export function medianOf(
  row: RowResult | undefined,
  figure: "rps" | "p50" | "p99" | "wrkP99",
): number {
  return finiteMedian((row?.rounds ?? []).map((r) => r[figure]));
}

/**
 * Median over rounds of how often the load generator slept per answer (`LoadResult.clientSleeps`);
 * NaN when the generator does not say (autocannon) or the row did not run.
 *
 * @example
 * ```ts
 * clientSleepsOf(rowOf(r, "bare", "tools/call")); // 0.55
 * ```
 */
export function clientSleepsOf(row: RowResult | undefined): number {
  return finiteMedian((row?.rounds ?? []).map((r) => r.clientSleeps));
}

/** Median of a row's CPU µs per request over rounds; NaN when none. */
export function cpuOf(row: RowResult | undefined): number {
  return finiteMedian(row?.cpuUs ?? []);
}

/**
 * Median over rounds of the share of one CPU the server was busy (req/s × CPU per request). A
 * server well below 1 was not the bottleneck: the load generator or the host limited the round,
 * and a req/s ratio against it says little about the server (bench/report.ts marks such a verdict
 * inconclusive and leans on CPU per request instead).
 *
 * @example
 * ```ts
 * busyShare(rowOf(r, "bare", "tools/call")); // 0.97
 * ```
 */
export function busyShare(row: RowResult | undefined): number {
  if (row === undefined) return Number.NaN;
  return finiteMedian(row.rounds.map((r, i) => (r.rps * (row.cpuUs[i] ?? Number.NaN)) / 1_000_000));
}

/**
 * Median over rounds of `a`'s req/s divided by `b`'s in the same round (measured seconds apart,
 * under the same background load): steadier on a shared machine than a ratio of medians.
 *
 * @example
 * ```ts
 * ratio(rowOf(r, "conduit", "tools/call"), rowOf(r, "bare", "tools/call")); // 0.83
 * ```
 */
export function ratio(
  a: RowResult | undefined,
  b: RowResult | undefined,
  figure: "rps" | "p99" | "wrkP99" = "rps",
): number {
  if (a === undefined || b === undefined) return Number.NaN;
  return finiteMedian(
    a.rounds.map((r, i) => (r[figure] ?? Number.NaN) / (b.rounds[i]?.[figure] ?? Number.NaN)),
  );
}

/**
 * Median over rounds of `a`'s CPU per request divided by `b`'s in the same round.
 *
 * @example
 * ```ts
 * cpuRatio(rowOf(r, "conduit@ss2", "tools/call"), rowOf(r, "conduit", "tools/call")); // 0.9
 * ```
 */
export function cpuRatio(a: RowResult | undefined, b: RowResult | undefined): number {
  if (a === undefined || b === undefined) return Number.NaN;
  return finiteMedian(a.cpuUs.map((c, i) => c / (b.cpuUs[i] ?? Number.NaN)));
}

/**
 * The results table: one row per target and path, medians over rounds.
 *
 * @example
 * ```ts
 * console.log(httpTable(result));
 * ```
 */
export function httpTable(result: HttpBenchResult): string {
  const lines = [
    "| path | server (own process) | req/s (median) | × bare | p50 ms | p99 ms | p99 × bare | p99 ms, wrk-corrected | server CPU µs/req | server busy | client sleeps/req | req/s per round | answer |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
  ];
  for (const key of result.options.paths) {
    for (const row of result.rows.filter((r) => r.path.key === key)) {
      const bare = rowOf(result, "bare", key);
      const vsBare = row.target.key === "bare" ? "1.00" : fmt(ratio(row, bare), 2);
      const p99VsBare = row.target.key === "bare" ? "1.00" : fmt(ratio(row, bare, "p99"), 2);
      lines.push(
        `| ${row.path.label} | ${row.target.label} | ${fmt(medianOf(row, "rps"))} | ${vsBare} | ${fmt(medianOf(row, "p50"), 2)} | ${fmt(medianOf(row, "p99"), 2)} | ${p99VsBare} | ${fmt(medianOf(row, "wrkP99"), 2)} | ${fmt(cpuOf(row))} | ${fmt(busyShare(row) * 100)} % | ${fmt(clientSleepsOf(row), 2)} | ${row.rounds.map((r) => fmt(r.rps)).join(" / ")} | ${row.answer} |`,
      );
    }
  }
  return lines.join("\n");
}

/**
 * The ratios the project's targets are stated in, one line each (those whose rows ran).
 *
 * @example
 * ```ts
 * console.log(httpRatios(result).join("\n"));
 * ```
 */
export function httpRatios(result: HttpBenchResult): string[] {
  const out: string[] = [];
  for (const key of result.options.paths) {
    const label = BENCH_PATHS[key].label;
    const conduit = rowOf(result, "conduit", key);
    const bare = rowOf(result, "bare", key);
    const cli = rowOf(result, "cli", key);
    const pair = (other: TargetKey, name: string): string | null => {
      const row = rowOf(result, other, key);
      return conduit === undefined || row === undefined
        ? null
        : `${name} ${fmt(ratio(conduit, row), 2)}×`;
    };
    const parts = [
      pair("bare", "conduit-mcp / bare"),
      bare === undefined || conduit === undefined
        ? null
        : `p99 ${fmt(ratio(conduit, bare, "p99"), 2)}× bare's`,
      bare === undefined || cli === undefined
        ? null
        : `CLI (conduit-mcp serve) / bare ${fmt(ratio(cli, bare), 2)}×, p99 ${fmt(ratio(cli, bare, "p99"), 2)}× bare's`,
      pair("sdk2", "/ SDK 2.x"),
      pair("sdk1", "/ SDK 1.x"),
      pair("baseline", "/ baseline"),
      ...result.rows
        .filter((r) => r.path.key === key && r.target.base !== undefined)
        .map((r) => variantRatios(result, r)),
      conduit === undefined || rowOf(result, "conduit-redis", key) === undefined
        ? null
        : `Redis store / memory store ${fmt(ratio(rowOf(result, "conduit-redis", key), conduit), 2)}×`,
    ].filter((p): p is string => p !== null);
    if (parts.length > 0) out.push(`- ${label}: ${parts.join("; ")}`);
  }
  return out;
}

/**
 * A flag variant's row against its base (same path, same round), and, for a variant of
 * conduit-mcp or its CLI, against bare under the same flag when that row was measured too.
 */
function variantRatios(result: HttpBenchResult, row: RowResult): string {
  const base = row.target.base as TargetKey;
  const key = row.path.key;
  const own = rowOf(result, base, key);
  const parts = [
    `${row.target.key} / ${base} ${fmt(ratio(row, own), 2)}×, CPU/req ${fmt(cpuRatio(row, own), 2)}×, p99 ${fmt(ratio(row, own, "p99"), 2)}×`,
  ];
  const suffix = row.target.key.slice(base.length);
  const bare = base === "bare" ? undefined : rowOf(result, `bare${suffix}` as TargetKey, key);
  if (bare !== undefined) {
    parts.push(
      `/ bare${suffix} ${fmt(ratio(row, bare), 2)}×, p99 ${fmt(ratio(row, bare, "p99"), 2)}× bare${suffix}'s`,
    );
  }
  return parts.join(", ");
}

/**
 * How the run was made, for the docs: load generator, pinning, sizes, machine and load average.
 *
 * @example
 * ```ts
 * console.log(httpMethod(result, "npm run bench:http"));
 * ```
 */
export function httpMethod(result: HttpBenchResult, command: string): string {
  const o = result.options;
  const pinning =
    result.cpu.server === null
      ? `nothing pinned (${result.cpu.note})`
      : `the load generator on CPU ${result.cpu.load}, every server (and redis-server) on CPU ${result.cpu.server}, with \`taskset\``;
  const build =
    (o.build ?? "dist") === "dist"
      ? "conduit-mcp runs its compiled build (`tsc -p tsconfig.build.json`, as the package ships), and every server runs under plain `node`, its bench script bundled with esbuild (no tsx loader in the measured process)"
      : "conduit-mcp runs its TypeScript sources through tsx";
  return `Each server runs in its own process; ${build}; the load comes from ${result.generator.name} (${result.generator.description}), ${o.connections} keep-alive connections on loopback, every request with its own JSON-RPC id; ${pinning}. Pre-flight: 5 requests per row must answer HTTP 200 with the expected result (checked again after the load), else the run fails; any non-2xx answer, socket error or timeout under load fails it too. ${o.warmup} s warm-up per row, then ${o.rounds} rounds of ${o.duration} s per row, each measured run right after ${o.warmup} s more of the same load, not measured (a server that idled while the others ran may have had its optimized code dropped by a full collection, docs/profile.md "Eighth round"); in each round a path's rows run back to back (bare first, conduit-mcp next, the other servers after), backwards every other round, the paths in a rotating order; medians over rounds. "× bare" is the median over rounds of the row's req/s divided by bare \`node:http\`'s on the same path in the same round (p99 likewise). Latency is every request as ${result.generator.name === "wrk" ? "wrk" : "the load generator"} timed it, each counted once; "p99 ms, wrk-corrected" is wrk's own p99, after its coordinated-omission correction adds, for each request slower than twice the run's mean interval per connection, a synthetic sample at every such interval below it. In a closed-loop run that correction mostly multiplies the first request of each of the ${o.connections} connections opened when the measured run starts: node (libuv 1.45 and later) accepts one connection per event-loop turn while it serves the first ones, so the last waits tens of ms, and that wait, counted many times over, can set wrk's p99 (bench/lib/wrk-latency.ts, docs/profile.md "Fourteenth round"). Server CPU per request: the server process's user + system time (\`/proc/<pid>/stat\`, all its threads) over a round divided by the requests it answered (the Redis target's leaves out redis-server's own CPU). On loopback it also holds part of the client's side: the kernel runs the receive path of each answer on the sender's CPU, and wakes the load generator there when it was asleep; a slower server leaves the load generator asleep more often, so it pays for more wake-ups per answer. "Client sleeps/req" is how often that happened (wrk's voluntary context switches, \`getrusage(2)\`, per answered request), a wake-up each; on a VM one costs several µs (docs/profile.md, "Twelfth round"). Server busy: req/s × CPU per request, the share of its one CPU the server used (median over rounds); a server well below 100 % was not the bottleneck, so its req/s ratios understate the difference in work and the targets then lean on CPU per request.

- Command: \`${command}\` (${result.seconds} s)
- Date: ${result.date}; machine: ${machineLine()}
- Load average (1 / 5 / 15 min): ${result.loadBefore} before, ${result.loadAfter} after, on ${cpus().length} CPUs: anything besides this run means other work competed (this is a shared VM), so read the ratios, which compare rows measured seconds apart under the same load${result.notes.map((n) => `\n- Note: ${n}`).join("")}`;
}

/**
 * The "## HTTP" section of docs/benchmarks.md: what was measured, how, the table and the ratios.
 *
 * @example
 * ```ts
 * writeFileSync(path, replaceSection(doc, "HTTP", httpSection(result, "npm run bench:http")));
 * ```
 */
export function httpSection(result: HttpBenchResult, command: string): string {
  const paths = result.options.paths.map((key) => `- ${BENCH_PATHS[key].what}`).join("\n");
  return `Paths, each measured on every server that speaks it:

${paths}

${httpMethod(result, command)}

${httpTable(result)}

${httpRatios(result).join("\n")}

The servers: **bare \`node:http\`** parses the body and answers the same JSON-RPC result with no
validation at all (the floor of any server on node:http, bench/lib/bare-server.ts).
**conduit-mcp** is \`createMcpServer\` at its defaults serving the CLI's zod-validated \`echo\`
tool and one Markdown resource (bench/lib/conduit-server.ts). **\`conduit-mcp serve\` (CLI)** is
the command a user starts, with the demo set and every option at its default: the package's
\`bin\`, \`node dist/cli/main.js serve --port 0\` (what \`npx conduit-mcp serve\` runs; no tsx, unlike
\`npm start\`, which runs the TypeScript sources through it), measured on the two \`tools/call\` paths
(its \`demo://readme\` is the demo's own text, not the benchmark's resource). The **Redis store** row is the same
with \`new CancellationRegistry({ store: new RedisCancellationStore(…) })\` on a private
\`redis-server\` (bench/lib/conduit-redis-server.ts). **SDK 2.x** is \`createMcpHandler(factory)\`
from \`@modelcontextprotocol/server\` 2.4.0 with its default \`legacy: "stateless"\` fallback for
2025-era requests (bench/lib/sdk2-server.ts; \`@modelcontextprotocol/node\`'s \`toNodeHandler\` is
not installed, so a minimal equivalent adapter stands in and its cost is in the figure).
**SDK 1.x** is the stateless example the SDK documents: a new \`McpServer\` and
\`StreamableHTTPServerTransport\` per request (bench/lib/sdk-server.ts); it speaks 2025-11-25 only
and answers with a one-event SSE stream.`;
}
