/**
 * Validation of MCP content blocks — the `ContentBlock` union of the schema: text, image, audio,
 * resource link and embedded resource
 * (https://modelcontextprotocol.io/specification/2025-11-25/schema#contentblock; unchanged in
 * 2026-07-28). A server's own handler produces them, so a bad block is a bug in that handler: it
 * is reported as a problem and never sent as is, and a good block is copied with the schema's
 * fields only, so nothing else a handler attached (internal state, cycles, getters) leaves.
 */
import { isPlainObject } from "./json-rpc.js";

/** A block checked and copied: only the schema's fields of its kind. */
export type CheckedContentBlock = Readonly<Record<string, unknown>>;

/** The outcome of {@link checkContentBlock}: the clean copy, or what is wrong (with its path). */
export type ContentBlockCheck =
  | { readonly ok: true; readonly block: CheckedContentBlock }
  | { readonly ok: false; readonly message: string };

/** How strict to be where the specification's pages add to the schema. */
export interface ContentBlockRules {
  /**
   * An embedded resource must name its MIME type. The schema leaves `mimeType` optional, but
   * the prompts page says embedded resources "MUST include … the appropriate MIME type"
   * (https://modelcontextprotocol.io/specification/2025-11-25/server/prompts#embedded-resources).
   */
  readonly embeddedMimeTypeRequired: boolean;
}

/**
 * Base64 as the schema's `@format byte` means it (RFC 4648 section 4): the standard alphabet,
 * padded to a multiple of four characters. Linear (no backtracking), so a large image is cheap.
 */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * An RFC 9110 media type (section 8.3.1: `type "/" subtype *( OWS ";" OWS parameter )`); the
 * parameters are only required not to contain control characters.
 */
const MEDIA_TYPE =
  /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:[ \t]*;[ \t]*[^\x00-\x1F\x7F]*)?$/;

/** An RFC 3986 URI starts with its scheme (`scheme ":" …`); that is what clients dispatch on. */
const URI_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

const ROLES: ReadonlySet<string> = new Set(["user", "assistant"]);

/**
 * True when `text` is RFC 4648 base64 with its padding (what `data` and `blob` fields carry).
 *
 * @example
 * ```ts
 * isBase64("SGVsbG8="); // true
 * isBase64("SGVsbG8"); // false: unpadded
 * ```
 */
export function isBase64(text: string): boolean {
  return text.length % 4 === 0 && BASE64.test(text);
}

/**
 * True for an RFC 9110 media type such as `image/png` or `text/plain; charset=utf-8`.
 *
 * @example
 * ```ts
 * isMediaType("image/png"); // true
 * isMediaType("png"); // false
 * ```
 */
export function isMediaType(text: string): boolean {
  return MEDIA_TYPE.test(text);
}

/**
 * Checks one content block and copies its schema fields; `path` names it in the problem
 * (`messages[2].content`).
 *
 * @example
 * ```ts
 * checkContentBlock({ type: "text", text: "hi" }, "content", rules); // { ok: true, block: {...} }
 * checkContentBlock({ type: "image", data: "%%", mimeType: "image/png" }, "content", rules);
 * // { ok: false, message: "content.data must be base64 (RFC 4648, padded)" }
 * ```
 */
export function checkContentBlock(
  value: unknown,
  path: string,
  rules: ContentBlockRules,
): ContentBlockCheck {
  if (!isPlainObject(value)) return problem(`${path} must be a content block object`);
  const copy: Record<string, unknown> = { type: value.type };
  let message: string | null;
  switch (value.type) {
    case "text":
      message = requiredString(value, copy, "text", path);
      break;
    case "image":
    case "audio":
      message = binaryField(value, copy, "data", path) ?? mediaType(value, copy, path, true);
      break;
    case "resource_link":
      message = resourceLink(value, copy, path);
      break;
    case "resource":
      message = embeddedResource(value, copy, path, rules);
      break;
    default:
      return problem(`${path}.type must be one of text, image, audio, resource_link, resource`);
  }
  message ??= annotations(value, copy, path) ?? meta(value, copy, path);
  return message === null ? { ok: true, block: Object.freeze(copy) } : problem(message);
}

/**
 * Checks a prompt message (`{ role, content }` with one content block) and copies it.
 *
 * @example
 * ```ts
 * checkPromptMessage({ role: "user", content: { type: "text", text: "hi" } }, "messages[0]", rules);
 * ```
 */
export function checkPromptMessage(
  value: unknown,
  path: string,
  rules: ContentBlockRules,
): ContentBlockCheck {
  if (!isPlainObject(value)) return problem(`${path} must be a { role, content } object`);
  if (typeof value.role !== "string" || !ROLES.has(value.role)) {
    return problem(`${path}.role must be "user" or "assistant"`);
  }
  const content = checkContentBlock(value.content, `${path}.content`, rules);
  if (!content.ok) return content;
  return { ok: true, block: Object.freeze({ role: value.role, content: content.block }) };
}

function problem(message: string): ContentBlockCheck {
  return { ok: false, message };
}

