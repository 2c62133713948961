/**
 * BEFORE: a stateless Streamable HTTP server written with the official SDK 1.x
 * (`@modelcontextprotocol/sdk`), as its stateless example does it: a new server and transport per
 * POST. It speaks 2025-11-25 only. docs/migrating.md puts it beside examples/migration/conduit-server.ts,
 * and test/migration/servers.test.ts runs the same client tour against both.
 *
 *   PORT=3000 node --import tsx examples/migration/sdk1-server.ts
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

function buildServer(): McpServer {
  const server = new McpServer({ name: "notes", version: "1.0.0" });
  server.registerTool(
    "word_count",
    { description: "Counts the words of a text", inputSchema: { text: z.string().max(100_000) } },
    async ({ text }) => ({
      content: [{ type: "text", text: String(text.split(/\s+/).filter(Boolean).length) }],
    }),
  );
  server.registerTool(
    "countdown",
    {
      description: "Counts down, one progress a second",
      inputSchema: { from: z.number().int().min(1).max(60) },
    },
    async ({ from }, extra) => {
      const progressToken = extra._meta?.progressToken;
      for (let left = from; left > 0; left--) {
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: {
              progressToken,
              progress: from - left,
              total: from,
              message: `${left} s left`,
            },
          });
        }
        await sleep(1_000, undefined, { signal: extra.signal });
      }
      return { content: [{ type: "text", text: "lift-off" }] };
    },
  );
  server.registerResource(
    "readme",
    "notes://readme",
    { mimeType: "text/markdown" },
    async (uri) => ({
      contents: [{ uri: uri.href, mimeType: "text/markdown", text: "# Notes" }],
    }),
  );
  server.registerPrompt(
    "summarise",
    { description: "Asks for a summary", argsSchema: { topic: z.string() } },
    ({ topic }) => ({
      messages: [
        { role: "user", content: { type: "text", text: `Summarise what we know about ${topic}.` } },
      ],
    }),
  );
  return server;
}

const http = createServer(async (req, res) => {
  if (req.method !== "POST" || req.url !== "/mcp") {
    res.writeHead(405).end();
    return;
  }
  const server = buildServer();
  const transport = new StreamableHTTPServerTransport({});
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
});

http.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
});
