import assert from "node:assert/strict";
import { describe, it } from "node:test";

import fc from "fast-check";

import { clientBucket } from "../../src/identity/client-bucket.js";

describe("clientBucket", () => {
  it("keeps an IPv4 address whole", () => {
    assert.equal(clientBucket("192.0.2.7"), "192.0.2.7");
    assert.equal(clientBucket("127.0.0.1"), "127.0.0.1");
    assert.equal(clientBucket("0.0.0.0"), "0.0.0.0");
  });
  it("buckets IPv6 by /64 in RFC 5952 text", () => {
    assert.equal(clientBucket("::1"), "::/64");
    assert.equal(clientBucket("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
    assert.equal(clientBucket("2001:db8::abcd"), "2001:db8::/64");
    assert.equal(clientBucket("fe80::1234"), "fe80::/64");
    assert.equal(clientBucket("0:0:0:5:1:2:3:4"), "0:0:0:5::/64");
    assert.equal(clientBucket("2001:DB8:0001:0002::9"), "2001:db8:1:2::/64");
    assert.equal(clientBucket("::"), "::/64");
  });
  it("puts the same /64 in one bucket and a different /64 in another", () => {
    assert.equal(clientBucket("2001:db8:7:8::1"), clientBucket("2001:db8:7:8:9:9:9:9"));
    assert.equal(clientBucket("2001:db8:1:2:a:b:c:d"), clientBucket("2001:db8:1:2:ffff:0:0:1"));
    assert.notEqual(clientBucket("2001:db8:7:8::1"), clientBucket("2001:db8:7:9::1"));
  });
  it("unwraps IPv4-mapped IPv6 to the embedded IPv4", () => {
    assert.equal(clientBucket("::ffff:192.0.2.1"), "192.0.2.1");
    assert.equal(clientBucket("::ffff:c000:0201"), "192.0.2.1");
    assert.equal(clientBucket("::FFFF:127.0.0.1"), "127.0.0.1");
  });
  it("ignores a zone id", () => {
    assert.equal(clientBucket("fe80::1%eth0"), "fe80::/64");
    assert.equal(clientBucket("fe80::1%2"), "fe80::/64");
  });
  it("gives 'unknown' for missing or malformed addresses", () => {
    const bad = [
      null,
      undefined,
      "",
      "unknown",
      "256.0.0.1",
      "1.2.3",
      "1.2.3.4.5",
      "127.1",
      "0x7f.0.0.1",
      "01.2.3.4",
      "1",
      "2001:db8::1::2",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7:70000",
      "::ffff:0x7f.0.0.1",
      "::ffff:1.2.3.04",
      "fe80::1%",
      " 192.0.2.1",
      "192.0.2.1/32",
      "x".repeat(10_000),
    ];
    for (const address of bad) assert.equal(clientBucket(address), "unknown", String(address));
    assert.equal(clientBucket(42 as unknown as string), "unknown");
  });
  it("always returns an IPv4 text, a /64 or 'unknown' and never throws", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), fc.string(), fc.anything()),
        (address) => {
          const bucket = clientBucket(address as string);
          assert.match(bucket, /^(unknown|\d+\.\d+\.\d+\.\d+|[0-9a-f:]+\/64)$/);
        },
      ),
    );
  });
  it("gives every address of one /64 the bucket of its network", () => {
    fc.assert(
      fc.property(fc.ipV6(), (address) => {
        const bucket = clientBucket(address);
        if (bucket.endsWith("/64")) {
          assert.equal(clientBucket(bucket.slice(0, -3)), bucket);
        }
      }),
    );
  });
});
