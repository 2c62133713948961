import assert from "node:assert/strict";
import { describe, it } from "node:test";

import fc from "fast-check";

import { InvalidOptionError } from "../src/errors.js";
import { reflectText } from "../src/reflect.js";

/** Every character step 4 of the pipeline strips (src/reflect.ts), one code unit each. */
const STRIPPED: readonly number[] = [
  ...range(0x00, 0x1f),
  ...range(0x7f, 0x9f),
  0x061c,
  ...range(0x200b, 0x200f),
  ...range(0x2028, 0x202e),
  0x2060,
  ...range(0x2066, 0x2069),
  0xfeff,
];
const STRIPPED_RE = /[\x00-\x1F\x7F-\x9F\u061C\u200B-\u200F\u2028-\u202E\u2060\u2066-\u2069\uFEFF]/;
const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Steps 2–4 of the pipeline (src/reflect.ts) written plainly: per code point, lone surrogates weigh 3 bytes (U+FFFD). */
function referenceReflect(text: string, max: number): string {
  let clamped = "";
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (bytes + size > 4 * max) break;
    bytes += size;
    clamped += char;
  }
  const cleaned = clamped
    .replace(/[\uD800-\uDFFF]/gu, "")
    .replace(new RegExp(STRIPPED_RE, "g"), "");
  return [...segmenter.segment(cleaned)]
    .slice(0, max)
    .map((s) => s.segment)
    .join("");
}
function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
function graphemes(text: string): number {
  return [...segmenter.segment(text)].length;
}
function isWellFormed(text: string): boolean {
  return !/[\uD800-\uDFFF]/u.test(text);
}
function assertInvariants(out: string, max: number): void {
  assert.equal(typeof out, "string");
  assert.ok(graphemes(out) <= max, `more than ${max} graphemes`);
  assert.ok(Buffer.byteLength(out, "utf8") <= 4 * max, `more than ${4 * max} bytes`);
  assert.ok(!STRIPPED_RE.test(out), "a stripped character survived");
  assert.ok(isWellFormed(out), "a lone surrogate survived");
}

describe("reflectText: stripping", () => {
  it("leaves a plain method name unchanged", () => {
    assert.equal(reflectText("tools/call"), "tools/call");
  });
  it("strips C0, DEL, C1, CR/LF and tab", () => {
    assert.equal(reflectText("tools/call\x00\x01\x02"), "tools/call");
    assert.equal(reflectText("a\x7Fb"), "ab");
    assert.equal(reflectText("a\u0085b"), "ab");
    assert.equal(reflectText("ok\r\n2026-01-01 [error] forged"), "ok2026-01-01 [error] forged");
    assert.equal(reflectText("a\tb"), "ab");
  });
  it("removes ESC but keeps the rest of an ANSI sequence", () => {
    const out = reflectText("\x1b[31mred\x1b[0m");
    assert.equal(out, "[31mred[0m");
    assert.ok(!out.includes("\x1b"));
  });
  it("strips the Arabic letter mark, word joiner and BOM", () => {
    assert.equal(reflectText("a\u061Cb"), "ab");
    assert.equal(reflectText("a\u2060b"), "ab");
    assert.equal(reflectText("a\uFEFFb"), "ab");
  });
  it("strips every listed character and nothing next to the ranges", () => {
    for (const code of STRIPPED) {
      assert.equal(reflectText(`a${String.fromCharCode(code)}b`), "ab", code.toString(16));
    }
    // Neighbours of the ranges are ordinary text and stay.
    for (const code of [0x20, 0xa0, 0x061b, 0x061d, 0x200a, 0x2010, 0x2027, 0x202f, 0x205f]) {
      const ch = String.fromCharCode(code);
      assert.equal(reflectText(`a${ch}b`), `a${ch}b`, code.toString(16));
    }
    for (const code of [0x2061, 0x2065, 0x206a, 0xfefe, 0xff00]) {
      const ch = String.fromCharCode(code);
      assert.equal(reflectText(`a${ch}b`), `a${ch}b`, code.toString(16));
    }
  });
  it("strips the zero-width joiner, so ZWJ emoji sequences fall apart (as in the original)", () => {
    assert.equal(reflectText("👩\u200D👧"), "👩👧");
  });
  it("clamps bytes before stripping: 800 bytes of control characters then text give ''", () => {
    assert.equal(reflectText(`${"\x00".repeat(800)}text`), "");
  });
});

