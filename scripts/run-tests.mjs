// Runs every test/**/*.test.ts file with Node's own test runner (TypeScript through tsx).
// Node 20's `--test` does not expand glob patterns, so the files are listed here.
// Extra arguments are passed to `node --test` (e.g. `npm test -- --test-name-pattern=quota`).
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const files = readdirSync("test", { recursive: true, encoding: "utf8" })
  .filter((file) => file.endsWith(".test.ts"))
  .map((file) => join("test", file))
  .sort();

if (files.length === 0) {
  console.error("no test files found under test/");
  process.exit(1);
}

const child = spawn(
  process.execPath,
  ["--import", "tsx", "--test", "--test-concurrency=2", ...process.argv.slice(2), ...files],
  { stdio: "inherit" },
);
child.on("exit", (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
