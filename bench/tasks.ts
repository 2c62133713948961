/**
 * `npm run bench:tasks`: task create → `tasks/cancel` → handler aborted, on real `conduit-mcp
 * serve` processes (the CLI with the probe module test/tasks-redis/fixtures/probe-tools.ts, whose
 * `hold` task prints the moment its `ctx.signal` aborts):
 * - same node, memory task store (`serve` without `--redis`);
 * - same node, Redis task store (`--redis`);
 * - cross node: the task runs on node A, `tasks/cancel` goes to node B (both `--redis`, one Redis).
 * Each sample creates a task (`tools/call` with `task`, 2025-11-25), waits until `tasks/get`
 * answers `working`, then measures from just before the `tasks/cancel` POST is sent (this process)
 * until the handler saw its signal abort (the node's own clock, printed by the handler; both are
 * `performance.timeOrigin + performance.now()`, comparable between processes of one machine).
 * Several rounds, rotating the order of the targets; p50/p99 per round, medians over rounds.
 * Writes the "## Tasks" section of docs/benchmarks.md (not with `--no-write`).
 *
 * Options: `--rounds N` (5), `--samples N` cancels per target per round (30), `--no-write`.
 *
 * @example
 * ```sh
 * node --import tsx bench/tasks.ts --rounds 2 --samples 10 --no-write
 * ```
 */
import { cpus } from "node:os";
import { parseArgs } from "node:util";

import { startRedisServer } from "../test/helpers/redis-server.js";
import {
  cancelTask,
  createTask,
  epochNow,
  getTask,
  startProbeNode,
  type TaskNode,
} from "../test/tasks-redis/task-nodes.js";
import { loadAverage, machineLine } from "./lib/machine.js";
import { BENCHMARKS_DOC, writeSection } from "./lib/markdown-section.js";
import { positiveInt } from "./lib/positive-int.js";
import { median } from "./lib/stats.js";

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    samples: { type: "string", default: "30" },
    "no-write": { type: "boolean", default: false },
  },
});

const rounds = positiveInt("rounds", flags.rounds);
const samplesPerRound = positiveInt("samples", flags.samples);
/** A sample whose handler has not aborted within this long counts as missed. */
const MISS_MS = 5_000;
/** No authentication: every request comes from 127.0.0.1, one IP scope. */
const NO_AUTH: Readonly<Record<string, string>> = {};

let nextTag = 0;

/** One sample: a `hold` task on `run`, cancelled through `cancel`; ms, or null when missed. */
async function sample(run: TaskNode, cancel: TaskNode): Promise<number | null> {
  const tag = `bench-${nextTag++}`;
  const created = await createTask(run.url, "hold", { tag, ms: 60_000 }, NO_AUTH);
  if (created.task === undefined) throw new Error(`create refused: ${JSON.stringify(created)}`);
  const { taskId } = created.task;
  const read = await getTask(run.url, taskId, NO_AUTH);
  if (read.task?.status !== "working") throw new Error(`not working: ${JSON.stringify(read)}`);
  const sent = epochNow();
  const cancelled = await cancelTask(cancel.url, taskId, NO_AUTH);
  if (cancelled.task?.status !== "cancelled") {
    throw new Error(`cancel answered ${JSON.stringify(cancelled)}`);
  }
  const abortedAt = await run.abortOf(tag, MISS_MS);
  return abortedAt === null ? null : abortedAt - sent;
}

/** Nearest-rank percentile. */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
  );
}

const fmt = (n: number, digits = 1): string =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const redis = await startRedisServer();
  const nodes: TaskNode[] = [];
  try {
    const started = await Promise.all([
      startProbeNode([]),
      startProbeNode(["--redis", redis.url]),
      startProbeNode(["--redis", redis.url]),
    ]);
    nodes.push(...started);
    const [memory, redisA, redisB] = started as [TaskNode, TaskNode, TaskNode];
    const targets = [
      { label: "memory task store, same node", run: memory, cancel: memory },
      { label: "Redis task store, same node", run: redisA, cancel: redisA },
      { label: "Redis task store, cross node (A runs, B cancels)", run: redisA, cancel: redisB },
    ];
    // Warm-up: first connections, script loading, JIT.
    for (const t of targets) for (let i = 0; i < 5; i++) await sample(t.run, t.cancel);

    const results = new Map<
      string,
      { p50: number[]; p99: number[]; all: number[]; misses: number }
    >();
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < targets.length; k++) {
        const t = targets[(k + round) % targets.length];
        if (t === undefined) continue;
        const entry = results.get(t.label) ?? { p50: [], p99: [], all: [], misses: 0 };
        results.set(t.label, entry);
        const samples: number[] = [];
        for (let i = 0; i < samplesPerRound; i++) {
          const ms = await sample(t.run, t.cancel);
          if (ms === null) entry.misses++;
          else samples.push(ms);
        }
        if (samples.length === 0) throw new Error(`${t.label}: every cancel missed`);
        entry.p50.push(percentile(samples, 50));
        entry.p99.push(percentile(samples, 99));
        entry.all.push(...samples);
        console.error(
          `round ${round + 1}/${rounds} ${t.label}: p50 ${fmt(percentile(samples, 50))} ms, p99 ${fmt(percentile(samples, 99))} ms`,
        );
      }
    }

    const table = [
      "| path | p50 ms (median of rounds) | p99 ms (median of rounds) | p99 ms (all samples) | max ms | samples | missed |",
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
      ...targets.map((t) => {
        const e = results.get(t.label);
        if (e === undefined) return `| ${t.label} | – | – | – | – | 0 | – |`;
        return `| ${t.label} | ${fmt(median(e.p50))} | ${fmt(median(e.p99))} | ${fmt(percentile(e.all, 99))} | ${fmt(Math.max(...e.all))} | ${e.all.length} | ${e.misses} |`;
      }),
    ].join("\n");
    const section = `Task create → \`tasks/cancel\` → handler aborted, on three \`conduit-mcp serve\` processes
serving the probe module \`test/tasks-redis/fixtures/probe-tools.ts\`: one with the memory task
store, two with \`--redis\` on one private \`redis-server\` (loopback, persistence off). Each sample
creates a \`hold\` task (\`tools/call\` with \`task\`, 2025-11-25), waits for \`tasks/get\` to
answer \`working\`, then measures from just before the \`tasks/cancel\` POST is sent until the
handler on the node running the task sees its \`ctx.signal\` abort (the handler prints the time;
both clocks are \`performance.timeOrigin + performance.now()\`). Cross node, the cancel goes to node
B: B's check-and-set in Redis publishes the task's change, then B's registry cancel publishes the
cancel; whichever reaches node A first aborts the handler. One request at a time, ${samplesPerRound} samples per
target per round, ${rounds} rounds rotating the order; "missed": no abort within ${fmt(MISS_MS / 1000, 0)} s.

- Command: \`npm run bench:tasks\` (\`node --import tsx bench/tasks.ts\`)
- Date: ${new Date().toISOString().slice(0, 10)}
- Machine: ${machineLine()}; redis-server on the same machine; load average ${loadBefore} before the
  run, ${loadAverage()} after (on ${cpus().length} cores)

${table}
`;
    console.log(`\n${table}\n`);
    if (!flags["no-write"]) {
      writeSection(BENCHMARKS_DOC, "Tasks", section);
    }
  } finally {
    await Promise.all(nodes.map((n) => n.cli.kill()));
    await redis.stop();
  }
}

await main();
