/**
 * This server as an OAuth 2.1 resource server (MCP 2025-11-25 "Authorization",
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization, and the
 * 2026-07-28 revision): checks a presented access token (JWT or, by introspection, opaque),
 * turns it into a {@link Principal} (`sub` → `principal:` scope, `scope`/`scp` → scopes), and
 * builds the challenges and the protected resource metadata (RFC 9728) clients discover the
 * authorization server from.
 */
import { createPrincipal, type Principal } from "../principal.js";
import { bearerChallenge } from "./challenge.js";
import { createIntrospector } from "./introspection.js";
import { createJwksSource } from "./jwks.js";
import { createJwtVerifier } from "./jwt-verifier.js";
import {
  type OAuthOptions,
  type ResolvedOAuthOptions,
  resolveOAuthOptions,
} from "./oauth-options.js";
import {
  canonicalResource,
  METADATA_PREFIX,
  metadataPath,
  metadataUrl,
  type ProtectedResourceMetadata,
  resourceAudiences,
} from "./resource-metadata.js";
import { grantedScopes, missingScopes, withImpliedScopes } from "./scopes.js";
import { invalidToken, type TokenCheck, type TokenChecker } from "./token-check.js";

/** How a request's credentials were judged. */
export type AuthDecision =
  | { readonly ok: true; readonly principal: Principal }
  | {
      readonly ok: false;
      /** 400 malformed, 401 no or bad token, 403 insufficient scope, 503 provider unreachable. */
      readonly status: 400 | 401 | 403 | 503;
      /** The `WWW-Authenticate` value, when the answer carries one. */
      readonly challenge: string | null;
      /** A fixed sentence for the JSON-RPC error body. */
      readonly message: string;
    };

/** The resource server of one conduit-mcp server. */
export interface ResourceServer {
  /** The canonical resource URI, or null until `listen()` fixes the default. */
  readonly resource: string | null;
  /** Sets the resource when the options left it to `listen()`; no effect once set. */
  useDefaultResource(url: string): void;
  /** Checks a presented bearer token. */
  checkToken(token: string): Promise<AuthDecision>;
  /** The refusal of a request that presented no usable credentials (401, no `error`). */
  unauthorized(): AuthDecision;
  /** The refusal of a token that is not acceptable (401 `invalid_token`). */
  invalidToken(description: string): AuthDecision;
  /** The refusal of a malformed request (400 `invalid_request`). */
  malformed(description: string): AuthDecision;
  /** The 403 challenge for an item whose scopes the caller lacks (with the server's own). */
  insufficientScopeChallenge(scopes: readonly string[]): string;
  /** The metadata document for a request path, or null when the path is not one of its URLs. */
  metadataFor(path: string, endpointPath: string): string | null;
}

/**
 * Builds the resource server of `auth.oauth`. Throws InvalidOptionError for a bad option.
 *
 * @example
 * ```ts
 * const rs = createResourceServer({ issuer: "https://idp.example.com/",
 *   jwksUrl: "https://idp.example.com/.well-known/jwks.json",
 *   resource: "https://mcp.example.com/mcp", scopes: ["mcp"] });
 * const decision = await rs.checkToken(token); // { ok: true, principal } or a refusal
 * ```
 */
