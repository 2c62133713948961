/**
 * Session ids: 24 bytes (192 bits) from the CSPRNG, base64url (32 visible ASCII characters), ; MCP
 * asks for visible ASCII 0x21–0x7E
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management).
 */
import { randomBytes } from "node:crypto";

/**
 * A new session id.
 *
 * @example
 * ```ts
 * mintSessionId(); // e.g. "q2Vx0bW8Jm1cB6lL0sXkYy3tZ9rA4hUe"
 * ```
 */
export function mintSessionId(): string {
  return randomBytes(24).toString("base64url");
}

/** Ids we could have minted look like this; anything else is unknown without a store lookup. */
const SESSION_ID = /^[A-Za-z0-9_-]{16,128}$/;

/**
 * Whether a header value can be a session id (cheap pre-check before the store).
 *
 * @example
 * ```ts
 * isWellFormedSessionId("not a session"); // false
 * ```
 */
export function isWellFormedSessionId(value: unknown): value is string {
  return typeof value === "string" && SESSION_ID.test(value);
}
