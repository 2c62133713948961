/**
 * Strict IP address parsing shared by the identity area (client address, trusted proxies,
 * client bucket). ipaddr.js alone is too lenient for addresses that come off the wire: it
 * accepts `1` or `0x7f.1` as IPv4 and `::ffff:0x7f.0.0.1` as IPv6, so a forged
 * `X-Forwarded-For` entry could otherwise be read as some other address. Only the textual
 * forms Node and proxies actually emit are accepted here.
 */
import ipaddr from "ipaddr.js";

/** A parsed address: IPv4, or IPv6 that is not IPv4-mapped (mapped ones are unwrapped). */
export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Longest text considered at all. The longest real IPv6 text with an embedded IPv4 and a
 * zone is well under 100 characters; anything longer is rejected before any regex runs.
 */
const MAX_ADDRESS_LENGTH = 128;

/**
 * Four-part decimal IPv4 without leading zeros (`01.2.3.4` could be read as octal elsewhere).
 * Checked here before ipaddr.js sees the text: its own validators try every legacy notation
 * and throw internally on failure, which costs tens of microseconds per call.
 */
const DOTTED_QUAD = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})$/;

/** The dotted IPv4 tail of an IPv6 text such as `::ffff:192.0.2.1`. */
const DOTTED_TAIL = /:([^:]*\.[^:]*)$/;

/**
 * Parses an address strictly and normalises it for matching: IPv4 only in four-part decimal
 * form, IPv6 per RFC 4291 §2.2 (an embedded IPv4 tail must be four-part decimal too), a zone
 * id (`%eth0`, RFC 4007 §11) dropped, IPv4-mapped IPv6 (`::ffff:a.b.c.d`) unwrapped to IPv4,
 * since Node reports IPv4 peers on dual-stack sockets in that form.
 *
 * @returns the address, or `null` when the text is not an address.
 * @example
 * ```ts
 * parseIpAddress("2001:DB8::1")?.toRFC5952String(); // "2001:db8::1"
 * ```
 */
export function parseIpAddress(text: unknown): IpAddress | null {
  if (typeof text !== "string" || text.length === 0 || text.length > MAX_ADDRESS_LENGTH) {
    return null;
  }
  if (!text.includes(":")) return parseIpv4(text);
  const zone = text.indexOf("%");
  if (zone === text.length - 1) return null;
  const bare = zone === -1 ? text : text.slice(0, zone);
  const tail = DOTTED_TAIL.exec(bare);
  if (tail?.[1] !== undefined && parseIpv4(tail[1]) === null) return null;
  let v6: ipaddr.IPv6;
  try {
    v6 = ipaddr.IPv6.parse(bare);
  } catch {
    return null;
  }
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
}

function parseIpv4(text: string): ipaddr.IPv4 | null {
  const match = DOTTED_QUAD.exec(text);
  if (match === null) return null;
  const octets = [Number(match[1]), Number(match[2]), Number(match[3]), Number(match[4])];
  return octets.every((octet) => octet <= 255) ? new ipaddr.IPv4(octets) : null;
}
