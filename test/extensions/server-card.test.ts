/**
 * The MCP Server Card (experimental, the current SEP-2127 draft: experimental-ext-server-card
 * schema.ts and docs/discovery.md) over a real listening server: served at `<endpoint>/server-card`
 * and `/.well-known/mcp/server-card.json` as application/mcp-server-card+json with CORS and
 * caching headers, generated from the server's identity and the protocol versions it serves
 * (what server/discover says); absent unless configured; a bad card is refused at construction.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { InvalidOptionError } from "../../src/errors.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";

describe("server card (experimental, SEP-2127 draft)", () => {
  let server: McpServer;
  let url: string;

  before(async () => {
    server = createMcpServer({
      name: "carded",
      version: "2.1.0",
      title: "Carded server",
      description: "A server with a card",
      websiteUrl: "https://example.com/carded",
      serverCard: {
        name: "com.example/carded",
        url: "https://mcp.example.com/mcp",
        repository: { url: "https://github.com/example/carded", source: "github" },
      },
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
  });
  after(() => server.close());

  test("served at <endpoint>/server-card and the well-known path, the same document", async () => {
    const reserved = await fetch(`${url}/server-card`, {
      headers: { accept: "application/mcp-server-card+json" },
    });
    assert.equal(reserved.status, 200);
    assert.equal(reserved.headers.get("content-type"), "application/mcp-server-card+json");
    assert.equal(reserved.headers.get("access-control-allow-origin"), "*");
    assert.match(reserved.headers.get("cache-control") ?? "", /max-age=3600/);
    const card = (await reserved.json()) as Record<string, unknown>;
    assert.deepEqual(card, {
      $schema: "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
      name: "com.example/carded",
      version: "2.1.0",
      description: "A server with a card",
      title: "Carded server",
      websiteUrl: "https://example.com/carded",
      repository: { url: "https://github.com/example/carded", source: "github" },
      remotes: [
        {
          type: "streamable-http",
          url: "https://mcp.example.com/mcp",
          supportedProtocolVersions: (
            card.remotes as Array<{ supportedProtocolVersions: string[] }>
          )[0]?.supportedProtocolVersions,
        },
      ],
    });
    // The versions are those server/discover publishes.
    const discover = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "server/discover",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "server/discover",
        params: {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      }),
    });
    const discovered = (await discover.json()) as { result: { supportedVersions: string[] } };
    assert.deepEqual(
      (card.remotes as Array<{ supportedProtocolVersions: string[] }>)[0]
        ?.supportedProtocolVersions,
      discovered.result.supportedVersions,
    );
    const wellKnown = await fetch(new URL("/.well-known/mcp/server-card.json", url));
    assert.equal(wellKnown.status, 200);
    assert.deepEqual(await wellKnown.json(), card);
    const head = await fetch(`${url}/server-card`, { method: "HEAD" });
    assert.equal(head.status, 200);
  });

  test("no card unless configured; a bad card is refused at construction", async () => {
    const plain = createMcpServer({ name: "plain" });
    const address = await plain.listen({ host: "127.0.0.1", port: 0 });
    try {
      assert.equal((await fetch(`${address.url}/server-card`)).status, 404);
      assert.equal(
        (await fetch(new URL("/.well-known/mcp/server-card.json", address.url))).status,
        404,
      );
    } finally {
      await plain.close();
    }
    assert.throws(
      () => createMcpServer({ serverCard: { name: "no-slash", description: "d" } }),
      InvalidOptionError,
    );
    assert.throws(
      () => createMcpServer({ serverCard: { name: "com.example/x" } }),
      InvalidOptionError,
      "a description is required (the server has none)",
    );
    assert.throws(
      () =>
        createMcpServer({
          serverCard: { name: "com.example/x", description: "d", url: "ftp://x" },
        }),
      InvalidOptionError,
    );
  });
});
