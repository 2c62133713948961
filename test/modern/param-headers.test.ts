/**
 * `Mcp-Param-*` headers over real HTTP
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#server-behavior-for-custom-headers):
 * a 2026-07-28 `tools/call` whose annotated arguments and headers disagree is refused with
 * 400 / -32020 before the tool runs; the 2025 era knows no such headers.
 */
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { after, before, describe, test } from "node:test";
import { z } from "zod";

import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { callBody, type RpcAnswer, rpc } from "../server/fixtures.js";

const V = "2026-07-28";
const META = {
  "io.modelcontextprotocol/protocolVersion": V,
  "io.modelcontextprotocol/clientCapabilities": {},
};

function call(id: number, args: Record<string, unknown>) {
  return callBody(id, "route", args, META);
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return { "mcp-protocol-version": V, "mcp-method": "tools/call", "mcp-name": "route", ...extra };
}

/** A POST with raw header pairs: repeated names and latin1 bytes, which `fetch` cannot send. */
function rawPost(url: string, pairs: [string, string][], body: unknown): Promise<RpcAnswer> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: "POST",
        // As an array, headers are sent exactly as given (Host included: Node adds none then).
        headers: [
          ["host", new URL(url).host],
          ["content-type", "application/json"],
          ["accept", "application/json, text/event-stream"],
          ["content-length", String(Buffer.byteLength(text))],
          ...pairs,
        ].flat(),
      },
      (res) => {
        let data = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          data += chunk;
        });
        res.on("end", () => {
          resolve({
            status: res.statusCode ?? 0,
            headers: new Headers(),
            text: data,
            json: JSON.parse(data),
          });
        });
      },
    );
    req.on("error", reject);
    req.end(text);
  });
}

describe("Mcp-Param-* headers (2026-07-28) over HTTP", () => {
  let server: McpServer;
  let url: string;
  let runs = 0;

  before(async () => {
    server = createMcpServer({
      tools: [
        defineTool({
          name: "route",
          description: "Echoes where it would run",
          input: z.object({
            region: z.string().meta({ "x-mcp-header": "Region" }),
            priority: z.number().int().optional().meta({ "x-mcp-header": "Priority" }),
            query: z.string(),
          }),
          handler: ({ region, priority }) => {
            runs++;
            return `${region}/${priority ?? "-"}`;
          },
        }),
      ],
    });
    ({ url } = await server.listen());
  });

  after(async () => {
    await server.close();
  });

  function assertMismatch(answer: RpcAnswer, id: number, message: RegExp): void {
    assert.equal(answer.status, 400, answer.text);
    assert.equal(answer.json.error.code, -32020, answer.text);
    assert.equal(answer.json.id, id, "the error echoes the request id");
    assert.match(answer.json.error.message, message);
  }

  test("tools/list publishes the annotation", async () => {
    const list = await rpc(
      url,
      { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: META } },
      { "mcp-protocol-version": V, "mcp-method": "tools/list" },
    );
    const tool = list.json.result.tools.find((t: { name: string }) => t.name === "route");
    assert.equal(tool.inputSchema.properties.region["x-mcp-header"], "Region");
  });

  test("matching headers (plain, base64, numeric, any case of the name) run the tool", async () => {
    const plain = await rpc(
      url,
      call(2, { region: "us-west1", priority: 42, query: "q" }),
      headers({ "Mcp-Param-Region": "us-west1", "MCP-PARAM-PRIORITY": "42.0" }),
    );
    assert.equal(plain.status, 200, plain.text);
    assert.equal(plain.json.result.content[0].text, "us-west1/42");
    const encoded = Buffer.from("Hello, 世界").toString("base64");
    const b64 = await rpc(
      url,
      call(3, { region: "Hello, 世界", query: "q" }),
      headers({ "mcp-param-region": `=?base64?${encoded}?=` }),
    );
    assert.equal(b64.status, 200, b64.text);
    assert.equal(b64.json.result.content[0].text, "Hello, 世界/-");
    const literal = await rpc(
      url,
      call(4, { region: "SGVsbG8=", query: "q" }),
      headers({ "mcp-param-region": "SGVsbG8=" }),
    );
    assert.equal(literal.status, 200, "a value without the sentinel is literal");
  });

  test("missing, different, malformed or unexpected headers: 400 / -32020, the tool never runs", async () => {
    const before = runs;
    assertMismatch(
      await rpc(url, call(10, { region: "us", query: "q" }), headers()),
      10,
      /Mcp-Param-Region header required/,
    );
    assertMismatch(
      await rpc(url, call(11, { region: "us", query: "q" }), headers({ "mcp-param-region": "eu" })),
      11,
      /does not match/,
    );
    assertMismatch(
      await rpc(
        url,
        call(12, { region: "Hello", query: "q" }),
        headers({ "mcp-param-region": "=?base64?SGVsbG8?=" }),
      ),
      12,
      /malformed base64/,
    );
    assertMismatch(
      await rpc(
        url,
        call(13, { region: "Hello", query: "q" }),
        headers({ "mcp-param-region": "=?base64?SGVs!!!bG8=?=" }),
      ),
      13,
      /malformed base64/,
    );
    assertMismatch(
      await rpc(
        url,
        call(14, { region: "us", query: "q" }),
        headers({ "mcp-param-region": "us", "mcp-param-priority": "1" }),
      ),
      14,
      /Mcp-Param-Priority header sent but the argument is absent/,
    );
    assertMismatch(
      await rpc(
        url,
        call(15, { region: "us", priority: 42, query: "q" }),
        headers({ "mcp-param-region": "us", "mcp-param-priority": "42abc" }),
      ),
      15,
      /does not match/,
    );
    assert.equal(runs, before, "no refused call reached the tool");
  });

  test("a repeated header and raw non-ASCII bytes are refused", async () => {
    const base: [string, string][] = [
      ["mcp-protocol-version", V],
      ["mcp-method", "tools/call"],
      ["mcp-name", "route"],
    ];
    assertMismatch(
      await rawPost(
        url,
        [...base, ["Mcp-Param-Region", "us"], ["mcp-param-region", "us"]],
        call(20, { region: "us", query: "q" }),
      ),
      20,
      /repeated/,
    );
    // "é" sent as one latin1 byte (0xE9): outside the visible ASCII a header value may hold.
    assertMismatch(
      await rawPost(
        url,
        [...base, ["mcp-param-region", "\u00e9"]],
        call(21, { region: "é", query: "q" }),
      ),
      21,
      /invalid characters/,
    );
  });

  test("the 2025 era ignores Mcp-Param-* headers (they are a 2026-07-28 rule)", async () => {
    const answer = await rpc(url, callBody(30, "route", { region: "us", query: "q" }), {
      "mcp-param-region": "somewhere-else",
    });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.result.content[0].text, "us/-");
  });
});
