/**
 * conduit-mcp as an OAuth 2.1 resource server: protected resource metadata (RFC 9728), Bearer
 * challenges (RFC 6750), JWT access tokens verified against the issuer's JWKS, opaque tokens by
 * introspection (RFC 7662), audience bound to this resource (RFC 8707), scopes per server and
 * per item.
 *
 * @example
 * ```ts
 * const rs = createResourceServer({ issuer, jwksUrl, resource: "https://mcp.example.com/mcp" });
 * ```
 */

export {
  MAX_ACCESS_TOKEN_LENGTH,
  type PresentedCredentials,
  presentedCredentials,
} from "./bearer-credentials.js";
export { BoundedCache } from "./bounded-cache.js";
export { type BearerChallenge, bearerChallenge } from "./challenge.js";
export { createIntrospector, type IntrospectorOptions } from "./introspection.js";
export { createJwksSource, type JwksSourceOptions, KeySetUnavailableError } from "./jwks.js";
export {
  ASYMMETRIC_ALGORITHMS,
  createJwtVerifier,
  type JwtVerifierOptions,
} from "./jwt-verifier.js";
export {
  type IntrospectionOptions,
  OAUTH_DEFAULTS,
  type OAuthOptions,
  type ResolvedOAuthOptions,
  resolveOAuthOptions,
} from "./oauth-options.js";
export {
  canonicalResource,
  METADATA_PREFIX,
  metadataPath,
  metadataUrl,
  type ProtectedResourceMetadata,
  resourceAudiences,
} from "./resource-metadata.js";
export { type AuthDecision, createResourceServer, type ResourceServer } from "./resource-server.js";
export { grantedScopes, missingScopes, scopeList, withImpliedScopes } from "./scopes.js";
export { isLoopbackHostname, serviceUrl } from "./service-url.js";
export { invalidToken, type TokenCheck, type TokenChecker, UNAVAILABLE } from "./token-check.js";
