/**
 * Benchmark target (b): the official SDK 1.x's documented stateless Streamable HTTP server
 * (sdk1.32.2 `examples/server/simpleStatelessStreamableHttp.js`): a new
 * `McpServer` and a new `StreamableHTTPServerTransport({ sessionIdGenerator: undefined })` per POST,
 * closed when the response closes, here on plain `node:http` instead of express (the transport reads
 * the body itself when none is passed). Same `echo` tool, validated with zod like conduit's, and the
 * same resource (bench/lib/bench-content.ts). It speaks 2025-11-25 only.
 * Run as a child process by bench/lib/http-bench.ts: `node --import tsx bench/lib/sdk-server.ts`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  StreamableHTTPServerTransport,
  type StreamableHTTPServerTransportOptions,
} from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

import { BENCH_RESOURCE_MIME, BENCH_RESOURCE_URI, benchReadResult } from "./bench-content.js";
import { announce } from "./listening.js";

/** A fresh server per request, as the SDK's stateless example does. */
function buildServer(): McpServer {
  const server = new McpServer({ name: "sdk-bench", version: "1.0.0" });
  server.registerTool(
    "echo",
    // Same bound as the CLI's echo (MAX_ECHO_CHARS), so both servers validate the same thing.
    { description: "Returns its text argument", inputSchema: { text: z.string().max(100_000) } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerResource(
    "readme",
    BENCH_RESOURCE_URI,
    { mimeType: BENCH_RESOURCE_MIME },
    async (uri) => benchReadResult(uri.href),
  );
  return server;
}

const httpServer = createServer(async (req, res) => {
  if (req.method !== "POST" || req.url !== "/mcp") {
    // The example answers GET and DELETE with 405: a stateless server offers no standalone stream.
    res.writeHead(405).end();
    return;
  }
  const server = buildServer();
  try {
    // The docs spell it `{ sessionIdGenerator: undefined }`; the SDK reads the key as is, so an
    // absent key is the same stateless mode, and it satisfies `exactOptionalPropertyTypes`.
    const options: StreamableHTTPServerTransportOptions = {};
    const transport = new StreamableHTTPServerTransport(options);
    // Registered before handling so a client abort is always seen.
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  } catch {
    if (!res.headersSent) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(
        '{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal server error"},"id":null}',
      );
    }
  }
});

httpServer.listen(0, "127.0.0.1", () => {
  const { port } = httpServer.address() as AddressInfo;
  announce(`http://127.0.0.1:${port}/mcp`);
});
