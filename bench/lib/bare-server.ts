/**
 * Benchmark target (c), the ceiling: a bare `node:http` server that reads the body, parses it, and
 * answers the same JSON-RPC result an MCP server would, with no MCP machinery at all.
 * Run as a child process by bench/http.ts: `node --import tsx bench/lib/bare-server.ts`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

import { announce } from "./listening.js";

const server = createServer((req, res) => {
  if (req.method !== "POST" || req.url !== "/mcp") {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    let message: { id?: unknown; params?: { arguments?: { text?: unknown } } };
    try {
      message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof message;
    } catch {
      res.writeHead(400).end();
      return;
    }
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: message.id,
      result: { content: [{ type: "text", text: String(message.params?.arguments?.text) }] },
    });
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  });
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  announce(`http://127.0.0.1:${port}/mcp`);
});
