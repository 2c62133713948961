/**
 * `npm run conformance` — runs the official MCP conformance suite (stable release,
 * @modelcontextprotocol/conformance 0.1.x, installed as `conformance-stable`) against
 * examples/conformance-server.ts, one in-scope scenario at a time.
 *
 * - The server is started on a free port and killed at the end, whatever happens.
 * - On Node < 22 the suite runs through the loader shim in ../shared/tools/conformance-on-node20/
 *   (resolved from the repo root, else from its nearest ancestor with shared/ beside it: CI
 *   clones the repo with shared/ beside it), plus
 *   scripts/lib/conformance-alias-register.mjs which lets that shim recognise the aliased install.
 * - conformance/baseline-stable.yml lists expected failures (each with its reason); the suite's
 *   own `--expected-failures` check decides each scenario's exit code, so an unexpected failure
 *   *and* a stale baseline entry both fail the run.
 * - Every step is bounded by a timeout; output goes under .conformance/ (gitignored).
 *
 * Then the alpha release (@modelcontextprotocol/conformance 0.2.0-alpha, installed as
 * `conformance-alpha`) runs against the same server once per requirement set, `--requirements
 * 2026-07-28` and `--requirements 2025-11-25` (the suite then fixes which scenarios run; it cannot
 * be combined with `--scenario`), each checked against conformance/baseline-alpha-<set>.yml, whose
 * entries are the out-of-scope scenarios and checks, each with its reason.
 *
 * Last, the alpha release's extension scenarios (the `tasks-*` scenarios of the
 * `io.modelcontextprotocol/tasks` extension, SEP-2663): `--requirements` leaves extensions out,
 * so each runs on its own with `--scenario`, against conformance/baseline-alpha-extensions.yml.
 *
 * Options: `--scenario NAME` (repeatable; default: every in-scope scenario; stable suite only, the
 * alpha runs are then skipped), `--suite stable|alpha|all` (default all), `--server FILE`
 * (another server script whose first stdout line contains its URL), `--timeout MS` per scenario
 * (60 000; an alpha requirement set gets 4×), `--verbose` (print the suite's full output).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

/** Server scenarios of the stable suite that this project must pass. */
const IN_SCOPE = [
  "server-initialize",
  "ping",
  "tools-list",
  "tools-call-simple-text",
  "tools-call-image",
  "tools-call-audio",
  "tools-call-embedded-resource",
  "tools-call-mixed-content",
  "tools-call-with-logging",
  "tools-call-error",
  "tools-call-with-progress",
  "json-schema-2020-12",
  "dns-rebinding-protection",
] as const;

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const suiteEntry = join(root, "node_modules/conformance-stable/dist/index.js");
const baseline = join(root, "conformance/baseline-stable.yml");
const outputRoot = join(root, ".conformance/stable");
const alphaEntry = join(root, "node_modules/conformance-alpha/dist/index.js");
/** Extension scenarios of the alpha suite, run one at a time (docs/tasks.md). */
const ALPHA_EXTENSION_SCENARIOS = [
  "tasks-lifecycle",
  "tasks-capability-negotiation",
  "tasks-wire-fields",
  "tasks-request-state-removal",
  "tasks-request-headers",
  "tasks-dispatch-and-envelope",
  "tasks-status-notifications",
  "tasks-required-task-error",
  "tasks-mrtr-input",
  "tasks-mrtr-composition",
] as const;
const alphaExtensionBaseline = join(root, "conformance/baseline-alpha-extensions.yml");
/** Requirement sets of the alpha suite run by `npm run conformance`. */
const ALPHA_REQUIREMENTS = ["2026-07-28", "2025-11-25"] as const;
const SHIM_PATH = "shared/tools/conformance-on-node20/register.mjs";
/**
 * The shim in the nearest `shared/` beside the repo or beside one of its ancestors (a git
 * worktree sits a level or two below the clone that has `shared/` beside it).
 */
const shim = nearestShim(dirname(root)) ?? resolve(root, "..", SHIM_PATH);

function nearestShim(from: string): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, SHIM_PATH);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return null;
  }
}
const aliasShim = join(root, "scripts/lib/conformance-alias-register.mjs");

const { values: flags } = parseArgs({
  options: {
    scenario: { type: "string", multiple: true },
    server: { type: "string", default: "examples/conformance-server.ts" },
    timeout: { type: "string", default: "60000" },
    verbose: { type: "boolean", default: false },
    suite: { type: "string", default: "all" },
  },
  strict: true,
});

