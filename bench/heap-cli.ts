/**
 * `npm run bench:heap` — heap per in-flight call of conduit-mcp next to bare `node:http`'s heap
 * per open request (the floor), in one run: the heap step of `npm run bench` (bench/heap.ts) on
 * its own, in a few minutes, printed only (docs/benchmarks.md is `npm run bench`'s to write).
 *
 * Each target runs in its own process: bench/lib/probe-server.ts (conduit-mcp, memory store,
 * its compiled build, as `npm run bench` measures it) and bench/lib/bare-hold-server.ts, once
 * bare (the floor) and once holding what the sleep tool itself holds in any server (an
 * `AbortController` listened to, a timer, a promise: conduit-mcp's figure minus this one is
 * conduit-mcp's own cost per call). Each
 * round holds `--calls` 2025-11-25 `tools/call sleep` open, one connection each, and reads the
 * heap after full GCs; targets take turns round by round; the figure is the median of rounds.
 *
 * Options: `--calls N` (2000), `--rounds N` (3), `--src` (run conduit-mcp's TypeScript sources
 * through tsx instead of compiling them first), `--baseline DIR` (another checkout, e.g.
 * `git worktree add /tmp/base <commit>` with a `node_modules` link, measured as a third target:
 * before/after figures in one run), `--snapshot` (after the rounds, heap snapshots of every
 * target at rest and with `--snapshot-calls` (500) calls held, compared by kind: what one call
 * keeps alive, bench/lib/heap-snapshot-diff.ts; the snapshot files are deleted afterwards).
 */
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";

import { measureHeapPerRequest, snapshotHeldCalls } from "./heap.js";
import { buildDist } from "./lib/bench-targets.js";
import { type RunningTarget, startTarget } from "./lib/child.js";
import { diffSnapshots, formatDiff } from "./lib/heap-snapshot-diff.js";
import { loadAverage, machineLine } from "./lib/machine.js";
import { positiveInt } from "./lib/positive-int.js";
import { median } from "./lib/stats.js";

const { values: flags } = parseArgs({
  options: {
    calls: { type: "string", default: "2000" },
    rounds: { type: "string", default: "3" },
    src: { type: "boolean", default: false },
    baseline: { type: "string" },
    snapshot: { type: "boolean", default: false },
    "snapshot-calls": { type: "string", default: "500" },
  },
  strict: true,
});

const calls = positiveInt("calls", flags.calls);
const rounds = positiveInt("rounds", flags.rounds);
const snapshotCalls = positiveInt("snapshot-calls", flags["snapshot-calls"]);

interface Target {
  readonly label: string;
  readonly script: string;
  readonly env: Record<string, string>;
  running?: RunningTarget;
  readonly bytes: number[];
}

const fmt = (n: number): string => n.toLocaleString("en-US", { maximumFractionDigits: 0 });

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const env = (dir: string): Record<string, string> =>
    flags.src ? {} : { BENCH_CONDUIT_BUILD: buildDist(dir) };
  const targets: Target[] = [
    { label: "bare node:http", script: "bench/lib/bare-hold-server.ts", env: {}, bytes: [] },
    {
      label: "bare node:http + the sleep tool's own objects",
      script: "bench/lib/bare-hold-server.ts",
      env: { BENCH_BARE_SLEEP: "1" },
      bytes: [],
    },
    {
      label: "conduit-mcp",
      script: "bench/lib/probe-server.ts",
      env: env(process.cwd()),
      bytes: [],
    },
  ];
  if (flags.baseline !== undefined) {
    const dir = resolve(flags.baseline);
    targets.push({
      label: `conduit-mcp at ${dir} (baseline)`,
      script: `${dir}/bench/lib/probe-server.ts`,
      env: env(dir),
      bytes: [],
    });
  }
  try {
    for (const target of targets) {
      target.running = await startTarget(target.script, { env: target.env });
    }
    for (let round = 0; round < rounds; round++) {
      for (const target of targets) {
        const bytes = await measureHeapPerRequest((target.running as RunningTarget).url, calls);
        target.bytes.push(bytes);
        console.error(`round ${round + 1}/${rounds} ${target.label}: ${fmt(bytes)} B`);
      }
    }
    const floor = median(targets[0]?.bytes ?? []);
    console.log(
      `\nHeap per held request, ${fmt(calls)} concurrent 2025-11-25 tools/call sleep (one connection each), median of ${rounds} rounds`,
    );
    console.log("| target | bytes per held request | rounds | × bare |");
    console.log("| --- | ---: | --- | ---: |");
    // The first target is the floor every ratio is taken against.
    for (const target of targets) {
      const value = median(target.bytes);
      console.log(
        `| ${target.label} | ${fmt(value)} | ${target.bytes.map(fmt).join(" / ")} | ${(value / floor).toFixed(2)} |`,
      );
    }
    if (flags.snapshot) {
      for (const target of targets) {
        const { before, during } = await snapshotHeldCalls(
          (target.running as RunningTarget).url,
          snapshotCalls,
        );
        try {
          console.log(`\nWhat one held request adds, ${target.label} (${snapshotCalls} held):`);
          console.log(formatDiff(diffSnapshots(before, during, snapshotCalls), 40));
        } finally {
          rmSync(before, { force: true });
          rmSync(during, { force: true });
        }
      }
    }
    console.log(
      `\n${machineLine()}; conduit-mcp ${flags.src ? "sources through tsx" : "compiled build"}; load average ${loadBefore} before, ${loadAverage()} after`,
    );
  } finally {
    await Promise.all(targets.map((target) => target.running?.stop()));
  }
}

await main();
