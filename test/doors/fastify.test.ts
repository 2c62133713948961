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

test("Fastify: a session's GET stream stays open past its opening and carries updates", async () => {
  const server = createMcpServer({ tools: doorTools, sessions: true });
  const app = Fastify({ forceCloseConnections: true });
  app.all("/api/mcp", fastifyHandler(server));
  const base = await app.listen({ port: 0, host: "127.0.0.1" });
  const headers = (session?: string): Record<string, string> => ({
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
    ...(session === undefined ? {} : { "mcp-session-id": session }),
  });
  const abort = new AbortController();
  try {
    const init = await fetch(`${base}/api/mcp`, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "fastify-get", version: "1" },
        },
      }),
    });
    await init.text();
    const session = init.headers.get("mcp-session-id");
    assert.ok(session !== null);
    const subscribed = await fetch(`${base}/api/mcp`, {
      method: "POST",
      headers: headers(session),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "resources/subscribe",
        params: { uri: "door://watched" },
      }),
    });
    assert.equal(subscribed.status, 200);
    await subscribed.text();
    const stream = await fetch(`${base}/api/mcp`, {
      method: "GET",
      headers: headers(session),
      signal: abort.signal,
    });
    assert.equal(stream.status, 200);
    assert.equal(stream.headers.get("content-type"), "text/event-stream");
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    // Later than the request core's own promise: the stream must outlive it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(server.resources.updated("door://watched"), 1);
    // Keep-alive comments may come first; the update follows within a few chunks.
    let text = "";
    for (let chunk = 0; chunk < 5 && !text.includes("notifications/resources/updated"); chunk++) {
      const { done, value } = await reader.read();
      assert.equal(done, false, "the GET stream ended before the update");
      text += Buffer.from(value as Uint8Array).toString();
    }
    assert.match(text, /notifications\/resources\/updated/);
  } finally {
    abort.abort();
    await app.close();
    await server.close();
  }
});
