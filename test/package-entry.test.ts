/**
 * The root entry must never load ioredis: it is an optional peer dependency, reachable only
 * through `conduit-mcp/redis` (docs/architecture.md, "Layers"). A child process imports the entry with
 * a resolve hook that refuses `ioredis`, so any static import of it, however deep, fails the load.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { test } from "node:test";
import { promisify } from "node:util";

const run = promisify(execFile);

const refuseIoredis = `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  if (specifier === "ioredis" || specifier.startsWith("ioredis/")) {
    throw new Error("ioredis was imported");
  }
  return next(specifier, context);
}`)}`;

async function importWithoutIoredis(entry: string): Promise<string> {
  const script = `
    import { register } from "node:module";
    register(${JSON.stringify(refuseIoredis)});
    const m = await import(${JSON.stringify(entry)});
    console.log(Object.keys(m).length);`;
  const { stdout } = await run(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", script],
    { cwd: process.cwd(), timeout: 30_000 },
  );
  return stdout.trim();
}

test("the root entry loads without ioredis", async () => {
  const exported = Number(await importWithoutIoredis("./src/index.ts"));
  assert.ok(exported > 20, `the root entry exports its API (${exported} names)`);
});

test("the redis entry does need ioredis (the hook really refuses it)", async () => {
  await assert.rejects(importWithoutIoredis("./src/redis/index.ts"), /ioredis was imported/);
});
