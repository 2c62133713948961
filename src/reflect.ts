/**
 * Safe, bounded text for any value that is reflected into a log line, an error message or a
 * stored cancellation reason (cases in test/reflect.test.ts).
 * Client-supplied values (method names, protocol versions, cancellation reasons) must never
 * reach a log or a response with control characters (log forging, terminal escapes), bidi
 * tricks (spoofed text), unbounded length, or broken UTF-16.
 *
 * @example
 * ```ts
 * reflectText("ok\r\n2026-01-01 [error] forged"); // "ok2026-01-01 [error] forged"
 * reflectText({ why: "because" }); // '{"why": "because"}'
 * reflectText("a".repeat(5000)).length; // 200
 * ```
 */
import { InvalidOptionError } from "./errors.js";

/**
 * The characters removed in step 4 of the pipeline, exactly: C0
 * (incl. tab, CR, LF), DEL and C1, the Arabic letter mark, zero-width and bidi marks, the
 * line/paragraph separators and LRE..RLO embeddings, the word joiner, the isolates, the BOM.
 */
const STRIP_CLASS =
  "\\x00-\\x1F\\x7F-\\x9F\\u061C\\u200B-\\u200F\\u2028-\\u202E\\u2060\\u2066-\\u2069\\uFEFF";
const STRIP = new RegExp(`[${STRIP_CLASS}]`, "g");
/** Anything that rules out the fast path: a character to strip, or any surrogate unit. */
const NEEDS_WORK = new RegExp(`[${STRIP_CLASS}\\uD800-\\uDFFF]`);
/** In `u` mode a surrogate range matches only unpaired surrogates (well-formed pairs are one code point). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/gu;

/** Any unit at or above U+0300, the first code point that can join a grapheme cluster. */
const BEYOND_SIMPLE = /[^\u0000-\u02FF]/;
/** Created once: constructing a segmenter costs far more than using one. */
const GRAPHEMES = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Entries shown per array, object, map, set or byte sequence. */
const MAX_ENTRIES = 10;
/** Nesting shown before `[...]` / `{...}`; the output budget bounds the work anyway. */
const MAX_DEPTH = 6;
const UNREADABLE = "<unreadable>";

/**
 * Renders `value` as safe text of at most `max` grapheme clusters and `4 * max` UTF-8 bytes.
 *
 * Pipeline, in this order:
 * 1. stringify: strings as they are; `null`/`undefined` → `""`; numbers, booleans, bigints →
 *    their text; symbols → their description; anything else → a bounded JSON-like rendering
 *    (`[1, 2]`, `{"a": 1}`, `User {"id": 42}`, `<<255, 254>>` for bytes, `[Circular]`, at most
 *    10 entries per container) that never throws, whatever getters or proxies do;
 * 2. clamp to `4 * max` UTF-8 bytes without splitting a code point; unpaired surrogates are
 *    dropped (they have no UTF-8 form), so the result is always well-formed;
 * 3. strip the control, format and bidi characters listed at `STRIP_CLASS` above;
 * 4. clamp to `max` grapheme clusters (`Intl.Segmenter`). No ellipsis is added.
 *
 * Never throws for any `value`.
 *
 * @param max - a positive integer (default 200, the stored reason's length).
 * @throws InvalidOptionError when `max` is not a positive integer.
 * @example
 * ```ts
 * reflectText([1, 2]); // "[1, 2]"
 * reflectText(null); // ""
 * reflectText("€".repeat(300)).length; // 200
 * reflectText("tools/call", 40); // "tools/call"
 * ```
 */
export function reflectText(value: unknown, max = 200): string {
  if (!Number.isSafeInteger(max) || max <= 0) {
    throw new InvalidOptionError("max", "a positive integer", max);
  }
  let text: string;
  try {
    text = stringify(value, 4 * max);
  } catch {
    // stringify guards every step; this only covers what cannot be foreseen (e.g. stack overflow).
    text = "";
  }
  // Fast path: ≤ max UTF-16 units means ≤ max graphemes and ≤ 3 * max bytes, so with nothing
  // to strip or repair the text is already final.
  if (text.length <= max && !NEEDS_WORK.test(text)) return text;
  return sanitise(text, max);
}

/** Steps 2–4 of the pipeline. */
function sanitise(text: string, max: number): string {
  const byteLimit = 4 * max;
  // Every UTF-16 unit is at least one UTF-8 byte, so nothing past byteLimit units can survive.
  const head = text.length > byteLimit ? text.slice(0, byteLimit) : text;
  let bytes = 0;
  let end = 0;
  for (let i = 0; i < head.length; ) {
    const unit = head.charCodeAt(i);
    let size = 3;
    let units = 1;
    if (unit < 0x80) size = 1;
    else if (unit < 0x800) size = 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && (head.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      size = 4;
      units = 2;
    }
    // An unpaired surrogate counts as its replacement character U+FFFD (3 bytes in UTF-8); it is
    // dropped below.
    if (bytes + size > byteLimit) break;
    bytes += size;
    i += units;
    end = i;
  }
  const clamped = head.slice(0, end).replace(LONE_SURROGATE, "").replace(STRIP, "");
  if (clamped.length <= max) return clamped;
  // Below U+0300 (where combining marks start) no code point extends a cluster, and CR/LF
  // are stripped, so one unit is one grapheme: skip the segmenter, which costs ~1 µs a cluster.
  if (!BEYOND_SIMPLE.test(clamped)) return clamped.slice(0, max);
  let count = 0;
  for (const { index } of GRAPHEMES.segment(clamped)) {
    if (count === max) return clamped.slice(0, index);
    count++;
  }
  return clamped;
}

