/**
 * Three `conduit-mcp serve --redis --sessions --token …` processes on one private Redis: a `tools/call sleep` on node 1 is aborted by a `notifications/cancelled` sent to
 * node 2 by the same principal, or in the same session (minted on node 1, used on node 2), within
 * 50 ms; another principal's cancel (on any node) and a session-less cancel never touch the call.
 *
 * Latency, as measured here: from just before the test client sends the cancel POST to node 2
 * until it has received node 1's whole -32800 answer to the `tools/call`. That includes node 2's
 * HTTP handling, its in-flight check and the record script (two Redis round trips), pub/sub
 * delivery, node 1's abort and its HTTP answer: everything a client would wait for.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import type { Redis } from "ioredis";
import type { CliProcess } from "../cli/cli-process.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import {
  call,
  cancelOn,
  headers,
  inFlight,
  inspector,
  KEYS,
  measureBatches,
  startNodes,
  waitFor,
} from "./cluster.js";

const skip = redisSkipReason();
const CANCELLED = -32800;
const ALICE = { authorization: "Bearer alice-secret-0123456789" };
const BOB = { authorization: "Bearer bob-secret-0123456789" };
/**
 * Rounds per batch, after one warm-up round. The 50 ms bound applies to the median of a batch
 * (the suite runs two files at once on small machines, so single rounds can be preempted); up to
 * three batches are measured until one is within the bound (see measureBatches), every batch is
 * reported, and every round of the best batch must stay under 1 s.
 */
const ROUNDS = 9;
const BOUND_MS = 50;

/**
 * Starts a sleep on `callNode`, waits until its in-flight entry is in Redis, cancels it on
 * `cancelNode`, and resolves the latency (see the file comment).
 */
async function crossNodeCancel(
  redis: Redis,
  callNode: CliProcess,
  cancelNode: CliProcess,
  scope: string,
  id: string,
  extra: Record<string, string>,
): Promise<number> {
  let arrived = 0;
  const pending = call(callNode.url, id, "sleep", { ms: 20_000 }, extra).then((answer) => {
    arrived = performance.now();
    return answer;
  });
  assert.ok(await waitFor(() => inFlight(redis, scope, id), 5_000), `${id} never in flight`);
  const sent = performance.now();
  const cancelled = await cancelOn(cancelNode.url, id, extra);
  assert.equal(cancelled.status, 202, cancelled.body);
  const answer = await pending;
  assert.equal(answer.message?.error?.code, CANCELLED, JSON.stringify(answer.message));
  return arrived - sent;
}

/** `initialize` on a node; resolves the minted `Mcp-Session-Id` (then sends `initialized`). */
async function openSession(url: string, extra: Record<string, string>): Promise<string> {
  const res = await fetch(url, {
    method: "POST",
    headers: headers(extra),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "redis-e2e", version: "1.0.0" },
      },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  await res.arrayBuffer();
  assert.equal(res.status, 200);
  const session = res.headers.get("mcp-session-id");
  assert.ok(session, "initialize minted no Mcp-Session-Id");
  const initialized = await fetch(url, {
    method: "POST",
    headers: headers({ ...extra, "mcp-session-id": session }),
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    signal: AbortSignal.timeout(10_000),
  });
  await initialized.arrayBuffer();
  assert.equal(initialized.status, 202);
  return session;
}