function fail(message: string): never {
  console.error(`conformance: ${message}`);
  process.exit(2);
}

const scenarioTimeoutMs = Number(flags.timeout);
if (!Number.isInteger(scenarioTimeoutMs) || scenarioTimeoutMs <= 0) {
  fail(`--timeout must be a positive integer (ms); got ${flags.timeout}`);
}
if (!["stable", "alpha", "all"].includes(flags.suite)) {
  fail(`--suite must be stable, alpha or all; got ${flags.suite}`);
}
const runStable = flags.suite !== "alpha";
// The alpha suite runs whole requirement sets: a scenario filter means a stable-only run.
const runAlpha = flags.suite !== "stable" && flags.scenario === undefined;
const scenarios = runStable ? (flags.scenario ?? [...IN_SCOPE]) : [];
for (const name of scenarios) {
  if (!(IN_SCOPE as readonly string[]).includes(name)) {
    fail(`${name} is not an in-scope scenario (${IN_SCOPE.join(", ")})`);
  }
}
if (!existsSync(suiteEntry)) fail(`${suiteEntry} is missing; run npm install`);
if (runAlpha && !existsSync(alphaEntry)) fail(`${alphaEntry} is missing; run npm install`);

/** `node` flags that make the suite start on this Node version. */
function nodeFlags(): string[] {
  const major = Number(process.versions.node.split(".")[0]);
  if (major >= 22) return [];
  if (!existsSync(shim)) {
    fail(`Node ${process.version} needs the loader shim at ${shim} (shared/ beside the repo)`);
  }
  return ["--import", shim, "--import", aliasShim];
}

// Decided before the server starts, so a missing shim can never leave the server orphaned.
const suiteNodeFlags = nodeFlags();

interface Outcome {
  readonly scenario: string;
  readonly exitCode: number | null;
  readonly summary: string;
  readonly timedOut: boolean;
  readonly ms: number;
}

/** Starts the server and resolves its URL from the first stdout line (bounded by 30 s). */
function startServer(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", flags.server, "--port", "0"], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolvePromise, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${flags.server} did not print its URL within 30 s`));
    }, 30_000);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${flags.server} exited before listening (code ${code}, signal ${signal})`));
    });
    lines.once("line", (line) => {
      clearTimeout(timer);
      child.removeAllListeners("exit");
      lines.on("line", (more) => {
        if (flags.verbose) console.log(`[server] ${more}`);
      });
      const url = /https?:\/\/\S+/.exec(line)?.[0];
      if (url === undefined) {
        child.kill("SIGKILL");
        reject(new Error(`no URL in the server's first line: ${JSON.stringify(line)}`));
        return;
      }
      resolvePromise({ child, url });
    });
  });
}

/** SIGTERM, then SIGKILL after 5 s; resolves once the process is gone. */
function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolvePromise) => {
    const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    child.once("exit", () => {
      clearTimeout(killer);
      resolvePromise();
    });
    child.kill("SIGTERM");
  });
}

/**
 * Runs one scenario through a suite's CLI (default the stable one), bounded by the scenario
 * timeout.
 */
function runScenario(
  url: string,
  scenario: string,
  suite: { entry: string; baseline: string; outRoot: string } = {
    entry: suiteEntry,
    baseline,
    outRoot: outputRoot,
  },
): Promise<Outcome> {
  const started = Date.now();
  const outDir = join(suite.outRoot, scenario);
  const args = [
    ...suiteNodeFlags,
    suite.entry,
    "server",
    "--url",
    url,
    "--scenario",
    scenario,
    "--expected-failures",
    suite.baseline,
    "-o",
    outDir,
  ];
  const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  return new Promise((resolvePromise) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, scenarioTimeoutMs);
    child.once("close", (code) => {
      clearTimeout(timer);
      if (flags.verbose || code !== 0) console.log(output.trimEnd());
      // The suite prints e.g. "Passed: 3/3, 0 failed, 0 warnings" per scenario.
      const summary = /Passed: .*/.exec(output)?.[0] ?? "no summary printed";
      resolvePromise({ scenario, exitCode: code, summary, timedOut, ms: Date.now() - started });
    });
  });
}

/**
 * Runs one requirement set of the alpha suite against its baseline (the suite's own
 * `--expected-failures` check decides the exit code), bounded by 4× the scenario timeout.
 */
