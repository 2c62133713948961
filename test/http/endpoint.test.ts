/**
 * Raw HTTP behaviour of the endpoint: body limits (413 before reading), 415, 400/-32700, 406,
 * 405, sessions (404, 400, DELETE, 503 when full), 401, 403 Host/Origin, /health, /metrics, and
 * the security headers. Every case is followed by a request that still succeeds.
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import { describe, test } from "node:test";

import { createMcpServer, type McpServer, type McpServerOptions } from "../../src/server/index.js";
import { callBody, cancelBody, rpc, testTools, until } from "../server/fixtures.js";

const PING = { jsonrpc: "2.0", id: 1, method: "ping" };
const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "t", version: "1" },
  },
};

async function withServer(
  options: Omit<McpServerOptions, "tools">,
  run: (url: string, server: McpServer) => Promise<void>,
  host = "127.0.0.1",
): Promise<void> {
  const server = createMcpServer({ tools: testTools(), ...options });
  const { url } = await server.listen({ host });
  try {
    await run(url, server);
  } finally {
    await server.close();
  }
}

async function stillServes(url: string, headers: Record<string, string> = {}): Promise<void> {
  const answer = await rpc(url, PING, headers);
  assert.equal(answer.status, 200);
  assert.deepEqual(answer.json, { jsonrpc: "2.0", id: 1, result: {} });
}

/** Sends raw bytes on a fresh socket and resolves the first response head (status line + headers). */
function rawHead(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let data = "";
    socket.on("data", (chunk) => {
      data += chunk.toString("latin1");
      if (data.includes("\r\n\r\n")) {
        socket.destroy();
        resolve(data);
      }
    });
    socket.on("error", reject);
    socket.write(head);
  });
}

