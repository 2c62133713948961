import assert from "node:assert/strict";
import { describe, it } from "node:test";

import fc from "fast-check";
import ipaddr from "ipaddr.js";

import { parseIpAddress } from "../../src/identity/ip-address.js";

describe("parseIpAddress", () => {
  it("parses four-part decimal IPv4 only", () => {
    assert.equal(parseIpAddress("192.0.2.1")?.toString(), "192.0.2.1");
    assert.equal(parseIpAddress("255.255.255.255")?.toString(), "255.255.255.255");
    for (const bad of [
      "256.0.0.1",
      "1.2.3",
      "127.1",
      "0x7f.0.0.1",
      "01.2.3.4",
      "2130706433",
      "1.2.3.4 ",
    ]) {
      assert.equal(parseIpAddress(bad), null, bad);
    }
  });
  it("parses IPv6, drops the zone and unwraps IPv4-mapped addresses", () => {
    assert.equal(parseIpAddress("2001:DB8::1")?.toString(), "2001:db8::1");
    assert.equal(parseIpAddress("fe80::1%eth0")?.toString(), "fe80::1");
    assert.equal(parseIpAddress("::ffff:192.0.2.1")?.kind(), "ipv4");
    assert.equal(parseIpAddress("::ffff:c000:201")?.toString(), "192.0.2.1");
    for (const bad of [
      "::ffff:0x7f.0.0.1",
      "::ffff:1.2.3.04",
      "1::2::3",
      "fe80::1%",
      ":::",
      "[::1]",
    ]) {
      assert.equal(parseIpAddress(bad), null, bad);
    }
  });
  it("rejects non-strings and over-long text", () => {
    for (const bad of [undefined, null, 42, {}, "", `::${"0:".repeat(100)}1`]) {
      assert.equal(parseIpAddress(bad), null);
    }
  });
  it("agrees with ipaddr.js on every well-formed address", () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (text) => {
        const parsed = parseIpAddress(text);
        assert.ok(parsed, text);
        const reference = ipaddr.process(text);
        assert.equal(parsed.toString(), reference.toString());
      }),
    );
  });
});
