/**
 * Three `conduit-mcp serve --redis` processes without auth (every request from 127.0.0.1, so one
 * IP scope; `--trust-proxy loopback` lets a test speak for other addresses through
 * X-Forwarded-For) on one private Redis:
 * - a sleep on node 1 is aborted by a cancel sent to node 2 within 50 ms (median of a batch of 9,
 *   up to 3 batches on a busy machine; measured from just before the cancel POST is sent until
 *   node 1's -32800 answer is fully received);
 * - many concurrent cancels through all nodes never let a scope exceed `--max-rows-per-scope` or
 *   the table `--max-rows` (Redis sampled every few ms while they land): in one scope exactly the
 *   quota is recorded; across scopes the cap evicts and the table stays at the cap;
 * - Redis stopped mid-run: every request is still served and same-node cancellation works;
 *   restarted: cross-node cancellation works again without restarting the nodes;
 * - a node killed with SIGKILL: its in-flight entries are swept once its lease expires.
 * The tests share the nodes and run in this order (the SIGKILL test kills node 3, so it is last).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import type { Redis } from "ioredis";

import type { CliProcess, RpcAnswer } from "../cli/cli-process.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import {
  call,
  cancelOn,
  inFlight,
  inspector,
  KEYS,
  measureBatches,
  startNodes,
  waitFor,
} from "./cluster.js";

const skip = redisSkipReason();
const CANCELLED = -32800;
const LOCAL = "ip:127.0.0.1";
const MAX_ROWS = 20;
const MAX_PER_SCOPE = 4;
const LEASE_MS = 600;
const ROUNDS = 9;
const BOUND_MS = 50;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe("three --redis nodes: one IP scope, quota pressure, faults", {
  skip: skip ?? false,
}, () => {
  let server: RedisServer;
  let nodes: CliProcess[] = [];
  let redis: Redis;
  const node = (i: number): CliProcess => nodes[i] as CliProcess;

  before(async () => {
    server = await startRedisServer();
    redis = inspector(server.url);
    nodes = await startNodes(server.url, 3, [
      "--trust-proxy",
      "loopback",
      "--max-rows",
      String(MAX_ROWS),
      "--max-rows-per-scope",
      String(MAX_PER_SCOPE),
      // Cancelled stubborn calls keep their rows until they end (quota test).
      "--stream-cancel-timeout",
      "10000",
      "--redis-lease-ms",
      String(LEASE_MS),
    ]);
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.kill()));
    redis?.disconnect();
    await server?.stop();
  });

  /** Sleep on `a`, cancel on `b` (same IP scope); resolves the latency in ms. */
  async function crossNodeCancel(a: CliProcess, b: CliProcess, id: string): Promise<number> {
    let arrived = 0;
    const pending = call(a.url, id, "sleep", { ms: 20_000 }).then((answer) => {
      arrived = performance.now();
      return answer;
    });
    assert.ok(await waitFor(() => inFlight(redis, LOCAL, id), 5_000), `${id} never in flight`);
    const sent = performance.now();
    const cancelled = await cancelOn(b.url, id);
    assert.equal(cancelled.status, 202, cancelled.body);
    const answer = await pending;
    assert.equal(answer.message?.error?.code, CANCELLED, JSON.stringify(answer.message));
    return arrived - sent;
  }

  it("a cancel on node 2 aborts node 1's sleep within 50 ms (same IP scope)", async (t) => {
    // One warm-up round per pair (first connections, JIT), reported but not counted.
    const warm = Math.max(
      await crossNodeCancel(node(0), node(1), "ip-w0"),
      await crossNodeCancel(node(1), node(2), "ip-w1"),
      await crossNodeCancel(node(2), node(0), "ip-w2"),
    );
    // Rotate the pair so every node is both caller and canceller.
    let i = 0;
    const { best, report } = await measureBatches(
      (label) => {
        i++;
        return crossNodeCancel(node(i % 3), node((i + 1) % 3), `ip-${label}`);
      },
      ROUNDS,
      BOUND_MS,
    );
    t.diagnostic(
      `IP scope, cancel sent on node B → -32800 received from node A: ${report} (slowest warm-up ${warm.toFixed(1)} ms)`,
    );
    assert.ok(best.p50 <= BOUND_MS, report);
    assert.ok(best.max < 1_000, report);
  });

  /**
   * Starts `perScope` stubborn calls in each of the given client addresses (X-Forwarded-For),
   * spread over the nodes, then sends every cancel at once, each to a node other than the one
   * running the call, while sampling the row counts in Redis every few ms. Checks the invariants
   * (quota, cap, index consistency, exactly the accepted cancels aborted) and returns the counts.
   */
  async function pressure(
    t: { diagnostic(message: string): void },
    addresses: readonly string[],
    perScope: number,
  ): Promise<{ accepted: number; refused: number; totalAfter: number }> {
    const calls: Array<{ id: string; scope: string; xff: string; node: number }> = [];
    for (const [s, xff] of addresses.entries()) {
      for (let i = 0; i < perScope; i++) {
        calls.push({ id: `q-${xff}-${i}`, scope: `ip:${xff}`, xff, node: (s + i) % 3 });
      }
    }
    // Stubborn calls ignore the abort, so a recorded row stays until the call ends (2.5 s).
    const answers = calls.map((c) =>
      call(node(c.node).url, c.id, "stubborn", { ms: 2_500 }, { "x-forwarded-for": c.xff }),
    );
    const allInFlight = await waitFor(async () => {
      const present = await Promise.all(calls.map((c) => inFlight(redis, c.scope, c.id)));
      return present.every(Boolean);
    }, 5_000);
    assert.ok(allInFlight, "not every call became in flight");

    let sampling = true;
    let maxTotal = 0;
    let maxScope = 0;
    let samples = 0;
    const scopeKeys = addresses.map((xff) => KEYS.scopeRows(`ip:${xff}`) as string);
    const sampler = (async () => {
      while (sampling) {
        const pipe = redis.pipeline().zcard(KEYS.time);
        for (const key of scopeKeys) pipe.zcard(key);
        const replies = (await pipe.exec()) ?? [];
        const counts = replies.map(([, n]) => Number(n));
        maxTotal = Math.max(maxTotal, counts[0] ?? 0);
        maxScope = Math.max(maxScope, ...counts.slice(1));
        samples++;
        await sleep(2);
      }
    })();
    const cancels = await Promise.all(
      calls.map((c) => cancelOn(node((c.node + 1) % 3).url, c.id, { "x-forwarded-for": c.xff })),
    );
    await sleep(50);
    sampling = false;
    await sampler;
    const totalAfter = await redis.zcard(KEYS.time);

    const accepted = cancels.filter((r) => r.status === 202).length;
    const refused = cancels.filter((r) => r.status !== 202);
    t.diagnostic(
      `${calls.length} concurrent cancels in ${addresses.length} scope(s): ${accepted} accepted, ` +
        `${refused.length} refused; max rows seen: ${maxScope} in one scope (quota ${MAX_PER_SCOPE}), ` +
        `${maxTotal} in all (cap ${MAX_ROWS}), ${totalAfter} after, ${samples} samples`,
    );
    for (const r of refused) {
      assert.match(r.body, /"code":-32000/, `unexpected answer ${r.status} ${r.body}`);
      assert.match(r.body, /Too many outstanding cancellations/);
    }
    assert.ok(samples > 3, `only ${samples} samples`);
    assert.ok(maxScope <= MAX_PER_SCOPE, `a scope held ${maxScope} rows (quota ${MAX_PER_SCOPE})`);
    assert.ok(maxTotal <= MAX_ROWS, `the table held ${maxTotal} rows (cap ${MAX_ROWS})`);
    assert.ok(totalAfter <= MAX_ROWS);
    // The scope index agrees with the rows: each scope's count in {p}:scopes is its ZCARD.
    for (const [s, key] of scopeKeys.entries()) {
      const indexed = Number((await redis.zscore(KEYS.scopes, `ip:${addresses[s]}`)) ?? 0);
      assert.equal(indexed, await redis.zcard(key));
    }

    // Exactly the accepted cancels aborted their calls (-32800 at once); the refused ones ran on.
    const results: RpcAnswer[] = await Promise.all(answers);
    const aborted = results.filter((a) => a.message?.error?.code === CANCELLED).length;
    const finished = results.filter((a) =>
      a.message?.result?.content?.[0]?.text?.startsWith("stubbornly slept"),
    ).length;
    assert.equal(aborted, accepted);
    assert.equal(aborted + finished, calls.length);
    // When the stubborn calls end their rows go: nothing is left for the TTL.
    assert.ok(
      await waitFor(async () => (await redis.zcard(KEYS.time)) === 0, 5_000),
      "rows left after the calls ended",
    );
    return { accepted, refused: refused.length, totalAfter };
  }

  it("12 concurrent cancels in one scope through three nodes: exactly the quota is recorded", async (t) => {
    const { accepted, refused } = await pressure(t, ["10.0.1.1"], 12);
    assert.equal(accepted, MAX_PER_SCOPE);
    assert.equal(refused, 12 - MAX_PER_SCOPE);
  });

  it("48 concurrent cancels in 8 scopes through three nodes: the table stays at its cap", async (t) => {
    const addresses = Array.from({ length: 8 }, (_, s) => `10.0.0.${s + 1}`);
    const { accepted, totalAfter } = await pressure(t, addresses, 6);
    // More cancels were recorded than the cap holds: the cap evicted, and the table is full.
    assert.ok(accepted > MAX_ROWS, `only ${accepted} accepted: no pressure on the cap`);
    assert.equal(totalAfter, MAX_ROWS);
  });

  it("Redis stopped mid-run: every request is served; restarted: cross-node cancel works again", async (t) => {
    // Calls in flight while Redis goes away end normally.
    const before = nodes.map((n, i) => call(n.url, `o-pre-${i}`, "sleep", { ms: 800 }));
    await sleep(100);
    await server.pause();
    const outageStart = Date.now();
    try {
      const echoes = await Promise.all(
        nodes.flatMap((n, i) =>
          Array.from({ length: 10 }, (_, k) =>
            call(n.url, `o-echo-${i}-${k}`, "echo", { text: `x${k}` }),
          ),
        ),
      );
      for (const answer of echoes) {
        assert.equal(answer.status, 200);
        assert.match(String(answer.message?.result?.content?.[0]?.text), /^x\d$/);
      }
      for (const answer of await Promise.all(before)) {
        assert.deepEqual(answer.message?.result?.content, [{ type: "text", text: "slept 800 ms" }]);
      }
      // Local cancellation keeps working: a cancel sent to the node running the call.
      const local = call(node(0).url, "o-local", "sleep", { ms: 20_000 });
      await sleep(150);
      assert.equal((await cancelOn(node(0).url, "o-local")).status, 202);
      const localAnswer = await Promise.race([local, sleep(3_000).then(() => null)]);
      assert.equal(localAnswer?.message?.error?.code, CANCELLED, "same-node cancel during outage");
      t.diagnostic(`outage lasted ${Date.now() - outageStart} ms; all requests served`);
    } finally {
      await server.start();
    }
    // Without restarting any node: the stores reconnect, resubscribe and re-assert their leases.
    let attempt = 0;
    const recovered = await waitFor(async () => {
      attempt++;
      const id = `o-after-${attempt}`;
      const pending = call(node(0).url, id, "sleep", { ms: 1_500 });
      if (!(await waitFor(() => inFlight(redis, LOCAL, id), 500))) {
        await pending;
        return false;
      }
      await cancelOn(node(1).url, id);
      const answer = await pending;
      return answer.message?.error?.code === CANCELLED;
    }, 10_000);
    assert.ok(recovered, "cross-node cancellation did not come back after Redis restarted");
    // Then the latency is as before.
    const latency = await crossNodeCancel(node(2), node(0), "o-after-timed");
    t.diagnostic(`after restart: ${attempt} attempt(s) to recover, then ${latency.toFixed(1)} ms`);
    assert.ok(latency < 1_000);
    // One log line per node for the whole outage, not one per request.
    for (const n of nodes) {
      const lines = n.stderr().match(/Redis cancellation store unreachable/g) ?? [];
      assert.equal(lines.length, 1, n.stderr());
    }
  });

  it("a node killed with SIGKILL loses its in-flight entries once its lease expires", async (t) => {
    const victim = node(2);
    const pid = victim.child.pid;
    assert.ok(pid !== undefined);
    const ids = ["k-1", "k-2", "k-3"];
    const doomed = ids.map((id) =>
      call(victim.url, id, "sleep", { ms: 20_000 }).then(
        () => "answered",
        () => "connection lost",
      ),
    );
    assert.ok(
      await waitFor(
        async () => (await Promise.all(ids.map((id) => inFlight(redis, LOCAL, id)))).every(Boolean),
        5_000,
      ),
    );
    const members = await redis.smembers(KEYS.nodes);
    const victimId = members.find((m) => m.includes(`-${pid}-`));
    assert.ok(victimId, `node of pid ${pid} not among ${members.join(", ")}`);
    assert.ok((await redis.hlen(KEYS.nodeEntries(victimId))) >= 3);

    const killed = Date.now();
    victim.child.kill("SIGKILL");
    await victim.exited;
    assert.deepEqual(await Promise.all(doomed), [
      "connection lost",
      "connection lost",
      "connection lost",
    ]);
    const swept = await waitFor(async () => {
      const present = await Promise.all(ids.map((id) => inFlight(redis, LOCAL, id)));
      return !present.some(Boolean);
    }, 10 * LEASE_MS);
    const elapsed = Date.now() - killed;
    t.diagnostic(
      `entries of the killed node swept ${elapsed} ms after SIGKILL (lease ${LEASE_MS} ms)`,
    );
    assert.ok(swept, `entries still present ${elapsed} ms after SIGKILL`);
    // Not before the lease could have expired.
    assert.ok(elapsed >= LEASE_MS / 3, `swept after only ${elapsed} ms`);
    assert.equal(await redis.exists(KEYS.nodeEntries(victimId), KEYS.lease(victimId)), 0);
    assert.equal(await redis.sismember(KEYS.nodes, victimId), 0);
    // The survivors still cancel across nodes.
    assert.ok((await crossNodeCancel(node(0), node(1), "k-after")) < 1_000);
  });
});
