/**
 * The cross-node cancellation message on the store's pub/sub channel, and its validation. Anything
 * arriving on a channel is hostile until validated: any client of the same Redis can publish
 * there, so a message is size-checked before parsing and field-checked after (issue 5).
 */
import type { RemoteCancellation } from "../cancellation/types.js";
import type { CancellationSource } from "../errors.js";

/** A remote cancellation plus the node that recorded it (so a node can ignore its own). */
export interface RemoteMessage extends RemoteCancellation {
  readonly node: string;
}

/** Upper bound on a raw message (characters), checked before `JSON.parse`. */
export const MAX_MESSAGE_LENGTH = 16_384;
/** Bounds per field, generous against what the registry writes (ids ≤ 256 bytes, reasons ≤ 200 graphemes). */
const MAX_SCOPE_LENGTH = 4_096;
const MAX_REQUEST_ID_BYTES = 256;
const MAX_REASON_LENGTH = 4_096;
const MAX_NODE_LENGTH = 256;
const SOURCES: ReadonlySet<string> = new Set<CancellationSource>([
  "notification",
  "disconnect",
  "timeout",
  "shutdown",
  "library",
]);

/**
 * Serialises a message for PUBLISH.
 *
 * @example
 * ```ts
 * encodeRemoteMessage({ scope: "s", requestId: "1", reason: null, source: "notification", node: "n1" });
 * ```
 */
export function encodeRemoteMessage(message: RemoteMessage): string {
  return JSON.stringify({
    v: 1,
    scope: message.scope,
    requestId: message.requestId,
    reason: message.reason,
    source: message.source,
    node: message.node,
  });
}

/**
 * Parses and validates a raw channel message; `null` for anything malformed, oversized or of an
 * unknown version. Never throws.
 *
 * @example
 * ```ts
 * const msg = decodeRemoteMessage(raw);
 * if (msg && msg.node !== myNode) deliver(msg);
 * ```
 */
export function decodeRemoteMessage(raw: unknown): RemoteMessage | null {
  if (typeof raw !== "string" || raw.length > MAX_MESSAGE_LENGTH) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const m = value as Record<string, unknown>;
  const { scope, requestId, reason, source, node } = m;
  if (m.v !== 1) return null;
  if (typeof scope !== "string" || scope.length > MAX_SCOPE_LENGTH) return null;
  if (
    typeof requestId !== "string" ||
    Buffer.byteLength(requestId, "utf8") > MAX_REQUEST_ID_BYTES
  ) {
    return null;
  }
  if (reason !== null && (typeof reason !== "string" || reason.length > MAX_REASON_LENGTH)) {
    return null;
  }
  if (typeof source !== "string" || !SOURCES.has(source)) return null;
  if (typeof node !== "string" || node.length === 0 || node.length > MAX_NODE_LENGTH) return null;
  return { scope, requestId, reason, source: source as CancellationSource, node };
}
