/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728): the document that tells an MCP client which
 * authorization servers issue tokens for this server and which scopes to ask for. MCP requires
 * it (2025-11-25 "Authorization Server Location", https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization#authorization-server-location;
 * 2026-07-28 "Authorization Server Discovery"). Its URL is the resource identifier with
 * `/.well-known/oauth-protected-resource` inserted between the host and the path (RFC 9728 §3.1).
 */
import { InvalidOptionError } from "../../errors.js";
import { serviceUrl } from "./service-url.js";

/** The well-known path segment of RFC 9728 §3. */
export const METADATA_PREFIX = "/.well-known/oauth-protected-resource";

/** The fields of the document (RFC 9728 §2); absent ones are left out. */
export interface ProtectedResourceMetadata {
  readonly resource: string;
  readonly authorization_servers: readonly string[];
  readonly scopes_supported?: readonly string[];
  readonly bearer_methods_supported: readonly string[];
  readonly resource_name?: string;
}

/**
 * Checks a resource identifier (RFC 9728 §2 `resource`, RFC 8707 §2): an absolute `https:` URL
 * (plain `http:` only on loopback) without query or fragment. Returns it as given (the form a
 * client compares), else throws {@link InvalidOptionError}.
 *
 * @example
 * ```ts
 * canonicalResource("auth.oauth.resource", "https://mcp.example.com/mcp"); // "https://mcp.example.com/mcp"
 * canonicalResource("auth.oauth.resource", "https://mcp.example.com/mcp#x"); // throws
 * ```
 */
export function canonicalResource(option: string, value: unknown): string {
  const url = serviceUrl(option, value);
  if (url.search !== "" || (value as string).includes("?")) {
    throw new InvalidOptionError(option, "a URL without a query", value);
  }
  return value as string;
}

/**
 * The identifiers a token's audience may name for this resource: the resource as configured,
 * and its normalised `URL.href` when that differs (`https://mcp.example.com` and
 * `https://mcp.example.com/` name the same origin-wide resource).
 *
 * @example
 * ```ts
 * resourceAudiences("https://mcp.example.com"); // ["https://mcp.example.com", "https://mcp.example.com/"]
 * ```
 */
export function resourceAudiences(resource: string): string[] {
  const href = new URL(resource).href;
  return href === resource ? [resource] : [resource, href];
}

/**
 * The metadata URL of a resource (RFC 9728 §3.1): `https://mcp.example.com/mcp` →
 * `https://mcp.example.com/.well-known/oauth-protected-resource/mcp`.
 *
 * @example
 * ```ts
 * metadataUrl("https://mcp.example.com/mcp"); // "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
 * ```
 */
export function metadataUrl(resource: string): string {
  const url = new URL(resource);
  return `${url.origin}${metadataPath(url.pathname)}`;
}

/**
 * The metadata path for a resource path: the prefix, then the path unless it is `/`.
 *
 * @example
 * ```ts
 * metadataPath("/mcp"); // "/.well-known/oauth-protected-resource/mcp"
 * metadataPath("/"); // "/.well-known/oauth-protected-resource"
 * ```
 */
export function metadataPath(resourcePath: string): string {
  const path = resourcePath === "/" ? "" : resourcePath.replace(/\/$/, "");
  return `${METADATA_PREFIX}${path}`;
}
