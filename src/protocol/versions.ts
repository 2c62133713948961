/**
 * Protocol revisions of the 2025 ("legacy") era that `initialize` accepts
 * (mcp-protocol.md A.3 "Lifecycle"; conduit-behavior.md §2.6). The newest comes first: it is the
 * one named in errors and assumed when a client sends no `MCP-Protocol-Version` header.
 *
 * @example
 * ```ts
 * import { SUPPORTED_PROTOCOL_VERSIONS } from "conduit-mcp";
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
