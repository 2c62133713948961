/**
 * Abuse: 50 anonymous scopes flooding `notifications/cancelled` and `initialize`
 * never deny a victim's cancel. Through a trusted proxy, 50 client addresses (50 `ip:` scopes)
 * each start stubborn calls and cancel them (rows past the registry's global cap, so eviction
 * runs), cancel the victim's request id by guessing it, send junk cancels, and mint sessions
 * until the store is full — while the victim (its own session scope) has a call in flight. The
 * victim's cancel is recorded and aborts its call; its session keeps working; new sessions get
 * 503 once the store is full.
 */
import assert from "node:assert/strict";
import { Agent, request } from "node:http";
import { describe, test } from "node:test";

import { CancellationRegistry } from "../../src/cancellation/index.js";
import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer } from "../../src/server/index.js";
import { callBody, cancelBody, probes, rpc, testTools, until } from "../server/fixtures.js";

const INIT = {
  jsonrpc: "2.0",
  id: "init",
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "t", version: "1" },
  },
};
const SCOPES = 50;
const MAX_SESSIONS = 20;

/**
 * One POST over a keep-alive agent; resolves the status. Retried once on a reset: a pooled
 * socket can be reused just as the server's keep-alive timeout closes it (a client-side race
 * under load, not the server refusing anything).
 */
async function post(
  agent: Agent,
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<number> {
  try {
    return await postOnce(agent, url, body, headers);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ECONNRESET") throw error;
    return postOnce(agent, url, body, headers);
  }
}

function postOnce(
  agent: Agent,
  url: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      agent,
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

describe("cancel and session flood from 50 anonymous scopes", () => {
  test("the victim's cancel is recorded and aborts its call; a full store evicts rather than refuses", async () => {
    // A small global row cap: the flood's rows overflow it, so eviction runs during the attack.
    const registry = new CancellationRegistry({ maxRows: 100, janitor: false });
    // The victim's tool ignores its signal until the test lets it go: it cannot finish before
    // the cancel whatever the machine's load, and its row stays until it settles.
    let letGo: (value: string) => void = () => {};
    const gate = new Promise<string>((resolve) => {
      letGo = resolve;
    });
    const victimSeen: { scope: string | null; reason: unknown; abortedAt: number | null } = {
      scope: null,
      reason: null,
      abortedAt: null,
    };
    const hold = defineTool({
      name: "hold",
      handler: (_args, ctx) => {
        victimSeen.scope = ctx.scope;
        ctx.signal.addEventListener("abort", () => {
          victimSeen.abortedAt = performance.now();
          victimSeen.reason = (ctx.signal.reason as { reason?: unknown }).reason;
        });
        return gate;
      },
    });
    const server = createMcpServer({
      tools: [...testTools(), hold],
      registry,
      trustProxy: "127.0.0.1",
      sessions: { maxSessions: MAX_SESSIONS },
      streamCancelTimeoutMs: 60_000,
      closeGraceMs: 0,
    });
    const { url } = await server.listen();
    const agent = new Agent({ keepAlive: true, maxSockets: 32 });
    try {
      // The victim: its own address, a session, then a long (stubborn) call in that session.
      const victimAddress = { "x-forwarded-for": "198.51.100.200" };
      const init = await rpc(url, INIT, victimAddress);
      const session = init.headers.get("mcp-session-id");
      assert.ok(session);
      const victim = {
        ...victimAddress,
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
      };
      const victimCall = rpc(url, callBody("v1", "hold", {}), victim);
      await until(() => victimSeen.scope !== null, 2_000, "the victim's call");
      assert.equal(victimSeen.scope, `session:${session}`);

      const statuses = { initialize: [] as number[], cancel: [] as number[] };
      const flooder = async (n: number): Promise<void> => {
        const headers = { "x-forwarded-for": `203.0.113.${n + 1}` };
        // Stubborn calls of its own, cancelled: rows that stay until they settle.
        const own = [0, 1, 2, 3].map((k) =>
          post(
            agent,
            url,
            callBody(`f${n}-${k}`, "stubborn", { ms: 300, tag: `flood-${n}-${k}` }),
            headers,
          ),
        );
        await until(
          () => [0, 1, 2, 3].every((k) => probes.has(`flood-${n}-${k}`)),
          // 200 calls share 32 sockets: on a loaded 2-core machine they start seconds apart.
          20_000,
          `flooder ${n}`,
        );
        const floods: Promise<number>[] = [];
        for (let k = 0; k < 4; k++)
          floods.push(post(agent, url, cancelBody(`f${n}-${k}`, "x".repeat(500)), headers));
        for (let k = 0; k < 40; k++) {
          floods.push(post(agent, url, cancelBody(k % 2 === 0 ? "v1" : `junk-${n}-${k}`), headers));
        }
        for (let k = 0; k < 2; k++) {
          statuses.initialize.push(await post(agent, url, { ...INIT, id: `i${n}-${k}` }, headers));
        }
        statuses.cancel.push(...(await Promise.all(floods)));
        await Promise.all(own);
      };
      const flood = Promise.all(Array.from({ length: SCOPES }, (_, n) => flooder(n)));

      // Mid-flood, the victim cancels its own call.
      await until(() => statuses.cancel.length >= 100, 20_000, "the flood under way");
      assert.equal(victimSeen.abortedAt, null, "guessed-id cancels from other scopes did nothing");
      const cancelAt = performance.now();
      const cancelled = await rpc(url, cancelBody("v1", "victim-cancel"), victim);
      assert.equal(cancelled.status, 202);
      assert.equal((await victimCall).json.error.code, -32800);
      assert.equal(victimSeen.reason, "victim-cancel");
      const latency = (victimSeen.abortedAt ?? Number.POSITIVE_INFINITY) - cancelAt;
      assert.ok(latency < 500, `the victim's call aborted ${latency} ms after its cancel was sent`);
      // Recorded (the stubborn call keeps its row until it settles), despite eviction.
      assert.equal(await registry.isCancelled("v1", `session:${session}`), true);

      letGo("done");
      await flood;
      // Every flood cancel was accepted (202) or, past a scope's row cap, refused in its own scope.
      assert.ok(statuses.cancel.every((status) => status === 202 || status === 200));
      // No initialize was refused: each flooder holds at most 2, far below its per-scope quota,
      // and the global bound evicts; the store stays at its bound, and a newcomer gets a session.
      assert.deepEqual(
        statuses.initialize.filter((status) => status !== 200),
        [],
        "every initialize got a session",
      );
      const newcomer = await rpc(url, INIT, { "x-forwarded-for": "198.51.100.201" });
      assert.equal(newcomer.status, 200);
      assert.ok(newcomer.headers.get("mcp-session-id"));
      await until(() => server.concurrency().requests === 0, 3_000, "counters back to 0");
    } finally {
      agent.destroy();
      await server.close();
      await registry.close();
    }
  });
});