describe("reflectText: length", () => {
  it("clamps to max graphemes without an ellipsis", () => {
    assert.equal(reflectText("a".repeat(5000)), "a".repeat(200));
    assert.equal(reflectText("a".repeat(500), 40), "a".repeat(40));
    assert.equal(reflectText("a".repeat(200)), "a".repeat(200));
    assert.equal(reflectText("abc", 1), "a");
  });
  it("keeps 300 € as 200 € (600 bytes fit the 800-byte clamp)", () => {
    const out = reflectText("€".repeat(300));
    assert.equal(out, "€".repeat(200));
    assertInvariants(out, 200);
  });
  it("stays valid and ≤ 200 for € and 𝄞 repeated 195..215 times", () => {
    for (let n = 195; n <= 215; n++) {
      for (const ch of ["€", "𝄞"]) {
        const out = reflectText(ch.repeat(n));
        assertInvariants(out, 200);
        assert.equal(out, ch.repeat(Math.min(n, 200)), `${ch} x ${n}`);
      }
    }
  });
  it("cuts at the byte limit on a code point boundary", () => {
    // 𝄞 is 4 bytes: 201 of them are 804 bytes, so exactly 200 survive the 800-byte clamp.
    assert.equal(reflectText("𝄞".repeat(201)), "𝄞".repeat(200));
    // "a" + 𝄞… : 1 + 4k ≤ 40 → k = 9, the 10th would split.
    assert.equal(reflectText(`a${"𝄞".repeat(20)}`, 10), `a${"𝄞".repeat(9)}`);
  });
  it("counts grapheme clusters, not code points", () => {
    // A flag is two code points (8 bytes) but one grapheme.
    assert.equal(reflectText(`🇫🇷${"a".repeat(20)}`, 3), "🇫🇷aa");
    assert.equal(reflectText("e\u0301".repeat(5), 3), "e\u0301".repeat(3));
  });
  it("renders a 5 000-key object within 200 graphemes", () => {
    const big: Record<string, number> = {};
    for (let i = 0; i < 5000; i++) big[`key${i}`] = i;
    const out = reflectText(big);
    assertInvariants(out, 200);
    assert.ok(out.startsWith('{"key0": 0, "key1": 1'));
    assert.ok(out.endsWith(", ...}"));
  });
  it("drops lone surrogates and keeps pairs", () => {
    assert.equal(reflectText("a\uD800b"), "ab");
    assert.equal(reflectText("a\uDC00b"), "ab");
    assert.equal(reflectText("\uDC00\uD83D\uDE00\uD800"), "😀");
  });
});

describe("reflectText: stringify", () => {
  it("renders scalars as their text", () => {
    assert.equal(reflectText(42), "42");
    assert.equal(reflectText(1.5), "1.5");
    assert.equal(reflectText(-0), "0");
    assert.equal(reflectText(true), "true");
    assert.equal(reflectText(false), "false");
    assert.equal(reflectText(12345678901234567890n), "12345678901234567890");
    assert.equal(reflectText(Number.NaN), "NaN");
  });
  it("renders null and undefined as ''", () => {
    assert.equal(reflectText(null), "");
    assert.equal(reflectText(undefined), "");
  });
  it("renders a symbol (the nearest thing to an atom) as its description", () => {
    assert.equal(reflectText(Symbol("atom")), "atom");
    assert.equal(reflectText(Symbol()), "");
  });
  it("renders {} as {} and keeps keys visible", () => {
    assert.equal(reflectText({}), "{}");
    assert.equal(reflectText(Object.create(null)), "{}");
    assert.ok(reflectText({ a: 1 }).includes("a"));
    assert.equal(reflectText({ a: 1, b: [true, null] }), '{"a": 1, "b": [true, null]}');
  });
  it("renders arrays like the original's lists", () => {
    assert.equal(reflectText([1.5]), "[1.5]");
    assert.equal(reflectText([{}]), "[{}]");
    assert.equal(reflectText([-1]), "[-1]");
    assert.equal(reflectText([]), "[]");
    assert.equal(reflectText([1, 2]), "[1, 2]");
    assert.equal(reflectText(["a"]), '["a"]');
    // Elixir's tuple {1, 2} has no JS counterpart but an array.
    assert.equal(reflectText([1, [2, 3]]), "[1, [2, 3]]");
  });
  it("shows at most 10 entries per container", () => {
    assert.equal(
      reflectText(Array.from({ length: 25 }, (_, i) => i)),
      "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...]",
    );
    assert.equal(reflectText(new Set(range(1, 12))), "Set [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, ...]");
  });
  it("renders bytes so their values survive (<<0xFF,0xFE>> contains 255)", () => {
    assert.equal(reflectText(Buffer.from([0xff, 0xfe])), "<<255, 254>>");
    assert.ok(reflectText(new Uint8Array([0xff, 0xfe])).includes("255"));
    assert.ok(reflectText(new Uint8Array([0xff, 0xfe]).buffer).includes("255"));
    assert.equal(reflectText(new DataView(new Uint8Array([1, 2, 3]).buffer, 1)), "<<2, 3>>");
    assert.equal(reflectText(Buffer.alloc(20)), `<<${"0, ".repeat(10)}...>>`);
  });
  it("renders functions, class instances, maps, dates, errors (pid/struct counterparts)", () => {
    function worker(): void {}
    class User {
      constructor(readonly id: number) {}
    }
    assert.equal(reflectText(worker), "[Function worker]");
    assert.equal(reflectText(new User(42)), 'User {"id": 42}');
    assert.equal(reflectText(new Map([["k", 1]])), 'Map {"k" => 1}');
    assert.equal(reflectText(new Date(0)), '"1970-01-01T00:00:00.000Z"');
    assert.equal(reflectText(new Date(Number.NaN)), "Invalid Date");
    assert.equal(reflectText(new Error("boom")), "[Error: boom]");
    assert.equal(reflectText(new Int16Array([1, -2])), "Int16Array [1, -2]");
    assert.equal(reflectText(/a+/g), '"/a+/g"');
  });
  it("never throws on cyclic values, throwing getters and hostile proxies", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    cyclic.list = [cyclic];
    assert.equal(reflectText(cyclic), '{"a": 1, "self": [Circular], "list": [[Circular]]}');
    const getter = {
      get boom(): never {
        throw new Error("secret internals");
      },
      ok: 1,
    };
    assert.equal(reflectText(getter), '{"boom": <unreadable>, "ok": 1}');
    const hostile = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error("no");
        },
        getPrototypeOf() {
          throw new Error("no");
        },
      },
    );
    assert.equal(reflectText(hostile), "<unreadable>");
    const { proxy, revoke } = Proxy.revocable([], {});
    revoke();
    assert.equal(reflectText(proxy), "<unreadable>");
    assert.equal(reflectText([proxy, 1]), "[<unreadable>, 1]");
    const fn = (): void => {};
    Object.defineProperty(fn, "name", {
      get() {
        throw new Error("no");
      },
    });
    assert.equal(reflectText(fn), "[Function]");
  });
  it("bounds deep and wide shared graphs", () => {
    let deep: unknown = "leaf";
    for (let i = 0; i < 10_000; i++) deep = [deep];
    assertInvariants(reflectText(deep), 200);
    const shared: unknown[] = [];
    let level: unknown = shared;
    for (let i = 0; i < 30; i++) level = Array.from({ length: 10 }, () => level);
    const started = performance.now();
    assertInvariants(reflectText(level), 200);
    assert.ok(performance.now() - started < 1000, "a shared graph must not be walked in full");
  });
  it("escapes control characters inside rendered strings instead of passing them", () => {
    assert.equal(reflectText({ why: "a\nb" }), '{"why": "a\\nb"}');
  });
});

