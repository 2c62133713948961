/**
 * The anonymous scope of a request is remembered by peer address, not by connection
 * (src/http/core/context/scope.ts, `CoreState.addressScopes`): any number of connections from
 * one address keep one entry, the entries are bounded (`ADDRESS_SCOPES`, oldest out first), and
 * an address pushed out gets the same scope when it comes back. The scope itself is
 * identity/scope.ts's: `ip:` and the IPv4 address, or the IPv6 /64.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { ADDRESS_SCOPES, type CoreState } from "../../src/http/core/context/core-state.js";
import type { RequestContext } from "../../src/http/core/context/request-context.js";
import { originScope } from "../../src/http/core/context/scope.js";

/** Just what `originScope` reads of the core's state, with no proxy trusted. */
function coreState(): CoreState {
  return {
    config: { trustProxy: { kind: "none" } },
    addressScopes: new Map<string, string>(),
    lastAddress: undefined,
    lastAddressScope: "",
  } as unknown as CoreState;
}

/** A request without principal from `remote`, on connection `connection`. */
function request(core: CoreState, remote: string, connection: object): RequestContext {
  return {
    core,
    principal: null,
    headers: {},
    input: { remoteAddress: remote, connection, fallbackScope: undefined },
  } as unknown as RequestContext;
}

const v4 = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

test("many connections from one address keep one entry", () => {
  const core = coreState();
  for (let i = 0; i < 50; i++) {
    // Alternating with another address, so that the last-address shortcut does not answer.
    assert.equal(originScope(request(core, "10.0.0.1", {})), "ip:10.0.0.1");
    assert.equal(originScope(request(core, "10.0.0.2", {})), "ip:10.0.0.2");
  }
  assert.equal(core.addressScopes.size, 2);
});

test("the entries are bounded, oldest out first, and an address pushed out keeps its scope", () => {
  const core = coreState();
  const count = ADDRESS_SCOPES + 100;
  for (let i = 0; i < count; i++) {
    assert.equal(originScope(request(core, v4(i), {})), `ip:${v4(i)}`);
  }
  assert.equal(core.addressScopes.size, ADDRESS_SCOPES);
  assert.equal(core.addressScopes.has(v4(0)), false, "the oldest went first");
  assert.equal(core.addressScopes.has(v4(count - 1)), true);
  // Back after it was pushed out: parsed again, the same scope.
  assert.equal(originScope(request(core, v4(0), {})), `ip:${v4(0)}`);
  // An IPv6 client's scope is its /64, whichever address of it, remembered or not.
  const a = originScope(request(core, "2001:db8:1:2::a", {}));
  const b = originScope(request(core, "2001:db8:1:2::b", {}));
  assert.equal(a, b);
  assert.equal(core.addressScopes.size, ADDRESS_SCOPES);
});
