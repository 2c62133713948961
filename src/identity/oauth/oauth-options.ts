/**
 * The `auth.oauth` option of `createMcpServer`: this server as an OAuth 2.1 resource server
 * (MCP 2025-11-25 and 2026-07-28 "Authorization"). Every value is checked at construction
 * ({@link InvalidOptionError}), so a misconfiguration never reaches a request.
 */
import { InvalidOptionError } from "../../errors.js";
import { integerBetween, readOption } from "../../option-schema.js";
import { ASYMMETRIC_ALGORITHMS } from "./jwt-verifier.js";
import { canonicalResource } from "./resource-metadata.js";
import { scopeList } from "./scopes.js";
import { serviceUrl } from "./service-url.js";

/** Token introspection (RFC 7662) for opaque access tokens. */
export interface IntrospectionOptions {
  /** The authorization server's introspection endpoint (`https:`; `http:` on loopback only). */
  readonly url: string;
  /** This resource server's client id at the authorization server. */
  readonly clientId: string;
  /** Its client secret (HTTP Basic, RFC 7662 §2.1). */
  readonly clientSecret: string;
  /** Longest wait for one answer; beyond, the request gets 503. Default 5 000 ms. */
  readonly timeoutMs?: number;
  /** Longest time an answer is reused (never past the token's `exp`). Default 60 000 ms. */
  readonly cacheTtlMs?: number;
  /** Answers cached at most (least recently used dropped first). Default 10 000. */
  readonly maxCacheEntries?: number;
}

/** The `auth.oauth` option. */
export interface OAuthOptions {
  /**
   * This server's canonical URI (RFC 8707 §2, RFC 9728 `resource`), e.g.
   * `https://mcp.example.com/mcp`: published in the metadata, and the audience a token must name.
   * Default: the URL `listen()` binds (loopback only); required behind a proxy or with your own
   * `http.Server`.
   */
  readonly resource?: string;
  /**
   * Audiences accepted in a token's `aud`, for identity providers that use their own API
   * identifier instead of the resource URI. Default: the resource.
   */
  readonly audience?: string | readonly string[];
  /** The exact `iss` of accepted JWTs (and of introspection answers, when they carry one). */
  readonly issuer?: string;
  /** The issuer's JWKS URL; with `issuer`, JWT access tokens are verified. */
  readonly jwksUrl?: string;
  /** Accepted JWS algorithms (asymmetric only). Default RS256, PS256, ES256, EdDSA and their longer forms. */
  readonly algorithms?: readonly string[];
  /** Clock skew tolerated on `exp` and `nbf`. Default 5 s (0–300). */
  readonly clockToleranceSec?: number;
  /** The claim naming the principal. Default `"sub"`. */
  readonly principalClaim?: string;
  /** Scopes every request's token must hold; missing → 403 `insufficient_scope`. Default none. */
  readonly scopes?: readonly string[];
  /**
   * Scope hierarchy: each scope → the narrower scopes it implies (followed transitively), e.g.
   * `{ "files:write": ["files:read"] }`. A token's scopes are expanded before every check, and
   * `ctx.principal.scopes` holds the expanded list. Default none (scopes compare exactly).
   */
  readonly impliedScopes?: Readonly<Record<string, readonly string[]>>;
  /** `scopes_supported` of the metadata. Default `scopes`. */
  readonly scopesSupported?: readonly string[];
  /** `authorization_servers` of the metadata (issuer identifiers). Default `[issuer]`. */
  readonly authorizationServers?: readonly string[];
  /** `resource_name` of the metadata. Default none. */
  readonly resourceName?: string;
  /** Longest wait for the JWKS. Default 5 000 ms. */
  readonly jwksTimeoutMs?: number;
  /** How long fetched keys are used before they are fetched again. Default 600 000 ms. */
  readonly jwksCacheMaxAgeMs?: number;
  /** Least time between two fetches caused by an unknown `kid`. Default 30 000 ms. */
  readonly jwksCooldownMs?: number;
  /** After a failed JWKS fetch, requests are refused (503) without fetching for this long. Default 1 000 ms. */
  readonly jwksRetryAfterFailureMs?: number;
  /** Opaque tokens: introspect them. Default off. */
  readonly introspection?: IntrospectionOptions;
}

