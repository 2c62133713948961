/**
 * Opaque access tokens checked by token introspection (RFC 7662) against a real local
 * authorization server: active, audience (RFC 8707), issuer, expiry; a bounded cache keyed by the
 * token's hash; wrong client credentials or an unreachable endpoint fail closed (503) and
 * recover. JWTs still go to the JWT verifier when both are configured.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { z } from "zod";
import type { OAuthOptions } from "../../src/identity/oauth/index.js";
import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { INTROSPECTION_CLIENT, startIssuer, type TestIssuer } from "../helpers/oauth-issuer.js";
import { callBody, rpc } from "../server/fixtures.js";

const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };
const whoami = defineTool({
  name: "whoami",
  input: z.object({}),
  handler: (_args, ctx) => `${ctx.principal?.id} ${ctx.principal?.scopes.join(",")}`,
});

describe("OAuth resource server: opaque tokens by introspection", () => {
  let idp: TestIssuer;
  let server: McpServer;
  let url: string;
  const now = () => Math.floor(Date.now() / 1000);

  async function open(oauth: OAuthOptions): Promise<void> {
    await server?.close();
    server = createMcpServer({ tools: [whoami], auth: { oauth } });
    url = (await server.listen()).url;
  }
  const introspection = () => ({ url: `${idp.issuer}/introspect`, ...INTROSPECTION_CLIENT });

  before(async () => {
    idp = await startIssuer();
  });
  after(async () => {
    await server?.close();
    await idp.close();
  });

  test("an active token for this resource: 200 as its subject; the answer is cached", async () => {
    await open({ issuer: idp.issuer, introspection: introspection(), scopes: ["mcp"] });
    const token = idp.opaqueToken({
      active: true,
      sub: "bob",
      aud: url,
      iss: idp.issuer,
      scope: "mcp read",
      exp: now() + 300,
    });
    const before = idp.introspections;
    for (let i = 0; i < 3; i++) {
      const answer = await rpc(url, callBody(1, "whoami", {}), {
        authorization: `Bearer ${token}`,
      });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.json.result.content[0].text, "bob mcp,read");
    }
    assert.equal(idp.introspections - before, 1, "one introspection for three requests");
  });

  test("a revoked token: accepted from the cache for at most cacheTtlMs, then refused and the refusal cached", async () => {
    // RFC 7662 §4: a resource server that caches answers accepts a revoked token until its cached
    // answer expires; `introspection.cacheTtlMs` is that window (docs/auth.md).
    await open({
      issuer: idp.issuer,
      introspection: { ...introspection(), cacheTtlMs: 1_500 },
      scopes: ["mcp"],
    });
    const token = idp.opaqueToken({
      active: true,
      sub: "carol",
      aud: url,
      iss: idp.issuer,
      scope: "mcp",
      exp: now() + 300,
    });
    const auth = { authorization: `Bearer ${token}` };
    const start = idp.introspections;
    assert.equal((await rpc(url, LIST, auth)).status, 200);
    const cachedAt = performance.now();
    idp.revoke(token);
    // Inside the window the cached answer stands (no new introspection).
    const inside = await rpc(url, LIST, auth);
    if (performance.now() - cachedAt < 1_400) {
      assert.equal(inside.status, 200, "still cached");
      assert.equal(idp.introspections - start, 1);
    }
    // Past it the token is introspected again and refused.
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    const after = await rpc(url, LIST, auth);
    assert.equal(after.status, 401);
    assert.match(after.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
    assert.equal(idp.introspections - start, 2, "asked again once the window passed");
    // The refusal is cached too: a client retrying a revoked token does not hammer the server.
    // (Cached for min(10 s, cacheTtlMs): one more introspection per window at most.)
    const retried = performance.now();
    for (let i = 0; i < 5; i++) assert.equal((await rpc(url, LIST, auth)).status, 401);
    const windows = Math.floor((performance.now() - retried) / 1_500);
    assert.ok(idp.introspections - start <= 2 + windows, "the refusal was cached");
  });

  test("inactive, foreign audience, other issuer, expired, missing scope: refused", async () => {
    await open({ issuer: idp.issuer, introspection: introspection(), scopes: ["mcp"] });
    const base = {
      active: true,
      sub: "bob",
      aud: url,
      iss: idp.issuer,
      scope: "mcp",
      exp: now() + 300,
    };
    const cases: [string, Record<string, unknown>, number][] = [
      ["inactive", { active: false }, 401],
      ["unknown to the AS", {}, 401],
      ["foreign audience", { ...base, aud: "https://other.example.com/mcp" }, 401],
      ["no audience", { ...base, aud: undefined }, 401],
      ["other issuer", { ...base, iss: "https://evil.example.com" }, 401],
      ["expired", { ...base, exp: now() - 60 }, 401],
      ["not yet valid", { ...base, nbf: now() + 120 }, 401],
      ["no subject", { ...base, sub: undefined }, 401],
      ["missing the required scope", { ...base, scope: "read" }, 403],
    ];
    for (const [name, answer, status] of cases) {
      const token = name === "unknown to the AS" ? "never-issued-token" : idp.opaqueToken(answer);
      const response = await rpc(url, LIST, { authorization: `Bearer ${token}` });
      assert.equal(response.status, status, name);
      const challenge = response.headers.get("www-authenticate") ?? "";
      assert.match(
        challenge,
        status === 401 ? /error="invalid_token"/ : /error="insufficient_scope"/,
        name,
      );
      assert.match(challenge, /resource_metadata="/, name);
    }
  });

  test("the cache is bounded: beyond maxCacheEntries the least recent answer is asked again", async () => {
    await open({
      issuer: idp.issuer,
      introspection: { ...introspection(), maxCacheEntries: 2 },
    });
    const tokens = ["a", "b", "c"].map((sub) =>
      idp.opaqueToken({ active: true, sub, aud: url, iss: idp.issuer, exp: now() + 300 }),
    );
    const call = async (token: string) =>
      (await rpc(url, LIST, { authorization: `Bearer ${token}` })).status;
    const start = idp.introspections;
    for (const token of tokens) assert.equal(await call(token), 200);
    assert.equal(idp.introspections - start, 3);
    assert.equal(await call(tokens[2] as string), 200);
    assert.equal(idp.introspections - start, 3, "c is cached");
    assert.equal(await call(tokens[0] as string), 200);
    assert.equal(idp.introspections - start, 4, "a was pushed out");
  });

  test("wrong client credentials or an unreachable endpoint fail closed (503), then recover", async () => {
    await open({
      authorizationServers: [idp.issuer],
      introspection: { ...introspection(), clientSecret: "not-the-secret", timeoutMs: 2_000 },
    });
    const token = idp.opaqueToken({ active: true, sub: "bob", aud: url, exp: now() + 300 });
    const refused = await rpc(url, LIST, { authorization: `Bearer ${token}` });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("retry-after"), "5");

    await open({ authorizationServers: [idp.issuer], introspection: introspection() });
    const fresh = idp.opaqueToken({ active: true, sub: "bob", aud: url, exp: now() + 300 });
    await idp.stop();
    try {
      const down = await rpc(url, LIST, { authorization: `Bearer ${fresh}` });
      assert.equal(down.status, 503);
      assert.doesNotMatch(down.text, /ECONNREFUSED|fetch failed/);
    } finally {
      await idp.start();
    }
    assert.equal((await rpc(url, LIST, { authorization: `Bearer ${fresh}` })).status, 200);
  });

  test("an oversized introspection answer is not read past 64 KiB: 503", async () => {
    await open({ issuer: idp.issuer, introspection: introspection() });
    const token = idp.opaqueToken({
      active: true,
      sub: "bob",
      aud: url,
      iss: idp.issuer,
      exp: now() + 300,
      padding: "x".repeat(200_000),
    });
    assert.equal((await rpc(url, LIST, { authorization: `Bearer ${token}` })).status, 503);
  });

  test("with both configured, JWTs are verified locally and opaque tokens introspected", async () => {
    await open({ issuer: idp.issuer, jwksUrl: idp.jwksUrl, introspection: introspection() });
    const jwt = await idp.sign({ sub: "alice", aud: url });
    const opaque = idp.opaqueToken({
      active: true,
      sub: "bob",
      aud: url,
      iss: idp.issuer,
      exp: now() + 300,
    });
    const start = idp.introspections;
    assert.equal((await rpc(url, LIST, { authorization: `Bearer ${jwt}` })).status, 200);
    assert.equal(idp.introspections, start, "no introspection for a JWT");
    assert.equal((await rpc(url, LIST, { authorization: `Bearer ${opaque}` })).status, 200);
    assert.equal(idp.introspections, start + 1);
  });
});