function runAlphaRequirements(url: string, requirements: string): Promise<Outcome> {
  const started = Date.now();
  const label = `alpha --requirements ${requirements}`;
  const args = [
    ...suiteNodeFlags,
    alphaEntry,
    "server",
    "--url",
    url,
    "--requirements",
    requirements,
    "--expected-failures",
    join(root, `conformance/baseline-alpha-${requirements}.yml`),
    "-o",
    join(root, `.conformance/alpha-${requirements}`),
  ];
  const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  return new Promise((resolvePromise) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, scenarioTimeoutMs * 4);
    child.once("close", (code) => {
      clearTimeout(timer);
      if (flags.verbose || code !== 0) console.log(output.trimEnd());
      // The alpha suite prints "Total: N passed, M failed" for the whole set.
      const total = /Total: (\d+) passed, (\d+) failed/.exec(output);
      const summary =
        total === null
          ? "no summary printed"
          : `Passed: ${total[1]}/${Number(total[1]) + Number(total[2])}, ${total[2]} failed (baseline applied)`;
      resolvePromise({
        scenario: label,
        exitCode: code,
        summary,
        timedOut,
        ms: Date.now() - started,
      });
    });
  });
}

async function main(): Promise<number> {
  rmSync(outputRoot, { recursive: true, force: true });
  for (const requirements of ALPHA_REQUIREMENTS) {
    rmSync(join(root, `.conformance/alpha-${requirements}`), { recursive: true, force: true });
  }
  rmSync(join(root, ".conformance/alpha-extensions"), { recursive: true, force: true });
  mkdirSync(outputRoot, { recursive: true });
  const { child, url } = await startServer();
  console.log(`server ${flags.server} at ${url}; ${scenarios.length} scenario(s)\n`);
  const outcomes: Outcome[] = [];
  try {
    for (const scenario of scenarios) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`the server died before scenario ${scenario}`);
      }
      const outcome = await runScenario(url, scenario);
      outcomes.push(outcome);
      const mark = outcome.exitCode === 0 ? "✓" : "✗";
      const note = outcome.timedOut ? ` (timed out after ${scenarioTimeoutMs} ms)` : "";
      console.log(`${mark} ${scenario}: ${outcome.summary} [${outcome.ms} ms]${note}`);
    }
    for (const requirements of runAlpha ? ALPHA_REQUIREMENTS : []) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`the server died before the alpha ${requirements} run`);
      }
      const outcome = await runAlphaRequirements(url, requirements);
      outcomes.push(outcome);
      const mark = outcome.exitCode === 0 ? "✓" : "✗";
      const note = outcome.timedOut ? " (timed out)" : "";
      console.log(`${mark} ${outcome.scenario}: ${outcome.summary} [${outcome.ms} ms]${note}`);
    }
    const extensionSuite = {
      entry: alphaEntry,
      baseline: alphaExtensionBaseline,
      outRoot: join(root, ".conformance/alpha-extensions"),
    };
    for (const scenario of runAlpha ? ALPHA_EXTENSION_SCENARIOS : []) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`the server died before the alpha extension scenario ${scenario}`);
      }
      const outcome = await runScenario(url, scenario, extensionSuite);
      outcomes.push({ ...outcome, scenario: `alpha ${scenario}` });
      const mark = outcome.exitCode === 0 ? "✓" : "✗";
      const note = outcome.timedOut ? ` (timed out after ${scenarioTimeoutMs} ms)` : "";
      console.log(`${mark} alpha ${scenario}: ${outcome.summary} [${outcome.ms} ms]${note}`);
    }
  } finally {
    await stopServer(child);
  }
  const bad = outcomes.filter((o) => o.exitCode !== 0);
  let passed = 0;
  let failed = 0;
  for (const { summary } of outcomes) {
    const counts = /Passed: (\d+)\/\d+, (\d+) failed/.exec(summary);
    passed += Number(counts?.[1] ?? 0);
    failed += Number(counts?.[2] ?? 0);
  }
  console.log(
    `\nconformance checks: ${passed} ok, ${failed} not ok (each listed in a baseline with its reason, or the run fails)`,
  );
  console.log(
    `conformance (stable${runAlpha ? " + alpha" : ""}): ${outcomes.length - bad.length}/${outcomes.length} runs as expected` +
      ` (baseline ${baseline.slice(root.length + 1)}); results under ${outputRoot.slice(root.length + 1)}/`,
  );
  if (bad.length > 0) console.log(`unexpected: ${bad.map((o) => o.scenario).join(", ")}`);
  return bad.length > 0 ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`conformance: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
