/**
 * The MCP Server Card (experimental): a static JSON document describing the server before any
 * connection — identity, remote endpoint and protocol versions — following the current SEP-2127
 * draft (https://github.com/modelcontextprotocol/modelcontextprotocol/pull/2127, schema and
 * discovery in https://github.com/modelcontextprotocol/experimental-ext-server-card: `schema.ts`,
 * `docs/discovery.md`). The draft is not final and may change; the card is opt-in.
 *
 * The draft's card deliberately omits primitive listings (tools, resources, prompts: "those
 * remain subject to runtime listing"), so this one carries none either. It is served at the
 * draft's reserved location, `GET <streamable-http-url>/server-card`, and at
 * `/.well-known/mcp/server-card.json` (a card "MAY be hosted at any unreserved URI"), as
 * `application/mcp-server-card+json`, with the CORS and caching headers the draft's discovery
 * section gives.
 */
import { InvalidOptionError } from "../errors.js";
import type { ResponseHeaders } from "./transport.js";

/** The card's media type (draft, "MCP Server Cards"). */
export const SERVER_CARD_MEDIA_TYPE = "application/mcp-server-card+json";
/** The draft's schema URI (schema.ts, `$schema`). */
export const SERVER_CARD_SCHEMA =
  "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
/** Where the card is also served, besides `<endpoint>/server-card`. */
export const WELL_KNOWN_SERVER_CARD = "/.well-known/mcp/server-card.json";

/** What `createMcpServer({ serverCard })` takes. */
export interface ServerCardOptions {
  /** Reverse-DNS name with exactly one `/` (`com.example/weather`), 3–200 characters. */
  readonly name: string;
  /** 1–100 characters. Default: the server's `description`. */
  readonly description?: string | undefined;
  /**
   * The public URL of the endpoint (what clients connect to, behind any proxy): published as the
   * card's one `streamable-http` remote. Default none (no `remotes`).
   */
  readonly url?: string | undefined;
  /** Source repository: `{ url, source }` (e.g. `source: "github"`), optional `subfolder`. */
  readonly repository?:
    | { readonly url: string; readonly source: string; readonly subfolder?: string }
    | undefined;
}

/** What of the server the card publishes. */
export interface ServerCardIdentity {
  readonly version: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  readonly websiteUrl?: string | undefined;
  readonly icons?: readonly unknown[] | undefined;
  readonly supportedProtocolVersions: readonly string[];
}

const NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;

/**
 * The card's JSON text, checked at construction (throws `InvalidOptionError`).
 *
 * @example
 * ```ts
 * serverCardJson({ name: "com.example/demo", description: "Demo" },
 *   { version: "1.0.0", supportedProtocolVersions: ["2025-11-25", "2026-07-28"] });
 * ```
 */
export function serverCardJson(card: ServerCardOptions, identity: ServerCardIdentity): string {
  if (typeof card !== "object" || card === null) {
    throw new InvalidOptionError("serverCard", "an object { name, description?, url? }", card);
  }
  const { name, url, repository } = card;
  if (typeof name !== "string" || name.length < 3 || name.length > 200 || !NAME.test(name)) {
    throw new InvalidOptionError(
      "serverCard.name",
      "a reverse-DNS name like com.example/server",
      name,
    );
  }
  const description = card.description ?? identity.description;
  if (typeof description !== "string" || description.length < 1 || description.length > 100) {
    throw new InvalidOptionError(
      "serverCard.description",
      "1-100 characters (or a server description that fits)",
      description,
    );
  }
  const document: Record<string, unknown> = {
    $schema: SERVER_CARD_SCHEMA,
    name,
    version: identity.version,
    description,
  };
  if (identity.title !== undefined) document.title = identity.title.slice(0, 100);
  if (identity.websiteUrl !== undefined) document.websiteUrl = identity.websiteUrl;
  if (repository !== undefined) {
    if (
      typeof repository?.url !== "string" ||
      !isHttpUrl(repository.url) ||
      typeof repository.source !== "string"
    ) {
      throw new InvalidOptionError(
        "serverCard.repository",
        "{ url: an http(s) URL, source }",
        repository,
      );
    }
    document.repository = { ...repository };
  }
  if (identity.icons !== undefined) document.icons = identity.icons;
  if (url !== undefined) {
    if (typeof url !== "string" || !isHttpUrl(url)) {
      throw new InvalidOptionError("serverCard.url", "the endpoint's public http(s) URL", url);
    }
    document.remotes = [
      {
        type: "streamable-http",
        url,
        supportedProtocolVersions: [...identity.supportedProtocolVersions],
      },
    ];
  }
  return JSON.stringify(document);
}

function isHttpUrl(value: string): boolean {
  return /^https?:\/\//.test(value) && URL.canParse(value);
}

/**
 * The card's headers besides its type and length: public and read-only, so any origin may read it
 * (draft discovery, "CORS Requirements"); cacheable for an hour ("Caching").
 */
export const SERVER_CARD_HEADERS: ResponseHeaders = Object.freeze({
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET",
  "access-control-allow-headers": "Content-Type",
  "cache-control": "public, max-age=3600",
});
