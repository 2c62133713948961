/**
 * The chaos soak as part of `npm test`: scripts/soak.ts --chaos for 12 s of load (after a 2 s
 * warm-up) on 3 `conduit-mcp serve --redis` processes and a private redis-server, with at least one
 * node SIGKILLed and restarted and one Redis restart, a 1 s lease and a 2 s row TTL so "nothing
 * left after two leases and the TTL" is checked within seconds. `npm run soak -- --chaos
 * --duration 300` is the long run (docs/soak.md). The script checks every invariant itself and
 * exits non-zero on any violation; this test asserts its exit code and its summary.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";

import { redisSkipReason } from "../helpers/redis-server.js";

const skip = redisSkipReason();

test("chaos soak: 3 nodes + Redis, SIGKILLs and Redis restarts under load — every invariant holds", {
  skip: skip ?? false,
  timeout: 180_000,
}, async () => {
  const seed = String(Math.floor(Math.random() * 2 ** 31));
  const child = spawn(
    process.execPath,
    [
      "--expose-gc",
      "--import",
      "tsx",
      "scripts/soak.ts",
      "--chaos",
      "--duration",
      "12",
      "--warmup",
      "2",
      "--concurrency",
      "40",
      "--lease-ms",
      "1000",
      "--ttl-ms",
      "2000",
      "--chaos-gap",
      "2.5",
      "--seed",
      seed,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  // The summary is printed either way: on a failure it names the random seed that replays the plan.
  console.log(output);
  assert.match(output, /conduit-mcp chaos soak summary/);
  assert.match(output, /PASS {2}chaos happened/);
  assert.equal(code, 0, output);
  assert.match(output, /chaos soak: all invariants held/);
});
