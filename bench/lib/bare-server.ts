/**
 * Benchmark target, the ceiling: a bare `node:http` server that reads the body, parses it, and
 * answers the JSON-RPC result an MCP server would for each benchmark path (`tools/call echo`,
 * `resources/read`, `prompts/get`), with no MCP machinery and no validation at all.
 * Run as a child process by bench/lib/http-bench.ts: `node --import tsx bench/lib/bare-server.ts`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

import { BENCH_RESOURCE_MIME, BENCH_RESOURCE_TEXT } from "./bench-content.js";
import { announce } from "./listening.js";

interface Message {
  id?: unknown;
  method?: unknown;
  params?: { uri?: unknown; arguments?: { text?: unknown; code?: unknown } };
}

function resultOf(message: Message): unknown {
  switch (message.method) {
    case "resources/read":
      return {
        contents: [
          { uri: message.params?.uri, mimeType: BENCH_RESOURCE_MIME, text: BENCH_RESOURCE_TEXT },
        ],
      };
    case "prompts/get":
      return {
        messages: [
          {
            role: "user",
            content: {
              type: "text",
              text: `Review this code:\n${message.params?.arguments?.code}`,
            },
          },
        ],
      };
    default:
      return { content: [{ type: "text", text: String(message.params?.arguments?.text) }] };
  }
}

const server = createServer((req, res) => {
  if (req.method !== "POST" || req.url !== "/mcp") {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    let message: Message;
    try {
      message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Message;
    } catch {
      res.writeHead(400).end();
      return;
    }
    const body = JSON.stringify({ jsonrpc: "2.0", id: message.id, result: resultOf(message) });
    res.writeHead(200, { "content-type": "application/json" }).end(body);
  });
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  announce(`http://127.0.0.1:${port}/mcp`);
});
