/**
 * String order by Unicode code point, which for well-formed text is UTF-8 byte order: the order
 * eviction uses for scope and id ties, so that the memory and Redis stores (which compares bytes)
 * evict the same rows. JavaScript's `<` compares UTF-16 code units instead, which disagrees when an astral
 * character (a surrogate pair, units 0xD800–0xDFFF) meets a BMP character in U+E000–U+FFFF: by
 * units the astral one sorts first, by code point (and by UTF-8 bytes) it sorts last.
 */

const HIGH_SURROGATE_MIN = 0xd800;
const HIGH_SURROGATE_MAX = 0xdbff;

/**
 * Compares two strings by code point: negative when `a` sorts first, positive when `b` does, 0
 * when equal. A proper prefix sorts first. Lone surrogates count as their own code point.
 *
 * @example
 * ```ts
 * compareCodePoints("\u{1F600}", "\uFFFF") > 0; // true, although "\u{1F600}" < "\uFFFF"
 * compareCodePoints("a", "ab") < 0;             // true
 * ```
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length - b.length;
  const x = a.charCodeAt(i);
  const y = b.charCodeAt(i);
  // Neither unit is a surrogate: they start (or are) different characters, compare as they are.
  if (x < HIGH_SURROGATE_MIN && y < HIGH_SURROGATE_MIN) return x - y;
  if (i > 0) {
    // The shared previous unit may be a high surrogate that pairs with one side's unit i: then
    // the characters differ from i - 1 on, and that is where the comparison must happen.
    const previous = a.charCodeAt(i - 1);
    if (previous >= HIGH_SURROGATE_MIN && previous <= HIGH_SURROGATE_MAX) {
      const cpA = a.codePointAt(i - 1) ?? 0;
      const cpB = b.codePointAt(i - 1) ?? 0;
      if (cpA !== cpB) return cpA - cpB;
    }
  }
  return (a.codePointAt(i) ?? 0) - (b.codePointAt(i) ?? 0);
}
