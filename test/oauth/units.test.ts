/**
 * The small pieces of the resource server on their own: challenge building (nothing breaks out
 * of its quotes), scope claims and hierarchies, reading credentials, the bounded cache, metadata
 * URLs, and the options that need one another.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { InvalidOptionError } from "../../src/errors.js";
import {
  BoundedCache,
  bearerChallenge,
  grantedScopes,
  metadataPath,
  metadataUrl,
  missingScopes,
  presentedCredentials,
  resourceAudiences,
  withImpliedScopes,
} from "../../src/identity/oauth/index.js";
import { createMcpServer } from "../../src/server/index.js";

describe("OAuth building blocks", () => {
  test("bearerChallenge: RFC 6750 order, and no quote, backslash or control character survives", () => {
    assert.equal(bearerChallenge({}), "Bearer");
    assert.equal(
      bearerChallenge({
        error: "invalid_token",
        description: 'a "b" \\ c\r\nX: y',
        scopes: ["a", "b"],
        resourceMetadata: "https://m.example/.well-known/oauth-protected-resource",
      }),
      'Bearer error="invalid_token", error_description="a b  cX: y", scope="a b", resource_metadata="https://m.example/.well-known/oauth-protected-resource"',
    );
  });

  test("grantedScopes reads scope, else scp; a malformed claim is refused as a whole", () => {
    assert.deepEqual(grantedScopes({ scope: "a b  a" }), ["a", "b"]);
    assert.deepEqual(grantedScopes({ scp: ["a", "c"], scope: "b" }), ["b"]);
    assert.deepEqual(grantedScopes({ scp: ["a", "c"] }), ["a", "c"]);
    assert.deepEqual(grantedScopes({}), []);
    assert.equal(grantedScopes({ scope: 5 }), null);
    assert.equal(grantedScopes({ scp: ["a", 1] }), null);
    assert.equal(
      grantedScopes({ scope: Array.from({ length: 300 }, (_, i) => `s${i}`).join(" ") }),
      null,
    );
    assert.deepEqual(missingScopes(["a"], ["a", "b", "c"]), ["b", "c"]);
  });

  test("withImpliedScopes follows the hierarchy transitively and stops on cycles", () => {
    const implied = new Map([
      ["admin", ["write"]],
      ["write", ["read"]],
      ["read", ["admin"]],
    ]);
    assert.deepEqual(withImpliedScopes(["write"], implied).sort(), ["admin", "read", "write"]);
    assert.deepEqual(withImpliedScopes(["other"], implied), ["other"]);
  });

  test("presentedCredentials: one Bearer header, case-insensitive scheme, no query token", () => {
    assert.deepEqual(presentedCredentials(["Bearer abc"], "/mcp"), { kind: "token", token: "abc" });
    assert.deepEqual(presentedCredentials(["bEaReR abc "], "/mcp"), {
      kind: "token",
      token: "abc",
    });
    assert.equal(presentedCredentials(undefined, "/mcp").kind, "none");
    assert.equal(presentedCredentials(["Basic abc"], "/mcp").kind, "none");
    assert.equal(presentedCredentials(["Bearer a", "Bearer a"], "/mcp").kind, "malformed");
    assert.equal(presentedCredentials(undefined, "/mcp?access_token=x").kind, "malformed");
    assert.equal(presentedCredentials(["Bearer a"], "/mcp?x=access_token").kind, "token");
    assert.equal(presentedCredentials([`Bearer ${"a".repeat(8_193)}`], "/mcp").kind, "oversized");
  });

  test("BoundedCache: expiry and least-recently-used eviction", () => {
    let now = 1_000;
    const cache = new BoundedCache<string>(2, () => now);
    cache.set("a", "1", 2_000);
    cache.set("b", "2", 2_000);
    assert.equal(cache.get("a"), "1"); // a is now the most recent
    cache.set("c", "3", 2_000);
    assert.equal(cache.get("b"), undefined, "b was the least recently used");
    assert.equal(cache.get("a"), "1");
    now = 2_000;
    assert.equal(cache.get("a"), undefined, "expired");
    cache.set("d", "4", 1_500);
    assert.equal(cache.size, 1, "an already expired entry is not stored");
  });

  test("metadata URLs insert the well-known segment before the path (RFC 9728 §3.1)", () => {
    assert.equal(
      metadataUrl("https://m.example/mcp"),
      "https://m.example/.well-known/oauth-protected-resource/mcp",
    );
    assert.equal(
      metadataUrl("https://m.example"),
      "https://m.example/.well-known/oauth-protected-resource",
    );
    assert.equal(
      metadataUrl("https://m.example:8443/a/b"),
      "https://m.example:8443/.well-known/oauth-protected-resource/a/b",
    );
    assert.equal(metadataPath("/"), "/.well-known/oauth-protected-resource");
    assert.deepEqual(resourceAudiences("https://m.example"), [
      "https://m.example",
      "https://m.example/",
    ]);
    assert.deepEqual(resourceAudiences("https://m.example/mcp"), ["https://m.example/mcp"]);
  });

  test("metricsAuth needs auth; bad oauth values name their option", () => {
    assert.throws(() => createMcpServer({ metrics: true, metricsAuth: true }), /metricsAuth/);
    const oauth = { issuer: "https://idp.example.com/", jwksUrl: "https://idp.example.com/jwks" };
    for (const [bad, option] of [
      [{ ...oauth, scopes: ["two words"] }, "auth.oauth.scopes"],
      [{ ...oauth, impliedScopes: { admin: "write" } }, "auth.oauth.impliedScopes.admin"],
      [{ ...oauth, clockToleranceSec: 3_600 }, "auth.oauth.clockToleranceSec"],
      [{ ...oauth, audience: [] }, "auth.oauth.audience"],
      [{ ...oauth, authorizationServers: [] }, "auth.oauth.authorizationServers"],
      [
        {
          ...oauth,
          introspection: { url: "https://idp.example.com/i", clientId: "x", clientSecret: "" },
        },
        "auth.oauth.introspection.clientSecret",
      ],
    ] as const) {
      assert.throws(
        () => createMcpServer({ auth: { oauth: bad as never } }),
        (error: unknown) => error instanceof InvalidOptionError && error.option === option,
        option,
      );
    }
  });
});
