/**
 * The door suite through Fastify 5: `fastify.all("/api/mcp", fastifyHandler(server))` (Fastify's
 * parsed body, Fastify's reply; the route's path is the endpoint without setting `path`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import Fastify from "fastify";

import { createMcpServer, fastifyHandler } from "../../src/index.js";
import { doorSuite, TENANT_TOKENS } from "./door-suite.js";
import { doorTools } from "./fixtures/door-tools.js";

doorSuite("Fastify route", async () => {
  const server = createMcpServer({ tools: doorTools, auth: { tokens: TENANT_TOKENS } });
  // The clients' HTTP pool may open a spare connection that never carries a request; close()
  // would wait for it until it times out.
  const app = Fastify({ forceCloseConnections: true });
  app.all("/api/mcp", fastifyHandler(server));
  const base = await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    target: { kind: "http", url: new URL(`${base}/api/mcp`) },
    close: async () => {
      await app.close();
      await server.close();
    },
  };
});

test("Fastify: answers go through Fastify's reply (its onSend hook sees their status)", async () => {
  const server = createMcpServer({ tools: doorTools });
  const app = Fastify({ forceCloseConnections: true });
  const statuses: number[] = [];
  app.addHook("onSend", async (_request, reply, payload) => {
    statuses.push(reply.statusCode);
    return payload;
  });
  app.all("/api/mcp", fastifyHandler(server));
  const base = await app.listen({ port: 0, host: "127.0.0.1" });
  try {
    const answer = await fetch(`${base}/api/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    assert.equal(answer.status, 200);
    assert.deepEqual(await answer.json(), { jsonrpc: "2.0", id: 1, result: {} });
    assert.equal(answer.headers.get("x-content-type-options"), "nosniff");
    const refused = await fetch(`${base}/api/mcp`, { method: "GET" });
    assert.equal(refused.status, 405);
    assert.deepEqual(statuses, [200, 405]);
  } finally {
    await app.close();
    await server.close();
  }
});
