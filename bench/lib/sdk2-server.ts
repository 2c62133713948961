/**
 * Benchmark target (d): the official SDK 2.x (`@modelcontextprotocol/server` 2.4.0)
 * `createMcpHandler(factory)`, with its default `legacy: "stateless"` posture, so one handler serves
 * the 2025-era request every target is sent (through the SDK's stateless legacy fallback: a fresh
 * server from the factory per request) and 2026-07-28 requests (its modern path). Same `echo` tool,
 * validated with zod like conduit's, and the same resource (bench/lib/bench-content.ts).
 *
 * The handler is web-standard (`fetch(Request) → Response`); the SDK documents
 * `toNodeHandler(handler)` from `@modelcontextprotocol/node` for plain `node:http`, a package that
 * is not installed here, so {@link serveFetch} below is a minimal equivalent: it buffers the body
 * (bounded by the SDK's own 4 MiB default), builds a `Request`, and streams the `Response` back.
 * Run as a child process: `node --import tsx bench/lib/sdk2-server.ts`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";

import { BENCH_RESOURCE_MIME, BENCH_RESOURCE_URI, benchReadResult } from "./bench-content.js";
import { announce } from "./listening.js";

/** The SDK's default body bound (`maxRequestBodySize`), applied while buffering here too. */
const MAX_BODY = 4 * 1024 * 1024;

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "sdk2-bench", version: "1.0.0" });
  server.registerTool(
    "echo",
    {
      description: "Returns its text argument",
      // Same bound as the CLI's echo (MAX_ECHO_CHARS), so every server validates the same thing.
      inputSchema: z.object({ text: z.string().max(100_000) }),
    },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerResource(
    "readme",
    BENCH_RESOURCE_URI,
    { mimeType: BENCH_RESOURCE_MIME },
    async (uri) => benchReadResult(uri.href),
  );
  return server;
});

/** Reads the whole body, or null when it exceeds {@link MAX_BODY}. */
function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        resolve(null);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** node:http → web `Request` → the SDK handler → node:http response (toNodeHandler's job). */
async function serveFetch(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const controller = new AbortController();
  // A client that goes away aborts the web request, as a fetch-native runtime would.
  res.on("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const body = hasBody ? await readBody(req) : null;
  if (hasBody && body === null) {
    res.writeHead(413).end();
    return;
  }
  const init: RequestInit = { method: req.method ?? "GET", headers, signal: controller.signal };
  if (body !== null) init.body = body;
  const response = await handler.fetch(
    new Request(`http://${req.headers.host ?? "127.0.0.1"}${req.url ?? "/"}`, init),
  );
  const outHeaders: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    outHeaders[name] = value;
  });
  res.writeHead(response.status, outHeaders);
  if (response.body === null) {
    res.end();
    return;
  }
  for await (const chunk of response.body) {
    if (!res.write(chunk)) await new Promise((resolve) => res.once("drain", resolve));
  }
  res.end();
}

const httpServer = createServer((req, res) => {
  if (req.url !== "/mcp") {
    res.writeHead(404).end();
    return;
  }
  serveFetch(req, res).catch(() => {
    if (!res.headersSent) res.writeHead(500).end();
    else res.destroy();
  });
});

httpServer.listen(0, "127.0.0.1", () => {
  const { port } = httpServer.address() as AddressInfo;
  announce(`http://127.0.0.1:${port}/mcp`);
});
