import ipaddr from "ipaddr.js";

import { type IpAddress, parseIpAddress } from "./ip-address.js";
import { isTrustedAddress, type TrustProxy } from "./trust-proxy.js";

/**
 * At most this many `X-Forwarded-For` entries are read, from the right (the only end a trusted
 * proxy vouches for). Bounds the work a client can cause with a long forged header.
 */
export const MAX_FORWARDED_ENTRIES = 32;

const PORT = /^\d{1,5}$/;

/**
 * The client's address for one request, normalised (IPv4-mapped IPv6 unwrapped, IPv6 in
 * RFC 5952 text, zone ids and ports dropped):
 * - `none` (the default): the socket address; a forged `X-Forwarded-For` changes nothing;
 * - `hops` N: in the chain `[...forwardedFor, socket]` the client is N positions left of the
 *   socket peer, or the leftmost (Express's `trust proxy = N`);
 * - `ranges`: walk right-to-left from the socket peer while addresses are trusted; the first
 *   untrusted one is the client, or the leftmost if all are trusted.
 *
 * Several header values are joined with commas (RFC 9110 §5.3). A malformed entry, or a walk
 * longer than {@link MAX_FORWARDED_ENTRIES}, falls back to the last verified address (socket
 * peer or trusted proxy): never attacker-chosen text, and never one address shared by every
 * client with a broken header. A missing or unparseable socket address is returned as it is.
 *
 * @example
 * ```ts
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

/** Up to {@link MAX_FORWARDED_ENTRIES} header entries, rightmost first. */
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
