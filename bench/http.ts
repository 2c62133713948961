/**
 * `npm run bench:http` — requests/s and p50/p99 latency of `tools/call echo` over loopback with 50
 * connections, side by side in one run:
 *
 * - conduit-mcp (`createMcpServer` + the CLI's zod-validated `echo` tool),
 * - the official SDK 1.x's documented stateless Streamable HTTP server (new server + transport per
 *   request, same tool),
 * - a bare `node:http` server answering the same JSON-RPC result (the ceiling).
 *
 * With `--methods tools/call,resources/read,prompts/get --targets conduit`, it measures instead
 * conduit-mcp's `resources/read` and `prompts/get` side by side with its `tools/call`, on the same
 * server process in the same run (bench/lib/primitive-requests.ts), and writes the "## Resources
 * and prompts" section of docs/benchmarks.md.
 *
 * Each target runs in its own child process; this process only drives autocannon, so on a 2-core
 * machine one core serves and one core loads. After a pre-flight check (HTTP 200 and a valid echo
 * result from every target, else the run fails), each target gets a warm-up, then several rounds
 * whose order rotates so slow drift (thermal, other tenants) spreads evenly; medians are reported.
 * The results table is printed and written to the "## HTTP" section of docs/benchmarks.md.
 *
 * Options: `--rounds N` (5), `--duration S` (5), `--warmup S` (3), `--connections N` (50),
 * `--targets conduit,sdk,bare` (a subset, for debugging; only a full run writes the docs),
 * `--methods tools/call[,resources/read,prompts/get]` (default `tools/call`; the SDK and bare
 * targets answer `tools/call` only), `--no-write` (print only), `--baseline DIR` (adds
 * conduit-mcp as built from another checkout — e.g. `git worktree add /tmp/base <commit>` with a
 * `node_modules` link — as a target of its own, and prints this tree's `tools/call` throughput as a
 * ratio of it: "no slower than before" measured in one run; writes nothing).
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";

import autocannon from "autocannon";

import { type RunningTarget, startTarget } from "./lib/child.js";
import { ECHO_HEADERS } from "./lib/echo-request.js";
import { replaceSection } from "./lib/markdown-section.js";
import {
  BENCH_REQUESTS,
  type BenchMethod,
  type BenchRequest,
  PRIMITIVES_SECTION,
} from "./lib/primitive-requests.js";
import { median } from "./lib/stats.js";

interface TargetSpec {
  readonly key: "conduit" | "sdk" | "bare" | "baseline";
  readonly label: string;
  readonly script: string;
}

/** One measured row: a target answering one kind of request. */
interface Row {
  readonly spec: TargetSpec;
  readonly request: BenchRequest;
  /** `target` or `target: method`, unique per row. */
  readonly key: string;
  readonly label: string;
}

interface RoundResult {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
}

const ALL_TARGETS: readonly TargetSpec[] = [
  { key: "conduit", label: "conduit-mcp", script: "bench/lib/conduit-server.ts" },
  {
    key: "sdk",
    label: "@modelcontextprotocol/sdk 1.x stateless",
    script: "bench/lib/sdk-server.ts",
  },
  { key: "bare", label: "bare node:http (ceiling)", script: "bench/lib/bare-server.ts" },
];

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    duration: { type: "string", default: "5" },
    warmup: { type: "string", default: "3" },
    connections: { type: "string", default: "50" },
    targets: { type: "string", default: "conduit,sdk,bare" },
    methods: { type: "string", default: "tools/call" },
    "no-write": { type: "boolean", default: false },
    baseline: { type: "string" },
  },
  strict: true,
});

