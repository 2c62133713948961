/**
 * Cross-tenant abuse on loopback: a second client behind the same address (127.0.0.1) is another
 * tenant's neighbour, never its owner; 127.0.0.2 is a client on another address.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { createMcpServer } from "../../src/server/index.js";
import { callBody, cancelBody, probes, rpc, testTools, until } from "../server/fixtures.js";
import { postFrom } from "./post-from.js";

const V = "2026-07-28";
const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": {},
};

function initializeBody(id: number) {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "tenant", version: "1.0.0" },
    },
  };
}

describe("cross-tenant: 2025-era cancels never reach 2026-07-28 calls", () => {
  test("a notifications/cancelled sweep from the same address stops none of another client's modern calls", async () => {
    const server = createMcpServer({ tools: testTools() });
    const { url } = await server.listen();
    try {
      // Client A: five modern tools/call with ids 1..5, each sleeping 600 ms.
      const calls = [1, 2, 3, 4, 5].map((id) =>
        rpc(
          url,
          {
            ...callBody(id, "sleep", { ms: 600, tag: `modern-${id}` }),
            params: {
              name: "sleep",
              arguments: { ms: 600, tag: `modern-${id}` },
              _meta: MODERN_META,
            },
          },
          { "mcp-protocol-version": V, "mcp-method": "tools/call", "mcp-name": "sleep" },
        ),
      );
      await until(() => [1, 2, 3, 4, 5].every((id) => probes.has(`modern-${id}`)), 3000);
      // Client B, same address, 2025 era (no session: the same ip: scope): sweeps ids 1..20.
      for (let id = 1; id <= 20; id++) {
        const answer = await rpc(url, cancelBody(id, "sweep"));
        assert.equal(answer.status, 202);
      }
      const answers = await Promise.all(calls);
      for (const [index, answer] of answers.entries()) {
        assert.equal(answer.status, 200, answer.text);
        assert.match(answer.text, /slept 600 ms/, `modern call ${index + 1} ran to its end`);
        assert.equal(probes.get(`modern-${index + 1}`)?.abortedAt, null);
      }
    } finally {
      await server.close();
    }
  });
});

describe("cross-tenant: sessions are bounded per creating scope", () => {
  test("a creator at its quota gets 429 + Retry-After; another address still gets sessions", async () => {
    const server = createMcpServer({
      tools: testTools(),
      sessions: { maxSessionsPerScope: 2, maxSessions: 3 },
    });
    const { url } = await server.listen();
    try {
      const a1 = await postFrom(url, "127.0.0.1", initializeBody(1));
      const a2 = await postFrom(url, "127.0.0.1", initializeBody(2));
      assert.equal(a1.status, 200);
      assert.equal(a2.status, 200);
      const refused = await postFrom(url, "127.0.0.1", initializeBody(3));
      assert.equal(refused.status, 429, refused.text);
      assert.equal(refused.headers["retry-after"], "60");
      const error = JSON.parse(refused.text);
      assert.equal(error.id, 3);
      assert.equal(error.error.code, -32000);
      assert.equal(refused.headers["mcp-session-id"], undefined);
      // The global bound (3) evicts rather than refuses: 127.0.0.2 gets its sessions, and the
      // one evicted belongs to the largest creator (127.0.0.1), never to 127.0.0.2 itself.
      const b1 = await postFrom(url, "127.0.0.2", initializeBody(4));
      const b2 = await postFrom(url, "127.0.0.2", initializeBody(5));
      assert.equal(b1.status, 200, b1.text);
      assert.equal(b2.status, 200, b2.text);
      const alive = async (id: unknown, from: string) =>
        (
          await postFrom(
            url,
            from,
            { jsonrpc: "2.0", id: 9, method: "ping" },
            {
              "mcp-session-id": String(id),
            },
          )
        ).status;
      assert.equal(await alive(b1.headers["mcp-session-id"], "127.0.0.2"), 200);
      assert.equal(await alive(b2.headers["mcp-session-id"], "127.0.0.2"), 200);
      const survivors = [
        await alive(a1.headers["mcp-session-id"], "127.0.0.1"),
        await alive(a2.headers["mcp-session-id"], "127.0.0.1"),
      ];
      assert.deepEqual(survivors.sort(), [200, 404], "127.0.0.1 lost one session to make room");
    } finally {
      await server.close();
    }
  });
});

describe("cross-tenant: sessions do not multiply the per-scope request bound", () => {
  test("three sessions from one address share its bound; another address is unaffected", async () => {
    const server = createMcpServer({
      tools: testTools(),
      sessions: true,
      maxConcurrentRequestsPerScope: 2,
    });
    const { url } = await server.listen();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const init = await postFrom(url, "127.0.0.1", initializeBody(i));
        ids.push(String(init.headers["mcp-session-id"]));
      }
      const inSession = (n: number) => ({
        "mcp-session-id": ids[n] as string,
        "mcp-protocol-version": "2025-11-25",
      });
      const running = [0, 1].map((n) =>
        postFrom(
          url,
          "127.0.0.1",
          callBody(n, "sleep", { ms: 800, tag: `multi-${n}` }),
          inSession(n),
        ),
      );
      await until(() => server.concurrency().requests === 2, 2_000, "two calls running");
      const third = await postFrom(
        url,
        "127.0.0.1",
        callBody(2, "echo", { text: "x" }),
        inSession(2),
      );
      assert.equal(third.status, 429, "the third session adds nothing to its address's bound");
      assert.equal(JSON.parse(third.text).id, 2);
      const other = await postFrom(url, "127.0.0.2", callBody(3, "echo", { text: "y" }));
      assert.equal(other.status, 200, "another address is unaffected");
      for (const answer of await Promise.all(running)) assert.equal(answer.status, 200);
    } finally {
      await server.close();
    }
  });
});

describe("cross-tenant: a broken X-Forwarded-For never pools clients into one scope", () => {
  test("malformed and over-long headers fall back to the address the request came from", async () => {
    const server = createMcpServer({ tools: testTools(), trustProxy: "127.0.0.0/8" });
    const { url } = await server.listen();
    try {
      const cases: Array<[string, string, string]> = [
        ["127.0.0.1", "junk", "xff-junk-1"],
        ["127.0.0.2", "junk", "xff-junk-2"],
        ["127.0.0.2", Array.from({ length: 40 }, () => "127.0.0.9").join(", "), "xff-long"],
      ];
      for (const [from, forwarded, tag] of cases) {
        const answer = await postFrom(url, from, callBody(tag, "sleep", { ms: 0, tag }), {
          "x-forwarded-for": forwarded,
        });
        assert.equal(answer.status, 200, answer.text);
      }
      assert.equal(probes.get("xff-junk-1")?.scope, "ip:127.0.0.1");
      assert.equal(probes.get("xff-junk-2")?.scope, "ip:127.0.0.2");
      // 40 trusted hops, more than are read: the last trusted hop read stands in.
      assert.equal(probes.get("xff-long")?.scope, "ip:127.0.0.9");
    } finally {
      await server.close();
    }
  });
});
