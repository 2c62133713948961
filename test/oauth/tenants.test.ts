/**
 * Tenants from tokens: two principals from two JWT access tokens are two `principal:` scopes.
 * Both run a call with the same request id; neither's `notifications/cancelled` (nor a sweep of
 * ids) touches the other's call, each cancels its own, and a forged or foreign-audience token
 * cannot even reach the cancel path.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { startIssuer, type TestIssuer } from "../helpers/oauth-issuer.js";
import {
  callBody,
  cancelBody,
  postMany,
  probes,
  rpc,
  testTools,
  until,
} from "../server/fixtures.js";

describe("JWT principals are isolated tenants", () => {
  let idp: TestIssuer;
  let server: McpServer;
  let url: string;

  before(async () => {
    idp = await startIssuer();
    server = createMcpServer({
      tools: testTools(),
      auth: { oauth: { issuer: idp.issuer, jwksUrl: idp.jwksUrl, scopes: ["mcp"] } },
    });
    url = (await server.listen()).url;
  });
  after(async () => {
    await server.close();
    await idp.close();
  });

  test("same request ids, two subjects: neither can cancel the other's call", async () => {
    const alice = {
      authorization: `Bearer ${await idp.sign({ sub: "alice", aud: url, scope: "mcp" })}`,
    };
    const bob = {
      authorization: `Bearer ${await idp.sign({ sub: "bob", aud: url, scope: "mcp" })}`,
    };
    const aliceCall = rpc(url, callBody(7, "sleep", { ms: 60_000, tag: "jwt-alice" }), alice);
    const bobCall = rpc(url, callBody(7, "sleep", { ms: 60_000, tag: "jwt-bob" }), bob);
    await until(
      () => probes.has("jwt-alice") && probes.has("jwt-bob"),
      5_000,
      "both calls started",
    );
    assert.equal(probes.get("jwt-alice")?.scope, "principal:alice");
    assert.equal(probes.get("jwt-bob")?.scope, "principal:bob");
    assert.equal(await server.registry.isInFlight(7, "principal:alice"), true);
    assert.equal(await server.registry.isInFlight(7, "principal:bob"), true);

    // Bob sweeps ids 1..200 (7 included): only his own call can be hit.
    const statuses = await postMany(
      url,
      Array.from({ length: 200 }, (_, i) => cancelBody(i + 1, "bob's")),
      bob,
    );
    assert.ok(statuses.every((status) => status === 202));
    const bobAnswer = await bobCall;
    assert.equal(bobAnswer.json.error.code, -32800, "bob cancelled his own call");
    await sleep(20);
    assert.equal(probes.get("jwt-alice")?.abortedAt, null, "alice's call is untouched");
    assert.equal(await server.registry.isInFlight(7, "principal:alice"), true);

    // A token for another audience, or one the issuer never signed, cannot send a cancel at all.
    const foreign = await idp.sign({
      sub: "alice",
      aud: "https://other.example.com/mcp",
      scope: "mcp",
    });
    const rogue = await idp.sign(
      { sub: "alice", aud: url, scope: "mcp" },
      { key: await idp.newKey() },
    );
    for (const token of [foreign, rogue]) {
      const refused = await rpc(url, cancelBody(7, "forged"), { authorization: `Bearer ${token}` });
      assert.equal(refused.status, 401);
    }
    await sleep(20);
    assert.equal(probes.get("jwt-alice")?.abortedAt, null, "still untouched");

    // Control: alice's own cancel (from a second token with the same subject) works at once.
    const again = {
      authorization: `Bearer ${await idp.sign({ sub: "alice", aud: url, scope: "mcp" })}`,
    };
    assert.equal((await rpc(url, cancelBody(7, "mine"), again)).status, 202);
    const aliceAnswer = await aliceCall;
    assert.equal(aliceAnswer.json.error.code, -32800);
    assert.equal(probes.get("jwt-alice")?.reason?.reason, "mine");
    await until(() => server.registry.inFlightCount === 0);
  });
});
