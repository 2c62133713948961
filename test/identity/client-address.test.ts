import assert from "node:assert/strict";
import { describe, it } from "node:test";

import fc from "fast-check";

import { clientAddress, MAX_FORWARDED_ENTRIES } from "../../src/identity/client-address.js";
import { clientBucket } from "../../src/identity/client-bucket.js";
import { parseTrustProxy } from "../../src/identity/trust-proxy.js";

const none = parseTrustProxy(undefined);

describe("clientAddress without trusted proxies (the default)", () => {
  it("returns the socket address, normalised", () => {
    assert.equal(clientAddress("203.0.113.9", undefined, none), "203.0.113.9");
    assert.equal(clientAddress("::ffff:203.0.113.9", undefined, none), "203.0.113.9");
    assert.equal(clientAddress("2001:DB8::0001", undefined, none), "2001:db8::1");
    assert.equal(clientAddress("fe80::1%eth0", undefined, none), "fe80::1");
    assert.equal(clientAddress(undefined, undefined, none), undefined);
  });
  it("ignores a forged X-Forwarded-For entirely", () => {
    for (const forged of [
      "198.51.100.1",
      "198.51.100.1, 10.0.0.1",
      ["1.1.1.1", "2.2.2.2"],
      "junk",
    ]) {
      assert.equal(clientAddress("203.0.113.9", forged, none), "203.0.113.9");
    }
    assert.equal(
      clientBucket(clientAddress("203.0.113.9", "198.51.100.1", none)),
      clientBucket("203.0.113.9"),
    );
  });
  it("returns an unparseable socket address as is (it buckets as unknown)", () => {
    assert.equal(clientAddress("weird", "198.51.100.1", none), "weird");
    assert.equal(clientAddress("weird", "198.51.100.1", parseTrustProxy("10.0.0.0/8")), "weird");
    assert.equal(clientBucket(clientAddress("weird", undefined, none)), "unknown");
  });
});