describe("endpoint over raw HTTP", () => {
  test("a Content-Length over the limit is refused with 413 before the body is read", async () => {
    await withServer({ maxBodyBytes: 1024 }, async (url) => {
      const port = Number(new URL(url).port);
      // Headers only: the server must answer without waiting for 10 MB that never come.
      const head = await rawHead(
        port,
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n`,
      );
      assert.match(head, /^HTTP\/1\.1 413 /);
      assert.match(head, /connection: close/i);
      await stillServes(url);
    });
  });

  test("a chunked body crossing the limit is refused with 413", async () => {
    await withServer({ maxBodyBytes: 1024 }, async (url) => {
      const big = JSON.stringify({ ...PING, params: { pad: "x".repeat(5000) } });
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: new Blob([big]).stream(),
        duplex: "half",
      } as RequestInit);
      assert.equal(response.status, 413);
      assert.equal(((await response.json()) as { error: { code: number } }).error.code, -32600);
      await stillServes(url);
    });
  });

  test("the default limit is 1 MiB", async () => {
    await withServer({}, async (url) => {
      const answer = await rpc(
        url,
        JSON.stringify({ ...PING, params: { pad: "x".repeat(1_048_576) } }),
      );
      assert.equal(answer.status, 413);
      await stillServes(url);
    });
  });

  test("415 for a non-JSON content type, 406 when neither JSON nor SSE is acceptable", async () => {
    await withServer({}, async (url) => {
      const plain = await rpc(url, PING, { "content-type": "text/plain" });
      assert.equal(plain.status, 415);
      assert.equal(plain.json.error.code, -32600);
      const html = await rpc(url, PING, { accept: "text/html" });
      assert.equal(html.status, 406);
      assert.equal((await rpc(url, PING, { accept: "application/json" })).status, 200);
      assert.equal((await rpc(url, PING, { accept: "*/*" })).status, 200);
      await stillServes(url);
    });
  });

  test("malformed JSON is 400 with -32700; a batch is 400 with -32600", async () => {
    await withServer({}, async (url) => {
      const bad = await rpc(url, '{"jsonrpc":"2.0",');
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.json, {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: "Parse error" },
      });
      const empty = await rpc(url, "");
      assert.equal(empty.json.error.code, -32700);
      const batch = await rpc(url, [PING]);
      assert.equal(batch.status, 400);
      assert.equal(batch.json.error.code, -32600);
      await stillServes(url);
    });
  });

  test("GET on the endpoint is 405; unknown paths are 404; /health is 200 without auth", async () => {
    await withServer({ auth: { tokens: { "secret-s-0123456789": "alice" } } }, async (url) => {
      const get = await fetch(url, { headers: { accept: "text/event-stream" } });
      assert.equal(get.status, 405);
      assert.equal(get.headers.get("allow"), "POST");
      await get.text();
      const missing = await fetch(url.replace("/mcp", "/nope"));
      assert.equal(missing.status, 404);
      await missing.text();
      const health = await fetch(url.replace("/mcp", "/health"));
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { status: "ok" });
      assert.equal(health.headers.get("x-content-type-options"), "nosniff");
    });
  });

  test("every answer carries nosniff and no-store", async () => {
    await withServer({}, async (url) => {
      const answer = await rpc(url, PING);
      assert.equal(answer.headers.get("x-content-type-options"), "nosniff");
      assert.equal(answer.headers.get("cache-control"), "no-store");
      const accepted = await rpc(url, { jsonrpc: "2.0", method: "notifications/initialized" });
      assert.equal(accepted.status, 202);
      assert.equal(accepted.text, "");
      assert.equal(accepted.headers.get("cache-control"), "no-store");
    });
  });

  test("a JSON answer's head, byte for byte, answer after answer on one connection", async () => {
    // The node door writes these headers from one list it reuses (writeJsonHead): each answer
    // carries its own length, and every header of the object form, in its order.
    await withServer({}, async (url) => {
      const { port } = new URL(url);
      const socket = connect(Number(port), "127.0.0.1");
      let received = "";
      socket.on("data", (chunk: Buffer) => {
        received += chunk.toString("latin1");
      });
      const bodies = [
        JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
        JSON.stringify(callBody(22, "echo", { text: "a longer answer than a ping's" })),
        JSON.stringify({ jsonrpc: "2.0", id: 333, method: "ping" }),
      ];
      const heads: string[] = [];
      for (const body of bodies) {
        const from = received.length;
        socket.write(
          "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
            "Accept: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\n" +
            `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
        await until(() => {
          const end = received.indexOf("\r\n\r\n", from);
          if (end < 0) return false;
          const length = Number(/content-length: (\d+)/.exec(received.slice(from, end))?.[1]);
          return received.length >= end + 4 + length;
        }, 2_000);
        heads.push(received.slice(from));
      }
      socket.destroy();
      for (const answer of heads) {
        const [head = "", body = ""] = answer.split("\r\n\r\n");
        const lines = head
          .split("\r\n")
          .filter((line) => !/^(date|connection|keep-alive):/i.test(line));
        assert.deepEqual(lines, [
          "HTTP/1.1 200 OK",
          "content-type: application/json",
          `content-length: ${Buffer.byteLength(body)}`,
          "cache-control: no-store",
          "x-content-type-options: nosniff",
          "x-frame-options: DENY",
        ]);
        assert.ok(JSON.parse(body).result !== undefined);
      }
    });
  });

  test("an unsupported MCP-Protocol-Version header is 400", async () => {
    await withServer({}, async (url) => {
      const answer = await rpc(url, PING, { "mcp-protocol-version": "1999-01-01" });
      assert.equal(answer.status, 400);
      assert.deepEqual(answer.json.error.data.supported, [
        "2025-11-25",
        "2025-06-18",
        "2025-03-26",
      ]);
      assert.equal((await rpc(url, PING, { "mcp-protocol-version": "2025-06-18" })).status, 200);
    });
  });

  test("without sessions no Mcp-Session-Id is ever emitted and DELETE is 405", async () => {
    await withServer({}, async (url) => {
      const init = await rpc(url, INIT);
      assert.equal(init.status, 200);
      assert.equal(init.headers.get("mcp-session-id"), null);
      assert.equal((await fetch(url, { method: "DELETE" })).status, 405);
    });
  });
});

