/**
 * The door suite through Express 5: on a route after `express.json()` (the body Express parsed
 * is used, never waited for; the route's path is the endpoint without setting `path`), and
 * mounted with `app.use("/api", …)` without a body parser (the core reads the body; paths below
 * the prefix route as on the node:http listener, others go on to the next middleware).
 */
import assert from "node:assert/strict";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";

import express from "express";

import { createMcpServer, expressHandler, type McpServer } from "../../src/index.js";
import { doorSuite, TENANT_TOKENS } from "./door-suite.js";
import { doorTools } from "./fixtures/door-tools.js";

async function listen(app: express.Express): Promise<{ http: Server; base: string }> {
  const http = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  return { http, base: `http://127.0.0.1:${(http.address() as AddressInfo).port}` };
}

async function stop(http: Server, server: McpServer): Promise<void> {
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
  await server.close();
}

doorSuite("Express, route after express.json()", async () => {
  const server = createMcpServer({ tools: doorTools, auth: { tokens: TENANT_TOKENS } });
  const app = express();
  app.use(express.json());
  app.all("/api/mcp", expressHandler(server));
  const { http, base } = await listen(app);
  return {
    target: { kind: "http", url: new URL(`${base}/api/mcp`) },
    close: () => stop(http, server),
  };
});

doorSuite("Express, app.use('/api') without a body parser", async () => {
  const server = createMcpServer({ tools: doorTools, auth: { tokens: TENANT_TOKENS } });
  const app = express();
  app.use("/api", expressHandler(server));
  const { http, base } = await listen(app);
  return {
    target: { kind: "http", url: new URL(`${base}/api/mcp`) },
    close: () => stop(http, server),
  };
});

test("Express: mounted with app.use, /health and /metrics live under the prefix and other paths reach the next handler", async () => {
  const server = createMcpServer({ tools: doorTools, metrics: true });
  const app = express();
  app.use("/api", expressHandler(server));
  app.get("/api/other", (_req, res) => {
    res.send("next handler");
  });
  const { http, base } = await listen(app);
  try {
    assert.deepEqual(await (await fetch(`${base}/api/health`)).json(), { status: "ok" });
    assert.match(
      await (await fetch(`${base}/api/metrics`)).text(),
      /conduit_mcp_in_flight_requests/,
    );
    assert.equal(await (await fetch(`${base}/api/other`)).text(), "next handler");
    assert.equal((await fetch(`${base}/health`)).status, 404, "nothing outside the prefix");
  } finally {
    await stop(http, server);
  }
});

test("Express: after express.json() a parsed body is answered at once, and a body left unparsed is still read and bounded", async () => {
  const server = createMcpServer({ tools: doorTools, maxBodyBytes: 1_024 });
  const app = express();
  app.use(express.json({ limit: "1mb" }));
  app.all("/api/mcp", expressHandler(server));
  const { http, base } = await listen(app);
  const post = (body: string, contentType = "application/json") =>
    fetch(`${base}/api/mcp`, {
      method: "POST",
      headers: { "content-type": contentType, accept: "application/json, text/event-stream" },
      body,
    });
  try {
    const call = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "parsed" } },
    });
    const answer = await post(call);
    assert.equal(answer.status, 200);
    assert.equal(
      ((await answer.json()) as { result: { content: { text: string }[] } }).result.content[0]
        ?.text,
      "parsed",
    );
    // Over maxBodyBytes, declared: refused by conduit-mcp before anything is read.
    assert.equal((await post(JSON.stringify({ pad: "x".repeat(2_000) }))).status, 413);
  } finally {
    await stop(http, server);
  }
});
