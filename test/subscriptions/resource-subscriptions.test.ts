/**
 * Resource subscriptions over real HTTP on 127.0.0.1 (2025-11-25 server/resources
 * "Subscriptions", basic/transports "Listening for Messages from the Server"): the official SDK
 * 1.x client subscribes and hears `notifications/resources/updated` on its GET stream; after
 * unsubscribing it hears nothing more for that URI; the GET stream and subscriptions belong to
 * the session's principal only; bounds and refusals.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

import { createMcpServer, type McpServer } from "../../src/server/index.js";

const ALICE = "alice-token-0123456789abcdef";
const BOB = "bob-token-0123456789abcdef01";

async function start(server: McpServer): Promise<{ url: URL; stop: () => Promise<void> }> {
  const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
  return { url: new URL(url), stop: () => server.close() };
}

/** Calls `updated(uri)` every 25 ms until `received()` (the GET stream opens asynchronously). */
async function updateUntil(server: McpServer, uri: string, received: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !received(); i++) {
    server.resources.updated(uri);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.ok(received(), `no notifications/resources/updated for ${uri} within 10 s`);
}

describe("resource subscriptions with the official SDK 1.x client", () => {
  let server: McpServer;
  let url: URL;
  let stop: () => Promise<void>;

  before(async () => {
    server = createMcpServer({ sessions: true });
    ({ url, stop } = await start(server));
  });
  after(() => stop());

  test("advertises resources.subscribe and delivers updates on the GET stream", async () => {
    const client = new Client({ name: "test", version: "1.0.0" });
    const seen: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      seen.push(n.params.uri);
    });
    await client.connect(new StreamableHTTPClientTransport(url));
    assert.equal(client.getServerCapabilities()?.resources?.subscribe, true);
    assert.deepEqual(await client.subscribeResource({ uri: "test://watched" }), {});
    await updateUntil(server, "test://watched", () => seen.includes("test://watched"));
    // Another URI nobody subscribed to reaches nobody.
    assert.equal(server.resources.updated("test://other"), 0);
    await client.close();
  });

  test("after unsubscribe no update for that URI arrives (ordered before a later one)", async () => {
    const client = new Client({ name: "test", version: "1.0.0" });
    const seen: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      seen.push(n.params.uri);
    });
    await client.connect(new StreamableHTTPClientTransport(url));
    await client.subscribeResource({ uri: "test://a" });
    await client.subscribeResource({ uri: "test://b" });
    await updateUntil(server, "test://a", () => seen.includes("test://a"));
    assert.deepEqual(await client.unsubscribeResource({ uri: "test://a" }), {});
    seen.length = 0;
    assert.equal(server.resources.updated("test://a"), 0);
    // One stream carries both in order: b arriving proves no a was on its way.
    assert.equal(server.resources.updated("test://b"), 1);
    await updateUntil(server, "test://b", () => seen.includes("test://b"));
    assert.ok(!seen.includes("test://a"));
    await client.close();
  });
});

/** A raw 2025-11-25 session over fetch. */
async function initialize(url: URL, token?: string): Promise<string> {
  const response = await fetch(url, {
    method: "POST",
    headers: headers(token),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "raw", version: "1" },
      },
    }),
  });
  assert.equal(response.status, 200);
  await response.text();
  const id = response.headers.get("mcp-session-id");
  assert.ok(id !== null);
  return id;
}

function headers(token?: string, session?: string): Record<string, string> {
  const h: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
  };
  if (token !== undefined) h.authorization = `Bearer ${token}`;
  if (session !== undefined) h["mcp-session-id"] = session;
  return h;
}

