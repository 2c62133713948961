/**
 * `npm run bench:redis`: with the Redis store next to the memory store, in
 * one run, on real `conduit-mcp serve` processes (the CLI, as a deployment would run it):
 * - cancel-to-abort latency: a `tools/call sleep` on one node, a `notifications/cancelled` POST to
 *   the same node (memory store, Redis store) or to another node on the same Redis (cross-node).
 *   Measured by this process from just before it sends the cancel POST until it has received the
 *   call's whole -32800 answer: everything a client waits for (the cancelling node's HTTP handling,
 *   in-flight check and record script, pub/sub delivery, the abort, the answer);
 * - `tools/call echo` throughput with autocannon (50 keep-alive connections), memory vs Redis.
 * Each node and redis-server runs in its own process; this process only drives the load. Several
 * rounds, rotating the order; medians over rounds. Writes the "## Redis" section of
 * docs/benchmarks.md (not with `--no-write`).
 *
 * Options: `--rounds N` (5), `--samples N` cancels per target per round (40), `--duration S` (5),
 * `--warmup S` (2), `--connections N` (50), `--no-write`.
 *
 * @example
 * ```sh
 * node --import tsx bench/redis.ts --rounds 3 --no-write
 * ```
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";

import autocannon from "autocannon";

import { startRedisServer } from "../test/helpers/redis-server.js";
import { ECHO_HEADERS, echoBody } from "./lib/echo-request.js";
import { replaceSection } from "./lib/markdown-section.js";
import { median } from "./lib/stats.js";

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    samples: { type: "string", default: "40" },
    duration: { type: "string", default: "5" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "50" },
    "no-write": { type: "boolean", default: false },
  },
});

function positiveInt(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
}

const rounds = positiveInt("rounds", flags.rounds);
const samplesPerRound = positiveInt("samples", flags.samples);
const duration = positiveInt("duration", flags.duration);
const warmup = positiveInt("warmup", flags.warmup);
const connections = positiveInt("connections", flags.connections);

/** How long a cancelled call may take before the sample counts as a miss. */
const MISS_MS = 2_000;
/** Pause between starting a call and cancelling it, so it is surely in flight (not measured). */
const IN_FLIGHT_WAIT_MS = 25;

