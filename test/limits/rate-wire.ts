/**
 * Helpers of the rate-limit tests: a POST from a chosen local address (127.0.0.2 is another
 * tenant: another IP bucket), and 2026-07-28 `tools/call` bodies with their headers.
 */
import { request } from "node:http";

/** A parsed answer. */
export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: test convenience
  readonly json: any;
  readonly text: string;
}

/** POSTs `body` to `url` from `localAddress` (a loopback address of this host). */
export function postFrom(
  url: string,
  body: unknown,
  options: { localAddress?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        localAddress: options.localAddress ?? "127.0.0.1",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown = null;
          if (String(res.headers["content-type"]).startsWith("application/json")) {
            json = JSON.parse(text);
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json, text });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

/** A 2026-07-28 `tools/call` of `name` with its envelope and headers. */
export function modernCall(
  id: number,
  name: string,
  args: Record<string, unknown> = {},
): { body: unknown; headers: Record<string, string> } {
  return {
    body: {
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: {
        name,
        arguments: args,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    },
    headers: {
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": name,
    },
  };
}
