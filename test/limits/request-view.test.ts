/**
 * `ctx.request` (docs/limits.md, "The request view") on every door: node:http (`listen`),
 * `server.fetch` under @hono/node-server, a Hono route, an Express route and a Fastify route,
 * called by both official clients (`@modelcontextprotocol/sdk` 1.x and `@modelcontextprotocol/client`
 * 2.x pinned to 2026-07-28) sending allowed and other headers and a bearer token: the view has the
 * method, the path, the client's address and the allowed headers only, never `Authorization`.
 * stdio gives null; a task's run sees the view of the request that created it; credential
 * headers are refused in the option at construction.
 */
import assert from "node:assert/strict";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { after, describe, test } from "node:test";

import { createAdaptorServer } from "@hono/node-server";
import { getConnInfo } from "@hono/node-server/conninfo";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";

import {
  createMcpServer,
  defineTool,
  expressHandler,
  fastifyHandler,
  InvalidOptionError,
  type McpServer,
  type McpServerOptions,
  serveStdio,
} from "../../src/index.js";
import { inSession, openSession, untilTerminal } from "../tasks/wire.js";

const TOKEN = "request-view-token-0001";
const seen = new Map<string, unknown>();

function options(): McpServerOptions {
  return {
    tools: [
      defineTool({
        name: "whoami",
        description: "Answers the request view it sees",
        handler: (_args, ctx) => JSON.stringify(ctx.request),
      }),
      defineTool({
        name: "task_view",
        description: "Records the view a task's run sees",
        task: "optional",
        handler: async (_args, ctx) => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          seen.set("task", ctx.request);
          return "recorded";
        },
      }),
    ],
    auth: { tokens: { [TOKEN]: "alice" } },
    // Any case; repeats folded.
    requestHeaders: ["X-Tenant", "x-feature-flags", "x-tenant"],
  };
}

/** The headers every client sends: one allowed, one not, and the credential. */
const SENT = {
  "x-tenant": "acme",
  "x-feature-flags": "beta",
  "x-not-listed": "hidden",
  authorization: `Bearer ${TOKEN}`,
};

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** One door: its endpoint URL, what the view should show, and how to stop it. */
interface Door {
  readonly url: string;
  readonly path: string;
  /** Null where the door is told no address (`server.fetch` without `clientAddress`). */
  readonly address?: string | null;
  close(): Promise<void>;
}

const doors: Record<string, () => Promise<Door>> = {
  "node:http (listen)": async () => {
    const server = createMcpServer(options());
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    return { url, path: "/mcp", close: () => server.close() };
  },
  "server.fetch under @hono/node-server": async () => {
    const server = createMcpServer(options());
    const http = createAdaptorServer({ fetch: server.fetch }) as Server;
    const base = await listen(http);
    // No clientAddress given: the view cannot know the client's address.
    return {
      url: `${base}/mcp`,
      path: "/mcp",
      address: null,
      close: () => stopHttp(http, server),
    };
  },
  "Hono app.all('/api/mcp')": async () => {
    const server = createMcpServer(options());
    const app = new Hono();
    app.all("/api/mcp", (c) =>
      server.fetch(c.req.raw, { clientAddress: getConnInfo(c).remote.address, endpoint: true }),
    );
    const http = createAdaptorServer({ fetch: app.fetch }) as Server;
    const base = await listen(http);
    return { url: `${base}/api/mcp`, path: "/api/mcp", close: () => stopHttp(http, server) };
  },
  "Express app.all('/api/mcp')": async () => {
    const server = createMcpServer(options());
    const app = express();
    app.use(express.json());
    app.all("/api/mcp", expressHandler(server));
    const http = await new Promise<Server>((resolve) => {
      const s = app.listen(0, "127.0.0.1", () => resolve(s));
    });
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    return { url: `${base}/api/mcp`, path: "/api/mcp", close: () => stopHttp(http, server) };
  },
  "Fastify app.all('/api/mcp')": async () => {
    const server = createMcpServer(options());
    const app = Fastify({ forceCloseConnections: true });
    app.all("/api/mcp", fastifyHandler(server));
    const base = await app.listen({ port: 0, host: "127.0.0.1" });
    return {
      url: `${base}/api/mcp`,
      path: "/api/mcp",
      close: async () => {
        await app.close();
        await server.close();
      },
    };
  },
};

