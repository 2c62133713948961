/**
 * A node killed (SIGKILL) while a 2025-11-25 ask is pending: a tool called on node A has sent
 * `elicitation/create` on its call's SSE stream
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server)
 * and waits for the answer; two `conduit-mcp serve --redis --sessions` processes share one real
 * redis-server. What the client sees, and what is left behind:
 *
 * - the call's stream ends at once, with the question and no response (nothing can answer it:
 *   the node that ran the call is gone); SDK 1.x reports the broken stream to `onerror` and
 *   rejects the call only at its own request timeout (docs/load-balancers.md);
 * - the session lives on: the answer to the dead ask, posted to node B, is accepted (202) and
 *   dropped, and the same session calls and is asked again on B;
 * - within two leases Redis holds nothing of node A: no in-flight entry, no lease, no node
 *   record; the session counters (per creator, bytes) count exactly the live sessions;
 * - node B holds no pending ask, no request in flight and no scope units for it, and another
 *   tenant (a client from 127.0.0.2) is served throughout.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Redis } from "ioredis";

import { postFrom } from "../abuse/post-from.js";
import { type CliProcess, metric, startCli } from "../cli/cli-process.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { inspector, waitFor } from "../redis-e2e/cluster.js";
import { callBody } from "../server/fixtures.js";
import {
  answer,
  isRequest,
  isResponseTo,
  openCall,
  openSession,
  sessionHeaders,
} from "./stream.js";

const skip = redisSkipReason();
const LEASE_MS = 1_000;
/** The CLI's key prefix (the stores' default). */
const TAG = "{conduit-mcp}";
const V = "2025-11-25";

function nodeArgs(redisUrl: string): string[] {
  return [
    "serve",
    "test/asking/fixtures/ask-node-tools.ts",
    "--port",
    "0",
    "--redis",
    redisUrl,
    "--sessions",
    "--metrics",
    "--redis-lease-ms",
    String(LEASE_MS),
  ];
}

/** `initialize` from another address; resolves the session id. */
async function sessionFrom(url: string, from: string): Promise<string> {
  const init = await postFrom(url, from, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: V, capabilities: {}, clientInfo: { name: "other", version: "1" } },
  });
  const id = init.headers["mcp-session-id"];
  assert.equal(typeof id, "string", init.text);
  return id as string;
}

