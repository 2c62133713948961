/**
 * Hostile credentials against an OAuth-protected endpoint and the static-token table: oversized
 * tokens and headers, several `Authorization` headers, a token in the query string, malformed
 * headers, short static secrets, plain-http identity provider URLs. Every refusal is a clear 4xx
 * with its challenge, never a 5xx, and the server keeps serving.
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, test } from "node:test";

import { z } from "zod";

import { InvalidOptionError } from "../../src/errors.js";
import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { startIssuer, type TestIssuer } from "../helpers/oauth-issuer.js";
import { rpc } from "../server/fixtures.js";

const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };
const BODY = JSON.stringify(LIST);

/** Sends raw bytes and resolves the whole first response (head and body). */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let data = "";
    socket.on("data", (chunk) => {
      data += chunk.toString("latin1");
    });
    socket.on("end", () => resolve(data));
    socket.on("close", () => resolve(data));
    socket.on("error", reject);
    socket.write(request);
  });
}

function post(port: number, path: string, headers: string[]): string {
  return [
    `POST ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    "Content-Type: application/json",
    "Accept: application/json, text/event-stream",
    `Content-Length: ${Buffer.byteLength(BODY)}`,
    "Connection: close",
    ...headers,
    "",
    BODY,
  ].join("\r\n");
}

describe("OAuth endpoint: bad input", () => {
  let idp: TestIssuer;
  let server: McpServer;
  let url: string;
  let port: number;
  let good: string;

  before(async () => {
    idp = await startIssuer();
    server = createMcpServer({
      tools: [defineTool({ name: "echo", input: z.object({}), handler: () => "ok" })],
      auth: { oauth: { issuer: idp.issuer, jwksUrl: idp.jwksUrl } },
    });
    url = (await server.listen()).url;
    port = Number(new URL(url).port);
    good = await idp.sign({ sub: "alice", aud: url });
  });
  after(async () => {
    await server.close();
    await idp.close();
  });

  async function stillServes(): Promise<void> {
    assert.equal((await rpc(url, LIST, { authorization: `Bearer ${good}` })).status, 200);
  }

  test("several Authorization headers: 400 invalid_request (node would keep only the first)", async () => {
    const answer = await raw(
      port,
      post(port, "/mcp", [`Authorization: Bearer ${good}`, "Authorization: Bearer other"]),
    );
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.match(answer, /www-authenticate: Bearer error="invalid_request"/i);
    assert.match(answer, /More than one Authorization header/);
    await stillServes();
  });

  test("a token in the query string is refused (400), even next to a valid header", async () => {
    for (const path of [`/mcp?access_token=${good}`, "/mcp?x=1&access_token=abc"]) {
      const alone = await raw(port, post(port, path, []));
      assert.match(alone, /^HTTP\/1\.1 400 /, path);
      assert.match(alone, /error="invalid_request"/);
    }
    const both = await raw(
      port,
      post(port, `/mcp?access_token=${good}`, [`Authorization: Bearer ${good}`]),
    );
    assert.match(both, /^HTTP\/1\.1 400 /);
    await stillServes();
  });

  test("an oversized token: 401 invalid_token; an oversized header block: 431 from node", async () => {
    const big = await rpc(url, LIST, { authorization: `Bearer ${"a".repeat(9_000)}` });
    assert.equal(big.status, 401);
    assert.match(big.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
    assert.match(big.headers.get("www-authenticate") ?? "", /too large/);
    const huge = await raw(
      port,
      post(port, "/mcp", [`Authorization: Bearer ${"a".repeat(20_000)}`]),
    );
    assert.match(huge, /^HTTP\/1\.1 431 /);
    await stillServes();
  });

  test("malformed Authorization headers: 400 or 401, never 5xx, nothing reflected", async () => {
    const cases: [string, number][] = [
      ["Bearer", 400],
      ["Bearer    ", 400],
      ["Bearer a b", 400],
      ["Bearer \u00e9t\u00e9", 400],
      ["bearer x.y.z", 401],
      ["Bearer ....", 401],
      ["Bearer eyJhbGciOiJub25lIn0..", 401],
      [`Bearer ${"x.".repeat(100)}x`, 401],
      ["Basic", 401],
      ["", 401],
    ];
    for (const [header, status] of cases) {
      const answer = await raw(port, post(port, "/mcp", [`Authorization: ${header}`]));
      const got = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
      assert.equal(got, status, JSON.stringify(header));
      assert.ok(!answer.includes("eyJhbGciOiJub25lIn0"), "the token is not reflected");
    }
    await stillServes();
  });
});

describe("static tokens and configuration are made safe", () => {
  test("secrets shorter than 16 bytes, or empty, are refused at construction without echoing them", () => {
    for (const secret of ["", "abc123", "fifteen-bytes!!", "undefined"]) {
      assert.throws(
        () => createMcpServer({ auth: { tokens: { [secret]: "alice" } } }),
        (error: unknown) =>
          error instanceof InvalidOptionError &&
          /16/.test(error.message) &&
          (secret === "" || !error.message.includes(secret)),
        JSON.stringify(secret),
      );
    }
    assert.doesNotThrow(() =>
      createMcpServer({ auth: { tokens: { "sixteen-bytes-ok": "alice" } } }),
    );
  });

  test("plain-http identity provider URLs are accepted for loopback hosts only", () => {
    const base = { issuer: "https://idp.example.com/", jwksUrl: "https://idp.example.com/jwks" };
    for (const bad of [
      { ...base, jwksUrl: "http://idp.example.com/jwks" },
      { ...base, issuer: "http://idp.example.com/" },
      { ...base, authorizationServers: ["http://10.0.0.1/"] },
      { ...base, resource: "http://mcp.example.com/mcp" },
      { ...base, resource: "https://mcp.example.com/mcp#frag" },
      {
        ...base,
        introspection: {
          url: "http://idp.example.com/introspect",
          clientId: "a",
          clientSecret: "b",
        },
      },
      { ...base, algorithms: ["HS256"] },
      { ...base, algorithms: ["none"] },
      { issuer: base.issuer },
      { jwksUrl: base.jwksUrl },
    ]) {
      assert.throws(
        () => createMcpServer({ auth: { oauth: bad } }),
        InvalidOptionError,
        JSON.stringify(bad),
      );
    }
    for (const ok of [
      { issuer: "http://127.0.0.1:9000", jwksUrl: "http://127.0.0.1:9000/jwks" },
      { issuer: "http://localhost:9000", jwksUrl: "http://[::1]:9000/jwks" },
      { ...base, resource: "https://mcp.example.com/mcp" },
    ]) {
      assert.doesNotThrow(() => createMcpServer({ auth: { oauth: ok } }), JSON.stringify(ok));
    }
  });

  test("without a resource, listen() on a public address is refused (the audience is never guessed)", async () => {
    const server = createMcpServer({
      auth: {
        oauth: { issuer: "https://idp.example.com/", jwksUrl: "https://idp.example.com/jwks" },
      },
    });
    await assert.rejects(server.listen({ host: "0.0.0.0" }), /auth\.oauth\.resource/);
    await server.close();
  });
});