export function createResourceServer(input: OAuthOptions): ResourceServer {
  const options = resolveOAuthOptions(input);
  let resource: string | null = options.resource ?? null;
  let audiences: readonly string[] = [];
  const setResource = (value: string): void => {
    resource = value;
    audiences = options.audience ?? resourceAudiences(value);
  };
  if (resource !== null) setResource(resource);
  const currentAudiences = (): readonly string[] => audiences;

  const jwt: TokenChecker | null =
    options.jwksUrl === undefined || options.issuer === undefined
      ? null
      : createJwtVerifier({
          getKey: createJwksSource({
            url: options.jwksUrl,
            timeoutMs: options.jwksTimeoutMs,
            cacheMaxAgeMs: options.jwksCacheMaxAgeMs,
            cooldownMs: options.jwksCooldownMs,
            retryAfterFailureMs: options.jwksRetryAfterFailureMs,
          }),
          issuer: options.issuer,
          audiences: currentAudiences,
          algorithms: options.algorithms,
          clockToleranceSec: options.clockToleranceSec,
        });
  const introspect: TokenChecker | null =
    options.introspection === undefined
      ? null
      : createIntrospector({
          ...options.introspection,
          issuer: options.issuer,
          audiences: currentAudiences,
          clockToleranceSec: options.clockToleranceSec,
        });

  const resourceMetadata = (): string | undefined =>
    resource === null ? undefined : metadataUrl(resource);

  const refuse = (
    status: 400 | 401 | 403 | 503,
    message: string,
    challenge: string | null,
  ): AuthDecision => ({ ok: false, status, challenge, message });

  const server: ResourceServer = {
    get resource() {
      return resource;
    },
    useDefaultResource(url) {
      if (resource === null) setResource(canonicalResource("auth.oauth.resource", url));
    },
    async checkToken(token) {
      if (resource === null) return NOT_CONFIGURED;
      const check = await checkerFor(token, jwt, introspect)(token);
      if (!check.ok) {
        return check.reason === "unavailable"
          ? UNAVAILABLE_DECISION
          : server.invalidToken(check.description);
      }
      return principalOf(check, options, server, resourceMetadata);
    },
    unauthorized() {
      return refuse(
        401,
        "Unauthorized",
        bearerChallenge({ resourceMetadata: resourceMetadata(), scopes: options.scopes }),
      );
    },
    invalidToken(description) {
      return refuse(
        401,
        "Unauthorized: invalid access token",
        bearerChallenge({
          error: "invalid_token",
          description,
          resourceMetadata: resourceMetadata(),
          scopes: options.scopes,
        }),
      );
    },
    malformed(description) {
      return refuse(
        400,
        `Bad request: ${description}`,
        bearerChallenge({
          error: "invalid_request",
          description,
          resourceMetadata: resourceMetadata(),
        }),
      );
    },
    insufficientScopeChallenge(scopes) {
      return bearerChallenge({
        error: "insufficient_scope",
        description: "The access token lacks a scope this request needs",
        scopes: [...new Set([...options.scopes, ...scopes])],
        resourceMetadata: resourceMetadata(),
      });
    },
    metadataFor(path, endpointPath) {
      if (resource === null || !path.startsWith(METADATA_PREFIX)) return null;
      const served =
        path === METADATA_PREFIX ||
        path === metadataPath(endpointPath) ||
        path === metadataPath(new URL(resource).pathname);
      return served ? JSON.stringify(metadataDocument(resource, options)) : null;
    },
  };
  return server;
}

/** Longest subject accepted as a principal id. */
const MAX_SUBJECT_LENGTH = 256;

const NOT_CONFIGURED: AuthDecision = Object.freeze({
  ok: false,
  status: 503,
  challenge: null,
  message: "Authorization is not configured: set auth.oauth.resource or call listen()",
});
const UNAVAILABLE_DECISION: AuthDecision = Object.freeze({
  ok: false,
  status: 503,
  challenge: null,
  message: "The authorization server is unavailable; try again later",
});

/** JWTs (three dot-separated parts) go to the JWT verifier; anything else to introspection. */
function checkerFor(
  token: string,
  jwt: TokenChecker | null,
  introspect: TokenChecker | null,
): TokenChecker {
  const looksJwt = /^[\w-]+\.[\w-]*\.[\w-]*$/.test(token);
  if (looksJwt && jwt !== null) return jwt;
  if (introspect !== null) return introspect;
  return async () => INVALID_FORMAT;
}

const INVALID_FORMAT: TokenCheck = invalidToken("The access token is invalid");

/** The principal of verified claims, after the server-wide scope check. */
function principalOf(
  check: Extract<TokenCheck, { ok: true }>,
  options: ResolvedOAuthOptions,
  server: ResourceServer,
  resourceMetadata: () => string | undefined,
): AuthDecision {
  const { claims } = check;
  const granted = grantedScopes(claims);
  if (granted === null) return server.invalidToken("The access token's scope claim is malformed");
  const scopes = withImpliedScopes(granted, options.impliedScopes);
  const principal = createPrincipal({ id: claims[options.principalClaim], scopes, claims });
  if (principal.id === null || principal.id === "") {
    return server.invalidToken("The access token names no subject");
  }
  // The subject becomes a scope key, a log field and a label: bounded, printable.
  if (
    principal.id.length > MAX_SUBJECT_LENGTH ||
    /[\u0000-\u001f\u007f-\u009f]/.test(principal.id)
  ) {
    return server.invalidToken("The access token's subject is not usable here");
  }
  const missing = missingScopes(scopes, options.scopes);
  if (missing.length > 0) {
    return {
      ok: false,
      status: 403,
      message: "Forbidden: insufficient scope",
      challenge: bearerChallenge({
        error: "insufficient_scope",
        description: "The access token lacks a scope this server requires",
        scopes: options.scopes,
        resourceMetadata: resourceMetadata(),
      }),
    };
  }
  return { ok: true, principal };
}

/** The RFC 9728 §2 document. */
function metadataDocument(
  resource: string,
  options: ResolvedOAuthOptions,
): ProtectedResourceMetadata {
  return {
    resource,
    authorization_servers: options.authorizationServers,
    ...(options.scopesSupported.length > 0 ? { scopes_supported: options.scopesSupported } : {}),
    bearer_methods_supported: ["header"],
    ...(options.resourceName !== undefined ? { resource_name: options.resourceName } : {}),
  };
}
