/**
 * `npm run bench:redis`: the Redis store next to the memory store, in one run:
 * - cancel-to-abort latency on real `conduit-mcp serve` processes (the CLI, as a deployment would
 *   run it): a `tools/call sleep` on one node, a `notifications/cancelled` POST to the same node
 *   (memory store, Redis store) or to another node on the same Redis (cross-node), sent 25 ms after
 *   the call (before the call is shared in Redis: the cancel is announced) or 150 ms after it (shared:
 *   the cancel is recorded). Measured by this process from just before it sends the cancel POST
 *   until it has received the call's whole -32800 answer: everything a client waits for;
 * - `tools/call echo` throughput (both protocol eras), memory store vs Redis store, with the
 *   bench:http harness (wrk on its own CPU, each server pinned to the other; bench/lib/http-bench.ts):
 *   req/s, latency and server CPU per request, Redis / memory per round.
 * With `--before DIR` (another checkout, e.g. `git worktree add /tmp/base <commit>` with a
 * `node_modules` link) the cross-node latency is also measured on that checkout's CLI nodes, in
 * the same run. Several rounds, rotating the order; medians over rounds. Writes the "## Redis"
 * section of docs/benchmarks.md (not with `--no-write`).
 *
 * Options: `--rounds N` (5), `--samples N` cancels per target per round (40), `--duration S` (5),
 * `--warmup S` (2), `--connections N` (50), `--before DIR`, `--no-write`.
 *
 * @example
 * ```sh
 * node --import tsx bench/redis.ts --rounds 3 --no-write
 * ```
 */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";

import { startRedisServer } from "../test/helpers/redis-server.js";
import { ECHO_HEADERS } from "./lib/echo-request.js";
import { cpuOf, httpMethod, medianOf, ratio, rowOf, runHttpBench } from "./lib/http-bench.js";
import { loadAverage } from "./lib/machine.js";
import { BENCHMARKS_DOC, writeSection } from "./lib/markdown-section.js";
import { positiveInt } from "./lib/positive-int.js";
import { median } from "./lib/stats.js";

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    samples: { type: "string", default: "40" },
    duration: { type: "string", default: "5" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "50" },
    before: { type: "string" },
    "no-write": { type: "boolean", default: false },
  },
});

const rounds = positiveInt("rounds", flags.rounds);
const samplesPerRound = positiveInt("samples", flags.samples);
const duration = positiveInt("duration", flags.duration);
const warmup = positiveInt("warmup", flags.warmup);
const connections = positiveInt("connections", flags.connections);
const beforeDir = flags.before === undefined ? undefined : resolve(flags.before);

/** How long a cancelled call may take before the sample counts as a miss. */
const MISS_MS = 2_000;
/** Cancel sent this long after the call: within the store's 50 ms sharing delay. */
const EARLY_MS = 25;
/** Cancel sent this long after the call: past the sharing delay (shared in Redis). */
const LATE_MS = 150;

interface Node {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * `conduit-mcp serve --port 0 …` through tsx, from `dir` (this checkout by default); resolves once
 * it prints its listening line.
 */
function startNode(args: readonly string[], dir = process.cwd()): Promise<Node> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli/main.ts", "serve", "--port", "0", ...args],
    { stdio: ["ignore", "pipe", "inherit"], cwd: dir },
  );
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      child.once("exit", () => {
        clearTimeout(killer);
        resolve();
      });
      child.kill("SIGTERM");
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("node did not start within 30 s"));
    }, 30_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`node exited early (${code})`));
    });
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", (line) => {
      clearTimeout(timer);
      const url = /^conduit-mcp listening on (\S+)$/.exec(line)?.[1];
      if (url === undefined) {
        child.kill("SIGKILL");
        reject(new Error(`unexpected first line ${JSON.stringify(line)}`));
      } else resolve({ url, child, stop });
    });
  });
}

function post(url: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { ...ECHO_HEADERS },
    body: JSON.stringify(body),
    signal: signal ?? AbortSignal.timeout(10_000),
  });
}

let nextId = 1;

/**
 * One sample: sleep on `callUrl`, cancel on `cancelUrl` `waitMs` later; the latency in ms, or
 * null on a miss.
 */
