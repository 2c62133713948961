/**
 * Which peers may report the client's address in `X-Forwarded-For`: any client can forge the
 * header, so it is read only from peers the operator named, by hop count or address range.
 */
import ipaddr from "ipaddr.js";

import { InvalidOptionError } from "../errors.js";
import { type IpAddress, parseIpAddress } from "./ip-address.js";

/** One trusted range: addresses whose first `prefix` bits equal `network`'s. */
export interface TrustedRange {
  readonly network: IpAddress;
  readonly prefix: number;
}

/**
 * Parsed `trustProxy`: `none` ignores `X-Forwarded-For`; `hops` trusts the socket peer and the
 * `hops - 1` proxies left of it, whatever their address; `ranges` trusts peers by address.
 */
export type TrustProxy =
  | { readonly kind: "none" }
  | { readonly kind: "hops"; readonly hops: number }
  | { readonly kind: "ranges"; readonly ranges: readonly TrustedRange[] };

/** The value accepted by {@link parseTrustProxy}. */
export type TrustProxyOption = boolean | number | string | readonly string[] | undefined;

/** Trust nothing: the socket peer is the client. */
export const TRUST_NONE: TrustProxy = Object.freeze({ kind: "none" });

const OPTION = "trustProxy";
const EXPECTED =
  "false, a non-negative integer hop count, or IP addresses / CIDR ranges (a comma-separated " +
  'string or an array of strings, e.g. "10.0.0.0/8, ::1"; also loopback, linklocal, uniquelocal)';

/** Named ranges, as Express's proxy-addr spells them, so a CLI flag can say `loopback`. */
const PRESETS: Readonly<Record<string, readonly string[]>> = {
  loopback: ["127.0.0.0/8", "::1/128"],
  linklocal: ["169.254.0.0/16", "fe80::/10"],
  uniquelocal: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
};

const DIGITS = /^\d+$/;
const PREFIX = /^\d{1,3}$/;

/**
 * Parses `trustProxy` once, at construction, so a bad value fails at start-up: nothing
 * (`undefined`, `false`, `0`, empty list), `N` hops (integer or digit string), or ranges (comma
 * separated string or array: CIDR, bare address, `loopback`, `linklocal`, `uniquelocal`).
 * `true` is refused: trusting every hop lets any client choose its address, scope and quota.
 *
 * @throws InvalidOptionError for any other value.
 */
export function parseTrustProxy(option: TrustProxyOption): TrustProxy {
  if (option === undefined || option === false) return TRUST_NONE;
  if (option === true) {
    throw new InvalidOptionError(
      OPTION,
      `${EXPECTED}; true is refused because it would trust every hop and let any client forge its address`,
      option,
    );
  }
  if (typeof option === "number") return hops(option);
  if (typeof option === "string") {
    const trimmed = option.trim();
    if (DIGITS.test(trimmed)) return hops(Number(trimmed));
    return ranges(trimmed.split(","));
  }
  if (Array.isArray(option)) {
    const entries: string[] = [];
    for (const entry of option as readonly unknown[]) {
      if (typeof entry !== "string") throw new InvalidOptionError(OPTION, EXPECTED, entry);
      entries.push(...entry.split(","));
    }
    return ranges(entries);
  }
  throw new InvalidOptionError(OPTION, EXPECTED, option);
}

/** Whether `address` is in a trusted range (always false for `none` and `hops`). */
export function isTrustedAddress(trust: TrustProxy, address: IpAddress): boolean {
  if (trust.kind !== "ranges") return false;
  const kind = address.kind();
  for (const range of trust.ranges) {
    if (range.network.kind() === kind && address.match(range.network, range.prefix)) return true;
  }
  return false;
}

function hops(count: number): TrustProxy {
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new InvalidOptionError(OPTION, EXPECTED, count);
  }
  return count === 0 ? TRUST_NONE : Object.freeze({ kind: "hops", hops: count });
}

function ranges(entries: readonly string[]): TrustProxy {
  const parsed: TrustedRange[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    // Tolerate empty pieces ("a, b," from an env var); they name nothing.
    if (entry === "") continue;
    const preset = Object.hasOwn(PRESETS, entry.toLowerCase())
      ? PRESETS[entry.toLowerCase()]
      : undefined;
    if (preset !== undefined) {
      for (const cidr of preset) parsed.push(parseRange(cidr));
    } else {
      parsed.push(parseRange(entry));
    }
  }
  return parsed.length === 0 ? TRUST_NONE : Object.freeze({ kind: "ranges", ranges: parsed });
}

function parseRange(entry: string): TrustedRange {
  const slash = entry.indexOf("/");
  const text = slash === -1 ? entry : entry.slice(0, slash);
  const network = parseIpAddress(text);
  if (network === null) throw new InvalidOptionError(OPTION, EXPECTED, entry);
  // parseIpAddress unwraps ::ffff:a.b.c.d to IPv4, so a mapped range loses its 96-bit prefix.
  const unwrapped = network instanceof ipaddr.IPv4 && text.includes(":");
  const width = network instanceof ipaddr.IPv4 ? 32 : 128;
  if (slash === -1) return Object.freeze({ network, prefix: width });
  const prefixText = entry.slice(slash + 1);
  if (!PREFIX.test(prefixText)) throw new InvalidOptionError(OPTION, EXPECTED, entry);
  let prefix = Number(prefixText);
  if (unwrapped) {
    if (prefix < 96) throw new InvalidOptionError(OPTION, EXPECTED, entry);
    prefix -= 96;
  }
  if (prefix > width) throw new InvalidOptionError(OPTION, EXPECTED, entry);
  return Object.freeze({ network, prefix });
}
