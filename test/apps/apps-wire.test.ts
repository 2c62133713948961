/**
 * MCP Apps on the wire, over the demo server `conduit-mcp serve` builds (its options, listening on
 * 127.0.0.1), with both official clients and raw requests: the `ui://` view reads with the MCP App
 * MIME type and its `_meta.ui`; `tools/list` shows the tool's `_meta.ui`; the extension
 * `io.modelcontextprotocol/ui` is declared in `server/discover` (2026-07-28) and in the
 * `initialize` result (2025-11-25) to a client that declared it with the MCP App MIME type, and
 * to no other (MCP Apps specification 2026-01-26, "Client<>Server Capability Negotiation";
 * SEP-2133, "Negotiation").
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { parseCli } from "../../src/cli/args.js";
import { serveOptions } from "../../src/cli/serve.js";
import { InvalidOptionError } from "../../src/errors.js";
import {
  APPS_EXTENSION,
  defineExtension,
  MCP_APP_MIME_TYPE,
  supportsMcpApps,
} from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { rpc } from "../server/fixtures.js";

const V2026 = "2026-07-28";
const UI_DECLARED = { [APPS_EXTENSION]: { mimeTypes: [MCP_APP_MIME_TYPE] } };
const DICE_META = { ui: { prefersBorder: true } };
const ROLL_META = { ui: { resourceUri: "ui://demo/dice.html", visibility: ["model", "app"] } };

type Capabilities = { extensions?: Record<string, unknown> } & Record<string, unknown>;

describe("MCP Apps over HTTP (the demo server, both official clients)", () => {
  let server: McpServer;
  let url: string;

  before(async () => {
    const parsed = parseCli(["serve"]);
    assert.ok(parsed.ok && parsed.command.kind === "serve");
    server = createMcpServer({ ...serveOptions(parsed.command), sessions: true });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
  });

  after(async () => {
    await server.close();
  });

  async function modern(extensions: Record<string, unknown> | null): Promise<Client> {
    const client = new Client(
      { name: "apps-modern", version: "1.0.0" },
      {
        versionNegotiation: { mode: { pin: V2026 } },
        capabilities: extensions === null ? {} : { extensions: extensions as never },
      },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    return client;
  }

  async function legacy(extensions: Record<string, unknown> | null): Promise<LegacyClient> {
    const client = new LegacyClient(
      { name: "apps-legacy", version: "1.0.0" },
      { capabilities: extensions === null ? {} : ({ extensions } as never) },
    );
    await client.connect(new LegacyTransport(new URL(url)));
    return client;
  }

  /** The same surface checks for both clients (their method names and shapes are the same). */
  async function exerciseApp(client: Client | LegacyClient): Promise<void> {
    const c = client as LegacyClient;
    const { resources } = await c.listResources();
    const entry = resources.find((r) => r.uri === "ui://demo/dice.html");
    assert.ok(entry, "the view is listed");
    assert.equal(entry.mimeType, MCP_APP_MIME_TYPE);
    assert.deepEqual(entry._meta, DICE_META);

    const read = await c.readResource({ uri: "ui://demo/dice.html" });
    assert.equal(read.contents.length, 1);
    const contents = read.contents[0] as {
      uri: string;
      mimeType?: string;
      text?: string;
      _meta?: unknown;
    };
    assert.equal(contents.uri, "ui://demo/dice.html");
    assert.equal(contents.mimeType, "text/html;profile=mcp-app");
    assert.match(contents.text ?? "", /^<!DOCTYPE html>/);
    assert.match(contents.text ?? "", /ui\/initialize/);
    assert.deepEqual(contents._meta, DICE_META);

    const { tools } = await c.listTools();
    const roll = tools.find((t) => t.name === "roll_dice");
    assert.ok(roll, "roll_dice is listed");
    assert.deepEqual(roll._meta, ROLL_META);
    // Text for every client, structured data for the view.
    const result = (await c.callTool({ name: "roll_dice", arguments: { count: 4, sides: 8 } })) as {
      content: { type: string; text: string }[];
      structuredContent: { sides: number; rolls: number[]; total: number };
    };
    assert.match(result.content[0]?.text ?? "", /^Rolled 4d8: \d+, \d+, \d+, \d+ \(total \d+\)$/);
    assert.equal(result.structuredContent.rolls.length, 4);
    assert.ok(result.structuredContent.rolls.every((r) => r >= 1 && r <= 8));
  }

  test("2026-07-28 client declaring the UI extension: server/discover declares it; the view reads as an MCP App", async () => {
    const client = await modern(UI_DECLARED);
    try {
      const capabilities = client.getServerCapabilities() as Capabilities;
      assert.deepEqual(capabilities.extensions?.[APPS_EXTENSION], {});
      await exerciseApp(client);
    } finally {
      await client.close();
    }
  });

  test("2026-07-28 client without it: server/discover does not declare it; the app is still served", async () => {
    const client = await modern({ "com.example/other": {} });
    try {
      const capabilities = client.getServerCapabilities() as Capabilities;
      assert.equal(capabilities.extensions?.[APPS_EXTENSION], undefined);
      // The built-in tasks extension is still declared: only the UI one is negotiated.
      assert.deepEqual(capabilities.extensions?.["io.modelcontextprotocol/tasks"], {});
      await exerciseApp(client);
    } finally {
      await client.close();
    }
  });

  test("2025-11-25 client declaring the UI extension: the initialize result declares it", async () => {
    const client = await legacy(UI_DECLARED);
    try {
      const capabilities = client.getServerCapabilities() as Capabilities;
      assert.deepEqual(capabilities.extensions?.[APPS_EXTENSION], {});
      await exerciseApp(client);
    } finally {
      await client.close();
    }
  });

  test("2025-11-25 client without it, or with another MIME type: not declared", async () => {
    for (const extensions of [
      null,
      { [APPS_EXTENSION]: { mimeTypes: ["text/html"] } },
      { [APPS_EXTENSION]: {} },
    ]) {
      const client = await legacy(extensions);
      try {
        const capabilities = client.getServerCapabilities() as Capabilities;
        assert.equal(
          capabilities.extensions?.[APPS_EXTENSION],
          undefined,
          JSON.stringify(extensions),
        );
        assert.ok(capabilities.resources !== undefined && capabilities.tools !== undefined);
      } finally {
        await client.close();
      }
    }
  });

  test("raw server/discover: declared per request, hostile declarations refused quietly, still cached public", async () => {
    async function discover(clientCapabilities: unknown): Promise<Record<string, unknown>> {
      const answer = await rpc(
        url,
        {
          jsonrpc: "2.0",
          id: 1,
          method: "server/discover",
          params: {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": V2026,
              "io.modelcontextprotocol/clientCapabilities": clientCapabilities,
            },
          },
        },
        { "mcp-protocol-version": V2026, "mcp-method": "server/discover" },
      );
      assert.equal(answer.status, 200, answer.text);
      return (answer.json as { result: Record<string, unknown> }).result;
    }
    const declared = await discover({ extensions: UI_DECLARED });
    assert.deepEqual((declared.capabilities as Capabilities).extensions?.[APPS_EXTENSION], {});
    assert.equal(declared.cacheScope, "public");
    const bare = await discover({});
    assert.equal((bare.capabilities as Capabilities).extensions?.[APPS_EXTENSION], undefined);
    // Apart from the negotiated extension, the two results are the same.
    const strip = (r: Record<string, unknown>) => {
      const extensions = { ...(r.capabilities as Capabilities).extensions };
      delete extensions[APPS_EXTENSION];
      return { ...r, capabilities: { ...(r.capabilities as Capabilities), extensions } };
    };
    assert.deepEqual(strip(declared), strip(bare));
    for (const hostile of [
      { extensions: { [APPS_EXTENSION]: "text/html;profile=mcp-app" } },
      { extensions: { [APPS_EXTENSION]: { mimeTypes: "text/html;profile=mcp-app" } } },
      { extensions: { [APPS_EXTENSION]: { mimeTypes: [{ toString: 1 }, null] } } },
      { extensions: [UI_DECLARED] },
    ]) {
      const result = await discover(hostile);
      assert.equal(
        (result.capabilities as Capabilities).extensions?.[APPS_EXTENSION],
        undefined,
        JSON.stringify(hostile),
      );
    }
  });

  test("declareWhen is a function; a negotiated extension whose check throws is not declared, the server answers", async () => {
    assert.equal(supportsMcpApps(null), false);
    assert.throws(
      () => defineExtension({ id: "com.example/x", declareWhen: true as never }),
      (e: unknown) =>
        e instanceof InvalidOptionError && e.option === "extension com.example/x: declareWhen",
    );
    const fragile = defineExtension({
      id: "com.example/fragile",
      settings: { v: 1 },
      declareWhen: (settings) => {
        if (settings?.boom === true) throw new Error("boom");
        return settings !== null;
      },
    });
    const other = createMcpServer({ extensions: [fragile] });
    const { url: otherUrl } = await other.listen({ host: "127.0.0.1", port: 0 });
    try {
      async function declaredFor(settings: unknown): Promise<unknown> {
        const answer = await rpc(
          otherUrl,
          {
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: {
              protocolVersion: "2025-11-25",
              capabilities: { extensions: { "com.example/fragile": settings } },
              clientInfo: { name: "raw", version: "1" },
            },
          },
          { "mcp-protocol-version": "2025-11-25" },
        );
        assert.equal(answer.status, 200, answer.text);
        const result = (answer.json as { result: { capabilities: Capabilities } }).result;
        return result.capabilities.extensions?.["com.example/fragile"];
      }
      assert.deepEqual(await declaredFor({}), { v: 1 });
      assert.equal(await declaredFor({ boom: true }), undefined);
      assert.equal(await declaredFor(7), undefined);
    } finally {
      await other.close();
    }
  });
});
