import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { createPrincipal, principalId } from "../../src/identity/principal.js";

describe("createPrincipal", () => {
  it("derives the id from each input shape", () => {
    const cases: [unknown, string | null][] = [
      ["u1", "u1"],
      [42, "42"],
      [{}, null],
      [{ sub: "x" }, "x"],
      [{ id: 7 }, "7"],
      [{ exp: 1 }, null],
      [true, null],
      [Symbol("svc"), null],
      [() => 1, null],
      [[1], null],
      [undefined, null],
    ];
    for (const [input, expected] of cases) {
      assert.equal(createPrincipal({ id: input }).id, expected, String(expected));
    }
  });
  it("has the defaults: no id, no scopes, no claims, no user", () => {
    const principal = createPrincipal({});
    assert.deepEqual(principal, { id: null, scopes: [] });
    assert.equal("claims" in principal, false);
    assert.equal("user" in principal, false);
    assert.deepEqual(createPrincipal(), { id: null, scopes: [] });
  });
  it("keeps scopes, claims and user; the same sub gives the same id (case 61)", () => {
    const claims = { sub: "user-123", scope: "read write" };
    const user = { name: "Ada" };
    const a = createPrincipal({ id: { sub: "user-123" }, scopes: ["read", "write"], claims, user });
    const b = createPrincipal({ id: { sub: "user-123" }, scopes: ["read"] });
    assert.equal(a.id, "user-123");
    assert.deepEqual(a.scopes, ["read", "write"]);
    assert.equal(a.claims, claims);
    assert.equal(a.user, user);
    assert.equal(a.id, b.id);
  });
  it("is frozen and does not share the caller's scopes array", () => {
    const scopes = ["read"];
    const principal = createPrincipal({ id: "u", scopes });
    scopes.push("admin");
    assert.deepEqual(principal.scopes, ["read"]);
    assert.ok(Object.isFrozen(principal));
    assert.ok(Object.isFrozen(principal.scopes));
  });
  it("keeps only string scopes when called from untyped code", () => {
    const principal = createPrincipal({ scopes: ["read", 5, null] as unknown as string[] });
    assert.deepEqual(principal.scopes, ["read"]);
  });
});

describe("principalId", () => {
  it("returns a string id", () => {
    assert.equal(principalId(createPrincipal({ id: "alice" })), "alice");
    assert.equal(principalId(createPrincipal({ id: 42 })), "42");
  });
  it("treats a hand-built principal with a non-string id as anonymous", () => {
    for (const id of [123, { nested: "x" }, Symbol("atom_id"), true, null]) {
      assert.equal(principalId({ id, scopes: [] }), null);
    }
  });
  it("treats an empty id, null, undefined and non-objects as anonymous", () => {
    assert.equal(principalId({ id: "", scopes: [] }), null);
    assert.equal(principalId(null), null);
    assert.equal(principalId(undefined), null);
    assert.equal(principalId("alice"), null);
  });
  it("never throws on a hostile principal", () => {
    const hostile = {
      get id(): never {
        throw new Error("no");
      },
    };
    assert.equal(principalId(hostile), null);
  });
});
