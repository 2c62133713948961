/**
 * Two `conduit-mcp serve --redis` processes on one private Redis, through HTTP: a call younger
 * than `--redis-share-after-ms` is not in Redis, yet a `notifications/cancelled` sent to the other
 * node aborts it (announced without a row); once shared, the same cancel is recorded. The flag is
 * set to 30 s for the first case so the window stays open whatever the machine's load, and left
 * at its default (50 ms) for the second. The tests run in order on one Redis.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import type { Redis } from "ioredis";
import type { CliProcess } from "../cli/cli-process.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { call, cancelOn, inFlight, inspector, KEYS, startNodes, waitFor } from "./cluster.js";

const skip = redisSkipReason();
const CANCELLED = -32800;
const SCOPE = "ip:127.0.0.1";
/** The shard's latest row stamp: written by every record, by nothing else. */
const LAST = `${KEYS.tag}:last`;

/** Calls in flight on a node, from its `/metrics`. */
async function runningOn(node: CliProcess): Promise<number> {
  const res = await fetch(new URL("/metrics", node.url), { signal: AbortSignal.timeout(5_000) });
  const text = await res.text();
  return Number(/^conduit_mcp_in_flight_requests (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
}

describe("--redis-share-after-ms: a cross-node cancel before and after the call is shared", {
  skip: skip ?? false,
}, () => {
  let server: RedisServer;
  let redis: Redis;
  const started: CliProcess[] = [];

  before(async () => {
    server = await startRedisServer();
    redis = inspector(server.url);
  });
  after(async () => {
    await Promise.all(started.map((n) => n.kill()));
    redis?.disconnect();
    await server?.stop();
  });

  it("a cancel on node 2 aborts node 1's call that is not in Redis yet, and records no row", async () => {
    const nodes = await startNodes(server.url, 2, ["--metrics", "--redis-share-after-ms", "30000"]);
    started.push(...nodes);
    const [one, two] = nodes as [CliProcess, CliProcess];
    const answer = call(one.url, "young-1", "sleep", { ms: 20_000 });
    assert.ok(await waitFor(async () => (await runningOn(one)) === 1, 10_000), "call started");
    assert.equal(await inFlight(redis, SCOPE, "young-1"), false, "not shared: the window");
    const cancelled = await cancelOn(two.url, "young-1");
    assert.equal(cancelled.status, 202, cancelled.body);
    const settled = await answer;
    assert.equal(settled.message?.error?.code, CANCELLED, JSON.stringify(settled.message));
    assert.equal(await redis.zcard(KEYS.scopeRows(SCOPE) as string), 0, "no row was written");
    assert.equal(await redis.get(LAST), null, "the record script never ran");
    assert.equal(await inFlight(redis, SCOPE, "young-1"), false);
  });

  it("with the default 50 ms the call is in Redis soon after it starts, and the cancel is recorded", async () => {
    const nodes = await startNodes(server.url, 2, ["--metrics"]);
    started.push(...nodes);
    const [one, two] = nodes as [CliProcess, CliProcess];
    const answer = call(one.url, "old-1", "sleep", { ms: 20_000 });
    assert.ok(await waitFor(() => inFlight(redis, SCOPE, "old-1"), 10_000), "shared");
    const cancelled = await cancelOn(two.url, "old-1");
    assert.equal(cancelled.status, 202, cancelled.body);
    const settled = await answer;
    assert.equal(settled.message?.error?.code, CANCELLED, JSON.stringify(settled.message));
    // Only the record script writes the latest-stamp key: a row was written this time.
    assert.notEqual(
      await redis.get(LAST),
      null,
      "the in-flight check passed and a row was written",
    );
    // The row was written (the in-flight check passed), then cleared at the call's end.
    assert.ok(
      await waitFor(async () => (await redis.zcard(KEYS.scopeRows(SCOPE) as string)) === 0, 5_000),
      "the call's end clears its row",
    );
    assert.ok(
      await waitFor(async () => !(await inFlight(redis, SCOPE, "old-1")), 5_000),
      "its entry is removed",
    );
  });
});
