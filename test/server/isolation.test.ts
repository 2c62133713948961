/**
 * Tenant isolation: two tenants using the same request id — by bearer
 * token, by session, by IP bucket through a trusted proxy — never cancel each other, and a sweep
 * of ids 1..1000 from another scope cancels (and records) nothing. Without `trustProxy` a forged
 * `X-Forwarded-For` changes nothing.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { createMcpServer, type McpServerOptions } from "../../src/server/index.js";
import {
  callBody,
  cancelBody,
  postMany,
  probes,
  type RpcAnswer,
  rpc,
  testTools,
  until,
} from "./fixtures.js";

interface Tenant {
  headers: Record<string, string>;
  scope: string;
}

/**
 * Victim starts a long call with id 7; the attacker cancels id 7 and sweeps 1..1000 from its own
 * scope; the victim's call stays untouched; then the victim cancels its own call (control).
 */
async function checkIsolation(
  options: Omit<McpServerOptions, "tools">,
  makeTenants: (url: string) => Promise<[Tenant, Tenant]>,
  tag: string,
): Promise<void> {
  const server = createMcpServer({ tools: testTools(), ...options });
  const { url } = await server.listen();
  try {
    const [victim, attacker] = await makeTenants(url);
    const call = rpc(url, callBody(7, "sleep", { ms: 60_000, tag }), victim.headers);
    await until(() => probes.has(tag), 2000, "victim call started");
    assert.equal(await server.registry.isInFlight(7, victim.scope), true);

    const direct = await rpc(url, cancelBody(7, "hostile"), attacker.headers);
    assert.equal(direct.status, 202);
    // Same id as a string: the same key, still another scope.
    assert.equal((await rpc(url, cancelBody("7"), attacker.headers)).status, 202);
    const statuses = await postMany(
      url,
      Array.from({ length: 1000 }, (_, i) => cancelBody(i + 1)),
      attacker.headers,
    );
    assert.equal(statuses.length, 1000);
    assert.ok(statuses.every((status) => status === 202));
    await sleep(20);
    const probe = probes.get(tag);
    assert.equal(probe?.abortedAt, null, "the other tenant's cancel never touches the request");
    assert.equal(await server.registry.size(), 0, "the sweep recorded nothing");
    assert.equal(await server.registry.isCancelled(7, victim.scope), false);
    assert.equal(await server.registry.isCancelled(7, attacker.scope), false);
    assert.equal(await server.registry.isInFlight(7, victim.scope), true);

    // Control: the owner's own cancel works at once.
    assert.equal((await rpc(url, cancelBody(7, "mine"), victim.headers)).status, 202);
    const answer: RpcAnswer = await call;
    assert.equal(answer.json.error.code, -32800);
    assert.equal(probe?.reason?.source, "notification");
    assert.equal(probe?.reason?.reason, "mine");
    await until(() => server.registry.inFlightCount === 0);
  } finally {
    await server.close();
  }
}

describe("isolation between tenants using the same request id", () => {
  test("two bearer tokens", async () => {
    await checkIsolation(
      { auth: { tokens: { "secret-alice-0123456789": "alice", "secret-bob-0123456789": "bob" } } },
      async () => [
        { headers: { authorization: "Bearer secret-alice-0123456789" }, scope: "principal:alice" },
        { headers: { authorization: "Bearer secret-bob-0123456789" }, scope: "principal:bob" },
      ],
      "iso-token",
    );
  });

  test("two sessions", async () => {
    await checkIsolation(
      { sessions: true },
      async (url) => {
        const ids: string[] = [];
        for (let i = 0; i < 2; i++) {
          const init = await rpc(url, {
            jsonrpc: "2.0",
            id: 0,
            method: "initialize",
            params: {
              protocolVersion: "2025-11-25",
              capabilities: {},
              clientInfo: { name: "t", version: "1" },
            },
          });
          const id = init.headers.get("mcp-session-id");
          assert.ok(id !== null && /^[A-Za-z0-9_-]{32}$/.test(id));
          ids.push(id);
        }
        const [a, b] = ids as [string, string];
        return [
          { headers: { "mcp-session-id": a }, scope: `session:${a}` },
          { headers: { "mcp-session-id": b }, scope: `session:${b}` },
        ];
      },
      "iso-session",
    );
  });

  test("two IP buckets through a trusted proxy", async () => {
    await checkIsolation(
      { trustProxy: 1 },
      async () => [
        { headers: { "x-forwarded-for": "203.0.113.10" }, scope: "ip:203.0.113.10" },
        { headers: { "x-forwarded-for": "198.51.100.20" }, scope: "ip:198.51.100.20" },
      ],
      "iso-ip",
    );
  });

  test("two IPv6 clients in different /64 buckets through a trusted proxy", async () => {
    await checkIsolation(
      { trustProxy: "127.0.0.1/8" },
      async () => [
        { headers: { "x-forwarded-for": "2001:db8:1:2::5" }, scope: "ip:2001:db8:1:2::/64" },
        { headers: { "x-forwarded-for": "2001:db8:1:3::5" }, scope: "ip:2001:db8:1:3::/64" },
      ],
      "iso-ipv6",
    );
  });

  test("without trustProxy a forged X-Forwarded-For changes nothing", async () => {
    const server = createMcpServer({ tools: testTools() });
    const { url } = await server.listen();
    try {
      const call = rpc(url, callBody(11, "sleep", { ms: 60_000, tag: "forged" }), {
        "x-forwarded-for": "203.0.113.10",
      });
      await until(() => probes.has("forged"));
      // The scope is the socket's bucket, whatever the header claims.
      assert.equal(probes.get("forged")?.scope, "ip:127.0.0.1");
      assert.equal(await server.registry.isInFlight(11, "ip:203.0.113.10"), false);
      // A different forged header does not make another tenant: same socket, same scope.
      const cancel = await rpc(url, cancelBody(11), { "x-forwarded-for": "198.51.100.20" });
      assert.equal(cancel.status, 202);
      assert.equal((await call).json.error.code, -32800);
      assert.equal(probes.get("forged")?.reason?.source, "notification");
    } finally {
      await server.close();
    }
  });
});
