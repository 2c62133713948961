import assert from "node:assert/strict";
import { describe, it } from "node:test";

import fc from "fast-check";

import { deriveId } from "../../src/identity/derive-id.js";

class User {
  constructor(readonly id: unknown) {}
}
class ApiClient {
  constructor(readonly id: unknown) {}
}
class Account {
  constructor(
    readonly id: unknown,
    readonly sub: unknown,
  ) {}
}
class Session {
  readonly #secret: string;
  constructor(secret: string) {
    this.#secret = secret;
  }
  get id(): string {
    return this.#secret;
  }
}

describe("deriveId: scalars", () => {
  it("keeps a string as is", () => {
    assert.equal(deriveId("u1"), "u1");
    assert.equal(deriveId(""), "");
  });
  it("turns a safe integer into its decimal text, so 42 and '42' are one principal", () => {
    assert.equal(deriveId(42), "42");
    assert.equal(deriveId(-7), "-7");
    assert.equal(deriveId(0), "0");
    assert.equal(deriveId(42), deriveId("42"));
    assert.equal(deriveId(42n), "42");
  });
  it("gives null for non-integers and unsafe integers", () => {
    for (const value of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, 2n ** 64n]) {
      assert.equal(deriveId(value), null, String(value));
    }
  });
  it("gives null for true, false, null, undefined (the original's true/false/:ok/nil)", () => {
    for (const value of [true, false, null, undefined]) assert.equal(deriveId(value), null);
  });
  it("gives null for symbols, functions and arrays (atoms, pids, tuples, lists)", () => {
    assert.equal(deriveId(Symbol("svc")), null);
    assert.equal(
      deriveId(() => "x"),
      null,
    );
    assert.equal(deriveId([1]), null);
    assert.equal(deriveId([1, 2]), null);
    assert.equal(deriveId(["u1"]), null);
  });
});

describe("deriveId: plain objects", () => {
  it("reads id, else sub", () => {
    assert.equal(deriveId({ sub: "x" }), "x");
    assert.equal(deriveId({ id: 7 }), "7");
    assert.equal(deriveId({ id: "a", sub: "b" }), "a");
    assert.equal(deriveId(Object.assign(Object.create(null), { id: "n" })), "n");
  });
  it("gives null without id or sub, or for {}", () => {
    assert.equal(deriveId({ exp: 1 }), null);
    assert.equal(deriveId({}), null);
  });
  it("uses only the first present key: { id: {} } is null even with a sub", () => {
    assert.equal(deriveId({ id: {} }), null);
    assert.equal(deriveId({ id: {}, sub: "x" }), null);
    assert.equal(deriveId({ id: true }), null);
    assert.equal(deriveId({ id: { id: "nested" } }), null);
  });
  it("ignores a polluted Object.prototype", () => {
    const proto = Object.prototype as { id?: unknown };
    proto.id = "everyone";
    try {
      assert.equal(deriveId({ exp: 1 }), null);
      assert.equal(deriveId(new (class Thing {})()), null);
    } finally {
      delete proto.id;
    }
  });
});

describe("deriveId: class instances", () => {
  it("prefixes the class name, so equal ids of different classes differ", () => {
    assert.equal(deriveId(new User(42)), "User:42");
    assert.equal(deriveId(new ApiClient(42)), "ApiClient:42");
    assert.notEqual(deriveId(new User(42)), deriveId(new ApiClient(42)));
  });
  it("uses sub when id is null, undefined or false", () => {
    assert.equal(deriveId(new Account(null, "s1")), "Account:s1");
    assert.equal(deriveId(new Account(undefined, 9)), "Account:9");
    assert.equal(deriveId(new Account(false, "s2")), "Account:s2");
    assert.equal(deriveId(new Account("i", "s")), "Account:i");
  });
  it("reads an id getter defined by the class", () => {
    assert.equal(deriveId(new Session("abc")), "Session:abc");
  });
  it("gives null when the id is not a scalar", () => {
    assert.equal(deriveId(new User(null)), null);
    assert.equal(deriveId(new User({})), null);
    assert.equal(deriveId(new User(true)), null);
    assert.equal(deriveId(new User(1.5)), null);
    assert.equal(deriveId(new Date()), null);
    assert.equal(deriveId(new Map([["id", "x"]])), null);
  });
  it("gives null for an anonymous class", () => {
    const Anonymous = (() => class {})();
    const instance = new Anonymous() as { id?: unknown };
    instance.id = 1;
    assert.equal(deriveId(instance), null);
  });
  it("never throws, whatever getters and proxies do", () => {
    class Boom {
      get id(): never {
        throw new Error("no");
      }
    }
    assert.equal(deriveId(new Boom()), null);
    const throwing = {
      get id(): never {
        throw new Error("no");
      },
    };
    assert.equal(deriveId(throwing), null);
    const { proxy, revoke } = Proxy.revocable({ id: "x" }, {});
    revoke();
    assert.equal(deriveId(proxy), null);
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const id = deriveId(value);
        assert.ok(id === null || typeof id === "string");
      }),
    );
  });
});
