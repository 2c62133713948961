/**
 * A small but real OAuth 2.1 authorization server for tests, built on `jose` and node:http, on
 * 127.0.0.1: RFC 8414 metadata, `/authorize` (auto-approves, authorization code + PKCE S256),
 * `/token` (authorization_code, client_credentials; the RFC 8707 `resource` becomes `aud`),
 * `/register` (RFC 7591), `/jwks` (rotatable keys; can be taken down and brought back on the
 * same port) and `/introspect` (RFC 7662, for opaque tokens). Not a test file itself.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";

type Key = Awaited<ReturnType<typeof generateKeyPair>>;

/** One signing key. */
export interface IssuerKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: Key["privateKey"];
  readonly publicJwk: JWK;
}

/** What {@link TestIssuer.sign} accepts beyond the claims. */
export interface SignOptions {
  /** Sign with this key instead of the current one (e.g. a key the JWKS does not list). */
  readonly key?: IssuerKey;
  /** Override the header's `kid` (absent key: the signing key's). */
  readonly kid?: string;
  /** Seconds from now; default 300. Negative: already expired. */
  readonly expiresIn?: number;
  /** `nbf`, seconds from now. */
  readonly notBefore?: number;
}

/** A running test issuer. */
export interface TestIssuer {
  /** The issuer identifier, e.g. `http://127.0.0.1:PORT`. */
  readonly issuer: string;
  readonly jwksUrl: string;
  readonly port: number;
  /** The key tokens are signed with by default (the last one added). */
  readonly currentKey: IssuerKey;
  /** GETs of /jwks served so far. */
  readonly jwksHits: number;
  /** Token requests served so far. */
  readonly tokenRequests: number;
  /** Introspection requests served so far. */
  readonly introspections: number;
  /** Signs an access token: `iss` is this issuer unless the claims say otherwise. */
  sign(claims: Record<string, unknown>, options?: SignOptions): Promise<string>;
  /** Makes a new key (not published until {@link TestIssuer.publish}). */
  newKey(alg?: string): Promise<IssuerKey>;
  /** Publishes a key in the JWKS and makes it the current signing key. */
  publish(key: IssuerKey): void;
  /** An opaque token the introspection endpoint will describe with `answer`. */
  opaqueToken(answer: Record<string, unknown>): string;
  /** From now on the introspection endpoint answers `{ active: false }` for `token` (RFC 7009 revocation). */
  revoke(token: string): void;
  /** The subject and scopes `/authorize` grants (default "alice", the requested scopes). */
  authorizeAs(subject: string, scopes?: string): void;
  /** Pads every `/jwks` answer with this many bytes of junk (an oversized key set). */
  padJwks(bytes: number): void;
  /** While on, `/jwks` answers 500 (counted in {@link TestIssuer.jwksHits}). */
  failJwks(on: boolean): void;
  /** Stops listening (connections refused), keeping the port for {@link TestIssuer.start}. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Client credentials the introspection endpoint accepts. */
export const INTROSPECTION_CLIENT = {
  clientId: "conduit-rs",
  clientSecret: "rs-secret-0123456789",
};

/**
 * Starts an issuer on 127.0.0.1 (a free port).
 *
 * @example
 * ```ts
 * const idp = await startIssuer();
 * const token = await idp.sign({ sub: "alice", aud: "http://127.0.0.1:3000/mcp", scope: "mcp" });
 * ```
 */
export async function startIssuer(): Promise<TestIssuer> {
  const keys: IssuerKey[] = [];
  const codes = new Map<
    string,
    { challenge: string; redirectUri: string; resource?: string; scope?: string }
  >();
  const opaque = new Map<string, Record<string, unknown>>();
  let subject = "alice";
  let grantedScopes: string | undefined;
  let jwksHits = 0;
  let jwksBroken = false;
  let jwksPadding = 0;
  let tokenRequests = 0;
  let introspections = 0;
  let port = 0;
  let issuer = "";

  const newKey = async (alg = "RS256"): Promise<IssuerKey> => {
    const pair = await generateKeyPair(alg, { extractable: true });
    const kid = randomUUID();
    const publicJwk = { ...(await exportJWK(pair.publicKey)), kid, alg, use: "sig" };
    return { kid, alg, privateKey: pair.privateKey, publicJwk };
  };
  keys.push(await newKey());

  const sign = async (claims: Record<string, unknown>, options: SignOptions = {}) => {
    const key = options.key ?? (keys.at(-1) as IssuerKey);
    const now = Math.floor(Date.now() / 1000);
    const payload: Record<string, unknown> = {
      iss: issuer,
      iat: now,
      exp: now + (options.expiresIn ?? 300),
      jti: randomUUID(),
      ...claims,
    };
    if (options.notBefore !== undefined) payload.nbf = now + options.notBefore;
    return new SignJWT(payload)
      .setProtectedHeader({ alg: key.alg, kid: options.kid ?? key.kid, typ: "at+jwt" })
      .sign(key.privateKey);
  };

  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", issuer);
    const raw = req.method === "POST" ? await readText(req) : null;
    const body = raw === null ? null : new URLSearchParams(raw);
    const json = (status: number, value: unknown): void => {
      res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
      res.end(JSON.stringify(value));
    };
    switch (url.pathname) {
      case "/.well-known/oauth-authorization-server":
      case "/.well-known/openid-configuration":
        return json(200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          registration_endpoint: `${issuer}/register`,
          introspection_endpoint: `${issuer}/introspect`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ["code"],
          grant_types_supported: ["authorization_code", "client_credentials", "refresh_token"],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: [
            "none",
            "client_secret_basic",
            "client_secret_post",
          ],
        });
      case "/jwks":
        jwksHits++;
        if (jwksBroken) return json(500, { error: "server_error" });
        return json(200, {
          keys: keys.map((k) => k.publicJwk),
          ...(jwksPadding > 0 ? { padding: "x".repeat(jwksPadding) } : {}),
        });
      case "/register": {
        const metadata = JSON.parse(raw ?? "{}") as object;
        return json(201, {
          ...metadata,
          client_id: randomUUID(),
          token_endpoint_auth_method: "none",
        });
      }
      case "/authorize": {
        const redirectUri = url.searchParams.get("redirect_uri");
        const challenge = url.searchParams.get("code_challenge");
        if (
          redirectUri === null ||
          challenge === null ||
          url.searchParams.get("code_challenge_method") !== "S256"
        ) {
          return json(400, { error: "invalid_request" });
        }
        const code = randomBytes(16).toString("base64url");
        const entry: { challenge: string; redirectUri: string; resource?: string; scope?: string } =
          { challenge, redirectUri };
        const resource = url.searchParams.get("resource");
        if (resource !== null) entry.resource = resource;
        const scope = grantedScopes ?? url.searchParams.get("scope");
        if (scope !== null) entry.scope = scope;
        codes.set(code, entry);
        const back = new URL(redirectUri);
        back.searchParams.set("code", code);
        const state = url.searchParams.get("state");
        if (state !== null) back.searchParams.set("state", state);
        res.writeHead(302, { location: back.href });
        return void res.end();
      }
      case "/token": {
        tokenRequests++;
        if (body === null) return json(400, { error: "invalid_request" });
        if (body.get("grant_type") === "authorization_code") {
          const entry = codes.get(body.get("code") ?? "");
          codes.delete(body.get("code") ?? "");
          const verifier = body.get("code_verifier") ?? "";
          const expected = createHash("sha256").update(verifier).digest("base64url");
          if (
            entry === undefined ||
            entry.challenge !== expected ||
            entry.redirectUri !== body.get("redirect_uri")
          ) {
            return json(400, { error: "invalid_grant" });
          }
          const resource = body.get("resource") ?? entry.resource;
          const claims: Record<string, unknown> = {
            sub: subject,
            client_id: body.get("client_id"),
          };
          if (resource !== undefined && resource !== null) claims.aud = resource;
          if (entry.scope !== undefined) claims.scope = entry.scope;
          const access = await sign(claims);
          return json(200, {
            access_token: access,
            token_type: "Bearer",
            expires_in: 300,
            scope: entry.scope,
          });
        }
        return json(400, { error: "unsupported_grant_type" });
      }
      case "/introspect": {
        introspections++;
        const basic = `Basic ${Buffer.from(`${INTROSPECTION_CLIENT.clientId}:${INTROSPECTION_CLIENT.clientSecret}`).toString("base64")}`;
        if (req.headers.authorization !== basic) return json(401, { error: "invalid_client" });
        const answer = opaque.get(body?.get("token") ?? "");
        return json(200, answer ?? { active: false });
      }
      default:
        return json(404, { error: "not_found" });
    }
  };

  let server: Server = createServer((req, res) => void handler(req, res));
  const listen = (s: Server, on: number): Promise<void> =>
    new Promise((resolve, reject) => {
      s.once("error", reject);
      s.listen(on, "127.0.0.1", () => {
        s.removeListener("error", reject);
        resolve();
      });
    });
  await listen(server, 0);
  port = (server.address() as AddressInfo).port;
  issuer = `http://127.0.0.1:${port}`;
  let running = true;
  const stop = async (): Promise<void> => {
    if (!running) return;
    running = false;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  };

  return {
    get issuer() {
      return issuer;
    },
    get jwksUrl() {
      return `${issuer}/jwks`;
    },
    port,
    get currentKey() {
      return keys.at(-1) as IssuerKey;
    },
    get jwksHits() {
      return jwksHits;
    },
    get tokenRequests() {
      return tokenRequests;
    },
    get introspections() {
      return introspections;
    },
    sign,
    newKey,
    publish(key) {
      keys.push(key);
    },
    opaqueToken(answer) {
      const token = randomBytes(24).toString("base64url");
      opaque.set(token, answer);
      return token;
    },
    revoke(token) {
      opaque.set(token, { active: false });
    },
    authorizeAs(sub, scopes) {
      subject = sub;
      grantedScopes = scopes;
    },
    padJwks(bytes) {
      jwksPadding = bytes;
    },
    failJwks(on) {
      jwksBroken = on;
    },
    stop,
    async start() {
      if (running) return;
      server = createServer((req, res) => void handler(req, res));
      await listen(server, port);
      running = true;
    },
    close: stop,
  };
}

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