describe("reflectText: max and fast path", () => {
  it("rejects a max that is not a positive integer", () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => reflectText("x", bad), InvalidOptionError);
    }
  });
  it("returns the very same short ASCII string (fast path)", () => {
    const text = "user pressed stop";
    assert.equal(reflectText(text), text);
    assert.equal(reflectText("x".repeat(40), 40), "x".repeat(40));
  });
});

describe("reflectText: properties", () => {
  const maxArb = fc.integer({ min: 1, max: 300 });
  it("any value: bounded, stripped, well-formed, never throws", () => {
    fc.assert(
      fc.property(
        fc.anything({ withBoxedValues: true, withMap: true, withSet: true, withTypedArray: true }),
        maxArb,
        (value, max) => assertInvariants(reflectText(value, max), max),
      ),
      { numRuns: 500 },
    );
  });
  it("any full-unicode string (with lone surrogates and stripped characters)", () => {
    const unit = fc.oneof(
      fc.string({ unit: "grapheme" }),
      fc.string({ unit: "binary" }),
      fc.constantFrom(...STRIPPED.map((c) => String.fromCharCode(c)), "\uD800", "\uDFFF", "😀"),
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 400 }), maxArb, (parts, max) => {
        const text = parts.join("");
        const out = reflectText(text, max);
        assertInvariants(out, max);
        // The output is a prefix of the cleaned input: nothing is invented or reordered.
        const cleaned = text
          .replace(/[\uD800-\uDFFF]/gu, "")
          .replace(new RegExp(STRIPPED_RE, "g"), "");
        assert.ok(cleaned.startsWith(out));
      }),
      { numRuns: 500 },
    );
  });
  it("equals a straightforward reference implementation of the pipeline (fast paths included)", () => {
    const text = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 300 }),
      fc.string({ unit: "binary", maxLength: 300 }),
      fc.string({
        unit: fc.integer({ min: 0, max: 0x2ff }).map((c) => String.fromCharCode(c)),
        maxLength: 900,
      }),
      fc.string({ unit: "grapheme-ascii", maxLength: 900 }),
    );
    fc.assert(
      fc.property(text, maxArb, (input, max) => {
        assert.equal(reflectText(input, max), referenceReflect(input, max));
      }),
      { numRuns: 1000 },
    );
  });
  it("plain short strings without stripped characters come back unchanged", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme-ascii", maxLength: 200 }), (text) => {
        fc.pre(!STRIPPED_RE.test(text));
        assert.equal(reflectText(text), text);
      }),
    );
  });
});