async function cancelSample(
  callUrl: string,
  cancelUrl: string,
  waitMs: number,
): Promise<number | null> {
  const id = `bench-${nextId++}`;
  const abort = new AbortController();
  let arrived = 0;
  const answer = post(
    callUrl,
    {
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "sleep", arguments: { ms: 5_000 } },
    },
    abort.signal,
  ).then(async (res) => {
    const text = await res.text();
    arrived = performance.now();
    return text;
  });
  answer.catch(() => {});
  await new Promise((resolve) => setTimeout(resolve, waitMs));
  const sent = performance.now();
  const res = await post(cancelUrl, {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: id, reason: "bench" },
  });
  await res.arrayBuffer();
  if (res.status !== 202) throw new Error(`cancel answered ${res.status}`);
  const timer = setTimeout(() => abort.abort(), MISS_MS);
  try {
    const text = await answer;
    if (!text.includes('"code":-32800')) throw new Error(`unexpected answer ${text.slice(0, 200)}`);
    return arrived - sent;
  } catch (error) {
    if (abort.signal.aborted) return null;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** Nearest-rank percentile. */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
  );
}

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

interface LatencyTarget {
  readonly label: string;
  readonly call: string;
  readonly cancel: string;
  readonly waitMs: number;
}

interface LatencyFigures {
  p50: number[];
  p99: number[];
  all: number[];
  misses: number;
}

