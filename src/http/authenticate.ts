/**
 * Who is calling: static bearer tokens, an OAuth 2.1 resource server (`oauth`: JWT or
 * introspected access tokens, src/identity/oauth/), and/or a `verify(req)` hook, tried in that
 * order. Static tokens map a secret to a principal id; the presented token is hashed with
 * SHA-256 and looked up by its digest, so the comparison never depends on how many leading
 * characters of a secret the client guessed.
 *
 * The credentials are read by the rules of RFC 6750 §2 (one `Authorization: Bearer` header;
 * several headers, or a token in the query string, are a malformed request: 400), and every
 * refusal carries its `WWW-Authenticate` challenge (RFC 6750 §3, RFC 9728 §5.1).
 */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";

import { InvalidOptionError } from "../errors.js";
import { createPrincipal, type Principal } from "../identity/index.js";
import {
  type AuthDecision,
  bearerChallenge,
  createResourceServer,
  type OAuthOptions,
  presentedCredentials,
  type ResourceServer,
} from "../identity/oauth/index.js";
import type { RequestInput } from "./transport.js";

/** The `auth` option. */
export interface AuthOptions {
  /**
   * Bearer secret → principal id. Each secret must be at least 16 bytes (UTF-8): a short secret
   * is refused at construction, since it can be guessed.
   */
  readonly tokens?: Readonly<Record<string, string>>;
  /** Any other scheme: resolve a principal, or null to refuse. */
  readonly verify?: (req: IncomingMessage) => Promise<Principal | null> | Principal | null;
  /** OAuth 2.1 access tokens (JWT and/or introspection), see docs/auth.md. */
  readonly oauth?: OAuthOptions;
}

/** What the authenticator reads of a request. */
export type AuthRequest = Pick<RequestInput, "headersDistinct" | "native">;

/**
 * Judges a request's credentials: its principal, or the refusal to send (status, challenge).
 * Never rejects.
 */
export interface Authenticator {
  (request: AuthRequest): Promise<AuthDecision>;
  /** The OAuth resource server, when `auth.oauth` is configured. */
  readonly resourceServer: ResourceServer | null;
}

/** Shortest static secret accepted, in UTF-8 bytes. */
export const MIN_SECRET_BYTES = 16;
/** Longer static secrets are refused at construction (a header could not carry them). */
const MAX_SECRET_LENGTH = 4096;

function digest(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("base64");
}

/**
 * Builds the authenticator for an `auth` option, or null when auth is off. Bad options throw
 * InvalidOptionError (a secret is never echoed in the message).
 *
 * @example
 * ```ts
 * const authenticate = createAuthenticator({ tokens: { "s3cret-a-long-one": "alice" } });
 * const decision = await authenticate?.(input); // decision.ok && decision.principal.id === "alice"
 * ```
 */