async function stopHttp(http: Server, server: McpServer): Promise<void> {
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
  await server.close();
}

function assertView(text: string, door: Door): void {
  const view = JSON.parse(text) as Record<string, unknown>;
  assert.deepEqual(view, {
    method: "POST",
    path: door.path,
    clientAddress: door.address === undefined ? "127.0.0.1" : door.address,
    headers: { "x-tenant": "acme", "x-feature-flags": "beta" },
  });
}

function textOf(result: unknown): string {
  const [block] = (result as { content: { type: string; text: string }[] }).content;
  assert.equal(block?.type, "text");
  return block.text;
}

for (const [name, start] of Object.entries(doors)) {
  describe(`ctx.request: ${name}`, () => {
    let door: Door;
    after(() => door?.close());

    test("SDK 1.x (2025-11-25): method, path, address, allowed headers only", async () => {
      door = await start();
      const client = new LegacyClient({ name: "view-test", version: "1.0.0" });
      await client.connect(
        new LegacyTransport(new URL(door.url), { requestInit: { headers: SENT } }),
      );
      try {
        assertView(textOf(await client.callTool({ name: "whoami", arguments: {} })), door);
      } finally {
        await client.close();
      }
    });

    test("client 2.x (2026-07-28): the same", async () => {
      const client = new ModernClient(
        { name: "view-test", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(
        new ModernTransport(new URL(door.url), { requestInit: { headers: SENT } }),
      );
      try {
        assertView(textOf(await client.callTool({ name: "whoami", arguments: {} })), door);
      } finally {
        await client.close();
      }
    });
  });
}

test("stdio: ctx.request is null", async () => {
  const server = createMcpServer({ tools: options().tools ?? [] });
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const serving = serveStdio(server, { stdin, stdout });
  const lines: string[] = [];
  let buffer = "";
  stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8");
    let at = buffer.indexOf("\n");
    while (at !== -1) {
      lines.push(buffer.slice(0, at));
      buffer = buffer.slice(at + 1);
      at = buffer.indexOf("\n");
    }
  });
  const send = (message: unknown): void => {
    stdin.write(`${JSON.stringify(message)}\n`);
  };
  send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    },
  });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "whoami", arguments: {} } });
  const deadline = Date.now() + 5_000;
  let answer: { result?: { content: { text: string }[] } } | undefined;
  while (answer === undefined && Date.now() < deadline) {
    answer = lines.map((line) => JSON.parse(line)).find((message) => message.id === 2);
    if (answer === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(answer?.result?.content[0]?.text, "null");
  stdin.end();
  await serving.closed;
  await server.close();
});

test("a task's run sees the view of the request that created it", async () => {
  const { auth: _auth, ...withoutAuth } = options();
  const server = createMcpServer({ ...withoutAuth, sessions: true });
  const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
  try {
    const session = await openSession(url);
    const created = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
        "x-tenant": "task-tenant",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "task_view", arguments: {}, task: {} },
      }),
    });
    const taskId = ((await created.json()) as { result: { task: { taskId: string } } }).result.task
      .taskId;
    const task = await untilTerminal(() => inSession(url, session, "tasks/get", { taskId }));
    assert.equal(task.status, "completed");
    assert.deepEqual(seen.get("task"), {
      method: "POST",
      path: "/mcp",
      clientAddress: "127.0.0.1",
      headers: { "x-tenant": "task-tenant" },
    });
  } finally {
    await server.close();
  }
});

test("requestHeaders refuses credentials and bad names at construction", () => {
  for (const name of ["Authorization", "cookie", "Proxy-Authorization"]) {
    assert.throws(
      () => createMcpServer({ requestHeaders: [name] }),
      (error: unknown) =>
        error instanceof InvalidOptionError &&
        /requestHeaders/.test(error.message) &&
        /credentials never reach handlers/.test(error.message),
      name,
    );
  }
  for (const bad of [["x tenant"], [""], "x-tenant", [42], Array(65).fill("x-a")]) {
    assert.throws(() => createMcpServer({ requestHeaders: bad as never }), InvalidOptionError);
  }
});
