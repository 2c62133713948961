/**
 * BEFORE: the same server written with the official SDK 2.x (`@modelcontextprotocol/server`,
 * hosted on `node:http` by `@modelcontextprotocol/node`): `createMcpHandler` builds a server per
 * request from the factory and answers both 2025-11-25 (its stateless fallback) and 2026-07-28.
 * docs/migrating.md puts it beside examples/migration/conduit-server.ts, and
 * test/migration/servers.test.ts runs the same client tour against both.
 *
 *   PORT=3000 node --import tsx examples/migration/sdk2-server.ts
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

import { toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "notes", version: "1.0.0" });
  server.registerTool(
    "word_count",
    {
      description: "Counts the words of a text",
      inputSchema: z.object({ text: z.string().max(100_000) }),
    },
    async ({ text }) => ({
      content: [{ type: "text", text: String(text.split(/\s+/).filter(Boolean).length) }],
    }),
  );
  server.registerTool(
    "countdown",
    {
      description: "Counts down, one progress a second",
      inputSchema: z.object({ from: z.number().int().min(1).max(60) }),
    },
    async ({ from }, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      for (let left = from; left > 0; left--) {
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({
            method: "notifications/progress",
            params: {
              progressToken,
              progress: from - left,
              total: from,
              message: `${left} s left`,
            },
          });
        }
        await sleep(1_000, undefined, { signal: ctx.mcpReq.signal });
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
    { description: "Asks for a summary", argsSchema: z.object({ topic: z.string() }) },
    ({ topic }) => ({
      messages: [
        { role: "user", content: { type: "text", text: `Summarise what we know about ${topic}.` } },
      ],
    }),
  );
  return server;
});

const nodeHandler = toNodeHandler(handler);
// The adapter's request type declares `method: string`, which Node's `IncomingMessage` (`string |
// undefined`) does not satisfy under `exactOptionalPropertyTypes`; at run time they are the same.
const http = createServer(
  (req, res) => void nodeHandler(req as Parameters<typeof nodeHandler>[0], res),
);
http.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
});