interface Node {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** `conduit-mcp serve --port 0 …` through tsx; resolves once it prints its listening line. */
function startNode(args: readonly string[]): Promise<Node> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli/main.ts", "serve", "--port", "0", ...args],
    { stdio: ["ignore", "pipe", "inherit"] },
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

/** One sample: sleep on `callUrl`, cancel on `cancelUrl`; the latency in ms, or null on a miss. */
async function cancelSample(callUrl: string, cancelUrl: string): Promise<number | null> {
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
  await new Promise((resolve) => setTimeout(resolve, IN_FLIGHT_WAIT_MS));
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

/** One autocannon run of `tools/call echo`; fails on any non-2xx answer or error. */
async function load(
  url: string,
  seconds: number,
): Promise<{ rps: number; p50: number; p99: number }> {
  const result = await autocannon({
    url,
    method: "POST",
    headers: { ...ECHO_HEADERS },
    requests: [
      {
        setupRequest: (request) => {
          request.body = echoBody(`tp-${nextId++}`);
          return request;
        },
      },
    ],
    connections,
    duration: seconds,
  });
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${result.non2xx} non-2xx answers and ${result.errors} errors under load`);
  }
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

function machine(): string {
  let model: string | undefined;
  try {
    model = /model name\s*:\s*(.+)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1];
  } catch {
    model = undefined;
  }
  return `${cpus().length} × ${model ?? cpus()[0]?.model ?? "unknown CPU"}, ${process.platform} ${process.arch}, Node ${process.version}`;
}

const load1 = (): string => fmt(loadavg()[0] ?? 0, 2);

async function main(): Promise<void> {
  const loadBefore = load1();
  const redis = await startRedisServer();
  const nodes: Node[] = [];
  try {
    const started = await Promise.all([
      startNode([]),
      startNode(["--redis", redis.url]),
      startNode(["--redis", redis.url]),
    ]);
    nodes.push(...started);
    const [memory, redisA, redisB] = started as [Node, Node, Node];

    const latencyTargets = [
      { label: "memory store, same node", call: memory.url, cancel: memory.url },
      { label: "Redis store, same node", call: redisA.url, cancel: redisA.url },
      { label: "Redis store, cross-node (A → B)", call: redisA.url, cancel: redisB.url },
    ];
    const throughputTargets = [
      { label: "memory store", url: memory.url },
      { label: "Redis store", url: redisA.url },
    ];

    // Warm-up: both kinds of request on every target.
    for (const t of latencyTargets) {
      for (let i = 0; i < 10; i++) await cancelSample(t.call, t.cancel);
    }
    for (const t of throughputTargets) await load(t.url, warmup);

    const lat = new Map<string, { p50: number[]; p99: number[]; all: number[]; misses: number }>();
    const tp = new Map<string, Array<{ rps: number; p50: number; p99: number }>>();
    for (let round = 0; round < rounds; round++) {
      // Rotate the order every round so no target always runs first (or right after autocannon).
      const shift = (list: readonly unknown[]) => round % list.length;
      const lt = latencyTargets.map(
        (_, i) => latencyTargets[(i + shift(latencyTargets)) % latencyTargets.length],
      );
      for (const t of lt) {
        if (t === undefined) continue;
        const entry = lat.get(t.label) ?? { p50: [], p99: [], all: [], misses: 0 };
        lat.set(t.label, entry);
        const samples: number[] = [];
        for (let i = 0; i < samplesPerRound; i++) {
          const ms = await cancelSample(t.call, t.cancel);
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
      const tt = throughputTargets.map(
        (_, i) => throughputTargets[(i + shift(throughputTargets)) % throughputTargets.length],
      );
      for (const t of tt) {
        if (t === undefined) continue;
        const r = await load(t.url, duration);
        const list = tp.get(t.label) ?? [];
        list.push(r);
        tp.set(t.label, list);
        console.error(
          `round ${round + 1}/${rounds} echo ${t.label}: ${fmt(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms`,
        );
      }
    }

    const latencyTable = [
      "| cancel path | p50 ms (median of rounds) | p99 ms (median of rounds) | p99 ms (all samples) | max ms | samples | missed |",
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
      ...latencyTargets.map((t) => {
        const e = lat.get(t.label);
        if (e === undefined) return `| ${t.label} | – | – | – | – | 0 | – |`;
        return `| ${t.label} | ${fmt(median(e.p50), 1)} | ${fmt(median(e.p99), 1)} | ${fmt(percentile(e.all, 99), 1)} | ${fmt(Math.max(...e.all), 1)} | ${e.all.length} | ${e.misses} |`;
      }),
    ].join("\n");
    const throughputTable = [
      "| store | req/s (median) | p50 ms | p99 ms | req/s per round |",
      "| --- | ---: | ---: | ---: | --- |",
      ...throughputTargets.map((t) => {
        const list = tp.get(t.label) ?? [];
        const m = (k: "rps" | "p50" | "p99") => median(list.map((r) => r[k]));
        return `| ${t.label} | ${fmt(m("rps"))} | ${m("p50")} | ${m("p99")} | ${list.map((r) => fmt(r.rps)).join(" / ")} |`;
      }),
    ].join("\n");
    const mem = tp.get("memory store") ?? [];
    const red = tp.get("Redis store") ?? [];
    const ratio = median(red.map((r, i) => r.rps / (mem[i]?.rps ?? Number.NaN)));
    const date = new Date().toISOString().slice(0, 10);
    const section = `Three \`conduit-mcp serve\` processes from the CLI (\`node --import tsx src/cli/main.ts\`): one
with the memory store, two with \`--redis\` on one private \`redis-server\` (loopback, persistence
off), each in its own process; this process only drives the requests. After a warm-up,
${rounds} rounds, rotating the order of the targets every round.

**Cancel-to-abort latency**: a \`tools/call sleep\` (5 s) on one node, then, ${IN_FLIGHT_WAIT_MS} ms later, a
\`notifications/cancelled\` POST to the same node or to the other Redis node. Measured here from just
before the cancel POST is sent until the call's whole -32800 answer has been received: the
cancelling node's HTTP handling, its in-flight check and record (two Redis round trips with
Redis), pub/sub delivery to the node running the call, the abort and its HTTP answer. One
request at a time, ${samplesPerRound} per target per round; p50/p99 per round, then the median over rounds
(with ${samplesPerRound} samples a round's p99 is close to its maximum, so the pooled p99 over all
rounds is given too). "missed": the call was not aborted within ${fmt(MISS_MS / 1000)} s, not counted in the
figures; the likely cause on a loaded machine is the cancel overtaking the call (the node had not
started it within ${IN_FLIGHT_WAIT_MS} ms), which the protocol says to ignore — the Redis targets count it too.

**Throughput**: \`tools/call echo\` (protocol 2025-11-25, a fresh request id per call), ${connections}
keep-alive connections, autocannon, ${duration} s per round per store (${warmup} s warm-up). With Redis every
call tracks and untracks its in-flight entry and clears its key: three Redis round trips
(Lua scripts by SHA) per call.

- Command: \`npm run bench:redis\` (\`node --import tsx bench/redis.ts\`)
- Date: ${date}
- Machine: ${machine()}; redis-server on the same machine; 1-minute load average ${loadBefore} before the
  run, ${load1()} after (on ${cpus().length} cores, anything above ~0.1 besides this benchmark means other
  work competed)

${latencyTable}

${throughputTable}

- Redis store / memory store: **${fmt(ratio * 100, 0)} %** of the throughput (median of per-round ratios)
`;
    console.log(
      `\n${latencyTable}\n\n${throughputTable}\n\nRedis / memory throughput: ${fmt(ratio * 100, 0)} %\n`,
    );
    if (!flags["no-write"]) {
      const path = "docs/benchmarks.md";
      let doc = "";
      try {
        doc = readFileSync(path, "utf8");
      } catch {
        doc = "# Benchmarks\n";
      }
      // Re-read just before writing: other benchmarks own other sections of the same file.
      writeFileSync(path, replaceSection(doc, "Redis", section));
      console.error(`wrote the "## Redis" section of ${path}`);
    }
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
    await redis.stop();
  }
}

await main();
