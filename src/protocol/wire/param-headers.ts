/**
 * `Mcp-Param-{Name}` headers: tool arguments a 2026-07-28 client mirrors into HTTP headers
 * because the tool's input schema marks them with `x-mcp-header`, so that load balancers and
 * gateways can route on them without parsing the body. Rules:
 * https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#custom-headers-from-tool-parameters
 * and https://modelcontextprotocol.io/specification/2026-07-28/server/tools#x-mcp-header.
 *
 * Two halves:
 * - at definition, {@link paramHeadersOf} reads the annotations of an input schema and refuses
 *   one the spec calls invalid (a conforming client would silently drop the whole tool);
 * - per `tools/call`, {@link checkParamHeaders} compares every annotated argument present in the
 *   body with its header (decoded from the `=?base64?…?=` sentinel when encoded). A missing,
 *   repeated, malformed or different header is refused with 400 / -32020 (`HeaderMismatch`)
 *   before the tool runs: an intermediary may already have acted on the header, so the two
 *   sources of truth must agree.
 */
import { InvalidOptionError } from "../../errors.js";
import { isPlainObject } from "./json-rpc.js";
import { decodeHeaderValue, type PresentedParamHeaders } from "./modern-envelope.js";

/** One annotated argument: its header's name and where its value sits in `arguments`. */
export interface ParamHeader {
  /** The `x-mcp-header` value as declared (`Region` → header `Mcp-Param-Region`). */
  readonly name: string;
  /** The header's name as Node presents it: `mcp-param-` + the lower-cased name. */
  readonly key: string;
  /** The chain of `properties` keys from the schema root to the argument. */
  readonly path: readonly string[];
  readonly type: "string" | "integer" | "boolean";
}

/** RFC 9110 section 5.6.2 `tchar`: what a header field name may contain. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** RFC 9110 section 5.5 field value characters: visible ASCII, space, horizontal tab. */
const FIELD_VALUE = /^[\t\x20-\x7E]*$/;
const PREFIX = "mcp-param-";
const PRIMITIVES: ReadonlySet<string> = new Set(["string", "integer", "boolean"]);
/** Keywords whose values are data, not subschemas: an `x-mcp-header` key inside is not one. */
const DATA_KEYWORDS: ReadonlySet<string> = new Set(["const", "enum", "default", "examples"]);
const NONE: readonly ParamHeader[] = Object.freeze([]);

/**
 * Reads the `x-mcp-header` annotations of a tool's input schema (JSON Schema, as published).
 * Throws {@link InvalidOptionError} naming the tool when one breaks a constraint of the spec:
 * empty or not an RFC 9110 token, not unique (case-insensitively), on a property that is not a
 * string, integer or boolean, or not reachable from the root through `properties` alone.
 *
 * @example
 * ```ts
 * paramHeadersOf({ type: "object", properties: { region: { type: "string", "x-mcp-header": "Region" } } }, "tool q");
 * // [{ name: "Region", key: "mcp-param-region", path: ["region"], type: "string" }]
 * ```
 */
export function paramHeadersOf(schema: unknown, label: string): readonly ParamHeader[] {
  const found: ParamHeader[] = [];
  walk(schema, [], found, label, new Set());
  if (found.length === 0) return NONE;
  const keys = new Set<string>();
  for (const header of found) {
    if (keys.has(header.key)) {
      throw new InvalidOptionError(
        `${label}: x-mcp-header`,
        "unique among the schema's annotations, ignoring case",
        header.name,
      );
    }
    keys.add(header.key);
  }
  return Object.freeze(found);
}

/**
 * Visits a schema node. `path` is the chain of `properties` keys that reached it, or null once
 * any other keyword was crossed (`items`, `anyOf`, `$defs`, …): an annotation found there is
 * not statically reachable, which the spec makes invalid.
 */
