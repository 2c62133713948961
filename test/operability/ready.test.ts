/**
 * `GET /ready` of a `serve --redis` node, through a real redis-server stopped and started again:
 * 503 within a second of Redis going away (read from the stores' connection events, no command
 * per probe), 200 once it is back, `/health` 200 throughout (liveness), and exactly one log line
 * each way; `/metrics` says the same in `conduit_mcp_store_reachable` and `conduit_mcp_ready`
 * (docs/observability.md), and leaves out the store-counted series it cannot read during the
 * outage. A memory-only node is always ready.
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

/** The value of one unlabelled series in the node's `/metrics` text, or null when absent. */
async function series(base: string, name: string): Promise<number | null> {
  const res = await fetch(new URL("/metrics", base), { signal: AbortSignal.timeout(5_000) });
  assert.equal(res.status, 200);
  const line = (await res.text()).split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? null : Number(line.slice(name.length + 1));
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
    node = await startCli([
      "serve",
      "--port",
      "0",
      "--sessions",
      "--metrics",
      "--redis",
      redis.url,
    ]);
    const base = node.url;
    assert.deepEqual(await probe(base, "/ready"), { status: 200, body: { status: "ready" } });
    assert.equal(await series(base, "conduit_mcp_store_reachable"), 1);
    assert.equal(await series(base, "conduit_mcp_ready"), 1);
    assert.equal(await series(base, "conduit_mcp_sessions"), 0);

    await redis.pause();
    const wentDown = await readyTurns(base, 503, 5_000);
    console.log(`/ready turned 503 ${wentDown.toFixed(0)} ms after redis-server exited`);
    assert.ok(wentDown < 1_000, `took ${wentDown.toFixed(0)} ms`);
    const down = await fetch(new URL("/ready", base));
    assert.equal(down.headers.get("retry-after"), "1");
    assert.deepEqual(await down.json(), { status: "unavailable" });
    // Liveness does not follow Redis: restarting the process would not bring Redis back.
    assert.deepEqual(await probe(base, "/health"), { status: 200, body: { status: "ok" } });
    // The outage gauges, for the alert rules in deploy/prometheus/alerts.yml.
    assert.equal(await series(base, "conduit_mcp_store_reachable"), 0);
    assert.equal(await series(base, "conduit_mcp_ready"), 0);
    assert.equal(await series(base, "conduit_mcp_draining"), 0);
    // Sessions are counted by Redis: the series is left out rather than reported as 0.
    assert.equal(await series(base, "conduit_mcp_sessions"), null);

    await redis.start();
    const cameBack = await readyTurns(base, 200, 10_000);
    console.log(`/ready turned 200 ${cameBack.toFixed(0)} ms after redis-server restarted`);
    assert.equal(await series(base, "conduit_mcp_store_reachable"), 1);
    assert.equal(await series(base, "conduit_mcp_ready"), 1);
    assert.equal(await series(base, "conduit_mcp_sessions"), 0);
    const log = node.stderr();
    assert.equal(count(log, /Redis unreachable: not ready/), 1, log);
    assert.equal(count(log, /Redis reachable again after \d+\.\d s: ready/), 1, log);
    // Each store still says once what it does meanwhile (fail open, tasks refused, ...).
    assert.ok(count(log, /Redis cancellation store unreachable/) === 1, log);
  });
});
