import assert from "node:assert/strict";
import { describe, it } from "node:test";

import fc from "fast-check";

import { normalizeRequestId } from "../../src/cancellation/request-id.js";

describe("normalizeRequestId", () => {
  it('integers become their decimal text, so 5 and "5" are one key', () => {
    assert.equal(normalizeRequestId(5), "5");
    assert.equal(normalizeRequestId("5"), "5");
    assert.equal(normalizeRequestId(-42), "-42");
    assert.equal(normalizeRequestId(0), "0");
    assert.equal(normalizeRequestId(-0), "0");
    assert.equal(normalizeRequestId(Number.MAX_SAFE_INTEGER), "9007199254740991");
  });

  it("1.0 is accepted as 1 (JSON cannot tell them apart in JS)", () => {
    assert.equal(normalizeRequestId(JSON.parse("1.0")), "1");
  });

  it("null and undefined mean 'no id': null", () => {
    assert.equal(normalizeRequestId(null), null);
    assert.equal(normalizeRequestId(undefined), null);
  });

  it("rejects non-integers, unsafe integers and non-id types", () => {
    for (const bad of [
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      2 ** 53,
      -(2 ** 53),
      true,
      false,
      {},
      [1, 2],
      5n,
      Symbol("x"),
      () => 1,
    ]) {
      assert.equal(normalizeRequestId(bad), undefined, String(typeof bad));
    }
  });

  it("strings up to 256 UTF-8 bytes are valid, the empty string included", () => {
    assert.equal(normalizeRequestId(""), "");
    assert.equal(normalizeRequestId("a".repeat(256)), "a".repeat(256));
    assert.equal(normalizeRequestId("a".repeat(257)), undefined);
    assert.equal(normalizeRequestId("é".repeat(128)), "é".repeat(128)); // 256 bytes
    assert.equal(normalizeRequestId("é".repeat(129)), undefined); // 258 bytes, 129 characters
    assert.equal(normalizeRequestId("\u{1F600}".repeat(64)), "\u{1F600}".repeat(64)); // 256 bytes
    assert.equal(normalizeRequestId(`${"\u{1F600}".repeat(64)}a`), undefined);
    assert.equal(normalizeRequestId("€".repeat(85)), "€".repeat(85)); // 255 bytes
    assert.equal(normalizeRequestId("€".repeat(86)), undefined); // 258 bytes
  });

  it("agrees with Buffer.byteLength on any string", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), (text) => {
        const valid = Buffer.byteLength(text, "utf8") <= 256;
        assert.equal(normalizeRequestId(text), valid ? text : undefined);
      }),
    );
  });
});
