/**
 * Protocol revisions of the 2025 ("legacy") era that `initialize` accepts
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle). The newest comes first: it is the
 * one named in errors and assumed when a client sends no `MCP-Protocol-Version` header.
 *
 * @example
 * ```ts
 * import { SUPPORTED_PROTOCOL_VERSIONS } from "./versions.js";
 * SUPPORTED_PROTOCOL_VERSIONS.includes("2025-06-18"); // true
 * ```
 */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([
  "2025-11-25",
  "2025-06-18",
  "2025-03-26",
]);

/**
 * Whether `value` names a supported 2025-era revision.
 *
 * @example
 * ```ts
 * isSupportedProtocolVersion("2025-11-25"); // true
 * isSupportedProtocolVersion("1999-01-01"); // false
 * ```
 */
export function isSupportedProtocolVersion(value: unknown): value is string {
  return value === "2025-11-25" || value === "2025-06-18" || value === "2025-03-26";
}

/**
 * Protocol revisions of the 2026-07-28 ("modern", stateless) era, served per request from the
 * `_meta` envelope (https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning).
 *
 * @example
 * ```ts
 * MODERN_PROTOCOL_VERSIONS.includes("2026-07-28"); // true
 * ```
 */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = Object.freeze(["2026-07-28"]);

/**
 * Every revision this dual-era server speaks, newest first: `server/discover`'s
 * `supportedVersions` and the `data.supported` of a -32022 answer (the spec's example lists both
 * eras there: https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning).
 *
 * @example
 * ```ts
 * ALL_PROTOCOL_VERSIONS[0]; // "2026-07-28"
 * ```
 */
export const ALL_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([
  ...MODERN_PROTOCOL_VERSIONS,
  ...SUPPORTED_PROTOCOL_VERSIONS,
]);

/**
 * Whether `value` looks like a modern revision (a date at or after 2026-07-28), supported or not.
 * A request that names one only in its `MCP-Protocol-Version` header, with no `_meta` claim, is a
 * modern request missing its envelope (-32602), not a 2025-era one (test/modern/ladder.test.ts).
 *
 * @example
 * ```ts
 * looksModernVersion("2026-07-28"); // true
 * looksModernVersion("2025-11-25"); // false
 * ```
 */
export function looksModernVersion(value: string): boolean {
  return value.length === 10 && /^\d{4}-\d{2}-\d{2}$/.test(value) && value >= "2026-07-28";
}
