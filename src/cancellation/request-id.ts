/**
 * Request ids are keyed on their text, so `5` and `"5"` are one key for cancellations and
 * in-flight entries alike. JSON cannot tell `1.0` from `1`, so any safe integer is accepted.
 */

/** The longest string id, in UTF-8 bytes. */
export const MAX_REQUEST_ID_BYTES = 256;

/**
 * A string of at most this many UTF-16 units is at most 255 UTF-8 bytes (one unit encodes to at
 * most 3 bytes; a surrogate pair is 2 units and 4 bytes), so the byte count can be skipped.
 */
const ALWAYS_SHORT_ENOUGH = Math.floor(MAX_REQUEST_ID_BYTES / 3);

/**
 * Normalises a JSON-RPC request id to its key string:
 * - a safe integer → its decimal text (`5` → `"5"`, `-0` → `"0"`);
 * - a string of at most 256 UTF-8 bytes (not characters) → itself, the empty string included;
 * - `null` / `undefined` → `null` (nothing to record, not an error);
 * - anything else → `undefined` (the caller answers `invalid_request_id`).
 */
export function normalizeRequestId(id: unknown): string | null | undefined {
  if (typeof id === "string") {
    if (id.length <= ALWAYS_SHORT_ENOUGH) return id;
    return Buffer.byteLength(id, "utf8") <= MAX_REQUEST_ID_BYTES ? id : undefined;
  }
  // JSON.stringify, not String(): both give a safe integer's decimal text (`-0` → "0"), but
  // String() goes through V8's number-to-string cache, which keeps every new id's text alive
  // until about 16 000 later numbers overwrite it; under load each call's text then outlives
  // two young-generation collections and is copied into the old generation, a per-call cost
  // (and longer young collections) that a key dropped when the call ends should not have.
  if (typeof id === "number") return Number.isSafeInteger(id) ? JSON.stringify(id) : undefined;
  if (id === null || id === undefined) return null;
  return undefined;
}
