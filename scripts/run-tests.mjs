// Runs every test/**/*.test.ts file with Node's own test runner (TypeScript through tsx).
// Node 20's `--test` does not expand glob patterns, so the files are listed here.
//
// Two phases: most files run two at a time (the machine has 2 cores); the load tests (the soak,
// the three-process Redis cluster, the deploy topology) run afterwards one at a time, because their bounds (heap
// growth, cancel latency) measure this machine and must not compete with other test files for it.
// A final line adds up both phases: "N passed, M failed".
// test/package/ (the packed package installed in an empty project) is left to its own CI step,
// `npm run test:package` (.ci/steps.d/10-packaging.sh), so CI runs it once.
// Extra arguments are passed to `node --test` (e.g. `npm test -- --test-name-pattern=quota`).
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const SERIAL = [join("test", "soak"), join("test", "redis-e2e"), join("test", "deploy")];
const SEPARATE = join("test", "package");

const files = readdirSync("test", { recursive: true, encoding: "utf8" })
  .filter((file) => file.endsWith(".test.ts"))
  .map((file) => join("test", file))
  .filter((file) => !file.startsWith(`${SEPARATE}/`))
  .sort();

if (files.length === 0) {
  console.error("no test files found under test/");
  process.exit(1);
}

const isSerial = (file) => SERIAL.some((dir) => file.startsWith(`${dir}/`));
const phases = [
  { files: files.filter((file) => !isSerial(file)), concurrency: 2 },
  { files: files.filter(isSerial), concurrency: 1 },
].filter((phase) => phase.files.length > 0);

const totals = { pass: 0, fail: 0, skipped: 0 };
let failedExit = false;

for (const phase of phases) {
  const code = await runPhase(phase);
  if (code !== 0) failedExit = true;
}

const skipped = totals.skipped > 0 ? `, ${totals.skipped} skipped` : "";
console.log(`\n${totals.pass} passed, ${totals.fail} failed${skipped}`);
process.exit(failedExit || totals.fail > 0 ? 1 : 0);

/** Runs one `node --test` invocation, echoing its TAP output and adding up its summary. */
function runPhase({ files: phaseFiles, concurrency }) {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--test",
        "--test-reporter=tap",
        `--test-concurrency=${concurrency}`,
        ...process.argv.slice(2),
        ...phaseFiles,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let pending = "";
    child.stdout.on("data", (chunk) => {
      process.stdout.write(chunk);
      pending += chunk.toString("utf8");
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) count(line);
    });
    child.on("exit", (code, signal) => {
      count(pending);
      resolve(signal ? 1 : (code ?? 1));
    });
  });
}

/** Top-level TAP summary lines: "# pass N", "# fail N", "# skipped N". */
function count(line) {
  const match = /^# (pass|fail|skipped) (\d+)$/.exec(line.trim());
  if (match) totals[match[1]] += Number(match[2]);
}
