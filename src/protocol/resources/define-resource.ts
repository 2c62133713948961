/**
 * Direct resources (MCP 2025-11-25 resources: https://modelcontextprotocol.io/specification/2025-11-25/server/resources):
 * one URI, listed by `resources/list`, read by `resources/read` with the same `ctx` a tool gets
 * (signal, progress, log, scope, principal), tracked and cancellable like a tool call.
 */
import { InvalidOptionError } from "../../errors.js";
import type { ToolContext } from "../calls/index.js";
import {
  checkPrimitiveFields,
  type PrimitiveFields,
  type VisibilityContext,
} from "../calls/index.js";
import { isPlainObject } from "../wire/index.js";
import { isResourceUri, type ResourceReadValue } from "./resource-contents.js";

/** Hints on how a client may use a resource (MCP schema `Annotations`). */
export interface ResourceAnnotations {
  readonly audience?: readonly ("user" | "assistant")[];
  /** 0 (least important) to 1 (most). */
  readonly priority?: number;
  /** ISO 8601 timestamp. */
  readonly lastModified?: string;
}

/** Caching hints of a read (MCP 2026-07-28 caching). */
export interface ReadCaching {
  /**
   * `"public"`: the contents are the same for every caller and may be shared by caches;
   * `"private"` (default): they may depend on the caller.
   */
  readonly cacheScope?: "public" | "private";
  /** How long a client may consider the contents fresh. Default: the server's `cacheTtlMs`. */
  readonly ttlMs?: number;
}

/** The fields shared by resources and resource templates. */
export interface ResourceFieldsBase extends PrimitiveFields, ReadCaching {
  readonly mimeType?: string;
  readonly annotations?: ResourceAnnotations;
}

/** What {@link defineResource} takes. */
export interface ResourceDefinition extends ResourceFieldsBase {
  /** The resource's URI (RFC 3986, absolute): its identity, unique on the server. */
  readonly uri: string;
  /** Size in bytes, if known (shown by clients, never checked). */
  readonly size?: number;
  /** Reads the contents; may be async, and should stop when `ctx.signal` aborts. */
  readonly read: (
    request: { readonly uri: string },
    ctx: ToolContext,
  ) => Promise<ResourceReadValue> | ResourceReadValue;
}

/** A defined resource, ready for `createMcpServer({ resources })`. */
export interface Resource {
  readonly uri: string;
  readonly name: string;
  /** Its `resources/list` entry, frozen. */
  readonly descriptor: Readonly<Record<string, unknown>>;
  readonly mimeType: string | undefined;
  readonly scopes: readonly string[];
  readonly visible: ((ctx: VisibilityContext) => boolean) | null;
  readonly cacheScope: "public" | "private";
  readonly ttlMs: number | null;
  readonly read: ResourceDefinition["read"];
}

/** Longest URI or URI template a definition may have (and so, a direct resource's URI). */
export const MAX_DEFINED_URI_LENGTH = 2_048;

/**
 * Defines a direct resource.
 *
 * @example
 * ```ts
 * const readme = defineResource({
 *   uri: "demo://readme",
 *   name: "readme",
 *   mimeType: "text/markdown",
 *   read: () => "# Hello",
 * });
 * ```
 */
export function defineResource(definition: ResourceDefinition): Resource {
  if (!isPlainObject(definition)) throw new InvalidOptionError("resource", "an object", definition);
  const { uri, size, read } = definition;
  if (!isResourceUri(uri, MAX_DEFINED_URI_LENGTH)) {
    throw new InvalidOptionError(
      "resource.uri",
      `an absolute RFC 3986 URI of at most ${MAX_DEFINED_URI_LENGTH} characters`,
      uri,
    );
  }
  const label = `resource ${uri}`;
  const base = checkResourceFields(label, definition);
  if (size !== undefined && !(Number.isSafeInteger(size) && size >= 0)) {
    throw new InvalidOptionError(`${label}: size`, "a non-negative integer", size);
  }
  if (typeof read !== "function")
    throw new InvalidOptionError(`${label}: read`, "a function", read);
  const descriptor: Record<string, unknown> = { uri, ...base.descriptor };
  if (size !== undefined) descriptor.size = size;
  return Object.freeze({
    uri,
    name: definition.name,
    descriptor: Object.freeze(descriptor),
    mimeType: definition.mimeType,
    scopes: base.scopes,
    visible: base.visible,
    cacheScope: definition.cacheScope ?? "private",
    ttlMs: definition.ttlMs ?? null,
    read,
  });
}

/** The checked common fields of a resource or template. */
export interface CheckedResourceFields {
  readonly descriptor: Record<string, unknown>;
  readonly scopes: readonly string[];
  readonly visible: ((ctx: VisibilityContext) => boolean) | null;
}

/** @internal Checks what resources and templates share; throws InvalidOptionError. */
export function checkResourceFields(
  label: string,
  definition: ResourceFieldsBase,
): CheckedResourceFields {
  const { name, mimeType, annotations, cacheScope, ttlMs } = definition;
  if (typeof name !== "string" || name === "" || name.length > 256) {
    throw new InvalidOptionError(`${label}: name`, "a string of 1-256 characters", name);
  }
  const checked = checkPrimitiveFields(label, definition);
  if (mimeType !== undefined && (typeof mimeType !== "string" || mimeType === "")) {
    throw new InvalidOptionError(`${label}: mimeType`, "a non-empty string", mimeType);
  }
  if (annotations !== undefined && !isAnnotations(annotations)) {
    throw new InvalidOptionError(
      `${label}: annotations`,
      '{ audience?: ("user" | "assistant")[], priority?: 0..1, lastModified?: string }',
      annotations,
    );
  }
  if (cacheScope !== undefined && cacheScope !== "public" && cacheScope !== "private") {
    throw new InvalidOptionError(`${label}: cacheScope`, '"public" or "private"', cacheScope);
  }
  if (ttlMs !== undefined && !(Number.isSafeInteger(ttlMs) && ttlMs >= 0)) {
    throw new InvalidOptionError(`${label}: ttlMs`, "a non-negative integer", ttlMs);
  }
  // Key order of the list entry follows the schema's: name, title, description, mimeType…
  const descriptor: Record<string, unknown> = { ...checked.descriptor };
  if (mimeType !== undefined) descriptor.mimeType = mimeType;
  if (annotations !== undefined) descriptor.annotations = { ...annotations };
  return { descriptor, scopes: checked.scopes, visible: checked.visible };
}

function isAnnotations(value: unknown): value is ResourceAnnotations {
  if (!isPlainObject(value)) return false;
  const { audience, priority, lastModified } = value;
  if (
    audience !== undefined &&
    (!Array.isArray(audience) || !audience.every((a) => a === "user" || a === "assistant"))
  ) {
    return false;
  }
  if (priority !== undefined && !(typeof priority === "number" && priority >= 0 && priority <= 1)) {
    return false;
  }
  return lastModified === undefined || typeof lastModified === "string";
}
