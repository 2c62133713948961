/**
 * `GET /ready` of a `serve --redis` node, through a real redis-server stopped and started again:
 * 503 within a second of Redis going away (read from the stores' connection events, no command
 * per probe), 200 once it is back, `/health` 200 throughout (liveness), and exactly one log line
 * each way. A memory-only node is always ready.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { type CliProcess, startCli } from "../cli/cli-process.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";

const skip = redisSkipReason();

async function probe(base: string, path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(new URL(path, base), { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.json() };
}

/** Polls `/ready` every 20 ms until it answers `status`; resolves the time it took. */
async function readyTurns(base: string, status: number, withinMs: number): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < withinMs) {
    if ((await probe(base, "/ready")).status === status) return performance.now() - start;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`/ready did not answer ${status} within ${withinMs} ms`);
}

function count(text: string, pattern: RegExp): number {
  return text.split("\n").filter((line) => pattern.test(line)).length;
}

describe("GET /ready", { skip: skip ?? false }, () => {
  let redis: RedisServer;
  let node: CliProcess | undefined;

  before(async () => {
    redis = await startRedisServer();
  });
  after(async () => {
    await node?.kill();
    await redis?.stop();
  });

  it("a memory node is ready, /health is liveness", async () => {
    const memory = await startCli(["serve", "--port", "0"]);
    try {
      assert.deepEqual(await probe(memory.url, "/ready"), {
        status: 200,
        body: { status: "ready" },
      });
      assert.deepEqual(await probe(memory.url, "/health"), { status: 200, body: { status: "ok" } });
      const head = await fetch(new URL("/ready", memory.url), { method: "HEAD" });
      assert.equal(head.status, 200);
    } finally {
      await memory.kill();
    }
  });

  it("a --redis node: 503 within a second of Redis going away, 200 when it is back, one line each way", async () => {
    node = await startCli(["serve", "--port", "0", "--sessions", "--redis", redis.url]);
    const base = node.url;
    assert.deepEqual(await probe(base, "/ready"), { status: 200, body: { status: "ready" } });

    await redis.pause();
    const wentDown = await readyTurns(base, 503, 5_000);
    console.log(`/ready turned 503 ${wentDown.toFixed(0)} ms after redis-server exited`);
    assert.ok(wentDown < 1_000, `took ${wentDown.toFixed(0)} ms`);
    const down = await fetch(new URL("/ready", base));
    assert.equal(down.headers.get("retry-after"), "1");
    assert.deepEqual(await down.json(), { status: "unavailable" });
    // Liveness does not follow Redis: restarting the process would not bring Redis back.
    assert.deepEqual(await probe(base, "/health"), { status: 200, body: { status: "ok" } });

    await redis.start();
    const cameBack = await readyTurns(base, 200, 10_000);
    console.log(`/ready turned 200 ${cameBack.toFixed(0)} ms after redis-server restarted`);
    const log = node.stderr();
    assert.equal(count(log, /Redis unreachable: not ready/), 1, log);
    assert.equal(count(log, /Redis reachable again after \d+\.\d s: ready/), 1, log);
    // Each store still says once what it does meanwhile (fail open, tasks refused, ...).
    assert.ok(count(log, /Redis cancellation store unreachable/) === 1, log);
  });
});