/** Every latency target, `rounds` times in rotating order; figures per target label. */
async function measureLatency(
  targets: readonly LatencyTarget[],
): Promise<Map<string, LatencyFigures>> {
  for (const t of targets) {
    for (let i = 0; i < 5; i++) await cancelSample(t.call, t.cancel, t.waitMs);
  }
  const lat = new Map<string, LatencyFigures>();
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < targets.length; k++) {
      const t = targets[(k + round) % targets.length];
      if (t === undefined) continue;
      const entry = lat.get(t.label) ?? { p50: [], p99: [], all: [], misses: 0 };
      lat.set(t.label, entry);
      const samples: number[] = [];
      for (let i = 0; i < samplesPerRound; i++) {
        const ms = await cancelSample(t.call, t.cancel, t.waitMs);
        if (ms === null) entry.misses++;
        else samples.push(ms);
      }
      if (samples.length === 0) throw new Error(`${t.label}: every cancel missed`);
      entry.p50.push(percentile(samples, 50));
      entry.p99.push(percentile(samples, 99));
      entry.all.push(...samples);
      console.error(
        `round ${round + 1}/${rounds} cancel ${t.label}: p50 ${fmt(percentile(samples, 50), 1)} ms, p99 ${fmt(percentile(samples, 99), 1)} ms`,
      );
    }
  }
  return lat;
}

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const redis = await startRedisServer();
  let beforeRedis: Awaited<ReturnType<typeof startRedisServer>> | null = null;
  const nodes: Node[] = [];
  let lat: Map<string, LatencyFigures>;
  let targets: LatencyTarget[];
  try {
    const starting = [
      startNode([]),
      startNode(["--redis", redis.url]),
      startNode(["--redis", redis.url]),
    ];
    if (beforeDir !== undefined) {
      // A Redis of their own: the two versions' nodes never hear each other's cancels.
      beforeRedis = await startRedisServer();
      starting.push(startNode(["--redis", beforeRedis.url], beforeDir));
      starting.push(startNode(["--redis", beforeRedis.url], beforeDir));
    }
    const started = await Promise.all(starting);
    nodes.push(...started);
    const [memory, redisA, redisB, beforeA, beforeB] = started as [
      Node,
      Node,
      Node,
      Node | undefined,
      Node | undefined,
    ];
    targets = [
      { label: "memory store, same node", call: memory.url, cancel: memory.url, waitMs: EARLY_MS },
      { label: "Redis store, same node", call: redisA.url, cancel: redisA.url, waitMs: EARLY_MS },
      {
        label: `Redis store, cross-node, cancel ${EARLY_MS} ms after the call (not shared yet: announced)`,
        call: redisA.url,
        cancel: redisB.url,
        waitMs: EARLY_MS,
      },
      {
        label: `Redis store, cross-node, cancel ${LATE_MS} ms after the call (shared: recorded)`,
        call: redisA.url,
        cancel: redisB.url,
        waitMs: LATE_MS,
      },
    ];
    if (beforeA !== undefined && beforeB !== undefined) {
      for (const waitMs of [EARLY_MS, LATE_MS]) {
        targets.push({
          label: `before (--before checkout), cross-node, cancel ${waitMs} ms after the call`,
          call: beforeA.url,
          cancel: beforeB.url,
          waitMs,
        });
      }
    }
    lat = await measureLatency(targets);
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
    await redis.stop();
    await beforeRedis?.stop();
  }

  const http = await runHttpBench({
    targets: ["conduit", "conduit-redis"],
    paths: ["tools/call", "tools/call@2026"],
    rounds,
    duration,
    warmup,
    connections,
  });

  const latencyTable = [
    "| cancel path | p50 ms (median of rounds) | p99 ms (median of rounds) | p99 ms (all samples) | max ms | samples | missed |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...targets.map((t) => {
      const e = lat.get(t.label);
      if (e === undefined) return `| ${t.label} | – | – | – | – | 0 | – |`;
      return `| ${t.label} | ${fmt(median(e.p50), 1)} | ${fmt(median(e.p99), 1)} | ${fmt(percentile(e.all, 99), 1)} | ${fmt(Math.max(...e.all), 1)} | ${e.all.length} | ${e.misses} |`;
    }),
  ].join("\n");
  const throughputLines = [
    "| path | store | req/s (median) | p50 ms | p99 ms | p99 ms, wrk-corrected | server CPU µs/req | req/s per round |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
  ];
  const ratios: string[] = [];
  for (const path of http.options.paths) {
    const memoryRow = rowOf(http, "conduit", path);
    const redisRow = rowOf(http, "conduit-redis", path);
    for (const [label, row] of [
      ["memory store", memoryRow],
      ["Redis store", redisRow],
    ] as const) {
      if (row === undefined) continue;
      throughputLines.push(
        `| ${row.path.label} | ${label} | ${fmt(medianOf(row, "rps"))} | ${fmt(medianOf(row, "p50"), 2)} | ${fmt(medianOf(row, "p99"), 2)} | ${fmt(medianOf(row, "wrkP99"), 2)} | ${fmt(cpuOf(row))} | ${row.rounds.map((r) => fmt(r.rps)).join(" / ")} |`,
      );
    }
    if (memoryRow !== undefined && redisRow !== undefined) {
      ratios.push(
        `- ${memoryRow.path.label}: Redis store / memory store **${fmt(ratio(redisRow, memoryRow), 2)}×** req/s (median of per-round ratios); server CPU per request ${fmt(cpuOf(redisRow) / cpuOf(memoryRow), 2)}× the memory store's`,
      );
    }
  }
  const throughputTable = throughputLines.join("\n");
  const command = `npm run bench:redis${beforeDir === undefined ? "" : " -- --before <checkout>"}`;
  const section = `**Cancel-to-abort latency**: three \`conduit-mcp serve\` processes from the CLI (\`node --import
tsx src/cli/main.ts\`): one with the memory store, two with \`--redis\` on one private
\`redis-server\` (loopback, persistence off), each in its own process${beforeDir === undefined ? "" : ", plus two `--redis` nodes of the `--before` checkout on a Redis of their own"}. A \`tools/call sleep\` (5 s) on
one node, then a \`notifications/cancelled\` POST to the same node or to the other Redis node,
${EARLY_MS} ms after the call (within the store's 50 ms \`shareAfterMs\`: the call is not in Redis yet, so
the cancelling node announces the cancel without a row) or ${LATE_MS} ms after it (the call is shared: the
cancelling node's in-flight check finds it and records a row, which is published). Measured from
just before the cancel POST is sent until the call's whole -32800 answer has been received: the
cancelling node's HTTP handling and Redis calls, pub/sub delivery, the abort and its HTTP answer.
One request at a time, ${samplesPerRound} per target per round, ${rounds} rounds in rotating order; p50/p99 per
round, then the median over rounds (and the pooled p99). "missed": not aborted within
${fmt(MISS_MS / 1000)} s, not counted in the figures (a cancel overtaking its call, which the protocol says
to ignore, would be one).

${latencyTable}

**Throughput**: \`tools/call echo\`, the memory store and the Redis store on the bench:http
harness. ${httpMethod(http, command)}

${throughputTable}

${ratios.join("\n")}

With the Redis store a call that ends within \`shareAfterMs\` (50 ms) and that nobody cancelled
costs no Redis command: its entry is never written, its removal and its clear stay local
([Calls shorter than \`shareAfterMs\`](redis.md#calls-shorter-than-shareafterms)). Before that delay existed every call cost three Redis round
trips (write the in-flight entry, awaited; remove it; clear its key): measured on 2026-12-03 at
commit 599e142 with \`node --import tsx bench/http.ts --targets conduit,conduit-redis --paths
tools/call,tools/call@2026 --rounds 3 --no-write\` (same harness; load average 12.6), the Redis
store answered 0.58× the memory store's req/s on 2025-11-25 \`tools/call\` (server CPU per request
225 µs against 107 µs, 2.10×) and 1.01× on 2026-07-28 (235 µs against 142 µs, 1.65×).

- Latency part: command \`${command}\`, load average ${loadBefore} before it
`;
  console.log(`\n${latencyTable}\n\n${throughputTable}\n\n${ratios.join("\n")}\n`);
  if (!flags["no-write"]) {
    writeSection(BENCHMARKS_DOC, "Redis", section);
  }
}

await main();
