/**
 * `npm run bench:telemetry` — what tracing costs per call: requests/s and p50/p99 latency of
 * `tools/call echo` over loopback against four conduit-mcp processes that differ only in tracing
 * (bench/lib/telemetry-server.ts): `off` (`tracing: false`), `absent` (`@opentelemetry/api` not
 * resolvable: a user without the package), `noop` (the API installed, no SDK) and `on` (an SDK
 * provider recording every span, exporter dropping them).
 *
 * The question it answers: does the absent API cost anything on the per-call path? So the figures
 * that matter are ratios to `off`, measured in the same run: each round loads every target once,
 * in a rotating order (slow drift on a shared machine spreads evenly); each round's ratio to that
 * round's `off` pairs measurements taken seconds apart, and the table reports the median of those
 * paired ratios with their range, next to the median req/s. When `taskset` exists, the servers are pinned to the last CPU and this process (the
 * load generator, autocannon) to the first, so the two never compete for one core.
 *
 * Options: `--rounds N` (9), `--duration S` (3), `--warmup S` (2), `--connections N` (50),
 * `--no-write` (print only; otherwise the "## Tracing" section of docs/benchmarks.md is written).
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";

import { type RunningTarget, startTarget } from "./lib/child.js";
import { echoLoad, type LoadResult, preflightEcho } from "./lib/echo-load.js";
import { machineLine } from "./lib/machine.js";
import { replaceSection } from "./lib/markdown-section.js";
import { positiveInt } from "./lib/positive-int.js";
import { median } from "./lib/stats.js";

const MODES = [
  { key: "off", label: "`tracing: false`" },
  { key: "absent", label: "API not installed (default options)" },
  { key: "noop", label: "API installed, no SDK (default options)" },
  { key: "on", label: "SDK recording every span (batch processor, exporter drops them)" },
] as const;
type Mode = (typeof MODES)[number]["key"];

const SECTION = "Tracing";

const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "9" },
    duration: { type: "string", default: "3" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "50" },
    "no-write": { type: "boolean", default: false },
  },
  strict: true,
});

const rounds = positiveInt("rounds", flags.rounds);
const duration = positiveInt("duration", flags.duration);
const warmup = positiveInt("warmup", flags.warmup);
const connections = positiveInt("connections", flags.connections);

/** Pins `pid` to `cpu` when taskset exists; says whether it did. */
function pin(pid: number, cpu: number): boolean {
  try {
    execFileSync("taskset", ["-pc", String(cpu), String(pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

async function start(mode: Mode): Promise<RunningTarget> {
  process.env.BENCH_TELEMETRY = mode;
  try {
    return await startTarget("bench/lib/telemetry-server.ts");
  } finally {
    delete process.env.BENCH_TELEMETRY;
  }
}

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

const began = Date.now();
const loadBefore = loadavg()[0] ?? 0;
const last = cpus().length - 1;
const pinned = last > 0 && pin(process.pid, 0);
const targets = new Map<Mode, RunningTarget>();
try {
  for (const { key } of MODES) {
    const target = await start(key);
    targets.set(key, target);
    if (pinned && target.child.pid !== undefined) pin(target.child.pid, last);
    await preflightEcho(key, target.url);
  }
  for (const { key } of MODES) {
    console.error(`warm-up ${key}`);
    await echoLoad(key, (targets.get(key) as RunningTarget).url, warmup, connections);
  }
  const results = new Map<Mode, LoadResult[]>(MODES.map(({ key }) => [key, []]));
  for (let round = 0; round < rounds; round++) {
    const order = MODES.map((_, i) => MODES[(i + round) % MODES.length] as (typeof MODES)[number]);
    for (const { key } of order) {
      const result = await echoLoad(
        key,
        (targets.get(key) as RunningTarget).url,
        duration,
        connections,
      );
      results.get(key)?.push(result);
      console.error(`round ${round + 1}/${rounds} ${key}: ${fmt(result.rps)} req/s`);
    }
  }
  const loadAfter = loadavg()[0] ?? 0;
  const medians = new Map(
    MODES.map(({ key }) => {
      const rows = results.get(key) ?? [];
      return [
        key,
        {
          rps: median(rows.map((r) => r.rps)),
          p50: median(rows.map((r) => r.p50)),
          p99: median(rows.map((r) => r.p99)),
          min: Math.min(...rows.map((r) => r.rps)),
          max: Math.max(...rows.map((r) => r.rps)),
        },
      ];
    }),
  );
  const offRounds = results.get("off") ?? [];
  /** Each round's req/s over that round's `off`: paired, so drift between rounds cancels. */
  const ratios = (key: Mode): number[] =>
    (results.get(key) ?? []).map((r, i) => r.rps / (offRounds[i]?.rps ?? Number.NaN));
  const lines = [
    "| Tracing | req/s (median) | req/s range | vs `off` (median of paired ratios) | ratio range | p50 ms | p99 ms |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...MODES.map(({ key, label }) => {
      const m = medians.get(key) as NonNullable<ReturnType<typeof medians.get>>;
      const r = ratios(key);
      return `| ${label} | ${fmt(m.rps)} | ${fmt(m.min)}–${fmt(m.max)} | ${fmt(median(r), 2)} | ${fmt(Math.min(...r), 2)}–${fmt(Math.max(...r), 2)} | ${fmt(m.p50, 1)} | ${fmt(m.p99, 1)} |`;
    }),
  ];
  const body = `What tracing costs a \`tools/call echo\` (zod-validated argument) over loopback with
${connections} connections, one conduit-mcp process per row (bench/lib/telemetry-server.ts), all
measured in the same run: ${rounds} rounds of ${duration} s per row in a rotating order after a
${warmup} s warm-up; medians. ${pinned ? `The servers were pinned to CPU ${last} and the load generator to CPU 0 (\`taskset\`).` : "No CPU pinning (`taskset` unavailable)."}
The column that matters is the ratio to \`off\`: each round's req/s divided by \`off\`'s in the
same round (measured seconds apart), median over the rounds. "API not installed" takes the same
per-call path as \`tracing: false\` (no observer is added; the one import attempt happens at
start), so its ratio differs from 1 only by the noise the ratio range shows.
${loadBefore > cpus().length ? `The load average exceeded the ${cpus().length} cores throughout, so single rounds swing widely (see the ranges); read the medians of the paired ratios, not one round.` : ""}

${lines.join("\n")}

- Machine: ${machineLine()}; load average ${fmt(loadBefore, 2)} before, ${fmt(loadAfter, 2)} after (a shared machine: other work ran at the same time)
- Command: \`npm run bench:telemetry -- --rounds ${rounds} --duration ${duration} --warmup ${warmup} --connections ${connections}\` (${fmt((Date.now() - began) / 1000)} s)
`;
  console.log(lines.join("\n"));
  if (!flags["no-write"]) {
    const doc = "docs/benchmarks.md";
    writeFileSync(doc, replaceSection(readFileSync(doc, "utf8"), SECTION, body));
    console.error(`wrote the "## ${SECTION}" section of ${doc}`);
  }
} finally {
  await Promise.all([...targets.values()].map((target) => target.stop()));
}
