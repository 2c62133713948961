/**
 * How a session record is kept in its Redis hash: nullable texts as `n` (null) or `s<text>`, and
 * the reading back of a hash (a missing text defaulted; a capability list that does not look like
 * one dropped, since anyone who may write to Redis can put anything there).
 */
import type { SessionRecord } from "../../sessions/session-store.js";

/** A nullable text as stored: `n` for null, else `s` and the text. */
export function encode(value: string | null): string {
  return value === null ? "n" : `s${value}`;
}

/** A stored nullable text back (anything that is not `s…` reads as null). */
export function decode(raw: string | undefined): string | null {
  return raw === undefined || raw === "n" ? null : raw.slice(1);
}

/** A stored capability flag list, if it looks like one (short, flag characters only); else null. */
function capabilityFlags(stored: string | null): string | null {
  return stored !== null && stored.length <= 256 && /^[a-z. ]*$/.test(stored) ? stored : null;
}

/** The record of session `id` from its hash's fields (as ioredis's `hgetall` returns them). */
export function recordFromFields(
  id: string,
  fields: Readonly<Record<string, string | undefined>>,
): SessionRecord {
  const get = (name: string): string | undefined =>
    Object.hasOwn(fields, name) ? fields[name] : undefined;
  const record: SessionRecord = {
    id,
    principalId: decode(get("principalId")),
    creatorScope: get("creatorScope") ?? "",
    protocolVersion: get("protocolVersion") ?? "",
    createdAt: Number(get("createdAt")),
    lastSeenAt: Number(get("lastSeenAt")),
    logLevel: decode(get("logLevel")),
  };
  // The flag list is re-read by the protocol layer, which ignores anything it does not know.
  const flags = capabilityFlags(decode(get("caps")));
  return flags === null ? record : { ...record, clientCapabilities: flags };
}
