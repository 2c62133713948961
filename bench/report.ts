/**
 * `npm run bench` (`node --expose-gc --import tsx bench/report.ts`): runs every benchmark and
 * regenerates docs/benchmarks.md and docs/benchmarks.svg.
 *
 * 1. The per-area benchmarks, each in its own process, each rewriting its own section:
 *    bench/registry.ts ("## Registry"), bench/http.ts ("## HTTP"), bench/redis.ts ("## Redis").
 *    The "## Resources and prompts" section (`bench/http.ts --methods …`, run on its own) is
 *    kept as it is.
 * 2. Side by side, in one run, on loopback, each server in its own child process: conduit-mcp
 *    (memory store), conduit-mcp (Redis store, on a private redis-server), the official SDK 1.x
 *    stateless server, the official SDK 2.x `createMcpHandler`, and a bare `node:http` server
 *    (the ceiling): `tools/call echo` requests/s and p99 with autocannon, 50 connections, after a
 *    pre-flight that fails the run on a wrong answer; several rounds in rotating order, medians.
 * 3. Server-side figures on bench/lib/probe-server.ts: cancel-to-abort latency by notification
 *    (2025 era) and by disconnect (2026-07-28), memory and Redis store (bench/cancel-latency.ts);
 *    heap per in-flight request (bench/heap.ts); time to stop a never-checking CPU-bound isolated
 *    tool (bench/cpu-stop.ts).
 * 4. Writes the whole of docs/benchmarks.md (header, verdicts against the issue's targets, the
 *    chart, every section) and docs/benchmarks.svg.
 *
 * Flags: `--quick` (a smoke run of a minute or two: short rounds, nothing written under docs/;
 * the report goes to the OS temp dir), `--no-write` (full rounds, print only), `--skip-areas`
 * (skip step 1, keep the existing sections as they are; for iterating on this script).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

import { type RedisServer, startRedisServer } from "../test/helpers/redis-server.js";
import { type CancelPath, measureCancelLatency } from "./cancel-latency.js";
import { type CpuStopResult, measureCpuStop } from "./cpu-stop.js";
import { measureHeapPerRequest } from "./heap.js";
import { barChart } from "./lib/bar-chart.js";
import { type RunningTarget, startTarget } from "./lib/child.js";
import { echoLoad, type LoadResult, preflightEcho } from "./lib/echo-load.js";
import { percentile } from "./lib/http-client.js";
import { loadAverage, machineLine } from "./lib/machine.js";
import { sectionText } from "./lib/markdown-section.js";
import { PRIMITIVES_SECTION } from "./lib/primitive-requests.js";
import { median } from "./lib/stats.js";

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    "no-write": { type: "boolean", default: false },
    "skip-areas": { type: "boolean", default: false },
  },
  strict: true,
});
const quick = flags.quick;

/** Sizes of the run; `--quick` is a smoke test, its figures are not meant to be published. */
const SIZE = quick
  ? { rounds: 1, duration: 2, warmup: 1, cancels: 20, heapCalls: 500, cpuSamples: 3 }
  : { rounds: 3, duration: 5, warmup: 2, cancels: 70, heapCalls: 5_000, cpuSamples: 8 };
const CONNECTIONS = 50;
/** USER_HZ of /proc/<pid>/stat times: 100 on every mainstream Linux build. */
const CLOCK_TICKS = 100;
const STREAM_CANCEL_TIMEOUT_MS = 100;
const DOC = "docs/benchmarks.md";
const CHART = "docs/benchmarks.svg";

const fmt = (n: number, digits = 0): string =>
  Number.isFinite(n)
    ? n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : "n/a";

/** Runs one area benchmark in its own process (it rewrites its own section); returns seconds. */
function runArea(args: readonly string[]): Promise<number> {
  const started = Date.now();
  console.error(`\n== node ${args.join(" ")}`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "inherit", "inherit"] });
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      if (code === 0) resolve((Date.now() - started) / 1_000);
      else reject(new Error(`node ${args.join(" ")} failed (code ${code}, signal ${signal})`));
    });
  });
}

interface ThroughputTarget {
  readonly key: string;
  readonly label: string;
  readonly script: string;
  readonly env?: Record<string, string>;
}

interface ThroughputRow {
  readonly target: ThroughputTarget;
  readonly answer: string;
  readonly rounds: LoadResult[];
  /** Server-process CPU time per request, µs, per round (user + system, all its threads). */
  readonly cpuUs: number[];
}

