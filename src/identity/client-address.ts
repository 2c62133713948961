/**
 * The client's address: the socket peer, or — only behind proxies the operator trusts — the
 * address those proxies report in `X-Forwarded-For`. By default the header is never read.
 */
import ipaddr from "ipaddr.js";

import { type IpAddress, parseIpAddress } from "./ip-address.js";
import { isTrustedAddress, type TrustProxy } from "./trust-proxy.js";

/**
 * At most this many `X-Forwarded-For` entries are read, from the right (the only end a trusted
 * proxy vouches for). Bounds the work a client can cause with a long forged header.
 */
export const MAX_FORWARDED_ENTRIES = 32;

/** Digits of a port after an IPv4 address or a bracketed IPv6 address. */
const PORT = /^\d{1,5}$/;

/**
 * Determines the client's address for one request.
 *
 * - `trust.kind === "none"` (the default): the socket address; the header is never read, so a
 *   forged `X-Forwarded-For` changes nothing.
 * - `hops` N: the chain is `[...forwardedFor, socket]` and the socket peer is hop 1; the client
 *   is the address N positions left of the socket peer, or the leftmost one when the chain is
 *   shorter (Express's `trust proxy = N`).
 * - `ranges`: starting at the socket peer, walk right-to-left while the current address is in
 *   a trusted range; the first untrusted address is the client, or the leftmost if all are
 *   trusted.
 *
 * Several header values (an array) are joined with commas (RFC 9110 §5.3). An entry may carry
 * a port (`192.0.2.1:8080`, `[2001:db8::1]:443`), which is dropped. Addresses are returned
 * normalised: IPv4-mapped IPv6 unwrapped, IPv6 in RFC 5952 text, zone ids dropped.
 *
 * Where the header cannot be believed the result falls back to the nearest address that can:
 * the socket peer (`hops`), or the last address the walk had verified (`ranges`: the socket peer
 * or a trusted proxy) — never attacker-chosen text, and never one address shared by every
 * client whose header is broken (they stay apart by the proxy they came through):
 * - the entry the walk lands on is malformed (not an IP address);
 * - the walk would need more than {@link MAX_FORWARDED_ENTRIES} entries.
 *
 * An unparseable or missing socket address is returned as it is.
 *
 * @example
 * ```ts
 * clientAddress("::ffff:127.0.0.1", "203.0.113.5", parseTrustProxy(1)); // "203.0.113.5"
 * clientAddress("127.0.0.1", "evil", parseTrustProxy(1)); // "127.0.0.1" (the socket peer)
 * ```
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | readonly string[] | undefined,
  trust: TrustProxy,
): string | undefined {
  const socket = parseIpAddress(socketAddress);
  const socketText = socket === null ? socketAddress : format(socket);
  if (trust.kind === "none" || forwardedFor === undefined) return socketText;
  if (trust.kind === "ranges" && (socket === null || !isTrustedAddress(trust, socket))) {
    return socketText;
  }

  const { entries, truncated } = rightmostEntries(forwardedFor);

  if (trust.kind === "hops") {
    // entries[0] is one hop left of the socket peer; hop N lands on entries[N - 1].
    if (entries.length === 0) return socketText;
    const index = trust.hops - 1;
    if (index >= entries.length && truncated) return socketText;
    const chosen = parseForwardedEntry(entries[Math.min(index, entries.length - 1)] ?? "");
    return chosen === null ? socketText : format(chosen);
  }

  let last = socketText;
  for (const entry of entries) {
    const parsed = parseForwardedEntry(entry);
    if (parsed === null) return last;
    const text = format(parsed);
    if (!isTrustedAddress(trust, parsed)) return text;
    last = text;
  }
  // Past the bound the true leftmost entry is unknown: the last trusted hop read stands in.
  return last;
}

/**
 * Splits the header into entries from the right, reading no more than
 * {@link MAX_FORWARDED_ENTRIES} of them. `entries[0]` is the rightmost.
 */
function rightmostEntries(forwardedFor: string | readonly string[]): {
  entries: string[];
  truncated: boolean;
} {
  const text = typeof forwardedFor === "string" ? forwardedFor : forwardedFor.join(",");
  const entries: string[] = [];
  if (text.trim() === "") return { entries, truncated: false };
  let end = text.length;
  while (entries.length < MAX_FORWARDED_ENTRIES) {
    const comma = end === 0 ? -1 : text.lastIndexOf(",", end - 1);
    entries.push(text.slice(comma + 1, end).trim());
    if (comma === -1) return { entries, truncated: false };
    end = comma;
  }
  return { entries, truncated: true };
}

/** One `X-Forwarded-For` entry: an address, optionally with a port. */
function parseForwardedEntry(entry: string): IpAddress | null {
  if (entry.startsWith("[")) {
    const close = entry.indexOf("]");
    if (close === -1) return null;
    const rest = entry.slice(close + 1);
    if (rest !== "" && !(rest.startsWith(":") && PORT.test(rest.slice(1)))) return null;
    return parseIpAddress(entry.slice(1, close));
  }
  const colon = entry.indexOf(":");
  if (colon !== -1 && colon === entry.lastIndexOf(":")) {
    // Exactly one colon: IPv4 with a port (IPv6 text always has at least two colons).
    if (!PORT.test(entry.slice(colon + 1))) return null;
    const v4 = parseIpAddress(entry.slice(0, colon));
    return v4 instanceof ipaddr.IPv4 ? v4 : null;
  }
  return parseIpAddress(entry);
}

function format(address: IpAddress): string {
  return address instanceof ipaddr.IPv4 ? address.toString() : address.toRFC5952String();
}