function requiredString(
  value: Record<string, unknown>,
  copy: Record<string, unknown>,
  key: string,
  path: string,
): string | null {
  if (typeof value[key] !== "string") return `${path}.${key} must be a string`;
  copy[key] = value[key];
  return null;
}

function optionalString(
  value: Record<string, unknown>,
  copy: Record<string, unknown>,
  key: string,
  path: string,
): string | null {
  if (value[key] === undefined) return null;
  return requiredString(value, copy, key, path);
}

function binaryField(
  value: Record<string, unknown>,
  copy: Record<string, unknown>,
  key: "data" | "blob",
  path: string,
): string | null {
  const data = value[key];
  if (typeof data !== "string" || !isBase64(data)) {
    return `${path}.${key} must be base64 (RFC 4648, padded)`;
  }
  copy[key] = data;
  return null;
}

function mediaType(
  value: Record<string, unknown>,
  copy: Record<string, unknown>,
  path: string,
  required: boolean,
): string | null {
  const type = value.mimeType;
  if (type === undefined && !required) return null;
  if (typeof type !== "string" || !isMediaType(type)) {
    return `${path}.mimeType must be a MIME type such as "image/png"`;
  }
  copy.mimeType = type;
  return null;
}

function uri(
  value: Record<string, unknown>,
  copy: Record<string, unknown>,
  path: string,
): string | null {
  if (typeof value.uri !== "string" || !URI_SCHEME.test(value.uri)) {
    return `${path}.uri must be a URI with a scheme`;
  }
  copy.uri = value.uri;
  return null;
}

/** `ResourceLink` is a `Resource` with `type: "resource_link"`: uri and name required. */
function resourceLink(
  value: Record<string, unknown>,
  copy: Record<string, unknown>,
  path: string,
): string | null {
  const size = value.size;
  if (size !== undefined && !(Number.isSafeInteger(size) && (size as number) >= 0)) {
    return `${path}.size must be a non-negative integer (bytes)`;
  }
  if (size !== undefined) copy.size = size;
  const icons = value.icons;
  if (icons !== undefined) {
    if (
      !Array.isArray(icons) ||
      !icons.every((i) => isPlainObject(i) && typeof i.src === "string")
    ) {
      return `${path}.icons must be an array of { src, … } objects`;
    }
    copy.icons = icons.map((icon) => ({ ...icon }));
  }
  return (
    uri(value, copy, path) ??
    requiredString(value, copy, "name", path) ??
    optionalString(value, copy, "title", path) ??
    optionalString(value, copy, "description", path) ??
    mediaType(value, copy, path, false)
  );
}

/** `EmbeddedResource`: `resource` is text or blob contents (exactly one of the two). */
function embeddedResource(
  value: Record<string, unknown>,
  copy: Record<string, unknown>,
  path: string,
  rules: ContentBlockRules,
): string | null {
  const resource = value.resource;
  const at = `${path}.resource`;
  if (!isPlainObject(resource)) return `${at} must be an object`;
  const contents: Record<string, unknown> = {};
  const hasText = resource.text !== undefined;
  if (hasText === (resource.blob !== undefined)) return `${at} must have exactly one of text, blob`;
  const message =
    uri(resource, contents, at) ??
    mediaType(resource, contents, at, rules.embeddedMimeTypeRequired) ??
    (hasText
      ? requiredString(resource, contents, "text", at)
      : binaryField(resource, contents, "blob", at)) ??
    meta(resource, contents, at);
  if (message !== null) return message;
  copy.resource = Object.freeze(contents);
  return null;
}

/** `Annotations`: audience (roles), priority in [0, 1], lastModified (ISO 8601 text). */
function annotations(
  value: Record<string, unknown>,
  copy: Record<string, unknown>,
  path: string,
): string | null {
  const given = value.annotations;
  if (given === undefined) return null;
  const at = `${path}.annotations`;
  if (!isPlainObject(given)) return `${at} must be an object`;
  const clean: Record<string, unknown> = {};
  const { audience, priority, lastModified } = given;
  if (audience !== undefined) {
    if (!Array.isArray(audience) || !audience.every((r) => typeof r === "string" && ROLES.has(r))) {
      return `${at}.audience must be an array of "user" and "assistant"`;
    }
    clean.audience = [...audience];
  }
  if (priority !== undefined) {
    if (typeof priority !== "number" || !(priority >= 0 && priority <= 1)) {
      return `${at}.priority must be a number from 0 to 1`;
    }
    clean.priority = priority;
  }
  if (lastModified !== undefined) {
    if (typeof lastModified !== "string") return `${at}.lastModified must be an ISO 8601 string`;
    clean.lastModified = lastModified;
  }
  copy.annotations = clean;
  return null;
}

function meta(
  value: Record<string, unknown>,
  copy: Record<string, unknown>,
  path: string,
): string | null {
  if (value._meta === undefined) return null;
  if (!isPlainObject(value._meta)) return `${path}._meta must be an object`;
  copy._meta = { ...value._meta };
  return null;
}
