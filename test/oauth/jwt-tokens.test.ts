/**
 * conduit-mcp as an OAuth 2.1 resource server, over raw HTTP against a real local authorization
 * server (test/helpers/oauth-issuer.ts): the RFC 9728 metadata, the 401/403 challenges, every
 * way a JWT access token can be wrong, scopes (server-wide and per tool), the JWKS cache,
 * rotation and outage (fail closed, then recovery).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { SignJWT, UnsecuredJWT } from "jose";
import { z } from "zod";

import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { startIssuer, type TestIssuer } from "../helpers/oauth-issuer.js";
import { callBody, rpc } from "../server/fixtures.js";

const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };

function tools() {
  return [
    defineTool({
      name: "whoami",
      input: z.object({}),
      handler: (_args, ctx) =>
        JSON.stringify({ id: ctx.principal?.id, scopes: ctx.principal?.scopes, scope: ctx.scope }),
    }),
    defineTool({ name: "admin", scopes: ["admin"], input: z.object({}), handler: () => "done" }),
  ];
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** The parameters of a Bearer challenge, by name. */
function challengeOf(header: string | null): Record<string, string> {
  assert.ok(header !== null, "a WWW-Authenticate header");
  assert.match(header, /^Bearer( |$)/);
  const params: Record<string, string> = {};
  for (const [, name, value] of header.matchAll(/(\w+)="([^"]*)"/g)) {
    params[name as string] = value as string;
  }
  return params;
}

