import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { clientAddress } from "../../src/identity/client-address.js";
import { createPrincipal, type Principal } from "../../src/identity/principal.js";
import { scopeOf } from "../../src/identity/scope.js";
import { parseTrustProxy } from "../../src/identity/trust-proxy.js";

describe("scopeOf", () => {
  it("prefers the session over the principal (case 1)", () => {
    const principal = createPrincipal({ id: "user-1" });
    assert.equal(
      scopeOf({ sessionId: "sess-1", principal, address: "203.0.113.9" }),
      "session:sess-1",
    );
  });
  it("uses the principal without a session (case 2)", () => {
    const principal = createPrincipal({ id: "user-1" });
    assert.equal(scopeOf({ principal, address: "203.0.113.9" }), "principal:user-1");
    assert.equal(scopeOf({ sessionId: null, principal }), "principal:user-1");
    assert.equal(scopeOf({ sessionId: "", principal }), "principal:user-1");
  });
  it("uses the client bucket for anonymous requests (case 3)", () => {
    assert.equal(scopeOf({ address: "203.0.113.9" }), "ip:203.0.113.9");
    assert.equal(scopeOf({ principal: null, address: "::ffff:203.0.113.9" }), "ip:203.0.113.9");
    assert.equal(
      scopeOf({ principal: createPrincipal({ id: true }), address: "203.0.113.9" }),
      "ip:203.0.113.9",
    );
  });
  it("falls back to the ip when a principal's id is not a string (case 4)", () => {
    for (const id of [123, { nested: "x" }, Symbol("atom_id"), ""]) {
      const principal = { id, scopes: [] } as unknown as Principal;
      assert.equal(scopeOf({ principal, address: "203.0.113.9" }), "ip:203.0.113.9");
    }
  });
  it("puts two addresses of one /64 in one scope (case 5)", () => {
    assert.equal(scopeOf({ address: "2001:db8:1:2:a:b:c:d" }), "ip:2001:db8:1:2::/64");
    assert.equal(scopeOf({ address: "2001:db8:1:2:ffff:0:0:1" }), "ip:2001:db8:1:2::/64");
    assert.notEqual(scopeOf({ address: "2001:db8:1:3::1" }), "ip:2001:db8:1:2::/64");
  });
  it("gives 'global' without an input (case 6)", () => {
    assert.equal(scopeOf(null as never), "global");
    assert.equal(scopeOf(undefined as never), "global");
  });
  it("gives ip:unknown without a usable address (a bare conn)", () => {
    assert.equal(scopeOf({}), "ip:unknown");
    assert.equal(scopeOf({ address: null }), "ip:unknown");
    assert.equal(scopeOf({ address: "junk" }), "ip:unknown");
  });
  it("keeps principal '203.0.113.9' and ip 203.0.113.9 apart (case 16)", () => {
    const principal = createPrincipal({ id: "203.0.113.9" });
    const asPrincipal = scopeOf({ principal, address: "198.51.100.1" });
    const asIp = scopeOf({ address: "203.0.113.9" });
    assert.equal(asPrincipal, "principal:203.0.113.9");
    assert.equal(asIp, "ip:203.0.113.9");
    assert.notEqual(asPrincipal, asIp);
  });
  it("separates principals and sessions (cases 14, 15)", () => {
    assert.notEqual(
      scopeOf({ principal: createPrincipal({ id: "alice" }) }),
      scopeOf({ principal: createPrincipal({ id: "bob" }) }),
    );
    assert.notEqual(scopeOf({ sessionId: "a" }), scopeOf({ sessionId: "b" }));
  });
  it("is unchanged by a forged X-Forwarded-For without trusted proxies", () => {
    const trust = parseTrustProxy(undefined);
    const honest = scopeOf({ address: clientAddress("203.0.113.9", undefined, trust) });
    const forged = scopeOf({ address: clientAddress("203.0.113.9", "198.51.100.66", trust) });
    assert.equal(forged, honest);
    assert.equal(forged, "ip:203.0.113.9");
  });
});
