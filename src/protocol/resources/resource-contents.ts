/**
 * What a resource's `read` may return, and how it becomes a `ReadResourceResult`'s `contents`
 * (text or base64 `blob`, MCP 2025-11-25 resources, "Resource Contents":
 * https://modelcontextprotocol.io/specification/2025-11-25/server/resources#resource-contents),
 * plus the URI checks every resource request goes through (RFC 3986 §2, §3.1).
 */
import { isPlainObject } from "../wire/index.js";

/** Text contents. `uri` defaults to the URI read; `mimeType` to the resource's. */
export interface TextResourceContents {
  readonly uri?: string;
  readonly mimeType?: string;
  readonly text: string;
  readonly _meta?: Readonly<Record<string, unknown>>;
}

/** Binary contents: bytes, or a base64 string already encoded. */
export interface BlobResourceContents {
  readonly uri?: string;
  readonly mimeType?: string;
  readonly blob: Uint8Array | string;
  readonly _meta?: Readonly<Record<string, unknown>>;
}

/** One item of a read's answer. */
export type ResourceContents = TextResourceContents | BlobResourceContents;

/**
 * What `read` returns: a string (text), bytes (blob), one contents object, or several (MCP
 * allows several, e.g. a directory's files).
 */
export type ResourceReadValue =
  | string
  | Uint8Array
  | ResourceContents
  | readonly ResourceContents[];

/** Where a read's contents come from: the URI asked and the resource's MIME type. */
export interface ContentsDefaults {
  readonly uri: string;
  readonly mimeType: string | undefined;
}

/** At most this many contents items in one answer: a runaway handler cannot build a huge list. */
const MAX_CONTENTS = 1_000;
/** RFC 4648 §4 base64 with padding. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The `contents` array for a read's value, or null when the value is not readable contents (a
 * bug in the handler: the client gets -32603, never a malformed result). An empty array is
 * refused too: MCP 2026-07-28 forbids empty `contents` for a resource that exists.
 */
export function toContents(value: unknown, defaults: ContentsDefaults): unknown[] | null {
  if (typeof value === "string") return [withMime({ uri: defaults.uri, text: value }, defaults)];
  if (value instanceof Uint8Array) {
    return [withMime({ uri: defaults.uri, blob: Buffer.from(value).toString("base64") }, defaults)];
  }
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0 || items.length > MAX_CONTENTS) return null;
  const contents: unknown[] = [];
  for (const item of items) {
    const one = contentsItem(item, defaults);
    if (one === null) return null;
    contents.push(one);
  }
  return contents;
}

function contentsItem(item: unknown, defaults: ContentsDefaults): Record<string, unknown> | null {
  if (!isPlainObject(item)) return null;
  const uri = item.uri ?? defaults.uri;
  if (typeof uri !== "string") return null;
  const out: Record<string, unknown> = { uri };
  if (item.mimeType !== undefined) {
    if (typeof item.mimeType !== "string") return null;
    out.mimeType = item.mimeType;
  } else if (defaults.mimeType !== undefined) {
    out.mimeType = defaults.mimeType;
  }
  if (typeof item.text === "string" && item.blob === undefined) {
    out.text = item.text;
  } else if (item.text === undefined && item.blob instanceof Uint8Array) {
    out.blob = Buffer.from(item.blob).toString("base64");
  } else if (item.text === undefined && typeof item.blob === "string" && BASE64.test(item.blob)) {
    out.blob = item.blob;
  } else {
    return null;
  }
  if (item._meta !== undefined) {
    if (!isPlainObject(item._meta)) return null;
    out._meta = item._meta;
  }
  return out;
}

function withMime(
  contents: Record<string, unknown>,
  defaults: ContentsDefaults,
): Record<string, unknown> {
  if (defaults.mimeType !== undefined) contents.mimeType = defaults.mimeType;
  return contents;
}

/**
 * An absolute URI made only of RFC 3986 characters (scheme, then unreserved, reserved and
 * well-formed percent-escapes): no spaces, controls or non-ASCII, so it can be echoed safely.
 */
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$/;

/** Whether `value` is a URI a resource request may name, at most `maxLength` characters. */
export function isResourceUri(value: unknown, maxLength: number): value is string {
  return typeof value === "string" && value.length <= maxLength && URI.test(value);
}
