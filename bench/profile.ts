/**
 * `npm run bench:profile -- --label after` — profiles conduit-mcp's per-call path: the compiled
 * conduit-mcp target (bench/lib/conduit-server.ts) runs under `node --cpu-prof` while `wrk`
 * loads it (bench/lib/http-bench.ts: pinned CPUs, one path per run), then the profile is
 * summarised into docs/profile.md: the section `## <label>` gets, per path, the frames with the
 * most self time, the share of time under each part of the code, and a flame graph
 * (docs/profile-<label>-<path>.svg, drawn by bench/lib/cpu-profile.ts).
 *
 * Options: `--label NAME` (section and file names; default `current`), `--paths a,b`
 * (default: the three benchmark paths), `--duration S` (10), `--top N` (25 frames).
 */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";

import { BENCH_PATHS, type BenchPathKey, DEFAULT_PATHS } from "./lib/bench-paths.js";
import {
  type CpuProfile,
  flameGraph,
  readCpuProfile,
  topSelfFrames,
  totalShare,
} from "./lib/cpu-profile.js";
import { cpuOf, medianOf, rowOf, runHttpBench } from "./lib/http-bench.js";
import { loadAverage, machineLine } from "./lib/machine.js";
import { replaceSection } from "./lib/markdown-section.js";

const { values: flags } = parseArgs({
  options: {
    label: { type: "string", default: "current" },
    paths: { type: "string", default: DEFAULT_PATHS.join(",") },
    duration: { type: "string", default: "10" },
    top: { type: "string", default: "25" },
  },
  strict: true,
});
const label = flags.label.replace(/[^A-Za-z0-9_-]/g, "-");
const paths = flags.paths.split(",").map((p) => p.trim()) as BenchPathKey[];
const duration = Number(flags.duration);
const top = Number(flags.top);
const DOC = "docs/profile.md";

const pct = (share: number): string => `${(share * 100).toFixed(1)} %`;

/** Shares of total time under each part of the stack, for the summary line. */
function areas(profile: CpuProfile): string {
  const parts: [string, (name: string) => boolean][] = [
    ["conduit-mcp src/http", (n) => n.includes("dist/http/")],
    ["src/protocol", (n) => n.includes("dist/protocol/")],
    ["src/cancellation", (n) => n.includes("dist/cancellation/")],
    ["zod", (n) => n.includes("zod/")],
    ["GC", (n) => n.startsWith("(garbage collector)")],
    ["idle", (n) => n.startsWith("(idle)")],
  ];
  return parts.map(([name, match]) => `${name} ${pct(totalShare(profile, match))}`).join(", ");
}

const sections: string[] = [];
for (const key of paths) {
  const dir = mkdtempSync(join(tmpdir(), "conduit-prof-"));
  const result = await runHttpBench({
    targets: ["conduit"],
    paths: [key],
    rounds: 1,
    duration,
    warmup: 2,
    connections: 50,
    conduitNodeArgs: ["--cpu-prof", "--cpu-prof-dir", dir],
  });
  // The main thread's profile is the largest file (the ESM loader thread writes one too).
  const file = readdirSync(dir)
    .map((name) => join(dir, name))
    .sort((a, b) => statSync(b).size - statSync(a).size)[0];
  if (file === undefined) throw new Error(`no profile written in ${dir}`);
  const profile = readCpuProfile(file);
  const row = rowOf(result, "conduit", key);
  const svgName = `profile-${label}-${key.replace(/[^A-Za-z0-9]+/g, "-")}.svg`;
  writeFileSync(
    join("docs", svgName),
    flameGraph(profile, `conduit-mcp ${BENCH_PATHS[key].label}, ${label}, under wrk load`),
  );
  const frames = topSelfFrames(profile, top).map(
    (f) =>
      `| ${pct(f.self)} | ${f.kind} | \`${f.name.replace(/^(.*\()\/.*?\/(dist|src)\//, "$1$2/")}\` |`,
  );
  sections.push(`### ${BENCH_PATHS[key].label}

${duration} s under load (plus start-up and a 2 s warm-up, which the profile includes):
${Math.round(medianOf(row, "rps")).toLocaleString("en-US")} req/s, ${Math.round(cpuOf(row))} µs of server CPU per
request (profiling slows it). Time under: ${areas(profile)}.

![flame graph](${svgName})

| self | where | frame |
| ---: | --- | --- |
${frames.join("\n")}`);
}

const body = `Command: \`npm run bench:profile -- --label ${label}\`; ${new Date().toISOString().slice(0, 10)};
${machineLine()}; load average ${loadAverage()} at the end.

${sections.join("\n\n")}`;
let doc = "# Profile of the per-call path\n";
try {
  doc = readFileSync(DOC, "utf8");
} catch {
  // A first run writes a new file.
}
writeFileSync(DOC, replaceSection(doc, label, body));
console.error(`wrote the "## ${label}" section of ${DOC}`);