describe("clientAddress with a hop count (Express semantics)", () => {
  it("one hop: the rightmost forwarded entry is the client", () => {
    const trust = parseTrustProxy(1);
    assert.equal(clientAddress("10.0.0.1", "198.51.100.7", trust), "198.51.100.7");
    assert.equal(clientAddress("10.0.0.1", "6.6.6.6, 198.51.100.7", trust), "198.51.100.7");
  });
  it("two hops: the second entry from the right", () => {
    const trust = parseTrustProxy(2);
    assert.equal(
      clientAddress("10.0.0.1", "6.6.6.6, 198.51.100.7, 10.0.0.2", trust),
      "198.51.100.7",
    );
  });
  it("clamps to the leftmost address when the chain is shorter than the hop count", () => {
    const trust = parseTrustProxy(5);
    assert.equal(clientAddress("10.0.0.1", "198.51.100.7, 10.0.0.2", trust), "198.51.100.7");
  });
  it("trusts the peer by position, even without a socket address (a Unix-socket proxy)", () => {
    assert.equal(clientAddress(undefined, "198.51.100.7", parseTrustProxy(1)), "198.51.100.7");
    assert.equal(clientAddress(undefined, undefined, parseTrustProxy(1)), undefined);
  });
  it("falls back to the socket address without a header", () => {
    assert.equal(clientAddress("10.0.0.1", undefined, parseTrustProxy(1)), "10.0.0.1");
    assert.equal(clientAddress("10.0.0.1", "", parseTrustProxy(1)), "10.0.0.1");
    assert.equal(clientAddress("10.0.0.1", "  ", parseTrustProxy(1)), "10.0.0.1");
  });
  it("joins several header values with commas", () => {
    const trust = parseTrustProxy(2);
    assert.equal(
      clientAddress("10.0.0.1", ["6.6.6.6", "198.51.100.7, 10.0.0.2"], trust),
      "198.51.100.7",
    );
  });
  it("drops ports, zone ids and unwraps mapped addresses", () => {
    const trust = parseTrustProxy(1);
    assert.equal(clientAddress("10.0.0.1", "198.51.100.7:5123", trust), "198.51.100.7");
    assert.equal(clientAddress("10.0.0.1", "[2001:db8::7]:443", trust), "2001:db8::7");
    assert.equal(clientAddress("10.0.0.1", "[2001:db8::7]", trust), "2001:db8::7");
    assert.equal(clientAddress("10.0.0.1", "2001:DB8::7", trust), "2001:db8::7");
    assert.equal(clientAddress("10.0.0.1", "::ffff:198.51.100.7", trust), "198.51.100.7");
  });
  it("falls back to the socket address when the chosen entry is malformed", () => {
    const trust = parseTrustProxy(1);
    for (const bad of [
      "evil",
      "198.51.100.7,",
      "127.1",
      "[2001:db8::7",
      "[2001:db8::7]x",
      "1.2.3.4:port",
      "1.2.3.4:",
      "2001:db8::7]:1",
      "[1.2.3.4]:1:2",
    ]) {
      assert.equal(clientAddress("10.0.0.1", bad, trust), "10.0.0.1", bad);
    }
    // A malformed entry further left than the hop count is never looked at.
    assert.equal(clientAddress("10.0.0.1", "evil, 198.51.100.7", trust), "198.51.100.7");
  });
  it(`reads at most ${MAX_FORWARDED_ENTRIES} entries from the right`, () => {
    const chain = Array.from({ length: 1000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join(", ");
    assert.equal(clientAddress("10.0.0.1", chain, parseTrustProxy(1)), "10.0.3.231");
    assert.equal(
      clientAddress("10.0.0.1", chain, parseTrustProxy(MAX_FORWARDED_ENTRIES)),
      "10.0.3.200",
    );
    // Past the bound the true leftmost entry is unknown: the socket address stands in.
    assert.equal(
      clientAddress("10.0.0.1", chain, parseTrustProxy(MAX_FORWARDED_ENTRIES + 1)),
      "10.0.0.1",
    );
    const short = Array.from({ length: MAX_FORWARDED_ENTRIES }, (_, i) => `10.1.0.${i}`).join(",");
    assert.equal(clientAddress("10.0.0.1", short, parseTrustProxy(1000)), "10.1.0.0");
  });
});

describe("clientAddress with trusted ranges", () => {
  const trust = parseTrustProxy("10.0.0.0/8, fd00::/8");
  it("ignores the header when the socket peer is not trusted", () => {
    assert.equal(clientAddress("203.0.113.9", "198.51.100.7", trust), "203.0.113.9");
    assert.equal(clientAddress("fe80::1", "198.51.100.7", trust), "fe80::1");
  });
  it("walks right-to-left past trusted proxies to the first untrusted address", () => {
    assert.equal(clientAddress("10.0.0.1", "198.51.100.7", trust), "198.51.100.7");
    assert.equal(
      clientAddress("10.0.0.1", "6.6.6.6, 198.51.100.7, 10.0.0.3, fd00::9", trust),
      "198.51.100.7",
    );
    assert.equal(clientAddress("::ffff:10.0.0.1", "198.51.100.7", trust), "198.51.100.7");
  });
  it("does not let a client forge addresses to the left of the one a proxy appended", () => {
    // The client sent "X-Forwarded-For: 10.9.9.9" hoping to be trusted itself: the walk stops
    // at its real address (appended by the proxy), which is untrusted.
    assert.equal(clientAddress("10.0.0.1", "10.9.9.9, 203.0.113.50", trust), "203.0.113.50");
  });
  it("returns the leftmost address when every hop is trusted", () => {
    assert.equal(clientAddress("10.0.0.1", "10.0.0.5, 10.0.0.3", trust), "10.0.0.5");
    assert.equal(clientAddress("10.0.0.1", undefined, trust), "10.0.0.1");
    assert.equal(clientAddress("10.0.0.1", "", trust), "10.0.0.1");
  });
  it("falls back to the last verified hop when the walk reaches a malformed entry", () => {
    assert.equal(clientAddress("10.0.0.1", "198.51.100.7, junk", trust), "10.0.0.1");
    assert.equal(clientAddress("10.0.0.1", "junk, 10.0.0.2", trust), "10.0.0.2");
    // ...but not when it stops before it.
    assert.equal(clientAddress("10.0.0.1", "junk, 198.51.100.7", trust), "198.51.100.7");
  });
  it("falls back to the last trusted hop read when the bound stops the walk", () => {
    const chain = Array.from({ length: MAX_FORWARDED_ENTRIES + 1 }, (_, i) => `10.2.0.${i}`);
    assert.equal(clientAddress("10.0.0.1", chain.join(","), trust), "10.2.0.1");
    assert.equal(clientAddress("10.0.0.1", chain.slice(1).join(","), trust), "10.2.0.1");
  });
  it("never throws and never returns text that is not an address or the socket value", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.ipV4(), fc.ipV6(), fc.string()),
        fc.oneof(
          fc.string(),
          fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string()), { maxLength: 40 }),
        ),
        fc.oneof(fc.constant(trust), fc.constant(parseTrustProxy(2)), fc.constant(none)),
        (socket, header, chosen) => {
          const forwarded = Array.isArray(header) ? header.join(", ") : header;
          const result = clientAddress(socket, forwarded, chosen);
          if (result !== undefined && result !== socket) {
            assert.notEqual(clientBucket(result), "unknown", result);
          }
        },
      ),
    );
  });
});