/** Step 1: any value to text, rendering at most about `budget` UTF-16 units. */
function stringify(value: unknown, budget: number): string {
  switch (typeof value) {
    case "string":
      return value;
    case "number":
    case "boolean":
    case "bigint":
      return String(value);
    case "undefined":
      return "";
    case "symbol":
      // A symbol reads as its description (`Symbol("atom")` → "atom").
      return symbolDescription(value);
    default: {
      if (value === null) return "";
      const out: Output = { parts: [], length: 0, budget };
      render(value, 0, out, new Set());
      return out.parts.join("");
    }
  }
}

interface Output {
  parts: string[];
  length: number;
  readonly budget: number;
}

function emit(out: Output, text: string): void {
  if (out.length >= out.budget) return;
  out.parts.push(text);
  out.length += text.length;
}

/** A string as a JSON literal, cut first so a huge string costs no more than the budget. */
function quote(text: string, out: Output): string {
  return JSON.stringify(text.length > out.budget ? text.slice(0, out.budget) : text);
}

function symbolDescription(symbol: symbol): string {
  try {
    return symbol.description ?? "";
  } catch {
    return "";
  }
}

/**
 * Renders one value into `out`. Once the budget is spent nothing more is rendered: the
 * byte clamp would cut it anyway, and this bounds the work for huge or deeply shared graphs
 * (every visited node emits at least one character).
 */
function render(value: unknown, depth: number, out: Output, ancestors: Set<object>): void {
  if (out.length >= out.budget) return;
  switch (typeof value) {
    case "string":
      emit(out, quote(value, out));
      return;
    case "number":
    case "boolean":
    case "bigint":
    case "undefined":
      emit(out, String(value));
      return;
    case "symbol":
      emit(out, `Symbol(${symbolDescription(value)})`);
      return;
    case "function":
      emit(out, functionText(value));
      return;
    default:
      break;
  }
  if (value === null) {
    emit(out, "null");
    return;
  }
  const object = value as object;
  if (ancestors.has(object)) {
    emit(out, "[Circular]");
    return;
  }
  ancestors.add(object);
  try {
    renderObject(object, depth, out, ancestors);
  } catch {
    // A throwing getter, Proxy trap or detached buffer: say so instead of failing.
    emit(out, UNREADABLE);
  } finally {
    ancestors.delete(object);
  }
}

function functionText(fn: unknown): string {
  try {
    const name: unknown = Object.getOwnPropertyDescriptor(fn, "name")?.value;
    return typeof name === "string" && name !== "" ? `[Function ${name}]` : "[Function]";
  } catch {
    return "[Function]";
  }
}

function renderObject(object: object, depth: number, out: Output, ancestors: Set<object>): void {
  const leaf = leafText(object, out);
  if (leaf !== undefined) {
    emit(out, leaf);
  } else if (ArrayBuffer.isView(object)) {
    renderView(object, out);
  } else if (object instanceof ArrayBuffer || object instanceof SharedArrayBuffer) {
    renderBytes(new Uint8Array(object, 0, Math.min(object.byteLength, MAX_ENTRIES + 1)), out);
  } else if (depth >= MAX_DEPTH) {
    emit(out, Array.isArray(object) ? "[...]" : "{...}");
  } else if (Array.isArray(object)) {
    const items = object as readonly unknown[];
    renderList(out, "[", "]", items.length, (i) => {
      let item: unknown;
      try {
        item = items[i];
      } catch {
        item = UNREADABLE_MARK;
      }
      if (item === UNREADABLE_MARK) emit(out, UNREADABLE);
      else render(item, depth + 1, out, ancestors);
    });
  } else if (object instanceof Map) {
    renderMap(object, depth, out, ancestors);
  } else if (object instanceof Set) {
    renderSet(object, depth, out, ancestors);
  } else {
    renderPlain(object, depth, out, ancestors);
  }
}

/** Marks an element whose read threw; never rendered itself. */
const UNREADABLE_MARK: unique symbol = Symbol("unreadable");

