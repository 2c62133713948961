/**
 * The client bucket: the part of an address that identifies one client for quotas and anonymous
 * scopes. An IPv6 client usually owns a whole /64 (RFC 4291 §2.5.4) and rotates the low 64 bits
 * at will, so bucketing by full address would let it mint 2^64 scopes past the per-scope quota.
 */
import ipaddr from "ipaddr.js";

import { parseIpAddress } from "./ip-address.js";

/** The bucket of every client whose address is missing or malformed. */
export const UNKNOWN_BUCKET = "unknown";

/**
 * IPv4 (also IPv4-mapped IPv6) → the IPv4 address; other IPv6 → its /64 in RFC 5952 text plus
 * `/64` (`"2001:db8:1:2::/64"`), zone id ignored; anything else → {@link UNKNOWN_BUCKET}.
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