describe("three --redis nodes: principals and sessions", { skip: skip ?? false }, () => {
  let server: RedisServer;
  let nodes: CliProcess[] = [];
  let redis: Redis;
  const node = (i: number): CliProcess => nodes[i] as CliProcess;

  before(async () => {
    server = await startRedisServer();
    redis = inspector(server.url);
    nodes = await startNodes(server.url, 3, [
      "--sessions",
      "--token",
      "alice=alice-secret-0123456789",
      "--token",
      "bob=bob-secret-0123456789",
    ]);
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.kill()));
    redis?.disconnect();
    await server?.stop();
  });

  it("a cancel from the same principal on node 2 aborts node 1's call within 50 ms", async (t) => {
    // One warm-up round (first connections, JIT), reported but not counted.
    const warm = await crossNodeCancel(redis, node(0), node(1), "principal:alice", "p-w", ALICE);
    const { best, report } = await measureBatches(
      (label) => crossNodeCancel(redis, node(0), node(1), "principal:alice", `p-${label}`, ALICE),
      ROUNDS,
      BOUND_MS,
    );
    t.diagnostic(
      `principal, cancel sent on node 2 → -32800 received from node 1: ${report} (warm-up ${warm.toFixed(1)} ms)`,
    );
    assert.ok(best.p50 <= BOUND_MS, report);
    assert.ok(best.max < 1_000, report);
    // Every call ended, so its row is cleared (just after the answer is written) and no
    // in-flight entry is left behind.
    assert.ok(
      await waitFor(
        async () => (await redis.zcard(KEYS.scopeRows("principal:alice") as string)) === 0,
        2_000,
      ),
      "rows left behind",
    );
    assert.equal(await inFlight(redis, "principal:alice", `p-0-${ROUNDS - 1}`), false);
  });

  it("a session minted on node 1 is used on node 2 to cancel node 1's call within 50 ms", async (t) => {
    const session = await openSession(node(0).url, ALICE);
    const inSession = { ...ALICE, "mcp-session-id": session };
    // The session is known on every node (one Redis session store).
    const listed = await call(node(2).url, "echo-in-session", "echo", { text: "hi" }, inSession);
    assert.deepEqual(listed.message?.result?.content, [{ type: "text", text: "hi" }]);
    const scope = `session:${session}`;
    const warm = await crossNodeCancel(redis, node(0), node(1), scope, "s-w", inSession);
    const { best, report } = await measureBatches(
      (label) => crossNodeCancel(redis, node(0), node(1), scope, `s-${label}`, inSession),
      ROUNDS,
      BOUND_MS,
    );
    t.diagnostic(
      `session, cancel sent on node 2 → -32800 received from node 1: ${report} (warm-up ${warm.toFixed(1)} ms)`,
    );
    assert.ok(best.p50 <= BOUND_MS, report);
    assert.ok(best.max < 1_000, report);
  });

  it("another principal's cancel, on any node, never touches the call; nothing is recorded", async () => {
    const id = "shared-id-7";
    let settled = false;
    const pending = call(node(0).url, id, "sleep", { ms: 20_000 }, ALICE).then((answer) => {
      settled = true;
      return answer;
    });
    assert.ok(await waitFor(() => inFlight(redis, "principal:alice", id), 5_000));
    for (const n of nodes) {
      assert.equal((await cancelOn(n.url, id, BOB)).status, 202);
    }
    // Bob's own session, and a session-less Alice from node 2 against a session call, below.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(settled, false, "bob's cancel reached alice's call");
    assert.equal(await redis.zcard(KEYS.scopeRows("principal:alice") as string), 0);
    assert.equal(await redis.zcard(KEYS.scopeRows("principal:bob") as string), 0);
    // The call was alive all along: alice can cancel it from node 3.
    assert.equal((await cancelOn(node(2).url, id, ALICE)).status, 202);
    assert.equal((await pending).message?.error?.code, CANCELLED);
  });

  it("a call in alice's session is not cancelled by alice without the session, nor by bob's session", async () => {
    const session = await openSession(node(0).url, ALICE);
    const bobSession = await openSession(node(2).url, BOB);
    const id = "in-session-1";
    let settled = false;
    const pending = call(
      node(0).url,
      id,
      "sleep",
      { ms: 20_000 },
      {
        ...ALICE,
        "mcp-session-id": session,
      },
    ).then((answer) => {
      settled = true;
      return answer;
    });
    assert.ok(await waitFor(() => inFlight(redis, `session:${session}`, id), 5_000));
    assert.equal((await cancelOn(node(1).url, id, ALICE)).status, 202);
    assert.equal(
      (await cancelOn(node(2).url, id, { ...BOB, "mcp-session-id": bobSession })).status,
      202,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(settled, false, "a cancel from another scope reached the session's call");
    assert.equal(await redis.zcard(KEYS.scopeRows(`session:${session}`) as string), 0);
    assert.equal(
      (await cancelOn(node(1).url, id, { ...ALICE, "mcp-session-id": session })).status,
      202,
    );
    assert.equal((await pending).message?.error?.code, CANCELLED);
  });
  it("DELETE of a session on node 2 cancels its calls running on nodes 1 and 3", async () => {
    const session = await openSession(node(0).url, ALICE);
    const inSession = { ...ALICE, "mcp-session-id": session };
    const scope = `session:${session}`;
    const pending = [0, 2].map((n) =>
      call(node(n).url, `del-${n}`, "sleep", { ms: 20_000 }, inSession),
    );
    for (const n of [0, 2]) {
      assert.ok(await waitFor(() => inFlight(redis, scope, `del-${n}`), 5_000), `del-${n}`);
    }
    const started = performance.now();
    const res = await fetch(node(1).url, {
      method: "DELETE",
      headers: headers(inSession),
      signal: AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer();
    assert.equal(res.status, 204);
    const answers = await Promise.all(pending);
    const elapsed = performance.now() - started;
    for (const answer of answers) {
      assert.equal(answer.message?.error?.code, CANCELLED, JSON.stringify(answer.message));
    }
    assert.ok(elapsed < 5_000, `calls ended ${elapsed.toFixed(0)} ms after DELETE`);
    // Nothing is recorded for a whole-scope cancel.
    assert.equal(await redis.zcard(KEYS.scopeRows(scope) as string), 0);
  });
});
