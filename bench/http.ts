/**
 * `npm run bench:http` — requests/s and p50/p99 latency of `tools/call echo` over loopback with 50
 * connections, side by side in one run (issue 3, "Must show"):
 *
 * - conduit-mcp (`createMcpServer` + the CLI's zod-validated `echo` tool),
 * - the official SDK 1.x's documented stateless Streamable HTTP server (new server + transport per
 *   request, same tool),
 * - a bare `node:http` server answering the same JSON-RPC result (the ceiling).
 *
 * Each target runs in its own child process; this process only drives autocannon, so on a 2-core
 * machine one core serves and one core loads. After a pre-flight check (HTTP 200 and a valid echo
 * result from every target, else the run fails), each target gets a warm-up, then several rounds
 * whose order rotates so slow drift (thermal, other tenants) spreads evenly; medians are reported.
 * The results table is printed and written to the "## HTTP" section of docs/benchmarks.md.
 *
 * Options: `--rounds N` (5), `--duration S` (5), `--warmup S` (3), `--connections N` (50),
 * `--targets conduit,sdk,bare` (a subset, for debugging; only a full run writes the docs),
 * `--no-write` (print only).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";

import autocannon from "autocannon";

import { type RunningTarget, startTarget } from "./lib/child.js";
import { ECHO_HEADERS, echoBody, parseEchoResponse } from "./lib/echo-request.js";
import { replaceSection } from "./lib/markdown-section.js";
import { median } from "./lib/stats.js";

interface TargetSpec {
  readonly key: "conduit" | "sdk" | "bare";
  readonly label: string;
  readonly script: string;
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
    "no-write": { type: "boolean", default: false },
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
if (wanted.size > 0 || TARGETS.length === 0) {
  console.error(`bench:http: --targets takes a list of conduit, sdk, bare; got ${flags.targets}`);
  process.exit(2);
}
const fullRun = TARGETS.length === ALL_TARGETS.length;

/** Several sequential requests per target: each must be HTTP 200 with the echoed text. */
async function preflight(spec: TargetSpec, url: string): Promise<string> {
  let contentType = "";
  for (let id = 1; id <= 5; id++) {
    const res = await fetch(url, {
      method: "POST",
      headers: ECHO_HEADERS,
      body: echoBody(id),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    contentType = res.headers.get("content-type")?.split(";")[0] ?? "";
    try {
      parseEchoResponse(res.status, res.headers.get("content-type"), text, id);
    } catch (error) {
      throw new Error(`pre-flight failed for ${spec.label} (${url}): ${(error as Error).message}`);
    }
  }
  return contentType;
}

let nextId = 1_000;

/** One autocannon run; fails when any answer was not 2xx or a connection failed. */
async function load(spec: TargetSpec, url: string, seconds: number): Promise<RoundResult> {
  const result = await autocannon({
    url,
    method: "POST",
    headers: { ...ECHO_HEADERS },
    // A fresh id per request, as a real client sends. (autocannon's `idReplacement` keeps the
    // Content-Length of the placeholder body, so servers hang waiting for the rest: not used.)
    requests: [
      {
        setupRequest: (request) => {
          request.body = echoBody(++nextId);
          return request;
        },
      },
    ],
    connections,
    duration: seconds,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(
      `${spec.label}: ${result.non2xx} non-2xx answers and ${result.errors} errors under load`,
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
  const answerType = new Map<TargetSpec["key"], string>();
  const cleanup = async (): Promise<void> => {
    await Promise.all([...running.values()].map((target) => target.stop()));
  };
  process.once("SIGINT", () => void cleanup().then(() => process.exit(130)));
  try {
    for (const spec of TARGETS) {
      const target = await startTarget(spec.script);
      running.set(spec.key, target);
      answerType.set(spec.key, await preflight(spec, target.url));
      console.error(`pre-flight ok: ${spec.label} at ${target.url}`);
    }
    const urlOf = (spec: TargetSpec): string => (running.get(spec.key) as RunningTarget).url;

    for (const spec of TARGETS) {
      console.error(`warm-up ${spec.label} (${warmup} s)`);
      await load(spec, urlOf(spec), warmup);
    }
    const results = new Map<TargetSpec["key"], RoundResult[]>(TARGETS.map((t) => [t.key, []]));
    for (let round = 0; round < rounds; round++) {
      // Rotate the order each round so no target always runs first or last.
      const order = TARGETS.map((_, i) => TARGETS[(i + round) % TARGETS.length] as TargetSpec);
      for (const spec of order) {
        const r = await load(spec, urlOf(spec), duration);
        results.get(spec.key)?.push(r);
        console.error(
          `round ${round + 1}/${rounds} ${spec.label}: ${fmt(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms`,
        );
      }
    }
    // The targets must still answer correctly after the load, or the figures mean nothing.
    for (const spec of TARGETS) await preflight(spec, urlOf(spec));

    const med = (key: TargetSpec["key"]): RoundResult => {
      const rs = results.get(key) ?? [];
      return {
        rps: median(rs.map((r) => r.rps)),
        p50: median(rs.map((r) => r.p50)),
        p99: median(rs.map((r) => r.p99)),
      };
    };
    const rows = TARGETS.map((spec) => {
      const m = med(spec.key);
      const all = (results.get(spec.key) ?? []).map((r) => fmt(r.rps)).join(" / ");
      const answer = answerType.get(spec.key) ?? "?";
      return `| ${spec.label} | ${fmt(m.rps)} | ${m.p50} | ${m.p99} | ${all} | ${answer} |`;
    });
    const table = [
      "| target | req/s (median) | p50 ms | p99 ms | req/s per round | answer |",
      "| --- | ---: | ---: | ---: | --- | --- |",
      ...rows,
    ].join("\n");
    // Ratios within a round compare runs seconds apart, under the same background load; their
    // median is steadier than a ratio of medians when the machine is shared.
    const perRound = (a: TargetSpec["key"], b: TargetSpec["key"]): number[] => {
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
      : "(partial run: no ratios)";
    const date = new Date().toISOString().slice(0, 10);
    const section = `\`tools/call\` of a zod-validated \`echo\` tool over Streamable HTTP (protocol 2025-11-25,
\`Accept: application/json, text/event-stream\`, a fresh random request id per call), ${connections}
keep-alive connections on loopback, driven by autocannon in the benchmark process while each
server runs alone in its own child process. After a pre-flight check (HTTP 200 and a valid echo
result from every server) and a ${warmup} s warm-up each, ${rounds} rounds of ${duration} s per
server, rotating the order every round; the table gives the medians over rounds.

- Command: \`npm run bench:http\` (\`node --import tsx bench/http.ts\`)
- Date: ${date}
- Machine: ${machine()}; 1-minute load average ${loadBefore} before the run, ${loadAverage()} after
  (on ${cpus().length} cores, anything above ~0.1 besides this benchmark means other work competed)

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
    }
  } finally {
    await cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(`bench:http failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