async function listFrom(url: string, from: string, session: string): Promise<number> {
  const listed = await postFrom(
    url,
    from,
    { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
    { "mcp-session-id": session, "mcp-protocol-version": V },
  );
  return listed.status;
}

describe("SIGKILL of a node while a 2025-11-25 ask is pending", { skip: skip ?? false }, () => {
  let server: RedisServer;
  let redis: Redis;
  let a: CliProcess;
  let b: CliProcess;

  before(async () => {
    server = await startRedisServer();
    redis = inspector(server.url);
    [a, b] = await Promise.all([startCli(nodeArgs(server.url)), startCli(nodeArgs(server.url))]);
  });
  after(async () => {
    await a?.kill();
    await b?.kill();
    redis?.disconnect();
    await server?.stop();
  });

  it("the call's stream ends, the session lives on node B, and nothing of node A is left", async () => {
    const other = await sessionFrom(b.url, "127.0.0.2");
    assert.equal(await listFrom(b.url, "127.0.0.2", other), 200);

    // A raw client: its call on A asks, and the question is on the stream.
    const session = await openSession(a.url, { elicitation: {} });
    const headers = sessionHeaders(session);
    const call = await openCall(a.url, callBody(1, "confirm", { action: "ship" }), headers);
    const asked = await call.next(isRequest("elicitation/create"));

    // SDK 1.x: its call on A asks too; its handler holds the answer until after the kill.
    const errors: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let sdkAsked = false;
    const client = new Client(
      { name: "killed", version: "1.0.0" },
      { capabilities: { elicitation: {} } },
    );
    client.onerror = (error) => errors.push(error.message);
    client.setRequestHandler(ElicitRequestSchema, async () => {
      sdkAsked = true;
      await held;
      return { action: "accept", content: { ok: true } };
    });
    const transport = new StreamableHTTPClientTransport(new URL(a.url));
    await client.connect(transport);
    const sdkSession = transport.sessionId;
    assert.equal(typeof sdkSession, "string");
    const sdkCall = client
      .callTool({ name: "confirm", arguments: { action: "go" } }, undefined, { timeout: 4_000 })
      .then(
        () => "resolved",
        (error: Error) => error.message,
      );
    assert.ok(await waitFor(async () => sdkAsked, 5_000), "the SDK client was asked");

    // Both calls are in flight on A, shared in Redis (after shareAfterMs).
    assert.ok(
      await waitFor(async () => (await redis.keys(`${TAG}:f:*`)).length === 2, 5_000),
      `in-flight entries: ${await redis.keys(`${TAG}:f:*`)}`,
    );
    const nodeKeys = await redis.keys(`${TAG}:nf:*`);
    assert.equal(nodeKeys.length, 1, `only node A has calls in flight: ${nodeKeys}`);
    const nodeA = (nodeKeys[0] as string).slice(`${TAG}:nf:`.length);

    const killedAt = performance.now();
    a.child.kill("SIGKILL");
    await call.ended;
    const endedAfter = performance.now() - killedAt;
    assert.ok(endedAfter < 2_000, `the call's stream ended ${endedAfter.toFixed(0)} ms after`);
    assert.deepEqual(
      call.seen.map((m) => m.method ?? "response"),
      ["elicitation/create"],
      "the question, and no response: nothing is left to answer the call",
    );

    // The session lives on at node B: the dead ask's answer is accepted and dropped, and the
    // session is served and asked again there.
    const late = { result: { action: "accept", content: { ok: true } } };
    assert.equal((await answer(b.url, asked.id, late, headers)).status, 202);
    const again = await openCall(b.url, callBody(2, "confirm", { action: "retry" }), headers);
    const askedAgain = await again.next(isRequest("elicitation/create"));
    assert.equal((await answer(b.url, askedAgain.id, late, headers)).status, 202);
    const done = await again.next(isResponseTo(2));
    assert.equal(done.result.content[0].text, "did retry");
    assert.equal(await listFrom(b.url, "127.0.0.2", other), 200);

    // SDK 1.x: the broken stream goes to onerror at once; the call rejects at its own timeout.
    release();
    assert.match(await sdkCall, /timed out/i);
    assert.ok(
      errors.some((message) => /SSE stream disconnected|fetch failed/i.test(message)),
      `the SDK heard the stream break: ${JSON.stringify(errors)}`,
    );
    await client.close().catch(() => {});

    // Within two leases Redis holds nothing of node A.
    const leftovers = async (): Promise<string[]> => {
      const found = [
        ...(await redis.keys(`${TAG}:f:*`)),
        ...(await redis.keys(`${TAG}:*${nodeA}*`)),
      ];
      if (await redis.sismember(`${TAG}:nodes`, nodeA)) found.push("nodes ∋ A");
      if (await redis.sismember(`${TAG}:tnodes`, nodeA)) found.push("tnodes ∋ A");
      return found;
    };
    assert.ok(
      await waitFor(async () => (await leftovers()).length === 0, 4 * LEASE_MS + 2_000),
      `left in Redis: ${await leftovers()}`,
    );
    // The session counters count exactly the live sessions (the three opened: a session outlives
    // the node it was created on).
    const live = await redis.zrange(`${TAG}:sessions`, 0, -1);
    assert.deepEqual(new Set(live), new Set([session, other, sdkSession]));
    let bytes = 0;
    for (const id of live) bytes += Number(await redis.hget(`${TAG}:sess:${id}`, "bytes"));
    assert.equal(Number(await redis.get(`${TAG}:sbytes`)), bytes);
    assert.deepEqual(
      new Set(await redis.zrange(`${TAG}:sc:ip:127.0.0.1`, 0, -1)),
      new Set([session, sdkSession]),
    );
    const perCreator = await redis.zrange(`${TAG}:cbytes`, 0, -1, "WITHSCORES");
    let counted = 0;
    for (let i = 1; i < perCreator.length; i += 2) counted += Number(perCreator[i]);
    assert.equal(counted, bytes);

    // Node B holds nothing for the dead calls.
    assert.equal(await metric(b.url, "conduit_mcp_pending_asks"), 0);
    assert.equal(await metric(b.url, "conduit_mcp_in_flight_requests"), 0);
    for (const kind of ["session", "principal", "ip"]) {
      assert.equal(await metric(b.url, "conduit_mcp_scope_in_flight", { kind }), 0, kind);
    }
  });
});