/** Objects that render as one piece of text: dates, regular expressions, errors, boxed primitives. */
function leafText(object: object, out: Output): string | undefined {
  if (object instanceof Date) {
    const time = Date.prototype.getTime.call(object);
    return Number.isNaN(time) ? "Invalid Date" : JSON.stringify(new Date(time));
  }
  if (object instanceof RegExp) return quote(RegExp.prototype.toString.call(object), out);
  if (object instanceof Error) return errorText(object, out);
  if (object instanceof String) return quote(String.prototype.valueOf.call(object), out);
  if (object instanceof Number) return String(Number.prototype.valueOf.call(object));
  if (object instanceof Boolean) return String(Boolean.prototype.valueOf.call(object));
  return undefined;
}

/** `open item, item, … close`, at most MAX_ENTRIES items, then `...`. */
function renderList(
  out: Output,
  open: string,
  close: string,
  length: number,
  item: (index: number) => void,
): void {
  emit(out, open);
  const shown = Math.min(length, MAX_ENTRIES);
  for (let i = 0; i < shown && out.length < out.budget; i++) {
    if (i > 0) emit(out, ", ");
    item(i);
  }
  if (length > MAX_ENTRIES) emit(out, ", ...");
  emit(out, close);
}

function renderView(view: ArrayBufferView, out: Output): void {
  if (view instanceof Uint8Array || view instanceof Uint8ClampedArray) {
    renderBytes(view, out);
  } else if (view instanceof DataView) {
    const length = Math.min(view.byteLength, MAX_ENTRIES + 1);
    renderBytes(new Uint8Array(view.buffer, view.byteOffset, length), out);
  } else {
    // Other typed arrays: their class name and elements, e.g. `Int16Array [1, -2]`.
    const typed = view as unknown as { readonly length: number; readonly [i: number]: unknown };
    emit(out, `${className(view) ?? "TypedArray"} `);
    renderList(out, "[", "]", typed.length, (i) => emit(out, String(typed[i])));
  }
}

/**
 * Bytes as `<<255, 254>>`: a Buffer reason stays readable, and the byte values survive
 * (test/reflect.test.ts).
 */
function renderBytes(bytes: Uint8Array | Uint8ClampedArray, out: Output): void {
  renderList(out, "<<", ">>", bytes.length, (i) => emit(out, String(bytes[i])));
}

function errorText(error: Error, out: Output): string {
  const name = safeString(() => error.name) ?? "Error";
  const message = safeString(() => error.message) ?? "";
  return `[${quote(name, out).slice(1, -1)}: ${quote(message, out).slice(1, -1)}]`;
}

function safeString(read: () => unknown): string | undefined {
  try {
    const value = read();
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

function renderMap(
  map: Map<unknown, unknown>,
  depth: number,
  out: Output,
  ancestors: Set<object>,
): void {
  const entries: [unknown, unknown][] = [];
  for (const entry of Map.prototype.entries.call(map)) {
    if (entries.length === MAX_ENTRIES) break;
    entries.push(entry);
  }
  emit(out, "Map ");
  renderList(out, "{", "}", Reflect.get(Map.prototype, "size", map) as number, (i) => {
    const entry = entries[i];
    if (entry === undefined) return;
    render(entry[0], depth + 1, out, ancestors);
    emit(out, " => ");
    render(entry[1], depth + 1, out, ancestors);
  });
}

function renderSet(set: Set<unknown>, depth: number, out: Output, ancestors: Set<object>): void {
  const items: unknown[] = [];
  for (const item of Set.prototype.values.call(set)) {
    if (items.length === MAX_ENTRIES) break;
    items.push(item);
  }
  const size = Reflect.get(Set.prototype, "size", set) as number;
  emit(out, "Set ");
  renderList(out, "[", "]", size, (i) => render(items[i], depth + 1, out, ancestors));
}

/** Plain objects and class instances: `{"key": value}`, prefixed by the class name if any. */
function renderPlain(object: object, depth: number, out: Output, ancestors: Set<object>): void {
  const name = className(object);
  if (name !== null) emit(out, `${name} `);
  const keys: string[] = [];
  let more = false;
  // for…in with an early exit: a 100 000-key object costs no more key reads than a small one.
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    if (keys.length === MAX_ENTRIES) {
      more = true;
      break;
    }
    keys.push(key);
  }
  emit(out, "{");
  for (let i = 0; i < keys.length && out.length < out.budget; i++) {
    const key = keys[i] as string;
    if (i > 0) emit(out, ", ");
    emit(out, `${quote(key, out)}: `);
    let value: unknown;
    try {
      value = (object as Record<string, unknown>)[key];
    } catch {
      emit(out, UNREADABLE);
      continue;
    }
    render(value, depth + 1, out, ancestors);
  }
  if (more) emit(out, ", ...");
  emit(out, "}");
}

/** The class of a non-plain object, e.g. `"User"`; null for plain and null-prototype objects. */
function className(object: object): string | null {
  const proto = Object.getPrototypeOf(object) as object | null;
  if (proto === null || proto === Object.prototype) return null;
  const ctor: unknown = Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
  if (typeof ctor !== "function") return null;
  const name: unknown = Object.getOwnPropertyDescriptor(ctor, "name")?.value;
  return typeof name === "string" && name !== "" && name !== "Object" ? name : null;
}
