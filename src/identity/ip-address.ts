/**
 * Strict IP parsing for addresses off the wire. ipaddr.js alone accepts `1` or `0x7f.1` as IPv4
 * and `::ffff:0x7f.0.0.1` as IPv6, so a forged `X-Forwarded-For` entry could be read as another
 * address; only the forms Node and proxies emit are accepted here.
 */
import ipaddr from "ipaddr.js";

/** A parsed address: IPv4, or IPv6 that is not IPv4-mapped (mapped ones are unwrapped). */
export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** Real IPv6 text with an IPv4 tail and a zone is well under 100 characters. */
const MAX_ADDRESS_LENGTH = 128;

/**
 * Four-part decimal without leading zeros (`01.2.3.4` reads as octal elsewhere), checked before
 * ipaddr.js, whose validators try every legacy notation and throw internally (tens of µs).
 */
const DOTTED_QUAD = /^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})$/;

/** The dotted IPv4 tail of an IPv6 text such as `::ffff:192.0.2.1`. */
const DOTTED_TAIL = /:([^:]*\.[^:]*)$/;

/**
 * Parses strictly and normalises: IPv4 in four-part decimal only, IPv6 per RFC 4291 §2.2 (an
 * IPv4 tail four-part decimal too), zone id (RFC 4007 §11) dropped, IPv4-mapped IPv6 unwrapped
 * because Node reports IPv4 peers on dual-stack sockets that way. `null` when not an address.
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