function positiveInt(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`bench:http: --${name} must be a positive integer; got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return value;
}

const rounds = positiveInt("rounds", flags.rounds);
const duration = positiveInt("duration", flags.duration);
const warmup = positiveInt("warmup", flags.warmup);
const connections = positiveInt("connections", flags.connections);
const wanted = new Set(flags.targets.split(",").map((name) => name.trim()));
const TARGETS = ALL_TARGETS.filter((spec) => wanted.delete(spec.key));
const baselineDir = flags.baseline;
if (baselineDir !== undefined) {
  const commit = execFileSync("git", ["-C", baselineDir, "rev-parse", "--short", "HEAD"], {
    encoding: "utf8",
  }).trim();
  TARGETS.push({
    key: "baseline",
    label: `conduit-mcp at ${commit} (baseline)`,
    script: `${baselineDir}/bench/lib/conduit-server.ts`,
  });
}
if (wanted.size > 0 || TARGETS.length === 0) {
  console.error(`bench:http: --targets takes a list of conduit, sdk, bare; got ${flags.targets}`);
  process.exit(2);
}
const wantedMethods = new Set(flags.methods.split(",").map((name) => name.trim()));
const METHODS = (Object.keys(BENCH_REQUESTS) as BenchMethod[]).filter((m) =>
  wantedMethods.delete(m),
);
if (wantedMethods.size > 0 || METHODS.length === 0) {
  console.error(
    `bench:http: --methods takes a list of ${Object.keys(BENCH_REQUESTS).join(", ")}; got ${flags.methods}`,
  );
  process.exit(2);
}
const onlyToolCalls = METHODS.length === 1 && METHODS[0] === "tools/call";
/** Every target, `tools/call` only: the comparison the "## HTTP" section holds. */
const fullRun = TARGETS.length === ALL_TARGETS.length && onlyToolCalls && baselineDir === undefined;
/** conduit-mcp alone, every method: the "## Resources and prompts" section. */
const primitivesRun = TARGETS.length === 1 && TARGETS[0]?.key === "conduit" && METHODS.length === 3;
/** The SDK and bare servers serve `echo` only; conduit-mcp serves every benchmark request. */
const ROWS: readonly Row[] = TARGETS.flatMap((spec) =>
  METHODS.filter((method) => spec.key === "conduit" || method === "tools/call").map((method) => ({
    spec,
    request: BENCH_REQUESTS[method],
    key: onlyToolCalls ? spec.key : `${spec.key}: ${method}`,
    label: onlyToolCalls ? spec.label : `${spec.label} \`${method}\``,
  })),
);

