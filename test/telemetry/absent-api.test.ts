/**
 * `@opentelemetry/api` not installed (docs/tracing.md): a child process in which the
 * package cannot be resolved (module hooks, test/telemetry/fixtures/no-otel.mjs) serves calls as
 * usual, asks for the package exactly once (the dynamic import at start, never per request) and
 * gets nothing; the same script without the hooks loads it.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
const script = "test/telemetry/fixtures/absent-api-server.ts";

async function child(imports: string[]): Promise<{
  texts: string[];
  api: string | null;
  attempts: string[];
}> {
  const args = [...imports.flatMap((i) => ["--import", i]), script];
  const { stdout } = await run(process.execPath, args, { cwd: root, timeout: 60_000 });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
}

describe("without @opentelemetry/api", () => {
  test("calls are served, the package is asked for once and nothing is loaded", async () => {
    const absent = await child(["tsx", "./test/telemetry/fixtures/no-otel.mjs"]);
    assert.deepEqual(absent.texts, Array(20).fill("ok"));
    assert.equal(absent.api, null);
    assert.deepEqual(absent.attempts, ["@opentelemetry/api"], "one import attempt, at start");
  });

  test("the same script with the package installed loads it", async () => {
    const present = await child(["tsx"]);
    assert.deepEqual(present.texts, Array(20).fill("ok"));
    assert.equal(present.api, "loaded");
    assert.deepEqual(present.attempts, []);
  });
});