/** The options after validation, with defaults. */
export interface ResolvedOAuthOptions {
  readonly resource: string | undefined;
  readonly audience: readonly string[] | undefined;
  readonly issuer: string | undefined;
  readonly jwksUrl: URL | undefined;
  readonly algorithms: readonly string[];
  readonly clockToleranceSec: number;
  readonly principalClaim: string;
  readonly scopes: readonly string[];
  readonly scopesSupported: readonly string[];
  readonly impliedScopes: ReadonlyMap<string, readonly string[]>;
  readonly authorizationServers: readonly string[];
  readonly resourceName: string | undefined;
  readonly jwksTimeoutMs: number;
  readonly jwksCacheMaxAgeMs: number;
  readonly jwksCooldownMs: number;
  readonly jwksRetryAfterFailureMs: number;
  readonly introspection:
    | (Required<Omit<IntrospectionOptions, "url">> & { readonly url: URL })
    | undefined;
}

/** Documented defaults of {@link OAuthOptions}. */
export const OAUTH_DEFAULTS = Object.freeze({
  algorithms: Object.freeze([
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
  ]),
  clockToleranceSec: 5,
  principalClaim: "sub",
  jwksTimeoutMs: 5_000,
  jwksCacheMaxAgeMs: 600_000,
  jwksCooldownMs: 30_000,
  jwksRetryAfterFailureMs: 1_000,
  introspectionTimeoutMs: 5_000,
  introspectionCacheTtlMs: 60_000,
  introspectionMaxCacheEntries: 10_000,
});

/**
 * Validates `auth.oauth` and applies its defaults.
 *
 * @example
 * ```ts
 * resolveOAuthOptions({ issuer: "https://idp.example.com/", jwksUrl: "https://idp.example.com/jwks",
 *   resource: "https://mcp.example.com/mcp", scopes: ["mcp"] }).authorizationServers; // ["https://idp.example.com/"]
 * ```
 */