/** CPU time (user + system) a process has used so far, ms, from /proc (Linux; NaN elsewhere). */
function processCpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1_000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** Starts a target with extra environment (startTarget passes the parent's environment on). */
async function startWithEnv(
  script: string,
  env: Record<string, string> = {},
): Promise<RunningTarget> {
  const saved = new Map(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await startTarget(script);
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

async function throughput(redis: RedisServer | null, notes: string[]): Promise<ThroughputRow[]> {
  const specs: ThroughputTarget[] = [
    { key: "conduit", label: "conduit-mcp (memory store)", script: "bench/lib/conduit-server.ts" },
    ...(redis === null
      ? []
      : [
          {
            key: "conduit-redis",
            label: "conduit-mcp (Redis store)",
            script: "bench/lib/conduit-redis-server.ts",
            env: { BENCH_REDIS_URL: redis.url },
          },
        ]),
    { key: "sdk1", label: "SDK 1.x stateless", script: "bench/lib/sdk-server.ts" },
    { key: "sdk2", label: "SDK 2.x createMcpHandler", script: "bench/lib/sdk2-server.ts" },
    { key: "bare", label: "bare node:http (ceiling)", script: "bench/lib/bare-server.ts" },
  ];
  const running = new Map<string, RunningTarget>();
  const rows: ThroughputRow[] = [];
  try {
    for (const spec of specs) {
      let target: RunningTarget;
      try {
        target = await startWithEnv(spec.script, spec.env);
      } catch (error) {
        if (spec.key !== "sdk2") throw error;
        // The one target allowed to be missing: say why in the report rather than fail the run.
        notes.push(
          `SDK 2.x could not start on Node ${process.version}: ${(error as Error).message}`,
        );
        continue;
      }
      running.set(spec.key, target);
      const answer = await preflightEcho(spec.label, target.url);
      console.error(`pre-flight ok: ${spec.label} (${answer}) at ${target.url}`);
      rows.push({ target: spec, answer, rounds: [], cpuUs: [] });
    }
    const urlOf = (row: ThroughputRow): string =>
      (running.get(row.target.key) as RunningTarget).url;
    for (const row of rows) {
      console.error(`warm-up ${row.target.label} (${SIZE.warmup} s)`);
      await echoLoad(row.target.label, urlOf(row), SIZE.warmup, CONNECTIONS);
    }
    for (let round = 0; round < SIZE.rounds; round++) {
      // Rotate the order every round so slow drift (other tenants) spreads over every target.
      for (let i = 0; i < rows.length; i++) {
        const row = rows[(i + round) % rows.length] as ThroughputRow;
        const pid = (running.get(row.target.key) as RunningTarget).child.pid;
        const cpuBefore = processCpuMs(pid);
        const r = await echoLoad(row.target.label, urlOf(row), SIZE.duration, CONNECTIONS);
        const cpuMs = processCpuMs(pid) - cpuBefore;
        row.rounds.push(r);
        row.cpuUs.push((cpuMs * 1_000) / (r.rps * SIZE.duration));
        console.error(
          `round ${round + 1}/${SIZE.rounds} ${row.target.label}: ${fmt(r.rps)} req/s, p99 ${r.p99} ms`,
        );
      }
    }
    // Still answering correctly after the load, or the figures mean nothing.
    for (const row of rows) await preflightEcho(row.target.label, urlOf(row));
  } finally {
    await Promise.all([...running.values()].map((t) => t.stop()));
  }
  return rows;
}

interface LatencySeries {
  readonly label: string;
  readonly path: CancelPath;
  readonly perRound: number[][];
}

async function serverSide(redis: RedisServer | null): Promise<{
  latency: LatencySeries[];
  heap: number[];
  cpu: CpuStopResult;
}> {
  const env = { BENCH_STREAM_CANCEL_MS: String(STREAM_CANCEL_TIMEOUT_MS) };
  const memory = await startWithEnv("bench/lib/probe-server.ts", env);
  const shared =
    redis === null
      ? null
      : await startWithEnv("bench/lib/probe-server.ts", { ...env, BENCH_REDIS_URL: redis.url });
  try {
    const probes = [
      { label: "memory store", url: memory.url },
      ...(shared === null ? [] : [{ label: "Redis store", url: shared.url }]),
    ];
    const latency: LatencySeries[] = [];
    for (const p of probes) {
      for (const path of ["notification", "disconnect"] as const) {
        latency.push({ label: p.label, path, perRound: [] });
      }
    }
    // Warm-up: a few of each, not counted.
    for (const series of latency) {
      const url = probes.find((p) => p.label === series.label)?.url as string;
      await measureCancelLatency(url, series.path, 10, "warm");
    }
    for (let round = 0; round < SIZE.rounds; round++) {
      for (const series of latency) {
        const url = probes.find((p) => p.label === series.label)?.url as string;
        const values = await measureCancelLatency(url, series.path, SIZE.cancels, `r${round}`);
        series.perRound.push(values);
        console.error(
          `round ${round + 1}/${SIZE.rounds} cancel by ${series.path}, ${series.label}: p50 ${fmt(percentile(values, 0.5), 2)} ms, p99 ${fmt(percentile(values, 0.99), 2)} ms`,
        );
      }
    }
    // Before the heap probe, whose thousands of torn-down calls leave GC work behind.
    const cpu = await measureCpuStop(memory.url, SIZE.cpuSamples * SIZE.rounds);
    console.error(`cpu stop: ${cpu.stopMs.map((v) => fmt(v, 1)).join(", ")} ms`);
    const heap: number[] = [];
    for (let round = 0; round < SIZE.rounds; round++) {
      const bytes = await measureHeapPerRequest(memory.url, SIZE.heapCalls);
      heap.push(bytes);
      console.error(
        `round ${round + 1}/${SIZE.rounds} heap: ${fmt(bytes)} B per in-flight request`,
      );
    }
    return { latency, heap, cpu };
  } finally {
    await Promise.all([memory.stop(), shared?.stop()]);
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadBefore = loadAverage();
  const date = new Date().toISOString().slice(0, 10);
  const write = !quick && !flags["no-write"];
  const areaSeconds: Record<string, number> = {};

  const areaFailures: Record<string, string> = {};
  /** Runs an area; one retry (a shared machine makes rare flakes), then its old section stays. */
  const area = async (name: string, args: readonly string[]): Promise<void> => {
    for (let attempt = 1; attempt <= 2; attempt++) {
      try {
        areaSeconds[name] = await runArea(args);
        delete areaFailures[name];
        return;
      } catch (error) {
        areaFailures[name] = (error as Error).message;
        console.error(`${name} attempt ${attempt} failed: ${(error as Error).message}`);
      }
    }
  };
  if (!flags["skip-areas"]) {
    const noWrite = write ? [] : ["--no-write"];
    await area("Registry", [
      "--expose-gc",
      "--import",
      "tsx",
      "bench/registry.ts",
      ...(quick ? ["--quick"] : []),
      ...noWrite,
    ]);
    await area("HTTP", [
      "--import",
      "tsx",
      "bench/http.ts",
      ...(quick ? ["--rounds", "1", "--duration", "1", "--warmup", "1"] : ["--rounds", "3"]),
      ...noWrite,
    ]);
    await area("Redis", [
      "--import",
      "tsx",
      "bench/redis.ts",
      ...(quick
        ? ["--rounds", "1", "--samples", "10", "--duration", "1", "--warmup", "1"]
        : ["--rounds", "3"]),
      ...noWrite,
    ]);
  }

  const notes: string[] = [];
  let redis: RedisServer | null = null;
  try {
    redis = await startRedisServer();
  } catch (error) {
    notes.push(`No Redis figures: ${(error as Error).message}`);
  }
  let rows: ThroughputRow[];
  let side: Awaited<ReturnType<typeof serverSide>>;
  const loadMid = loadAverage();
  try {
    console.error("\n== side-by-side tools/call echo");
    rows = await throughput(redis, notes);
    console.error("\n== server-side cancel, heap and CPU-stop figures");
    side = await serverSide(redis);
  } finally {
    await redis?.stop();
  }
  const loadAfter = loadAverage();
  const seconds = Math.round((Date.now() - started) / 1_000);

  // ---- figures ----
  const med = (row: ThroughputRow | undefined, k: keyof LoadResult): number =>
    row === undefined ? Number.NaN : median(row.rounds.map((r) => r[k]));
  const byKey = (key: string): ThroughputRow | undefined => rows.find((r) => r.target.key === key);
  const perRoundRatio = (a: string, b: string): number => {
    const ra = byKey(a)?.rounds ?? [];
    const rb = byKey(b)?.rounds ?? [];
    const ratios = ra.map((r, i) => r.rps / (rb[i]?.rps ?? Number.NaN)).filter(Number.isFinite);
    return ratios.length === 0 ? Number.NaN : median(ratios);
  };
  const cpuOf = (row: ThroughputRow | undefined): number => {
    const finite = (row?.cpuUs ?? []).filter(Number.isFinite);
    return finite.length === 0 ? Number.NaN : median(finite);
  };
  const cpuRatioSdk1 = cpuOf(byKey("sdk1")) / cpuOf(byKey("conduit"));
  const cpuRatioBare = cpuOf(byKey("conduit")) / cpuOf(byKey("bare"));
  const vsSdk1 = med(byKey("conduit"), "rps") / med(byKey("sdk1"), "rps");
  const vsSdk2 = med(byKey("conduit"), "rps") / med(byKey("sdk2"), "rps");
  const ofBare = med(byKey("conduit"), "rps") / med(byKey("bare"), "rps");
  const bareOverSdk1 = med(byKey("bare"), "rps") / med(byKey("sdk1"), "rps");

  const latencyStats = side.latency.map((s) => {
    const all = s.perRound.flat();
    return {
      ...s,
      p50: median(s.perRound.map((v) => percentile(v, 0.5))),
      p99: median(s.perRound.map((v) => percentile(v, 0.99))),
      p99All: percentile(all, 0.99),
      max: Math.max(...all),
      n: all.length,
    };
  });
  const lat = (label: string, path: CancelPath) =>
    latencyStats.find((s) => s.label === label && s.path === path);
  const heapPerRequest = median(side.heap);
  const stopP50 = percentile(side.cpu.stopMs, 0.5);
  const stopMax = Math.max(...side.cpu.stopMs);

  // ---- chart ----
  const labels = rows.map((r) => r.target.label);
  const svg = barChart(
    "tools/call echo over loopback, 50 connections (median of rounds)",
    labels,
    [
      {
        title: "requests/s (higher is better)",
        unit: "req/s",
        values: rows.map((r) => med(r, "rps")),
      },
      {
        title: "p99 latency (lower is better)",
        unit: "ms",
        values: rows.map((r) => med(r, "p99")),
      },
    ],
    `${machineLine()} · load average ${loadMid.split(" / ")[0]} at start · ${date} · npm run bench`,
  );

  // ---- document ----
  const verdict = (ok: boolean): string => (ok ? "met" : "**not met**");
  const notifMem = lat("memory store", "notification");
  const discMem = lat("memory store", "disconnect");
  const summaryRows = [
    `| conduit-mcp ≥ 10× SDK 1.x throughput | ${fmt(vsSdk1, 1)}× (per-round median ${fmt(perRoundRatio("conduit", "sdk1"), 1)}×) | ${verdict(vsSdk1 >= 10)} |`,
    `| conduit-mcp within 2× of bare node:http | ${fmt(ofBare * 100)} % of the ceiling (per-round median ${fmt(perRoundRatio("conduit", "bare") * 100)} %) | ${verdict(ofBare >= 0.5)} |`,
    `| cancel-to-abort p99 < 10 ms, notification (2025 era), one node | ${fmt(notifMem?.p99 ?? Number.NaN, 2)} ms (all ${notifMem?.n ?? 0} samples: ${fmt(notifMem?.p99All ?? Number.NaN, 2)} ms) | ${verdict((notifMem?.p99 ?? Infinity) < 10)} |`,
    `| cancel-to-abort p99 < 10 ms, disconnect (2026-07-28), one node | ${fmt(discMem?.p99 ?? Number.NaN, 2)} ms (all ${discMem?.n ?? 0} samples: ${fmt(discMem?.p99All ?? Number.NaN, 2)} ms) | ${verdict((discMem?.p99 ?? Infinity) < 10)} |`,
  ];
  const shortfalls: string[] = [];
  if (!(vsSdk1 >= 10)) {
    shortfalls.push(
      `- **≥ 10× SDK 1.x.** Two causes, both measured in this run. (1) The load generator: on ${cpus().length} cores shared by autocannon (a busy core of its own) and the server, the bare \`node:http\` ceiling reached ${fmt(bareOverSdk1, 1)}× the SDK 1.x figure and conduit-mcp ${fmt(ofBare * 100)} % of that ceiling, so fast servers are partly capped by the client, not by their own cost. (2) conduit-mcp's own cost per call: by server CPU per request, which does not depend on the client, SDK 1.x spends ${fmt(cpuRatioSdk1, 1)}× what conduit-mcp spends${cpuRatioSdk1 < 10 ? ", still short of 10×" : ""}, and conduit-mcp spends ${fmt(cpuRatioBare, 1)}× the bare server. What would close it: for (1), load from another machine or separate pinned cores; for (2), a cheaper per-call path in conduit-mcp (profile \`tools/call\` under this load with \`node --cpu-prof\`: header and era checks, zod validation, the registry's track/untrack/clear and JSON framing are the candidates).`,
    );
  }
  if (!(ofBare >= 0.5)) {
    shortfalls.push(
      "- **Within 2× of bare node:http.** conduit-mcp does real work per call that the ceiling skips (header and era checks, zod validation, a registry track/untrack/clear, JSON-RPC framing). What would close it: profile the per-call path (`node --cpu-prof`) under this load and cut the largest allocation sites.",
    );
  }
  for (const s of [notifMem, discMem]) {
    if (s !== undefined && !(s.p99 < 10)) {
      shortfalls.push(
        `- **Cancel by ${s.path} p99.** The median is ${fmt(s.p50, 2)} ms, so the path itself is short; the tail (max ${fmt(s.max, 1)} ms) is the server process waiting for the CPU and for GC while other work loads this shared machine (load average up to ${loadAfter.split(" / ")[0]}). What would close it: a quiet machine, or a dedicated core for the server process.`,
      );
    }
  }

  const throughputTable = [
    "| server (own process) | req/s (median) | p50 ms | p99 ms | server CPU µs per request | req/s per round | answer |",
    "| --- | ---: | ---: | ---: | ---: | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${r.target.label} | ${fmt(med(r, "rps"))} | ${fmt(med(r, "p50"))} | ${fmt(med(r, "p99"))} | ${fmt(cpuOf(r))} | ${r.rounds.map((x) => fmt(x.rps)).join(" / ")} | ${r.answer} |`,
    ),
  ].join("\n");
  const latencyTable = [
    "| cancel path | store | p50 ms (median of rounds) | p99 ms (median of rounds) | p99 ms (all samples) | max ms | samples |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ...latencyStats.map(
      (s) =>
        `| ${s.path === "notification" ? "notification (2025-11-25): cancel POST arrival → signal abort" : "disconnect (2026-07-28): socket end/close → signal abort"} | ${s.label} | ${fmt(s.p50, 2)} | ${fmt(s.p99, 2)} | ${fmt(s.p99All, 2)} | ${fmt(s.max, 2)} | ${s.n} |`,
    ),
  ].join("\n");

  const command = "`npm run bench` (`node --expose-gc --import tsx bench/report.ts`)";
  /** Written by hand (an investigation, not a measurement this script repeats): kept as it is. */
  const CONNECTION_ERRORS_SECTION = "Connection errors under load";
  /** Written by `bench:http --baseline` against an older checkout, by hand: kept as it is. */
  const BASELINE_SECTION = "tools/call before and after resources and prompts";
  const keep = (heading: string, current: string): string => {
    const text = sectionText(current, heading) ?? "_(not run)_";
    const failure = areaFailures[heading];
    return failure === undefined
      ? text
      : `**This step failed twice in the run above (${failure}); the figures below are from its previous run.**\n\n${text}`;
  };
  let current = "";
  try {
    current = readFileSync(DOC, "utf8");
  } catch {
    current = "";
  }
  const areaTimes = Object.entries(areaSeconds)
    .map(([name, s]) => `${name} ${fmt(s)} s`)
    .join(", ");

  const doc = `# Benchmarks

Generated by ${command} on ${date}, ${fmt(seconds)} s in all; do not edit by hand — every
figure below comes from that one run. \`npm run bench -- --quick\` is a smoke run (short rounds,
written to the temp dir only).${areaTimes === "" ? "" : ` Steps: ${areaTimes}, then the side-by-side and server-side figures.`}

- Machine: ${machineLine()}.
- Load average (1 / 5 / 15 min): ${loadBefore} before the run, ${loadMid} before the side-by-side
  figures, ${loadAfter} after. This is a **shared, noisy VM**: other people's test suites run on
  the same ${cpus().length} cores, so figures move by tens of percent between runs; ratios within
  one run (same background load, rounds in rotating order) are steadier than absolute figures.
${notes.map((n) => `- Note: ${n}\n`).join("")}
![tools/call echo over loopback, 50 connections: requests/s and p99 latency of conduit-mcp (memory store, Redis store), the official SDK 1.x stateless server, the official SDK 2.x createMcpHandler and a bare node:http server](benchmarks.svg)

## Against the targets

| target | measured | |
| --- | --- | --- |
${summaryRows.join("\n")}

${shortfalls.length === 0 ? "Every target was met in this run." : `Where a figure falls short, why, and what would close it:\n\n${shortfalls.join("\n")}`}

## Side by side

\`tools/call\` of a zod-validated \`echo\` tool over Streamable HTTP, protocol 2025-11-25 (the
one request every server here speaks), \`Accept: application/json, text/event-stream\`, a fresh
request id per call, ${CONNECTIONS} keep-alive connections on loopback, autocannon in the report
process, each server alone in its own child process. Pre-flight: 5 calls each must answer HTTP
200 with the echoed text (again after the load), else the run fails. ${SIZE.warmup} s warm-up
each, then ${SIZE.rounds} rounds of ${SIZE.duration} s per server in rotating order; medians.

- Command: ${command}, step "side-by-side"

${throughputTable}

- conduit-mcp / SDK 1.x stateless: **${fmt(vsSdk1, 1)}×** (per-round median ${fmt(perRoundRatio("conduit", "sdk1"), 1)}×)
- conduit-mcp / SDK 2.x createMcpHandler: **${fmt(vsSdk2, 1)}×** (per-round median ${fmt(perRoundRatio("conduit", "sdk2"), 1)}×)
- conduit-mcp / bare node:http: **${fmt(ofBare * 100)} %** of the ceiling; the ceiling is ${fmt(bareOverSdk1, 1)}× SDK 1.x
- Server CPU per request (the server process's user + system time over a round, all its threads,
  divided by the requests it answered; it does not depend on how fast the load generator is):
  SDK 1.x spends **${fmt(cpuRatioSdk1, 1)}×** conduit-mcp's, conduit-mcp spends ${fmt(cpuRatioBare, 1)}× the bare
  server's. (The Redis target's figure leaves out redis-server's own CPU.)
- conduit-mcp Redis store / memory store: **${fmt(perRoundRatio("conduit-redis", "conduit") * 100)} %** (per-round median)

The servers: conduit-mcp is \`createMcpServer({ tools: [echo] })\` at its defaults
(bench/lib/conduit-server.ts), and the same with \`new CancellationRegistry({ store: new
RedisCancellationStore(…) })\` on a private \`redis-server\` (bench/lib/conduit-redis-server.ts:
three Redis round trips per call, track, untrack and clear). SDK 1.x is the stateless example the
SDK documents (a new \`McpServer\` and \`StreamableHTTPServerTransport\` per request,
bench/lib/sdk-server.ts). SDK 2.x is \`createMcpHandler(factory)\` from
\`@modelcontextprotocol/server\` 2.4.0 (it runs on Node 20); a 2025-era request goes to its default
\`legacy: "stateless"\` fallback, a fresh server from the factory per request
(bench/lib/sdk2-server.ts). The SDK documents \`toNodeHandler\` from \`@modelcontextprotocol/node\`
for \`node:http\`; that package is not installed, so a minimal equivalent adapter (buffer the body,
build a \`Request\`, stream the \`Response\` back) stands in — its cost is in the figure. The bare
server parses the body and answers the same JSON-RPC result without any validation.

## Cancel-to-abort latency

Measured inside the server (bench/lib/probe-server.ts: conduit-mcp's \`server.handler\` on
\`node:http\`, \`performance.now()\` in the server process), one cancel at a time, so each figure is
the server's own path and no client or network time is in it. A \`tools/call sleep\` runs (it
listens to \`ctx.signal\`); the client waits until the tool has started, then:

- **notification (2025 era)**: POSTs \`notifications/cancelled\` for the call's id; timed from the
  cancel POST's arrival (node's \`request\` event) to the tool's signal aborting: body read, parse,
  scope, registry write (with Redis, a round trip to it), local abort. The call then answers -32800
  (checked).
- **disconnect (2026-07-28)**: the client destroys the socket of a modern call; timed from the
  server seeing the socket end/close to the signal aborting.

${SIZE.rounds} rounds of ${SIZE.cancels} per series after a warm-up of 10; p50/p99 per round,
then the median over rounds; the pooled p99 and the maximum over all samples are given too.

- Command: ${command}, step "cancel-to-abort" (bench/cancel-latency.ts)

${latencyTable}

## Heap per in-flight request

${fmt(heapPerRequest)} B (median of ${SIZE.rounds} rounds: ${side.heap.map((b) => fmt(b)).join(" / ")} B).
${fmt(SIZE.heapCalls)} concurrent \`tools/call sleep\` (2025-11-25, each on its own connection, the
memory store), heap used after full GCs in the server process while they all run, minus the same
with none running, divided by ${fmt(SIZE.heapCalls)}. Everything one running call costs the server is
in it: socket, request and response objects, the parsed message, conduit's exchange, tool
context, registry handle, the tool's own timer and closure. The per-scope bounds were lifted for
this probe (all calls come from one address). At this figure, 10 000 concurrent calls (the
default \`maxConcurrentRequests\`) hold about ${fmt((heapPerRequest * 10_000) / 1_048_576)} MB of heap.

- Command: ${command}, step "heap" (bench/heap.ts)

## Stopping a CPU-bound tool

An isolated tool that never checks for cancellation (\`for (;;) {}\` in a worker thread) is
cancelled by a \`notifications/cancelled\` POST with \`streamCancelTimeoutMs\` = ${STREAM_CANCEL_TIMEOUT_MS} ms:
the call answers -32800 at once (checked), the tool does not notice, and once the timeout has run
out conduit terminates its worker. From the cancel POST's arrival to the worker terminated
(\`conduit-mcp:tool:killed\` with \`terminated: true\`${side.cpu.allTerminated ? ", true for every sample" : " — **not true for every sample**"}):
**p50 ${fmt(stopP50, 1)} ms**, max ${fmt(stopMax, 1)} ms over ${side.cpu.stopMs.length} samples, of which ${STREAM_CANCEL_TIMEOUT_MS} ms
is the configured timeout (so ${fmt(stopP50 - STREAM_CANCEL_TIMEOUT_MS, 1)} ms of overhead at the median). The
server process used ${fmt(side.cpu.cpuSpinning * 100)} % of a core while the tool spun and
${fmt(side.cpu.cpuAfter * 100)} % in the 200 ms starting 50 ms after the last kill: the CPU really stops.
${side.cpu.misses === 0 ? "" : `${side.cpu.misses} sample(s) were retried: the cancel reached the call before its worker had started the tool (the probe waits for the CPU to show the spin, which another busy process can fake), so conduit ended the call with no worker to kill and there was nothing to time.`}

- Command: ${command}, step "CPU stop" (bench/cpu-stop.ts)

## Registry

${keep("Registry", current)}

## HTTP

${keep("HTTP", current)}

## ${PRIMITIVES_SECTION}

${keep(PRIMITIVES_SECTION, current)}

## ${BASELINE_SECTION}

${keep(BASELINE_SECTION, current)}

## Redis

${keep("Redis", current)}

## ${CONNECTION_ERRORS_SECTION}

${keep(CONNECTION_ERRORS_SECTION, current)}

## Tracing

${keep("Tracing", current)}
`;

  if (write) {
    writeFileSync(DOC, doc);
    writeFileSync(CHART, svg);
    console.error(`\nwrote ${DOC} and ${CHART} (${seconds} s)`);
  } else {
    const dir = mkdtempSync(join(tmpdir(), "conduit-bench-"));
    writeFileSync(join(dir, "benchmarks.md"), doc);
    writeFileSync(join(dir, "benchmarks.svg"), svg);
    console.error(
      `\nnot written under docs/ (quick or --no-write); report in ${dir} (${seconds} s)`,
    );
  }
  if (Object.keys(areaFailures).length > 0) {
    console.error(`area benchmarks that failed: ${JSON.stringify(areaFailures)}`);
    process.exitCode = 1;
  }
  console.log(["", ...summaryRows, "", throughputTable, "", latencyTable, ""].join("\n"));
}

main().catch((error: unknown) => {
  console.error(
    `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  );
  process.exitCode = 1;
});