export function createAuthenticator(auth: AuthOptions | undefined): Authenticator | null {
  if (auth === undefined) return null;
  if (typeof auth !== "object" || auth === null || Array.isArray(auth)) {
    throw new InvalidOptionError("auth", "an object with tokens, oauth and/or verify", auth);
  }
  const { tokens, verify, oauth } = auth;
  if (verify !== undefined && typeof verify !== "function") {
    throw new InvalidOptionError("auth.verify", "a function", verify);
  }
  const byDigest = staticTokens(tokens);
  const resourceServer = oauth === undefined ? null : createResourceServer(oauth);
  if (byDigest.size === 0 && verify === undefined && resourceServer === null) {
    throw new InvalidOptionError("auth", "at least one token, oauth or a verify function", auth);
  }

  const unauthorized = (): AuthDecision =>
    resourceServer?.unauthorized() ?? {
      ok: false,
      status: 401,
      challenge: "Bearer",
      message: "Unauthorized",
    };

  const fromHook = async (request: AuthRequest): Promise<Principal | null> => {
    if (verify === undefined) return null;
    try {
      const principal = await verify(request.native as IncomingMessage);
      return typeof principal === "object" && principal !== null ? principal : null;
    } catch {
      return null; // a failing verifier refuses; its error is not sent anywhere
    }
  };

  const authenticate = async (request: AuthRequest): Promise<AuthDecision> => {
    const credentials = presentedCredentials(
      request.headersDistinct.authorization,
      requestTarget(request.native),
    );
    switch (credentials.kind) {
      case "malformed":
        return (
          resourceServer?.malformed(credentials.description) ?? {
            ok: false,
            status: 400,
            challenge: bearerChallenge({
              error: "invalid_request",
              description: credentials.description,
            }),
            message: `Bad request: ${credentials.description}`,
          }
        );
      case "oversized":
        return (
          resourceServer?.invalidToken("The access token is too large") ?? {
            ok: false,
            status: 401,
            challenge: bearerChallenge({
              error: "invalid_token",
              description: "The access token is too large",
            }),
            message: "Unauthorized: invalid access token",
          }
        );
      case "token": {
        const known = byDigest.get(digest(credentials.token));
        if (known !== undefined) return { ok: true, principal: known };
        if (resourceServer !== null) {
          const decision = await resourceServer.checkToken(credentials.token);
          // A hook may still accept a token the resource server does not know (its own
          // scheme); an outage or a scope refusal stands.
          if (decision.ok || decision.status !== 401) return decision;
          const hooked = await fromHook(request);
          return hooked === null ? decision : { ok: true, principal: hooked };
        }
        break;
      }
      default:
        break;
    }
    const hooked = await fromHook(request);
    return hooked === null ? unauthorized() : { ok: true, principal: hooked };
  };
  return Object.assign(authenticate, { resourceServer });
}

/** `auth.tokens`, checked: digest → principal. */
function staticTokens(tokens: AuthOptions["tokens"]): Map<string, Principal> {
  const byDigest = new Map<string, Principal>();
  if (tokens === undefined) return byDigest;
  if (typeof tokens !== "object" || tokens === null || Array.isArray(tokens)) {
    throw new InvalidOptionError(
      "auth.tokens",
      "an object mapping secrets to principal ids",
      tokens,
    );
  }
  for (const [secret, id] of Object.entries(tokens)) {
    const bytes = Buffer.byteLength(secret, "utf8");
    if (bytes < MIN_SECRET_BYTES || secret.length > MAX_SECRET_LENGTH) {
      // The length only: the secret itself never goes into a message or a log.
      throw new InvalidOptionError(
        "auth.tokens",
        `secrets of ${MIN_SECRET_BYTES}-${MAX_SECRET_LENGTH} bytes (a short secret can be guessed)`,
        `a secret of ${bytes} bytes for ${JSON.stringify(String(id).slice(0, 64))}`,
      );
    }
    if (!/^[\x21-\x7e]+$/.test(secret)) {
      throw new InvalidOptionError(
        "auth.tokens",
        "secrets of visible ASCII without spaces (an Authorization header carries them)",
        `a secret for ${JSON.stringify(String(id).slice(0, 64))}`,
      );
    }
    if (typeof id !== "string" || id.length === 0) {
      throw new InvalidOptionError("auth.tokens[…]", "a non-empty principal id string", id);
    }
    byDigest.set(digest(secret), createPrincipal({ id }));
  }
  return byDigest;
}

/** The request target (path and query) of the transport's own request, when it has one. */
function requestTarget(native: unknown): string | undefined {
  const url = (native as { url?: unknown } | null)?.url;
  return typeof url === "string" ? url : undefined;
}

/**
 * The credentials of an `Authorization: Bearer …` header, or null.
 *
 * @example
 * ```ts
 * bearerToken("Bearer abc"); // "abc"
 * ```
 */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  const credentials = presentedCredentials([header], undefined);
  return credentials.kind === "token" ? credentials.token : null;
}
