import assert from "node:assert/strict";
import { describe, it } from "node:test";

import fc from "fast-check";

import { compareCodePoints } from "../../src/cancellation/code-point-order.js";

/** Reference: compare the arrays of code points (lone surrogates as their own code point). */
function reference(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0) ?? 0);
  const y = Array.from(b, (c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  }
  return x.length - y.length;
}

/** Strings dense in the interesting units: ASCII, surrogates of both kinds, U+E000–U+FFFF. */
const tricky = fc.string({
  unit: fc.constantFrom(
    "a",
    "b",
    "\uD800",
    "\uDBFF",
    "\uDC00",
    "\uDFFF",
    "\uE000",
    "\uFFFF",
    "\u{10000}",
    "\u{1F600}",
  ),
  maxLength: 6,
});

describe("compareCodePoints", () => {
  it("orders astral characters after U+E000-U+FFFF, unlike UTF-16 units", () => {
    assert.ok("\u{1F600}" < "\uFFFF", "premise: JS compares UTF-16 units");
    assert.ok(compareCodePoints("\u{1F600}", "\uFFFF") > 0);
    assert.ok(compareCodePoints("\uE000", "\u{10000}") < 0);
    assert.ok(compareCodePoints("x\u{10000}", "x\uE000") > 0);
  });

  it("equal strings compare 0; a proper prefix sorts first", () => {
    assert.equal(compareCodePoints("abc", "abc"), 0);
    assert.ok(compareCodePoints("ab", "abc") < 0);
    assert.ok(compareCodePoints("abc", "ab") > 0);
    assert.ok(compareCodePoints("", "a") < 0);
  });

  it("matches UTF-8 byte order on well-formed strings", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (a, b) => {
        const bytes = Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
        assert.equal(Math.sign(compareCodePoints(a, b)), bytes);
      }),
    );
  });

  it("matches code point order on any string, lone surrogates included", () => {
    fc.assert(
      fc.property(tricky, tricky, (a, b) => {
        assert.equal(Math.sign(compareCodePoints(a, b)), Math.sign(reference(a, b)));
        assert.equal(Math.sign(compareCodePoints(b, a)), Math.sign(reference(b, a)));
      }),
      { numRuns: 2_000 },
    );
  });
});
