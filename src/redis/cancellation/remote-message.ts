/**
 * The cross-node cancellation message on the store's pub/sub channel and catch-up streams, and
 * its validation. Anything read from Redis is hostile until validated: any client allowed to
 * PUBLISH or XADD on that Redis can forge one. So a message is size-checked before parsing, every
 * field is checked after, and the reason is sanitised again on receipt (no CR/LF, ESC, bidi
 * controls; at most 200 graphemes), exactly as a reason from a client is.
 */
import type { RemoteCancellation } from "../../cancellation/types.js";
import type { CancellationSource } from "../../errors.js";
import { reflectText } from "../../reflect.js";
import { NODE_ID } from "../connection/node-id.js";

/** A remote cancellation plus the node that recorded it (so a node can ignore its own). */
export interface RemoteMessage extends RemoteCancellation {
  readonly node: string;
}

/** A channel frame: the shard and catch-up stream id the message was appended under, then it. */
export interface RemoteFrame {
  readonly shard: number;
  readonly streamId: string;
  readonly message: RemoteMessage;
}

/** Upper bound on a raw message (characters), checked before `JSON.parse`. */
export const MAX_MESSAGE_LENGTH = 8_192;
/** Bounds per field, generous against what the registry writes (ids ≤ 256 bytes, reasons ≤ 200 graphemes). */
const MAX_SCOPE_LENGTH = 2_048;
const MAX_REQUEST_ID_BYTES = 256;
const MAX_REASON_LENGTH = 2_048;
const REASON_GRAPHEMES = 200;
const STREAM_ID = /^\d{1,20}-\d{1,20}$/;
const SOURCES: ReadonlySet<string> = new Set<CancellationSource>([
  "notification",
  "disconnect",
  "shutdown",
  "library",
]);

/**
 * Serialises a message for the channel and the catch-up stream. A `null` request id means "every
 * handle of the scope".
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
 * Parses and validates a raw message; `null` for anything malformed, oversized or of an unknown
 * version. The reason comes back sanitised. Never throws.
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
  if (typeof scope !== "string" || scope.length === 0 || scope.length > MAX_SCOPE_LENGTH) {
    return null;
  }
  if (
    requestId !== null &&
    (typeof requestId !== "string" || Buffer.byteLength(requestId, "utf8") > MAX_REQUEST_ID_BYTES)
  ) {
    return null;
  }
  if (reason !== null && (typeof reason !== "string" || reason.length > MAX_REASON_LENGTH)) {
    return null;
  }
  if (typeof source !== "string" || !SOURCES.has(source)) return null;
  if (typeof node !== "string" || !NODE_ID.test(node)) return null;
  return {
    scope,
    requestId,
    reason: reason === null ? null : reflectText(reason, REASON_GRAPHEMES),
    source: source as CancellationSource,
    node,
  };
}

/**
 * Parses a channel frame, `<shard> <stream id> <message>`; `null` unless every part is valid and
 * the shard is below `shards`. Never throws.
 *
 * @example
 * ```ts
 * decodeRemoteFrame('0 1700000000000-0 {"v":1,...}', 1);
 * ```
 */
export function decodeRemoteFrame(raw: unknown, shards: number): RemoteFrame | null {
  if (typeof raw !== "string" || raw.length > MAX_MESSAGE_LENGTH + 64) return null;
  const first = raw.indexOf(" ");
  const second = first === -1 ? -1 : raw.indexOf(" ", first + 1);
  if (first < 1 || second === -1) return null;
  const shardText = raw.slice(0, first);
  const streamId = raw.slice(first + 1, second);
  if (!/^\d{1,4}$/.test(shardText) || !STREAM_ID.test(streamId)) return null;
  const shard = Number(shardText);
  if (shard >= shards) return null;
  const message = decodeRemoteMessage(raw.slice(second + 1));
  return message === null ? null : { shard, streamId, message };
}

/**
 * Whether stream id `a` is later than `b` (`<ms>-<seq>`, compared as numbers).
 *
 * @example
 * ```ts
 * streamIdAfter("10-0", "9-5"); // true
 * ```
 */
export function streamIdAfter(a: string, b: string): boolean {
  const [am = "0", as = "0"] = a.split("-");
  const [bm = "0", bs = "0"] = b.split("-");
  if (am.length !== bm.length) return am.length > bm.length;
  if (am !== bm) return am > bm;
  if (as.length !== bs.length) return as.length > bs.length;
  return as > bs;
}