/** Several sequential requests per row: each must be HTTP 200 with the expected result. */
async function preflight(row: Row, url: string): Promise<string> {
  let contentType = "";
  for (let id = 1; id <= 5; id++) {
    const res = await fetch(url, {
      method: "POST",
      headers: ECHO_HEADERS,
      body: row.request.body(id),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    contentType = res.headers.get("content-type")?.split(";")[0] ?? "";
    try {
      row.request.check(res.status, res.headers.get("content-type"), text, id);
    } catch (error) {
      throw new Error(`pre-flight failed for ${row.label} (${url}): ${(error as Error).message}`);
    }
  }
  return contentType;
}

let nextId = 1_000;

/** One autocannon run; fails when any answer was not 2xx or a connection failed. */
async function load(row: Row, url: string, seconds: number): Promise<RoundResult> {
  const result = await autocannon({
    url,
    method: "POST",
    headers: { ...ECHO_HEADERS },
    // A fresh id per request, as a real client sends. (autocannon's `idReplacement` keeps the
    // Content-Length of the placeholder body, so servers hang waiting for the rest: not used.)
    requests: [
      {
        setupRequest: (request) => {
          request.body = row.request.body(++nextId);
          return request;
        },
      },
    ],
    connections,
    duration: seconds,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    // autocannon counts its own per-request timeout (10 s) among `errors`: split them out, so an
    // overloaded target (docs/benchmarks.md, "Connection errors under load") is told apart from
    // connections the server reset or refused.
    const other = result.errors - result.timeouts - result.resets;
    throw new Error(
      `${row.label}: ${result.non2xx} non-2xx answers and ${result.errors} errors under load (${result.timeouts} autocannon timeouts at 10 s, ${result.resets} resets, ${other} other connection errors)`,
    );
  }
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

function machine(): string {
  const model = /model name\s*:\s*(.+)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1];
  return `${cpus().length} × ${model ?? cpus()[0]?.model ?? "unknown CPU"}, ${process.platform} ${process.arch}, Node ${process.version}`;
}

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** The 1-minute load average: other work on the machine skews every figure, so it is recorded. */
function loadAverage(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ")[0] ?? "?";
  } catch {
    return "?";
  }
}

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const running = new Map<TargetSpec["key"], RunningTarget>();
  const answerType = new Map<string, string>();
  const cleanup = async (): Promise<void> => {
    await Promise.all([...running.values()].map((target) => target.stop()));
  };
  process.once("SIGINT", () => void cleanup().then(() => process.exit(130)));
  try {
    for (const spec of TARGETS) {
      const target = await startTarget(spec.script);
      running.set(spec.key, target);
    }
    const urlOf = (row: Row): string => (running.get(row.spec.key) as RunningTarget).url;
    for (const row of ROWS) {
      answerType.set(row.key, await preflight(row, urlOf(row)));
      console.error(`pre-flight ok: ${row.label} at ${urlOf(row)}`);
    }

    for (const row of ROWS) {
      console.error(`warm-up ${row.label} (${warmup} s)`);
      await load(row, urlOf(row), warmup);
    }
    const results = new Map<string, RoundResult[]>(ROWS.map((row) => [row.key, []]));
    for (let round = 0; round < rounds; round++) {
      // Rotate the order each round so no row always runs first or last.
      const order = ROWS.map((_, i) => ROWS[(i + round) % ROWS.length] as Row);
      for (const row of order) {
        const r = await load(row, urlOf(row), duration);
        results.get(row.key)?.push(r);
        console.error(
          `round ${round + 1}/${rounds} ${row.label}: ${fmt(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms`,
        );
      }
    }
    // The targets must still answer correctly after the load, or the figures mean nothing.
    for (const row of ROWS) await preflight(row, urlOf(row));

    const med = (key: string): RoundResult => {
      const rs = results.get(key) ?? [];
      return {
        rps: median(rs.map((r) => r.rps)),
        p50: median(rs.map((r) => r.p50)),
        p99: median(rs.map((r) => r.p99)),
      };
    };
    const rows = ROWS.map((row) => {
      const m = med(row.key);
      const all = (results.get(row.key) ?? []).map((r) => fmt(r.rps)).join(" / ");
      const answer = answerType.get(row.key) ?? "?";
      return `| ${row.label} | ${fmt(m.rps)} | ${m.p50} | ${m.p99} | ${all} | ${answer} |`;
    });
    const table = [
      "| target | req/s (median) | p50 ms | p99 ms | req/s per round | answer |",
      "| --- | ---: | ---: | ---: | --- | --- |",
      ...rows,
    ].join("\n");
    // Ratios within a round compare runs seconds apart, under the same background load; their
    // median is steadier than a ratio of medians when the machine is shared.
    const perRound = (a: string, b: string): number[] => {
      const ra = results.get(a) ?? [];
      const rb = results.get(b) ?? [];
      return ra.map((r, i) => r.rps / (rb[i]?.rps ?? Number.NaN));
    };
    const ratios = fullRun
      ? [
          `- conduit-mcp / SDK stateless: **${fmt(med("conduit").rps / med("sdk").rps, 1)}×** throughput` +
            ` (median of per-round ratios ${fmt(median(perRound("conduit", "sdk")), 1)}×; aim: ≥ 10×)`,
          `- conduit-mcp / bare node:http: **${fmt((med("conduit").rps / med("bare").rps) * 100, 0)} %**` +
            ` of the ceiling (per-round median ${fmt(median(perRound("conduit", "bare")) * 100, 0)} %)`,
        ].join("\n")
      : primitivesRun
        ? (["resources/read", "prompts/get"] as const)
            .map((method) => {
              const key = `conduit: ${method}`;
              const ratio = med(key).rps / med("conduit: tools/call").rps;
              const perRoundRatio = median(perRound(key, "conduit: tools/call"));
              return `- \`${method}\` / \`tools/call\`: **${fmt(ratio * 100, 0)} %** of the \`tools/call\` throughput (median of per-round ratios ${fmt(perRoundRatio * 100, 0)} %)`;
            })
            .join("\n")
        : baselineDir !== undefined && onlyToolCalls && results.has("conduit")
          ? `- conduit-mcp / baseline: **${fmt((med("conduit").rps / med("baseline").rps) * 100, 0)} %**` +
            ` (median of per-round ratios ${fmt(median(perRound("conduit", "baseline")) * 100, 0)} %)`
          : "(partial run: no ratios)";
    const date = new Date().toISOString().slice(0, 10);
    const environment = `- Date: ${date}
- Machine: ${machine()}; 1-minute load average ${loadBefore} before the run, ${loadAverage()} after
  (on ${cpus().length} cores, anything above ~0.1 besides this benchmark means other work competed)`;
    const primitivesSection = `conduit-mcp's \`resources/read\` and \`prompts/get\` side by side with its
\`tools/call\`, in one run, on one server process (bench/lib/conduit-server.ts: the CLI demo's
own definitions). Requests: ${METHODS.map((m) => BENCH_REQUESTS[m].what).join("; ")}. Protocol
2025-11-25, \`Accept: application/json, text/event-stream\`, a fresh request id per call,
${connections} keep-alive connections on loopback, autocannon in the benchmark process and the
server alone in its child process. After a pre-flight (5 requests of each kind must answer HTTP
200 with the expected result, again after the load) and a ${warmup} s warm-up each, ${rounds}
rounds of ${duration} s per request kind, rotating the order every round; medians over rounds.
All three go through the same path: tracked in the cancellation registry, cancellable, counted.

- Command: \`npm run bench:http -- --targets conduit --methods tools/call,resources/read,prompts/get --rounds ${rounds} --duration ${duration} --warmup ${warmup}\`
${environment}

${table}

${ratios}
`;
    const section = `\`tools/call\` of a zod-validated \`echo\` tool over Streamable HTTP (protocol 2025-11-25,
\`Accept: application/json, text/event-stream\`, a fresh random request id per call), ${connections}
keep-alive connections on loopback, driven by autocannon in the benchmark process while each
server runs alone in its own child process. After a pre-flight check (HTTP 200 and a valid echo
result from every server) and a ${warmup} s warm-up each, ${rounds} rounds of ${duration} s per
server, rotating the order every round; the table gives the medians over rounds.

- Command: \`npm run bench:http\` (\`node --import tsx bench/http.ts\`)
${environment}

${table}

${ratios}

The SDK server is the one its README points to for stateless use (\`simpleStatelessStreamableHttp\`):
a new \`McpServer\` and \`StreamableHTTPServerTransport({ sessionIdGenerator: undefined })\` per
request, on plain \`node:http\`, with default options (so it answers with a one-event SSE stream).
conduit-mcp answers the same request with one JSON object (no progress token was sent). The bare
server parses the body and answers the same JSON-RPC result, with no validation at all.
`;
    console.log(`\n${table}\n\n${ratios}\n`);
    if (fullRun && !flags["no-write"]) {
      const path = "docs/benchmarks.md";
      let doc = "";
      try {
        doc = readFileSync(path, "utf8");
      } catch {
        doc = "# Benchmarks\n";
      }
      writeFileSync(path, replaceSection(doc, "HTTP", section));
      console.error(`wrote the "## HTTP" section of ${path}`);
    } else if (primitivesRun && !flags["no-write"]) {
      const path = "docs/benchmarks.md";
      const doc = readFileSync(path, "utf8");
      writeFileSync(path, replaceSection(doc, PRIMITIVES_SECTION, primitivesSection));
      console.error(`wrote the "## ${PRIMITIVES_SECTION}" section of ${path}`);
    }
  } finally {
    await cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(`bench:http failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