async function rpc(url: URL, session: string, method: string, params: unknown, token?: string) {
  const response = await fetch(url, {
    method: "POST",
    headers: headers(token, session),
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method, params }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("GET stream and subscriptions over raw HTTP", () => {
  let server: McpServer;
  let url: URL;
  let stop: () => Promise<void>;

  before(async () => {
    server = createMcpServer({
      sessions: { maxSubscriptionsPerSession: 2 },
      auth: { tokens: { [ALICE]: "alice", [BOB]: "bob" } },
      keepAliveMs: 60_000,
    });
    ({ url, stop } = await start(server));
  });
  after(() => stop());

  test("another principal cannot open a session's stream nor subscribe in it (404)", async () => {
    const session = await initialize(url, ALICE);
    const get = await fetch(url, { method: "GET", headers: headers(BOB, session) });
    assert.equal(get.status, 404);
    await get.text();
    const sub = await rpc(url, session, "resources/subscribe", { uri: "test://x" }, BOB);
    assert.equal(sub.status, 404);
    assert.equal(server.resources.updated("test://x"), 0);
  });

  test("the owner's GET is an event stream carrying the update; DELETE ends it", async () => {
    const session = await initialize(url, ALICE);
    const sub = await rpc(url, session, "resources/subscribe", { uri: "test://y" }, ALICE);
    assert.deepEqual(sub.body.result, {});
    const get = await fetch(url, { method: "GET", headers: headers(ALICE, session) });
    assert.equal(get.status, 200);
    assert.equal(get.headers.get("content-type"), "text/event-stream");
    const reader = (get.body as ReadableStream<Uint8Array>).getReader();
    assert.equal(server.resources.updated("test://y"), 1);
    let text = "";
    while (!text.includes("\n\n")) {
      const { value, done } = await reader.read();
      assert.ok(!done, "stream ended early");
      text += Buffer.from(value).toString("utf8");
    }
    const data = JSON.parse(text.slice(text.indexOf("data: ") + 6, text.indexOf("\n\n")));
    assert.deepEqual(data, {
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri: "test://y" },
    });
    const del = await fetch(url, { method: "DELETE", headers: headers(ALICE, session) });
    assert.equal(del.status, 204);
    // The stream ends, and the session's subscriptions are gone.
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
    }
    assert.equal(server.resources.updated("test://y"), 0);
  });

  test("a second GET for a session replaces the first stream", async () => {
    const session = await initialize(url, ALICE);
    const first = await fetch(url, { method: "GET", headers: headers(ALICE, session) });
    assert.equal(first.status, 200);
    const firstReader = (first.body as ReadableStream<Uint8Array>).getReader();
    const second = await fetch(url, { method: "GET", headers: headers(ALICE, session) });
    assert.equal(second.status, 200);
    for (;;) {
      const { done } = await firstReader.read();
      if (done) break;
    }
    await second.body?.cancel();
  });

  test("per-session bound: the third URI is refused (-32000), re-subscribing is free", async () => {
    const session = await initialize(url, ALICE);
    for (const uri of ["test://1", "test://2", "test://1"]) {
      const ok = await rpc(url, session, "resources/subscribe", { uri }, ALICE);
      assert.deepEqual(ok.body.result, {});
    }
    const refused = await rpc(url, session, "resources/subscribe", { uri: "test://3" }, ALICE);
    assert.equal((refused.body.error as { code: number }).code, -32000);
    const bad = await rpc(url, session, "resources/subscribe", { uri: 7 }, ALICE);
    assert.equal((bad.body.error as { code: number }).code, -32602);
    await rpc(url, session, "resources/unsubscribe", { uri: "test://1" }, ALICE);
    const again = await rpc(url, session, "resources/subscribe", { uri: "test://3" }, ALICE);
    assert.deepEqual(again.body.result, {});
  });

  test("GET refusals: no session 400, no text/event-stream 406, no credentials 401", async () => {
    const session = await initialize(url, ALICE);
    const none = await fetch(url, { method: "GET", headers: headers(ALICE) });
    assert.equal(none.status, 400);
    await none.text();
    const json = await fetch(url, {
      method: "GET",
      headers: { ...headers(ALICE, session), accept: "application/json" },
    });
    assert.equal(json.status, 406);
    await json.text();
    const anon = await fetch(url, { method: "GET", headers: headers(undefined, session) });
    assert.equal(anon.status, 401);
    await anon.text();
  });
});

