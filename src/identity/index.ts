/** Identity: who is calling, from where, and so which cancellation scope a request is in. */
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