export function resolveOAuthOptions(options: OAuthOptions): ResolvedOAuthOptions {
  const at = (field: string): string => `auth.oauth.${field}`;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new InvalidOptionError("auth.oauth", "an object", options);
  }
  const resource =
    options.resource === undefined
      ? undefined
      : canonicalResource(at("resource"), options.resource);
  let audience: string[] | undefined;
  if (options.audience !== undefined) {
    const list = typeof options.audience === "string" ? [options.audience] : options.audience;
    if (
      !Array.isArray(list) ||
      list.length === 0 ||
      !list.every((a) => typeof a === "string" && a.length > 0 && a.length <= 2_048)
    ) {
      throw new InvalidOptionError(at("audience"), "a non-empty string or array of strings", list);
    }
    audience = [...list];
  }
  const issuer = options.issuer;
  if (issuer !== undefined) serviceUrl(at("issuer"), issuer);
  const jwksUrl =
    options.jwksUrl === undefined ? undefined : serviceUrl(at("jwksUrl"), options.jwksUrl);
  if (jwksUrl !== undefined && issuer === undefined) {
    throw new InvalidOptionError(
      at("issuer"),
      "given with jwksUrl (the iss tokens must carry)",
      issuer,
    );
  }
  const algorithms = options.algorithms ?? OAUTH_DEFAULTS.algorithms;
  if (
    !Array.isArray(algorithms) ||
    algorithms.length === 0 ||
    !algorithms.every((alg) => ASYMMETRIC_ALGORITHMS.includes(alg))
  ) {
    throw new InvalidOptionError(
      at("algorithms"),
      `a non-empty array of asymmetric JWS algorithms (${ASYMMETRIC_ALGORITHMS.join(", ")}); never none or HS*`,
      algorithms,
    );
  }
  const scopes = options.scopes === undefined ? [] : scopeList(options.scopes);
  if (scopes === null)
    throw new InvalidOptionError(at("scopes"), "an array of scope tokens", options.scopes);
  const scopesSupported =
    options.scopesSupported === undefined ? scopes : scopeList(options.scopesSupported);
  if (scopesSupported === null) {
    throw new InvalidOptionError(
      at("scopesSupported"),
      "an array of scope tokens",
      options.scopesSupported,
    );
  }
  const impliedScopes = new Map<string, readonly string[]>();
  if (options.impliedScopes !== undefined) {
    const given = options.impliedScopes;
    if (typeof given !== "object" || given === null || Array.isArray(given)) {
      throw new InvalidOptionError(at("impliedScopes"), "an object: scope → implied scopes", given);
    }
    for (const [scope, implied] of Object.entries(given)) {
      const list = scopeList(implied);
      if (scopeList([scope]) === null || list === null) {
        throw new InvalidOptionError(
          at(`impliedScopes.${scope}`),
          "an array of scope tokens",
          implied,
        );
      }
      impliedScopes.set(scope, list);
    }
  }
  const servers = options.authorizationServers ?? (issuer === undefined ? [] : [issuer]);
  if (!Array.isArray(servers) || servers.length === 0) {
    throw new InvalidOptionError(
      at("authorizationServers"),
      "at least one authorization server (or an issuer): MCP clients discover it from the metadata",
      servers,
    );
  }
  for (const [i, server] of servers.entries()) {
    serviceUrl(at(`authorizationServers[${i}]`), server);
  }
  const principalClaim = options.principalClaim ?? OAUTH_DEFAULTS.principalClaim;
  if (
    typeof principalClaim !== "string" ||
    principalClaim.length === 0 ||
    principalClaim.length > 128
  ) {
    throw new InvalidOptionError(at("principalClaim"), "a claim name", principalClaim);
  }
  const resourceName = options.resourceName;
  if (
    resourceName !== undefined &&
    (typeof resourceName !== "string" || resourceName.length > 200)
  ) {
    throw new InvalidOptionError(
      at("resourceName"),
      "a string of at most 200 characters",
      resourceName,
    );
  }
  let introspection: ResolvedOAuthOptions["introspection"];
  if (options.introspection !== undefined) {
    const i = options.introspection;
    if (typeof i !== "object" || i === null) {
      throw new InvalidOptionError(at("introspection"), "{ url, clientId, clientSecret }", i);
    }
    if (typeof i.clientId !== "string" || i.clientId.length === 0) {
      throw new InvalidOptionError(at("introspection.clientId"), "a non-empty string", i.clientId);
    }
    if (typeof i.clientSecret !== "string" || i.clientSecret.length === 0) {
      throw new InvalidOptionError(
        at("introspection.clientSecret"),
        "a non-empty string",
        "(hidden)",
      );
    }
    introspection = {
      url: serviceUrl(at("introspection.url"), i.url),
      clientId: i.clientId,
      clientSecret: i.clientSecret,
      timeoutMs: readOption(
        integerBetween(1, 60_000),
        at("introspection.timeoutMs"),
        i.timeoutMs,
        OAUTH_DEFAULTS.introspectionTimeoutMs,
      ),
      cacheTtlMs: readOption(
        integerBetween(0, 3_600_000),
        at("introspection.cacheTtlMs"),
        i.cacheTtlMs,
        OAUTH_DEFAULTS.introspectionCacheTtlMs,
      ),
      maxCacheEntries: readOption(
        integerBetween(0, 1_000_000),
        at("introspection.maxCacheEntries"),
        i.maxCacheEntries,
        OAUTH_DEFAULTS.introspectionMaxCacheEntries,
      ),
    };
  }
  if (jwksUrl === undefined && introspection === undefined) {
    throw new InvalidOptionError(
      "auth.oauth",
      "jwksUrl (with issuer) and/or introspection",
      "neither",
    );
  }
  return {
    resource,
    audience,
    issuer,
    jwksUrl,
    algorithms: [...algorithms],
    clockToleranceSec: readOption(
      integerBetween(0, 300),
      at("clockToleranceSec"),
      options.clockToleranceSec,
      OAUTH_DEFAULTS.clockToleranceSec,
    ),
    principalClaim,
    scopes,
    scopesSupported,
    impliedScopes,
    authorizationServers: [...servers],
    resourceName,
    jwksTimeoutMs: readOption(
      integerBetween(1, 60_000),
      at("jwksTimeoutMs"),
      options.jwksTimeoutMs,
      OAUTH_DEFAULTS.jwksTimeoutMs,
    ),
    jwksCacheMaxAgeMs: readOption(
      integerBetween(0, 86_400_000),
      at("jwksCacheMaxAgeMs"),
      options.jwksCacheMaxAgeMs,
      OAUTH_DEFAULTS.jwksCacheMaxAgeMs,
    ),
    jwksCooldownMs: readOption(
      integerBetween(0, 86_400_000),
      at("jwksCooldownMs"),
      options.jwksCooldownMs,
      OAUTH_DEFAULTS.jwksCooldownMs,
    ),
    jwksRetryAfterFailureMs: readOption(
      integerBetween(0, 600_000),
      at("jwksRetryAfterFailureMs"),
      options.jwksRetryAfterFailureMs,
      OAUTH_DEFAULTS.jwksRetryAfterFailureMs,
    ),
    introspection,
  };
}
