/**
 * Identity: who is calling (principal), from where (client address behind trusted proxies,
 * client bucket), and therefore which cancellation scope a request belongs to.
 *
 * @example
 * ```ts
 * import { clientAddress, parseTrustProxy, scopeOf } from "./identity/index.js";
 * const trust = parseTrustProxy(1);
 * const scope = scopeOf({ address: clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], trust) });
 * ```
 */
export { clientAddress, MAX_FORWARDED_ENTRIES } from "./client-address.js";
export { clientBucket, UNKNOWN_BUCKET } from "./client-bucket.js";
export { deriveId } from "./derive-id.js";
export { type IpAddress, parseIpAddress } from "./ip-address.js";
export {
  createPrincipal,
  type Principal,
  type PrincipalFields,
  principalId,
} from "./principal.js";
export { GLOBAL_SCOPE, type ScopeInput, scopeOf } from "./scope.js";
export {
  isTrustedAddress,
  parseTrustProxy,
  TRUST_NONE,
  type TrustedRange,
  type TrustProxy,
  type TrustProxyOption,
} from "./trust-proxy.js";