describe("OAuth resource server: JWT access tokens", () => {
  let idp: TestIssuer;
  let server: McpServer;
  let url: string;
  let metadataUrl: string;

  before(async () => {
    idp = await startIssuer();
    server = createMcpServer({
      tools: tools(),
      auth: {
        oauth: {
          issuer: idp.issuer,
          jwksUrl: idp.jwksUrl,
          scopes: ["mcp"],
          jwksCooldownMs: 0,
          jwksRetryAfterFailureMs: 0,
        },
      },
    });
    url = (await server.listen()).url;
    const u = new URL(url);
    metadataUrl = `${u.origin}/.well-known/oauth-protected-resource/mcp`;
  });
  after(async () => {
    await server.close();
    await idp.close();
  });

  const token = (claims: Record<string, unknown> = {}, options = {}) =>
    idp.sign({ sub: "alice", aud: url, scope: "mcp", ...claims }, options);

  test("serves RFC 9728 metadata at the path-suffixed and the root well-known URLs", async () => {
    for (const at of [metadataUrl, `${new URL(url).origin}/.well-known/oauth-protected-resource`]) {
      const response = await fetch(at);
      assert.equal(response.status, 200, at);
      assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
      assert.equal(response.headers.get("access-control-allow-origin"), "*");
      assert.deepEqual(await response.json(), {
        resource: url,
        authorization_servers: [idp.issuer],
        scopes_supported: ["mcp"],
        bearer_methods_supported: ["header"],
      });
    }
    const other = await fetch(`${new URL(url).origin}/.well-known/oauth-protected-resource/other`);
    assert.equal(other.status, 404);
    await other.body?.cancel();
  });

  test("no token: 401 with resource_metadata and the required scope, no error code", async () => {
    const answer = await rpc(url, LIST);
    assert.equal(answer.status, 401);
    assert.deepEqual(challengeOf(answer.headers.get("www-authenticate")), {
      resource_metadata: metadataUrl,
      scope: "mcp",
    });
    // Another scheme counts as no bearer token.
    const basic = await rpc(url, LIST, { authorization: "Basic YWxpY2U6c2VjcmV0" });
    assert.equal(basic.status, 401);
    assert.equal(challengeOf(basic.headers.get("www-authenticate")).error, undefined);
  });

  test("a valid token: 200, ctx.principal.id is sub and the scope is principal:sub", async () => {
    const answer = await rpc(url, callBody(1, "whoami", {}), bearer(await token()));
    assert.equal(answer.status, 200);
    const result = (answer.json as { result: { content: { text: string }[] } }).result;
    assert.deepEqual(JSON.parse(result.content[0]?.text ?? ""), {
      id: "alice",
      scopes: ["mcp"],
      scope: "principal:alice",
    });
  });

  test("scopes come from scp too, and an aud array naming this resource is accepted", async () => {
    const jwt = await token({ scope: undefined, scp: ["mcp", "admin"], aud: ["other", url] });
    const answer = await rpc(url, callBody(1, "admin", {}), bearer(jwt));
    assert.equal(answer.status, 200, answer.text);
  });

  test("a token with scope and scp grants what scope says (RFC 9068 §2.2.3.1), never the union", async () => {
    const jwt = await token({ scope: "mcp", scp: ["mcp", "admin"] });
    const answer = await rpc(url, callBody(1, "admin", {}), bearer(jwt));
    assert.equal(answer.status, 403, answer.text);
    const whoami = await rpc(url, callBody(2, "whoami", {}), bearer(jwt));
    const result = (whoami.json as { result: { content: { text: string }[] } }).result;
    assert.deepEqual(JSON.parse(result.content[0]?.text ?? "").scopes, ["mcp"]);
  });

  test("every bad token gets 401 invalid_token with the challenge", async () => {
    const rogue = await idp.newKey();
    const now = Math.floor(Date.now() / 1000);
    const publicKeyAsSecret = new TextEncoder().encode(JSON.stringify(idp.currentKey.publicJwk));
    const cases: [string, string][] = [
      ["wrong audience", await token({ aud: "https://elsewhere.example.com/mcp" })],
      ["no audience", await token({ aud: undefined })],
      ["wrong issuer", await token({ iss: "https://evil.example.com" })],
      ["expired", await token({}, { expiresIn: -60 })],
      ["not yet valid", await token({}, { notBefore: 120 })],
      [
        "alg none",
        new UnsecuredJWT({
          iss: idp.issuer,
          sub: "alice",
          aud: url,
          scope: "mcp",
          exp: now + 300,
        }).encode(),
      ],
      [
        "HMAC signed with the public key",
        await new SignJWT({ iss: idp.issuer, sub: "alice", aud: url, scope: "mcp", exp: now + 300 })
          .setProtectedHeader({ alg: "HS256", kid: idp.currentKey.kid })
          .sign(publicKeyAsSecret),
      ],
      ["unknown kid (a key the JWKS does not list)", await token({}, { key: rogue })],
      [
        "a listed kid, another key's signature",
        await token({}, { key: rogue, kid: idp.currentKey.kid }),
      ],
      [
        "no exp",
        await new SignJWT({ iss: idp.issuer, sub: "alice", aud: url, scope: "mcp" })
          .setProtectedHeader({ alg: "RS256", kid: idp.currentKey.kid })
          .sign(idp.currentKey.privateKey),
      ],
      ["no subject", await token({ sub: undefined })],
      ["an overlong subject", await token({ sub: "s".repeat(300) })],
      ["a subject with control characters", await token({ sub: "alice\r\nX-Forged: 1" })],
      ["garbage", "not-a-token"],
      ["garbage JWT", "eyJhbGciOiJSUzI1NiJ9.e30.AAAA"],
      [
        "tampered payload",
        (await token()).replace(
          /\.[^.]+\./,
          `.${Buffer.from(JSON.stringify({ sub: "mallory", aud: url, iss: idp.issuer, scope: "mcp", exp: now + 300 })).toString("base64url")}.`,
        ),
      ],
    ];
    for (const [name, jwt] of cases) {
      const answer = await rpc(url, callBody(1, "whoami", {}), bearer(jwt));
      assert.equal(answer.status, 401, name);
      const challenge = challengeOf(answer.headers.get("www-authenticate"));
      assert.equal(challenge.error, "invalid_token", name);
      assert.equal(challenge.resource_metadata, metadataUrl, name);
      assert.ok(
        !answer.text.includes("JWT") && !answer.text.includes("at "),
        `${name}: no internals`,
      );
    }
  });

  test("a token without the server's required scope: 403 insufficient_scope naming it", async () => {
    const answer = await rpc(url, LIST, bearer(await token({ scope: "other" })));
    assert.equal(answer.status, 403);
    const challenge = challengeOf(answer.headers.get("www-authenticate"));
    assert.equal(challenge.error, "insufficient_scope");
    assert.equal(challenge.scope, "mcp");
    assert.equal(challenge.resource_metadata, metadataUrl);
  });

  test("a tool's scopes: hidden from tools/list, and 403 naming every scope needed on use", async () => {
    const plain = bearer(await token());
    const listed = await rpc(url, LIST, plain);
    const names = (listed.json as { result: { tools: { name: string }[] } }).result.tools.map(
      (t) => t.name,
    );
    assert.deepEqual(names, ["whoami"]);
    const used = await rpc(url, callBody(2, "admin", {}), plain);
    assert.equal(used.status, 403);
    const challenge = challengeOf(used.headers.get("www-authenticate"));
    assert.equal(challenge.error, "insufficient_scope");
    assert.equal(challenge.scope, "mcp admin");
    assert.equal(challenge.resource_metadata, metadataUrl);
    const admin = bearer(await token({ scope: "mcp admin" }));
    const all = await rpc(url, LIST, admin);
    assert.deepEqual(
      (all.json as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name),
      ["whoami", "admin"],
    );
    assert.equal((await rpc(url, callBody(3, "admin", {}), admin)).status, 200);
  });

  test("key rotation: a token signed with a newly published key is accepted after one refetch", async () => {
    const fresh = await idp.newKey("ES256");
    idp.publish(fresh);
    const hits = idp.jwksHits;
    const answer = await rpc(url, callBody(1, "whoami", {}), bearer(await token()));
    assert.equal(answer.status, 200, answer.text);
    assert.equal(idp.jwksHits, hits + 1, "exactly one refetch for the unknown kid");
    assert.equal((await rpc(url, LIST, bearer(await token()))).status, 200);
    assert.equal(idp.jwksHits, hits + 1, "the new key is cached");
  });
});

