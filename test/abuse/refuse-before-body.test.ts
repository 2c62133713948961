/**
 * A refused request's body is never read: after an early 401, 415, 406, 413, 429 or 503 the
 * answer goes out and the connection closes, so a client declaring a huge body cannot make the
 * server read it; `Expect: 100-continue` is answered `100 Continue` only once the request passed
 * its checks; and the concurrency admission comes before the body.
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import { describe, test } from "node:test";

import { createMcpServer, type McpServerOptions } from "../../src/server/index.js";
import { callBody, rpc, testTools, until } from "../server/fixtures.js";

const HUGE = 64 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x20);

interface Pushed {
  readonly received: string;
  readonly closedByServer: boolean;
  readonly bytesWritten: number;
}

/**
 * Writes `head`, then (unless `waitForContinue`) body bytes as fast as the server takes them,
 * up to `total`, until the server closes or `maxMs` pass.
 */
function push(port: number, head: string, total: number, maxMs = 5_000): Promise<Pushed> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    let sent = 0;
    let done = false;
    const finish = (closedByServer: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      const bytesWritten = socket.bytesWritten;
      socket.destroy();
      resolve({ received, closedByServer, bytesWritten });
    };
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
    });
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true));
    const pump = (): void => {
      while (!done && sent < total) {
        sent += CHUNK.length;
        if (!socket.write(CHUNK)) {
          socket.once("drain", pump);
          return;
        }
      }
    };
    socket.write(head);
    pump();
    const deadline = setTimeout(() => finish(false), maxMs);
  });
}

function head(headers: Record<string, string | number>): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.join("")}\r\n`;
}

async function withServer(
  options: Omit<McpServerOptions, "tools">,
  run: (port: number, url: string) => Promise<void>,
): Promise<void> {
  const server = createMcpServer({ tools: testTools(), ...options });
  const { port, url } = await server.listen();
  try {
    await run(port, url);
  } finally {
    await server.close();
  }
}

const JSON_HEADERS = { "content-type": "application/json", accept: "application/json" };

describe("refused requests never have their body read", () => {
  const cases: Array<[string, Omit<McpServerOptions, "tools">, Record<string, string>, number]> = [
    [
      "401 (no credentials)",
      { auth: { tokens: { "s3cret-0123456789": "alice" } } },
      JSON_HEADERS,
      401,
    ],
    ["415 (not JSON)", {}, { "content-type": "text/plain", accept: "application/json" }, 415],
    ["406 (accepts neither)", {}, { "content-type": "application/json", accept: "text/html" }, 406],
  ];
  for (const [name, options, headers, status] of cases) {
    test(`${name}: answered, then the connection closes; 64 MiB declared, little of it sent`, async () => {
      await withServer(options, async (port, url) => {
        const pushed = await push(port, head({ ...headers, "content-length": HUGE }), HUGE);
        assert.match(pushed.received, new RegExp(`^HTTP/1\\.1 ${status} `));
        assert.match(pushed.received, /connection: close/i);
        assert.equal(pushed.closedByServer, true);
        // What the kernel buffers took before the close, never the whole declared body.
        assert.ok(pushed.bytesWritten < HUGE / 4, `${pushed.bytesWritten} bytes went out`);
        // A request with no body left to read keeps its connection (nothing to discard).
        assert.equal(
          (await rpc(url, { jsonrpc: "2.0", id: 1, method: "ping" })).status,
          name.startsWith("401") ? 401 : 200,
        );
      });
    });
  }

  test("no 100 Continue before the checks: a refused client gets its 401 and no 100", async () => {
    await withServer({ auth: { tokens: { "s3cret-0123456789": "alice" } } }, async (port) => {
      const pushed = await push(
        port,
        head({ ...JSON_HEADERS, "content-length": 40, expect: "100-continue" }),
        0,
        3_000,
      );
      assert.match(pushed.received, /^HTTP\/1\.1 401 /);
      assert.doesNotMatch(pushed.received, /100 Continue/i);
    });
  });

  test("100 Continue once the checks passed, then the answer", async () => {
    await withServer({ auth: { tokens: { "s3cret-0123456789": "alice" } } }, async (port) => {
      const body = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
      const socket = connect(port, "127.0.0.1");
      let received = "";
      socket.on("data", (chunk) => {
        received += chunk.toString("latin1");
      });
      socket.write(
        head({
          ...JSON_HEADERS,
          authorization: "Bearer s3cret-0123456789",
          "content-length": body.length,
          expect: "100-continue",
        }),
      );
      await until(() => received.includes("100 Continue"), 2_000, "100 Continue");
      assert.doesNotMatch(received, /HTTP\/1\.1 200/, "no answer before the body");
      socket.write(body);
      await until(() => received.includes('"result"'), 2_000, "the answer");
      assert.match(received, /HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
      socket.destroy();
    });
  });

  test("admission before the body: a scope at its bound gets 429 before a large body is read", async () => {
    await withServer({ maxConcurrentRequestsPerScope: 1 }, async (port, url) => {
      const running = rpc(url, callBody(1, "sleep", { ms: 1_500, tag: "admit-hold" }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      const pushed = await push(
        port,
        head({ ...JSON_HEADERS, "content-length": 512 * 1024 }),
        512 * 1024,
      );
      assert.match(pushed.received, /^HTTP\/1\.1 429 /);
      assert.match(pushed.received, /retry-after: 1/i);
      assert.match(pushed.received, /connection: close/i);
      assert.equal((await running).status, 200);
    });
  });
});
