/**
 * Opaque pagination cursors (MCP 2025-11-25 pagination:
 * https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/pagination). A cursor
 * names the last item of the page it follows ("after key K"), so pages stay correct when items
 * are added or removed between requests; it is sealed with an HMAC-SHA256 (RFC 2104) over the
 * list kind, the caller's scope and that key, so a client can neither forge one nor replay it
 * on another list or in another tenant. The scope itself is never in the cursor's text.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** The lists that page. */
export type ListKind = "tools" | "resources" | "resourceTemplates" | "prompts" | "tasks";

/** Longest cursor accepted; anything longer is refused before any work. */
const MAX_CURSOR_LENGTH = 2_048;
const TAG_BYTES = 16;

/**
 * Seals and opens cursors with one key.
 *
 * @example
 * ```ts
 * const cursors = new ListCursors();
 * const next = cursors.seal("tools", "ip:127.0.0.1", "echo");
 * cursors.open("tools", "ip:127.0.0.1", next); // "echo"
 * cursors.open("prompts", "ip:127.0.0.1", next); // null
 * ```
 */
export class ListCursors {
  private readonly key: Buffer;

  /**
   * `secret`: shared by every node behind one load balancer so a cursor minted on one is valid
   * on another; absent, a random per-process key (cursors then only work on the node that made
   * them).
   */
  constructor(secret?: string | Uint8Array) {
    this.key =
      secret === undefined
        ? randomBytes(32)
        : Buffer.from(typeof secret === "string" ? Buffer.from(secret, "utf8") : secret);
  }

  /** A cursor meaning "the page after `afterKey`" for this list and scope. */
  seal(kind: ListKind, scope: string, afterKey: string): string {
    const body = Buffer.from(afterKey, "utf8").toString("base64url");
    return `${body}.${this.tag(kind, scope, body).toString("base64url")}`;
  }

  /** The key a cursor names, or null when it is malformed, forged, or for another list or scope. */
  open(kind: ListKind, scope: string, cursor: unknown): string | null {
    if (typeof cursor !== "string" || cursor.length > MAX_CURSOR_LENGTH) return null;
    const dot = cursor.indexOf(".");
    if (dot <= 0 || dot !== cursor.lastIndexOf(".")) return null;
    const body = cursor.slice(0, dot);
    const given = Buffer.from(cursor.slice(dot + 1), "base64url");
    const expected = this.tag(kind, scope, body);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    return Buffer.from(body, "base64url").toString("utf8");
  }

  private tag(kind: ListKind, scope: string, body: string): Buffer {
    // Length-prefixed fields: no two (kind, scope, body) triples share an input.
    return createHmac("sha256", this.key)
      .update(`${kind.length}:${kind}${scope.length}:${scope}${body}`)
      .digest()
      .subarray(0, TAG_BYTES);
  }
}
