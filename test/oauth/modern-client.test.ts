/**
 * The official 2.x client (`@modelcontextprotocol/client`, pinned to 2026-07-28) through the same
 * OAuth flow as test/oauth/sdk-client.test.ts: 401 → RFC 9728 metadata from the challenge →
 * authorization server metadata → registration → PKCE authorization with `resource` → token →
 * a 2026-07-28 `tools/call` that runs as the token's subject.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
  Client,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { z } from "zod";

import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { startIssuer, type TestIssuer } from "../helpers/oauth-issuer.js";

const REDIRECT = "http://127.0.0.1:1/callback";

class MemoryProvider implements OAuthClientProvider {
  authorizationUrl: URL | null = null;
  private info: Awaited<ReturnType<OAuthClientProvider["clientInformation"]>>;
  private saved: OAuthTokens | undefined;
  private verifier = "";

  get redirectUrl(): string {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "conduit-mcp modern test",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: NonNullable<typeof this.info>) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe("official 2.x client pinned to 2026-07-28: OAuth flow and a tools/call", () => {
  let idp: TestIssuer;
  let server: McpServer;
  let url: string;

  before(async () => {
    idp = await startIssuer();
    server = createMcpServer({
      tools: [
        defineTool({
          name: "whoami",
          input: z.object({}),
          handler: (_args, ctx) => `${ctx.principal?.id} in ${ctx.scope}`,
        }),
      ],
      auth: { oauth: { issuer: idp.issuer, jwksUrl: idp.jwksUrl, scopes: ["mcp"] } },
    });
    url = (await server.listen()).url;
  });
  after(async () => {
    await server.close();
    await idp.close();
  });

  test("discovers, authorizes, and calls as the token's subject", async () => {
    idp.authorizeAs("erin");
    const provider = new MemoryProvider();
    const newClient = () =>
      new Client(
        { name: "oauth-modern", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
    const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    await assert.rejects(newClient().connect(first), UnauthorizedError);
    const authorizeAt = provider.authorizationUrl;
    assert.ok(authorizeAt !== null, "sent to the authorization server");
    assert.equal(authorizeAt.origin, idp.issuer);
    assert.equal(authorizeAt.searchParams.get("resource"), url);
    assert.equal(authorizeAt.searchParams.get("scope"), "mcp");
    const redirect = await fetch(authorizeAt, { redirect: "manual" });
    const callback = new URL(redirect.headers.get("location") ?? "");
    await first.finishAuth(callback.searchParams);

    const client = newClient();
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }),
    );
    try {
      const result = await client.callTool({ name: "whoami", arguments: {} });
      assert.deepEqual(result.content, [{ type: "text", text: "erin in principal:erin" }]);
    } finally {
      await client.close();
    }
  });
});