describe("sessions over raw HTTP", () => {
  test("initialize mints an id; unknown ids are 404; DELETE ends the session", async () => {
    await withServer({ sessions: true }, async (url) => {
      const init = await rpc(url, INIT);
      const id = init.headers.get("mcp-session-id");
      assert.ok(id !== null && /^[\x21-\x7e]{32}$/.test(id));
      await stillServes(url, { "mcp-session-id": id });
      const unknown = await rpc(url, PING, { "mcp-session-id": "A".repeat(32) });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.json.error.code, -32600);
      assert.equal((await rpc(url, PING, { "mcp-session-id": "not a session id!" })).status, 404);
      const missingHeader = await fetch(url, { method: "DELETE" });
      assert.equal(missingHeader.status, 400);
      assert.equal(
        (await fetch(url, { method: "DELETE", headers: { "mcp-session-id": id } })).status,
        204,
      );
      assert.equal((await rpc(url, PING, { "mcp-session-id": id })).status, 404);
      // Without a header and without requireSession, requests still pass.
      await stillServes(url);
    });
  });

  test("requireSession: 400 without a header except for initialize", async () => {
    await withServer({ sessions: true, requireSession: true }, async (url) => {
      const refused = await rpc(url, PING);
      assert.equal(refused.status, 400);
      assert.match(refused.json.error.message, /Mcp-Session-Id/);
      assert.equal((await rpc(url, cancelBody(1))).status, 400);
      const init = await rpc(url, INIT);
      assert.equal(init.status, 200);
      await stillServes(url, { "mcp-session-id": init.headers.get("mcp-session-id") as string });
    });
  });

  test("a store refusing every session answers initialize with 503 and -32603, no header", async () => {
    await withServer({ sessions: { maxSessions: 0 } }, async (url) => {
      const full = await rpc(url, { ...INIT, id: 9 });
      assert.equal(full.status, 503);
      assert.equal(full.json.id, 9);
      assert.equal(full.json.error.code, -32603);
      assert.match(full.json.error.message, /cannot accept new sessions/);
      assert.equal(full.headers.get("mcp-session-id"), null);
    });
  });

  test("a session belongs to the principal that created it", async () => {
    await withServer(
      {
        sessions: true,
        auth: { tokens: { "secret-a-0123456789": "alice", "secret-b-0123456789": "bob" } },
      },
      async (url) => {
        const init = await rpc(url, INIT, { authorization: "Bearer secret-a-0123456789" });
        const id = init.headers.get("mcp-session-id") as string;
        await stillServes(url, {
          authorization: "Bearer secret-a-0123456789",
          "mcp-session-id": id,
        });
        assert.equal(
          (
            await rpc(url, PING, {
              authorization: "Bearer secret-b-0123456789",
              "mcp-session-id": id,
            })
          ).status,
          404,
        );
      },
    );
  });
});

