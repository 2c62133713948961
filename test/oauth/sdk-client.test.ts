/**
 * The official MCP TypeScript SDK 1.x client's OAuth flow, end to end, against conduit-mcp and a
 * real local authorization server (test/helpers/oauth-issuer.ts): the first request gets 401, the
 * client follows the challenge's `resource_metadata` (RFC 9728), reads the authorization
 * server's metadata (RFC 8414), registers (RFC 7591), authorizes with PKCE and the `resource`
 * parameter (RFC 8707), exchanges the code for a token whose audience is this server, and its
 * `tools/call` succeeds as the token's subject. Then a step-up: a tool needing another scope
 * gets 403 `insufficient_scope`.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { z } from "zod";

import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { startIssuer, type TestIssuer } from "../helpers/oauth-issuer.js";

const REDIRECT = "http://127.0.0.1:1/callback";

/** An in-memory OAuth client: it "opens the browser" by remembering the authorization URL. */
class MemoryProvider implements OAuthClientProvider {
  authorizationUrl: URL | null = null;
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier = "";

  get redirectUrl(): string {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "conduit-mcp test",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
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

/** What the user's browser does: follows the authorization URL to the redirect, returns the code. */
async function approve(url: URL): Promise<string> {
  const response = await fetch(url, { redirect: "manual" });
  assert.equal(response.status, 302);
  const code = new URL(response.headers.get("location") ?? "").searchParams.get("code");
  assert.ok(code !== null, "an authorization code");
  return code;
}

describe("official SDK 1.x client: OAuth discovery, authorization and a tools/call", () => {
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
        defineTool({
          name: "deploy",
          scopes: ["deploy"],
          input: z.object({}),
          handler: () => "deployed",
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

  test("401 → resource metadata → AS metadata → register → authorize → token → tools/call", async () => {
    idp.authorizeAs("carol");
    const seen: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const target = new URL(input instanceof Request ? input.url : String(input));
      seen.push(`${init?.method ?? "GET"} ${target.pathname}`);
      return fetch(input, init);
    };
    const provider = new MemoryProvider();
    const first = new StreamableHTTPClientTransport(new URL(url), {
      authProvider: provider,
      fetch: recording,
    });
    const client = new Client({ name: "oauth-e2e", version: "1.0.0" });
    await assert.rejects(client.connect(first), UnauthorizedError);
    assert.ok(provider.authorizationUrl !== null, "the client was sent to authorize");
    const authorizeAt = provider.authorizationUrl;
    assert.equal(authorizeAt.origin, idp.issuer);
    assert.equal(authorizeAt.searchParams.get("resource"), url, "RFC 8707 resource = this server");
    assert.equal(authorizeAt.searchParams.get("scope"), "mcp", "scope from the 401 challenge");
    assert.equal(authorizeAt.searchParams.get("code_challenge_method"), "S256");
    // Discovery went through the challenge's resource_metadata, then the AS metadata.
    const metadataIndex = seen.indexOf("GET /.well-known/oauth-protected-resource/mcp");
    const asIndex = seen.findIndex((line) =>
      line.startsWith("GET /.well-known/oauth-authorization-server"),
    );
    assert.ok(seen[0]?.startsWith("POST /mcp"), seen.join(", "));
    assert.ok(metadataIndex > 0 && asIndex > metadataIndex, seen.join(", "));

    await first.finishAuth(await approve(authorizeAt));
    assert.ok(provider.tokens()?.access_token, "a token was obtained");

    const transport = new StreamableHTTPClientTransport(new URL(url), {
      authProvider: provider,
      fetch: recording,
    });
    const connected = new Client({ name: "oauth-e2e", version: "1.0.0" });
    await connected.connect(transport);
    try {
      const result = await connected.callTool({ name: "whoami", arguments: {} });
      assert.deepEqual(result.content, [{ type: "text", text: "carol in principal:carol" }]);
      const { tools } = await connected.listTools();
      assert.deepEqual(
        tools.map((tool) => tool.name),
        ["whoami"],
        "deploy is hidden from a token without its scope",
      );
    } finally {
      await connected.close();
    }
  });

  test("a token lacking a tool's scope: the SDK sees 403 insufficient_scope naming the metadata", async () => {
    const token = await idp.sign({ sub: "dave", aud: url, scope: "mcp" });
    const client = new Client({ name: "oauth-e2e", version: "1.0.0" });
    let challenge = "";
    const watching = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (response.status === 403) challenge = response.headers.get("www-authenticate") ?? "";
        return response;
      },
    });
    await client.connect(watching);
    try {
      await assert.rejects(client.callTool({ name: "deploy", arguments: {} }));
      assert.match(challenge, /error="insufficient_scope"/);
      assert.match(challenge, /scope="mcp deploy"/);
      assert.match(
        challenge,
        /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
      );
    } finally {
      await client.close();
    }
  });
});