function walk(
  node: unknown,
  path: string[] | null,
  found: ParamHeader[],
  label: string,
  seen: Set<object>,
): void {
  if (!isPlainObject(node) || seen.has(node)) return;
  seen.add(node);
  if (Object.hasOwn(node, "x-mcp-header")) found.push(annotation(node, path, label));
  for (const [keyword, value] of Object.entries(node)) {
    if (keyword === "x-mcp-header" || DATA_KEYWORDS.has(keyword)) continue;
    if (keyword === "properties" && isPlainObject(value)) {
      for (const [property, subschema] of Object.entries(value)) {
        walk(subschema, path === null ? null : [...path, property], found, label, seen);
      }
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, null, found, label, seen);
    } else {
      walk(value, null, found, label, seen);
    }
  }
}

function annotation(
  node: Record<string, unknown>,
  path: string[] | null,
  label: string,
): ParamHeader {
  const name = node["x-mcp-header"];
  const option = `${label}: x-mcp-header`;
  if (typeof name !== "string" || !TOKEN.test(name)) {
    throw new InvalidOptionError(option, "a non-empty HTTP token (RFC 9110 tchar)", name);
  }
  if (path === null || path.length === 0) {
    throw new InvalidOptionError(
      option,
      "on a property reachable from the root through `properties` only",
      name,
    );
  }
  const type = primitiveType(node);
  if (type === null) {
    throw new InvalidOptionError(
      `${option} ${name}`,
      'on a property of type "string", "integer" or "boolean"',
      node.type,
    );
  }
  return { name, key: PREFIX + name.toLowerCase(), path: Object.freeze([...path]), type };
}

/** `type: T`, or `T` made nullable (`[T, "null"]`), for a primitive `T`; else null. */
function primitiveType(node: Record<string, unknown>): ParamHeader["type"] | null {
  let type = node.type;
  if (Array.isArray(type)) {
    const others = type.filter((t) => t !== "null");
    type = others.length === 1 ? others[0] : undefined;
  }
  return typeof type === "string" && PRIMITIVES.has(type) ? (type as ParamHeader["type"]) : null;
}

/**
 * Checks the annotated arguments of one `tools/call` against the headers presented; the
 * refusal text (for a -32020 answer) or null when they agree. An argument absent or `null` in
 * the body needs no header, and then a header for it is a disagreement too.
 *
 * @example
 * ```ts
 * checkParamHeaders(tool.paramHeaders, { region: "us-west1" }, new Map([["mcp-param-region", "us-west1"]])); // null
 * ```
 */
export function checkParamHeaders(
  specs: readonly ParamHeader[],
  args: unknown,
  presented: PresentedParamHeaders,
): string | null {
  for (const spec of specs) {
    const value = valueAt(args, spec.path);
    const raw = presented.get(spec.key);
    const header = `Mcp-Param-${spec.name}`;
    if (value === undefined || value === null) {
      if (raw === undefined) continue;
      return `${header} header sent but the argument is absent from the body`;
    }
    if (raw === undefined) return `${header} header required (the argument is in the body)`;
    if (raw === null) return `${header} header repeated`;
    if (!FIELD_VALUE.test(raw)) return `${header} header contains invalid characters`;
    const decoded = decodeHeaderValue(raw);
    if (decoded === null) return `${header} header has malformed base64`;
    if (!matches(value, decoded)) {
      return `${header} header does not match the body`;
    }
  }
  return null;
}

/** The instance value at a chain of property keys (own properties of plain objects only). */
function valueAt(args: unknown, path: readonly string[]): unknown {
  let value = args;
  for (const key of path) {
    if (!isPlainObject(value) || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  return value;
}

/**
 * Compares a body value with a decoded header by the body value's type, as the spec's value
 * encoding writes it: strings as they are, integers in decimal (compared numerically, so `42.0`
 * equals `42`; only safe integers), booleans as `true` / `false`. Anything else never matches.
 */
function matches(value: unknown, header: string): boolean {
  if (typeof value === "string") return header === value;
  if (typeof value === "boolean") return header === (value ? "true" : "false");
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value) || !DECIMAL.test(header)) return false;
    return Number(header) === value;
  }
  return false;
}

/** A plain decimal number (optionally signed, with a fraction); no exponent, hex or spaces. */
const DECIMAL = /^-?\d{1,20}(?:\.\d{1,20})?$/;