describe("auth and origin checks", () => {
  test("401 with WWW-Authenticate without a valid token; the token's principal scopes the request", async () => {
    await withServer({ auth: { tokens: { "s3cret-alice-0123456789": "alice" } } }, async (url) => {
      for (const headers of [
        {},
        { authorization: "Bearer wrong" },
        { authorization: "Basic s3cret-alice-0123456789" },
      ]) {
        const answer = await rpc(url, PING, headers);
        assert.equal(answer.status, 401);
        assert.equal(answer.headers.get("www-authenticate"), "Bearer");
        assert.equal(answer.json.id, null);
      }
      const started = rpc(url, callBody("a-1", "sleep", { ms: 30, tag: "auth-scope" }), {
        authorization: "Bearer s3cret-alice-0123456789",
      });
      assert.equal((await started).status, 200);
      const { probes } = await import("../server/fixtures.js");
      assert.equal(probes.get("auth-scope")?.scope, "principal:alice");
    });
  });

  test("a verify hook authenticates, a throwing hook refuses", async () => {
    const { createPrincipal } = await import("../../src/identity/index.js");
    await withServer(
      {
        auth: {
          verify: (req) => {
            if (req.headers["x-key"] === "boom") throw new Error("verifier down at 10.0.0.5");
            return req.headers["x-key"] === "ok" ? createPrincipal({ id: "svc" }) : null;
          },
        },
      },
      async (url) => {
        await stillServes(url, { "x-key": "ok" });
        assert.equal((await rpc(url, PING, { "x-key": "no" })).status, 401);
        const boom = await rpc(url, PING, { "x-key": "boom" });
        assert.equal(boom.status, 401);
        assert.doesNotMatch(boom.text, /10\.0\.0\.5/);
      },
    );
  });

  test("bound to loopback: a foreign Host or Origin is 403, loopback ones pass", async () => {
    await withServer({}, async (url) => {
      const port = new URL(url).port;
      const evil = await rpc(url, INIT, {
        host: "evil.example.com",
        origin: "http://evil.example.com",
      });
      assert.equal(evil.status, 403);
      assert.equal((await rpc(url, PING, { origin: "http://evil.example.com" })).status, 403);
      // Host alone (no Origin), on a raw socket so no client library rewrites it.
      const body = JSON.stringify(PING);
      const request = (host: string) =>
        rawHead(
          Number(port),
          `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        );
      assert.match(await request("evil.example.com"), /^HTTP\/1\.1 403 /);
      assert.match(await request(`evil.example.com:${port}`), /^HTTP\/1\.1 403 /);
      assert.match(await request(`localhost:${port}`), /^HTTP\/1\.1 200 /);
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, "localhost"]) {
        assert.equal((await rpc(url, INIT, { host, origin: `http://${host}` })).status, 200, host);
      }
      await stillServes(url);
    });
  });

  test("not bound to loopback: an Origin must be in allowedOrigins", async () => {
    await withServer(
      { allowedOrigins: ["https://app.example.com"] },
      async (url) => {
        assert.equal((await rpc(url, PING, { origin: "https://app.example.com" })).status, 200);
        assert.equal((await rpc(url, PING, { origin: "https://evil.example.com" })).status, 403);
        assert.equal((await rpc(url, PING, { host: "mcp.example.com" })).status, 200);
        await stillServes(url);
      },
      "0.0.0.0",
    );
  });
});

describe("metrics", () => {
  test("GET /metrics serves the Prometheus series named in the issue", async () => {
    await withServer({ metrics: true }, async (url) => {
      await stillServes(url);
      await rpc(url, callBody(1, "echo", { text: "x" }));
      await rpc(url, callBody(2, "boom", {}));
      await rpc(url, { jsonrpc: "2.0", id: 3, method: "x".repeat(500) });
      const response = await fetch(url.replace("/mcp", "/metrics"));
      assert.equal(response.status, 200);
      assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
      const text = await response.text();
      for (const line of [
        "# TYPE conduit_mcp_in_flight_requests gauge",
        "conduit_mcp_in_flight_requests 0",
        "# TYPE conduit_mcp_cancellation_rows gauge",
        "conduit_mcp_cancellation_rows 0",
        "# TYPE conduit_mcp_cancellations_total counter",
        'conduit_mcp_cancellations_total{source="notification"} 0',
        'conduit_mcp_cancellations_total{source="disconnect"} 0',
        'conduit_mcp_cancellations_total{source="library"} 0',
        "# TYPE conduit_mcp_tool_calls_total counter",
        'conduit_mcp_tool_calls_total{tool="echo",outcome="ok"} 1',
        'conduit_mcp_tool_calls_total{tool="boom",outcome="error"} 1',
        "# TYPE conduit_mcp_requests_total counter",
        'conduit_mcp_requests_total{method="ping",status="200"} 1',
        'conduit_mcp_requests_total{method="tools/call",status="200"} 2',
        'conduit_mcp_requests_total{method="other",status="200"} 1',
      ]) {
        assert.ok(text.split("\n").includes(line), `missing: ${line}`);
      }
      assert.ok(text.endsWith("\n"));
      for (const line of text.split("\n").filter((l) => l !== "" && !l.startsWith("#"))) {
        assert.match(
          line,
          /^[a-z_]+(\{[a-z]+="[^"\\\n]*"(,[a-z]+="[^"\\\n]*")*\})? \d+(\.\d+)?(e-\d+)?$/,
        );
      }
    });
  });

  test("without metrics: true, /metrics is 404", async () => {
    await withServer({}, async (url) => {
      const response = await fetch(url.replace("/mcp", "/metrics"));
      assert.equal(response.status, 404);
      await response.text();
    });
  });
});
