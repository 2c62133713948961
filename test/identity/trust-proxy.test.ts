import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { InvalidOptionError } from "../../src/errors.js";
import { parseIpAddress } from "../../src/identity/ip-address.js";
import { isTrustedAddress, parseTrustProxy } from "../../src/identity/trust-proxy.js";

function trusts(option: Parameters<typeof parseTrustProxy>[0], address: string): boolean {
  const parsed = parseIpAddress(address);
  assert.ok(parsed, address);
  return isTrustedAddress(parseTrustProxy(option), parsed);
}

describe("parseTrustProxy", () => {
  it("trusts nothing for undefined, false, 0, an empty list", () => {
    for (const option of [undefined, false, 0, "", " , ", [], "0"] as const) {
      assert.deepEqual(parseTrustProxy(option), { kind: "none" }, JSON.stringify(option));
    }
  });
  it("reads a hop count from a number or a string of digits", () => {
    assert.deepEqual(parseTrustProxy(1), { kind: "hops", hops: 1 });
    assert.deepEqual(parseTrustProxy(3), { kind: "hops", hops: 3 });
    assert.deepEqual(parseTrustProxy(" 2 "), { kind: "hops", hops: 2 });
  });
  it("refuses true, which would let any client forge its address", () => {
    assert.throws(
      () => parseTrustProxy(true),
      (error: unknown) =>
        error instanceof InvalidOptionError &&
        error.option === "trustProxy" &&
        /forge/.test(error.message),
    );
  });
  it("rejects negative, fractional and unsafe hop counts", () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      assert.throws(() => parseTrustProxy(bad), InvalidOptionError, String(bad));
    }
  });
  it("rejects malformed entries, naming them", () => {
    const bad = [
      "10.0.0.0/33",
      "::/129",
      "10.0.0.0/",
      "10.0.0.0/x",
      "10.0.0.0/8/8",
      "not-an-ip",
      "127.1",
      "10.0.0.1, nope",
      "::ffff:10.0.0.0/90",
      "10.0.0.0/-1",
    ];
    for (const option of bad) {
      assert.throws(() => parseTrustProxy(option), InvalidOptionError, option);
    }
    assert.throws(() => parseTrustProxy(["10.0.0.1", 5 as unknown as string]), InvalidOptionError);
    assert.throws(() => parseTrustProxy({} as unknown as string), InvalidOptionError);
    assert.throws(() => parseTrustProxy(null as unknown as string), InvalidOptionError);
    assert.throws(() => parseTrustProxy("nope"), /"nope"/);
  });
  it("accepts CIDR ranges and bare addresses as a comma-separated string or an array", () => {
    const fromString = parseTrustProxy("10.0.0.0/8, 192.168.1.1 ,fd00::/8");
    const fromArray = parseTrustProxy(["10.0.0.0/8", "192.168.1.1", "fd00::/8"]);
    assert.equal(fromString.kind, "ranges");
    assert.deepEqual(fromString, fromArray);
    assert.ok(trusts("10.0.0.0/8", "10.255.1.2"));
    assert.ok(!trusts("10.0.0.0/8", "11.0.0.1"));
    assert.ok(trusts("192.168.1.1", "192.168.1.1"));
    assert.ok(!trusts("192.168.1.1", "192.168.1.2"));
    assert.ok(trusts("fd00::/8", "fd12::1"));
    assert.ok(!trusts("fd00::/8", "fe80::1"));
    assert.ok(trusts("::1", "::1"));
    assert.ok(!trusts("::1", "::2"));
    assert.ok(trusts(["10.0.0.1,10.0.0.2"], "10.0.0.2"));
  });
  it("never matches across families, and unwraps mapped ranges and addresses", () => {
    assert.ok(!trusts("0.0.0.0/0", "::1"));
    assert.ok(!trusts("::/0", "127.0.0.1"));
    assert.ok(trusts("::ffff:10.0.0.0/104", "10.9.9.9"));
    assert.ok(trusts("10.0.0.0/8", "::ffff:10.1.1.1"));
  });
  it("knows the loopback, linklocal and uniquelocal presets", () => {
    assert.ok(trusts("loopback", "127.0.0.1"));
    assert.ok(trusts("loopback", "::1"));
    assert.ok(!trusts("loopback", "10.0.0.1"));
    assert.ok(trusts("linklocal", "169.254.3.4"));
    assert.ok(trusts("linklocal", "fe80::1"));
    assert.ok(trusts("uniquelocal", "172.16.5.5"));
    assert.ok(trusts("uniquelocal", "fd00::5"));
    assert.ok(!trusts("uniquelocal", "172.32.0.1"));
    assert.ok(trusts("Loopback, 203.0.113.0/24", "203.0.113.9"));
  });
  it("is not trusted-by-address for hop counts", () => {
    assert.ok(!trusts(2, "127.0.0.1"));
  });
});