describe("OAuth resource server: the JWKS cache bounds refetches and outages fail closed", () => {
  test("unknown kids within the cooldown cause no refetch storm", async () => {
    const idp = await startIssuer();
    const server = createMcpServer({
      tools: tools(),
      auth: { oauth: { issuer: idp.issuer, jwksUrl: idp.jwksUrl } },
    });
    const { url } = await server.listen();
    try {
      const good = await idp.sign({ sub: "alice", aud: url });
      assert.equal((await rpc(url, LIST, bearer(good))).status, 200);
      const hits = idp.jwksHits;
      const rogue = await idp.newKey();
      for (let i = 0; i < 20; i++) {
        const forged = await idp.sign({ sub: "alice", aud: url }, { key: rogue, kid: `k${i}` });
        assert.equal((await rpc(url, LIST, bearer(forged))).status, 401);
      }
      assert.ok(
        idp.jwksHits - hits <= 1,
        `at most one refetch in the cooldown (${idp.jwksHits - hits})`,
      );
    } finally {
      await server.close();
      await idp.close();
    }
  });

  test("JWKS unreachable: 503 (never 200), and tokens work again once it is back", async () => {
    const idp = await startIssuer();
    const server = createMcpServer({
      tools: tools(),
      auth: {
        oauth: {
          issuer: idp.issuer,
          jwksUrl: idp.jwksUrl,
          jwksTimeoutMs: 2_000,
          jwksRetryAfterFailureMs: 0,
        },
      },
    });
    const { url } = await server.listen();
    try {
      const jwt = await idp.sign({ sub: "alice", aud: url });
      await idp.stop();
      for (let i = 0; i < 3; i++) {
        const answer = await rpc(url, LIST, bearer(jwt));
        assert.equal(answer.status, 503, "fails closed");
        assert.equal(answer.headers.get("retry-after"), "5");
        assert.doesNotMatch(answer.text, /ECONNREFUSED|fetch failed|127\.0\.0\.1/);
      }
      await idp.start();
      assert.equal((await rpc(url, LIST, bearer(jwt))).status, 200, "recovers");
    } finally {
      await server.close();
      await idp.close();
    }
  });

  test("a failed JWKS fetch is not retried within jwksRetryAfterFailureMs: 503 at once", async () => {
    const idp = await startIssuer();
    const server = createMcpServer({
      tools: tools(),
      auth: {
        oauth: { issuer: idp.issuer, jwksUrl: idp.jwksUrl, jwksRetryAfterFailureMs: 60_000 },
      },
    });
    const { url } = await server.listen();
    try {
      const jwt = await idp.sign({ sub: "alice", aud: url });
      idp.failJwks(true);
      assert.equal((await rpc(url, LIST, bearer(jwt))).status, 503);
      assert.equal(idp.jwksHits, 1);
      for (let i = 0; i < 5; i++) assert.equal((await rpc(url, LIST, bearer(jwt))).status, 503);
      assert.equal(idp.jwksHits, 1, "no fetch while the failure is recent");
    } finally {
      await server.close();
      await idp.close();
    }
  });

  test("an oversized JWKS is not read past 256 KiB: 503, and a normal one works again", async () => {
    const idp = await startIssuer();
    const server = createMcpServer({
      tools: tools(),
      auth: { oauth: { issuer: idp.issuer, jwksUrl: idp.jwksUrl, jwksRetryAfterFailureMs: 0 } },
    });
    const { url } = await server.listen();
    try {
      const jwt = await idp.sign({ sub: "alice", aud: url });
      idp.padJwks(2_000_000);
      assert.equal((await rpc(url, LIST, bearer(jwt))).status, 503);
      idp.padJwks(0);
      assert.equal((await rpc(url, LIST, bearer(jwt))).status, 200);
    } finally {
      await server.close();
      await idp.close();
    }
  });

  test("during an outage, keys already fetched keep verifying", async () => {
    const idp = await startIssuer();
    const server = createMcpServer({
      tools: tools(),
      auth: {
        oauth: { issuer: idp.issuer, jwksUrl: idp.jwksUrl, jwksRetryAfterFailureMs: 60_000 },
      },
    });
    const { url } = await server.listen();
    try {
      const jwt = await idp.sign({ sub: "alice", aud: url });
      assert.equal((await rpc(url, LIST, bearer(jwt))).status, 200);
      await idp.stop();
      assert.equal((await rpc(url, LIST, bearer(jwt))).status, 200, "cached keys still verify");
    } finally {
      await server.close();
      await idp.close();
    }
  });
});

describe("OAuth resource server: scope hierarchies", () => {
  test("impliedScopes: a broader scope satisfies a tool that needs a narrower one", async () => {
    const idp = await startIssuer();
    const server = createMcpServer({
      tools: [
        defineTool({
          name: "read",
          scopes: ["files:read"],
          input: z.object({}),
          handler: () => "read",
        }),
      ],
      auth: {
        oauth: {
          issuer: idp.issuer,
          jwksUrl: idp.jwksUrl,
          impliedScopes: { "files:admin": ["files:write"], "files:write": ["files:read"] },
        },
      },
    });
    const { url } = await server.listen();
    try {
      const admin = bearer(await idp.sign({ sub: "alice", aud: url, scope: "files:admin" }));
      assert.equal((await rpc(url, callBody(1, "read", {}), admin)).status, 200);
      const other = bearer(await idp.sign({ sub: "bob", aud: url, scope: "files:other" }));
      assert.equal((await rpc(url, callBody(1, "read", {}), other)).status, 403);
    } finally {
      await server.close();
      await idp.close();
    }
  });
});
