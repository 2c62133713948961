/**
 * The client bucket: the part of a client's address that identifies one client for quotas
 * and anonymous scopes.
 *
 * An IPv6 client usually owns a whole /64 (RFC 4291 §2.5.4; SLAAC and privacy addresses
 * rotate the low 64 bits at will), so bucketing by the full address would let one client
 * mint 2^64 scopes and bypass the per-scope quota. IPv4 addresses are kept whole.
 */
import ipaddr from "ipaddr.js";

import { parseIpAddress } from "./ip-address.js";

/** The bucket of every client whose address is missing or malformed. */
export const UNKNOWN_BUCKET = "unknown";

/**
 * Buckets a client address:
 * - IPv4 → the address itself (`"192.0.2.7"`);
 * - IPv4-mapped IPv6 (`::ffff:192.0.2.1`) → the embedded IPv4 (`"192.0.2.1"`);
 * - other IPv6 → its /64 with the low 64 bits zeroed, in RFC 5952 text plus `/64`
 *   (`"2001:db8:1:2::/64"`, `::1` → `"::/64"`); a zone id (`fe80::1%eth0`) is ignored;
 * - anything else (null, undefined, malformed text) → `"unknown"`.
 *
 * @example
 * ```ts
 * clientBucket("2001:db8:7:8::1") === clientBucket("2001:db8:7:8:9:9:9:9"); // true
 * ```
 */
export function clientBucket(address: string | null | undefined): string {
  const parsed = parseIpAddress(address);
  if (parsed === null) return UNKNOWN_BUCKET;
  if (parsed instanceof ipaddr.IPv4) return parsed.toString();
  const parts = parsed.parts;
  const network = new ipaddr.IPv6([
    parts[0] ?? 0,
    parts[1] ?? 0,
    parts[2] ?? 0,
    parts[3] ?? 0,
    0,
    0,
    0,
    0,
  ]);
  // RFC 5952 text, so one /64 is always one bucket string whatever form the client sent.
  return `${network.toRFC5952String()}/64`;
}