describe("a session the store ends", () => {
  test("idle expiry ends its GET stream and drops its subscriptions", async () => {
    const server = createMcpServer({ sessions: { ttlMs: 300 } });
    const { url, stop } = await start(server);
    try {
      const session = await initialize(url);
      const sub = await rpc(url, session, "resources/subscribe", { uri: "test://e" });
      assert.deepEqual(sub.body.result, {});
      const get = await fetch(url, { method: "GET", headers: headers(undefined, session) });
      assert.equal(get.status, 200);
      const reader = (get.body as ReadableStream<Uint8Array>).getReader();
      // The stream alone does not keep the session alive: the janitor ends it, and the stream.
      const ended = (async () => {
        for (;;) if ((await reader.read()).done) return true;
      })();
      const winner = await Promise.race([
        ended,
        new Promise<boolean>((resolve) => setTimeout(resolve, 10_000, false)),
      ]);
      assert.equal(winner, true, "the stream did not end within 10 s of the session's expiry");
      assert.equal(server.resources.updated("test://e"), 0);
    } finally {
      await stop();
    }
  });
});

describe("GET streams are bounded per scope", () => {
  test("beyond maxOpenStreamsPerScope a GET is 429; another principal is unaffected; a hang-up frees", async () => {
    const server = createMcpServer({
      sessions: true,
      maxOpenStreamsPerScope: 1,
      auth: { tokens: { [ALICE]: "alice", [BOB]: "bob" } },
    });
    const { url, stop } = await start(server);
    try {
      const first = await initialize(url, ALICE);
      const second = await initialize(url, ALICE);
      const open = await fetch(url, { method: "GET", headers: headers(ALICE, first) });
      assert.equal(open.status, 200);
      const refused = await fetch(url, { method: "GET", headers: headers(ALICE, second) });
      assert.equal(refused.status, 429);
      await refused.text();
      const bobs = await initialize(url, BOB);
      const bob = await fetch(url, { method: "GET", headers: headers(BOB, bobs) });
      assert.equal(bob.status, 200);
      await bob.body?.cancel();
      await open.body?.cancel();
      // The hang-up reaches the server asynchronously: retry, bounded.
      let status = 0;
      for (let i = 0; i < 200 && status !== 200; i++) {
        const again = await fetch(url, { method: "GET", headers: headers(ALICE, second) });
        status = again.status;
        if (status === 200) await again.body?.cancel();
        else {
          await again.text();
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      }
      assert.equal(status, 200, "the stream unit was not given back after the hang-up");
    } finally {
      await stop();
    }
  });
});

describe("the fetch door", () => {
  test("a GET through server.fetch is the session's stream and carries the update", async () => {
    const server = createMcpServer({ sessions: true });
    try {
      const endpoint = "http://x.test/mcp";
      const init = await server.fetch(
        new Request(endpoint, {
          method: "POST",
          headers: headers(),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: {
              protocolVersion: "2025-11-25",
              capabilities: {},
              clientInfo: { name: "raw", version: "1" },
            },
          }),
        }),
      );
      const session = init.headers.get("mcp-session-id");
      assert.ok(session !== null);
      await init.text();
      const sub = await server.fetch(
        new Request(endpoint, {
          method: "POST",
          headers: headers(undefined, session),
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 2,
            method: "resources/subscribe",
            params: { uri: "a://b" },
          }),
        }),
      );
      assert.deepEqual(((await sub.json()) as { result: unknown }).result, {});
      const get = await server.fetch(
        new Request(endpoint, { method: "GET", headers: headers(undefined, session) }),
      );
      assert.equal(get.status, 200);
      assert.equal(get.headers.get("content-type"), "text/event-stream");
      const reader = (get.body as ReadableStream<Uint8Array>).getReader();
      // The stream outlives its opening: an update some time later still reaches it.
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(server.resources.updated("a://b"), 1);
      const { value } = await reader.read();
      assert.match(
        Buffer.from(value as Uint8Array).toString(),
        /notifications\/resources\/updated/,
      );
    } finally {
      await server.close();
    }
  });
});

describe("without sessions", () => {
  test("GET is 405, subscribe is unknown and not advertised", async () => {
    const server = createMcpServer();
    const { url, stop } = await start(server);
    try {
      const get = await fetch(url, { method: "GET", headers: headers() });
      assert.equal(get.status, 405);
      await get.text();
      const client = new Client({ name: "test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(url));
      assert.equal(client.getServerCapabilities()?.resources?.subscribe, undefined);
      await assert.rejects(client.subscribeResource({ uri: "test://z" }), /-32601|not found/i);
      assert.equal(server.resources.updated("test://z"), 0);
      await client.close();
    } finally {
      await stop();
    }
  });
});
