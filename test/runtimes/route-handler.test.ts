/**
 * The Next.js recipe (docs/runtimes.md): a route module exporting `POST`, `GET` and `DELETE`
 * that hand the `Request` to `server.fetch`. The official SDK 1.x (2025-11-25) and 2.x
 * (2026-07-28) clients reach it through a `fetch` that calls the exported function for the
 * request's method, as Next.js does, and list, call, follow progress and cancel (2025: by
 * notification; 2026-07-28: by closing the stream, which aborts the `Request`'s signal).
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { records } from "../doors/fixtures/door-tools.js";
import * as route from "./fixtures/next-route.js";

after(() => route.closeServer());

const handlers: Record<string, (request: Request) => Promise<Response>> = {
  GET: route.GET,
  POST: route.POST,
  DELETE: route.DELETE,
};

/** What Next.js does with a request to app/api/mcp: the exported function of its method. */
async function nextFetch(url: string | URL, init?: RequestInit): Promise<Response> {
  const request = new Request(url, init);
  // What the platform's proxy in front of Next.js sets (the recipe reads it).
  request.headers.set("x-real-ip", "203.0.113.7");
  const handler = handlers[request.method];
  return handler === undefined ? new Response(null, { status: 405 }) : handler(request);
}

const URL_ = new URL("http://app.test/api/mcp");

async function cancels(
  call: (signal: AbortSignal, tag: string) => Promise<unknown>,
  source: string,
): Promise<void> {
  const tag = `next-${source}-${Math.random()}`;
  const controller = new AbortController();
  const pending = call(controller.signal, tag).catch((error: unknown) => error);
  for (let i = 0; i < 400 && !records.has(tag); i++) await sleep(5);
  controller.abort();
  await pending;
  for (let i = 0; i < 400 && records.get(tag)?.abortedAt == null; i++) await sleep(5);
  assert.equal(records.get(tag)?.source, source);
  assert.equal(records.get(tag)?.finished, false);
}

test("2025-11-25 (SDK 1.x) through the route's exports: list, call, progress, cancel", async () => {
  const client = new LegacyClient({ name: "next-legacy", version: "1.0.0" });
  await client.connect(new LegacyTransport(URL_, { fetch: nextFetch }));
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), [
      "ask_name",
      "echo",
      "steps",
      "task_wait",
      "wait",
    ]);
    const progress: number[] = [];
    const done = await client.callTool({ name: "steps", arguments: { to: 2 } }, undefined, {
      onprogress: ({ progress: step }) => progress.push(step),
    });
    assert.deepEqual((done as { content: { text: string }[] }).content[0]?.text, "2 steps");
    assert.deepEqual(progress, [1, 2]);
    await cancels(
      (signal, tag) =>
        client.callTool({ name: "wait", arguments: { ms: 30_000, tag } }, undefined, { signal }),
      "notification",
    );
  } finally {
    await client.close();
  }
});

test("2026-07-28 (SDK 2.x) through the route's exports: list, call, cancel by closing the stream", async () => {
  const client = new ModernClient(
    { name: "next-modern", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new ModernTransport(URL_, { fetch: nextFetch }));
  try {
    const { tools } = await client.listTools();
    assert.equal(tools.length, 5);
    const echoed = await client.callTool({ name: "echo", arguments: { text: "hi" } });
    assert.deepEqual(echoed.content, [{ type: "text", text: "hi" }]);
    await cancels(
      (signal, tag) =>
        client.callTool({ name: "wait", arguments: { ms: 30_000, tag } }, { signal }),
      "disconnect",
    );
  } finally {
    await client.close();
  }
});
