/**
 * 2026-07-28 `subscriptions/listen` on one node, over real HTTP on 127.0.0.1
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions): the
 * acknowledgement first, every message tagged with the subscription id, only what the filter
 * asked for, graceful completion on shutdown; bounds per scope then in all; keep-alives; a slow
 * listener is cut; a hang-up frees its entry at once. The official 2.x client pinned to
 * 2026-07-28 listens; the SDK 1.x client hears list changes on its 2025-era GET stream.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

import { definePrompt, defineTool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { openListen, until } from "./listen-helpers.js";

const SUB = "io.modelcontextprotocol/subscriptionId";

function tool(name: string) {
  return defineTool({ name, input: z.object({}), handler: () => name });
}

function metaOf(message: Record<string, unknown>): Record<string, unknown> {
  const params = message.params as Record<string, unknown> | undefined;
  return (params?._meta ?? {}) as Record<string, unknown>;
}

describe("subscriptions/listen over raw HTTP", () => {
  let server: McpServer;
  let url: string;

  before(async () => {
    server = createMcpServer({
      keepAliveMs: 100,
      maxListenersPerScope: 3,
      maxListenUris: 2,
    });
    ({ url } = await server.listen());
  });
  after(() => server.close());

  test("acknowledges first, tags every message with the subscription id, honours the filter", async () => {
    const tools = await openListen(url, {
      toolsListChanged: true,
      resourceSubscriptions: ["test://a", "test://a"],
      somethingNew: true,
    });
    const prompts = await openListen(url, { promptsListChanged: true });
    assert.equal(tools.status, 200);
    assert.match(tools.contentType, /^text\/event-stream/);
    const ack = await tools.next(() => true);
    assert.equal(ack.method, "notifications/subscriptions/acknowledged");
    assert.equal(metaOf(ack)[SUB], tools.id);
    // What the server agreed to: the known types asked for, URIs once.
    assert.deepEqual((ack.params as Record<string, unknown>).notifications, {
      toolsListChanged: true,
      resourceSubscriptions: ["test://a"],
    });
    await prompts.next((m) => m.method === "notifications/subscriptions/acknowledged");
    assert.equal(server.concurrency().listeners, 2);

    server.tools.add(tool("added"));
    assert.equal(server.resources.updated("test://a"), 1);
    assert.equal(server.resources.updated("test://other"), 0);
    server.prompts.add(definePrompt({ name: "p", get: () => "p" }));
    const changed = await tools.next((m) => m.method === "notifications/tools/list_changed");
    assert.equal(metaOf(changed)[SUB], tools.id);
    const updated = await tools.next((m) => m.method === "notifications/resources/updated");
    assert.equal((updated.params as Record<string, unknown>).uri, "test://a");
    assert.equal(metaOf(updated)[SUB], tools.id);
    await prompts.next((m) => m.method === "notifications/prompts/list_changed");
    // The prompts-only listener heard no tool change and no update; the tools one no prompt change.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(
      prompts.messages.map((m) => m.method),
      ["notifications/subscriptions/acknowledged", "notifications/prompts/list_changed"],
    );
    assert.ok(!tools.messages.some((m) => m.method === "notifications/prompts/list_changed"));
    assert.equal(
      tools.messages.filter((m) => m.method === "notifications/tools/list_changed").length,
      1,
    );
    server.tools.remove("added");
    server.prompts.remove("p");

    // Idle streams carry keep-alive comments (keepAliveMs 100).
    assert.ok(await until(() => tools.text.includes(": keepalive"), 2_000), "no keep-alive");

    // A hang-up frees the entry at once.
    tools.close();
    prompts.close();
    assert.ok(await until(() => server.concurrency().listeners === 0, 2_000));
    assert.ok(await until(() => server.concurrency().requests === 0, 2_000));
  });

  test("a bad filter is -32602; a client that does not accept a stream is refused", async () => {
    for (const bad of [
      "tools",
      { toolsListChanged: "yes" },
      { resourceSubscriptions: "test://a" },
      { resourceSubscriptions: [1] },
      { resourceSubscriptions: ["test://1", "test://2", "test://3"] }, // maxListenUris 2
    ]) {
      const refused = await openListen(url, bad);
      await refused.ended;
      assert.equal(refused.contentType.startsWith("application/json"), true, refused.text);
      assert.equal((refused.messages[0]?.error as { code?: number })?.code, -32602, refused.text);
    }
    const jsonOnly = await openListen(
      url,
      { toolsListChanged: true },
      { accept: "application/json" },
    );
    await jsonOnly.ended;
    assert.equal((jsonOnly.messages[0]?.error as { code?: number })?.code, -32600);
    assert.equal(server.concurrency().listeners, 0);
  });

  test("a flood from one scope is refused at its bound; another scope still listens; hang-ups free all", async () => {
    const mine = [];
    for (let i = 0; i < 3; i++) {
      const listen = await openListen(url, { toolsListChanged: true });
      await listen.next((m) => m.method === "notifications/subscriptions/acknowledged");
      mine.push(listen);
    }
    const refused = await openListen(url, { toolsListChanged: true });
    await refused.ended;
    const error = refused.messages[0]?.error as { code?: number; message?: string };
    assert.equal(error?.code, -32000);
    assert.match(String(error?.message), /Too many subscriptions\/listen streams for this client/);
    // 127.0.0.2 is another client IP bucket: its own bound.
    const other = await openListen(url, { toolsListChanged: true }, { localAddress: "127.0.0.2" });
    await other.next((m) => m.method === "notifications/subscriptions/acknowledged");
    assert.equal(server.concurrency().listeners, 4);
    server.tools.add(tool("flood"));
    await other.next((m) => m.method === "notifications/tools/list_changed");
    server.tools.remove("flood");
    for (const listen of [...mine, other]) listen.close();
    assert.ok(await until(() => server.concurrency().listeners === 0, 2_000));
  });

  test("a listener that does not read is cut, not buffered without bound", async () => {
    const small = createMcpServer({ keepAliveMs: 0, maxStreamBufferBytes: 4_096 });
    const { url: smallUrl } = await small.listen();
    try {
      const slow = await openListen(smallUrl, { resourceSubscriptions: ["test://big"] });
      await slow.next((m) => m.method === "notifications/subscriptions/acknowledged");
      slow.pause();
      // Each update is ~8 KB on the wire once the URI is long; the socket buffers fill, then the
      // server's own buffer passes 4 KiB and the stream is cut (bounded rounds).
      const uri = `test://big/${"x".repeat(7_000)}`;
      const wide = await openListen(smallUrl, { resourceSubscriptions: [uri] });
      await wide.next((m) => m.method === "notifications/subscriptions/acknowledged");
      wide.pause();
      for (let round = 0; round < 2_000 && small.concurrency().listeners > 1; round++) {
        small.resources.updated(uri);
        if (round % 50 === 49) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.ok(
        await until(() => small.concurrency().listeners === 1, 2_000),
        "the slow listener was not cut",
      );
      slow.close();
      assert.ok(await until(() => small.concurrency().listeners === 0, 2_000));
    } finally {
      await small.close();
    }
  });
});

describe("the official 2.x client pinned to 2026-07-28 listens", () => {
  let server: McpServer;
  let url: URL;

  before(async () => {
    server = createMcpServer({ tools: [tool("echo")], keepAliveMs: 60_000 });
    url = new URL((await server.listen()).url);
  });

  test("hears list changes and updates through listen(); close() frees the entry; shutdown is graceful", async () => {
    const client = new ModernClient(
      { name: "listen-test", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new ModernTransport(url));
    const heard: string[] = [];
    client.setNotificationHandler("notifications/tools/list_changed", () => {
      heard.push("tools");
    });
    client.setNotificationHandler("notifications/resources/updated", (n) => {
      heard.push(`updated ${n.params.uri}`);
    });
    const subscription = await client.listen({
      toolsListChanged: true,
      resourceSubscriptions: ["test://watched"],
    });
    assert.deepEqual(subscription.honoredFilter, {
      toolsListChanged: true,
      resourceSubscriptions: ["test://watched"],
    });
    server.tools.add(tool("late"));
    server.resources.updated("test://watched");
    assert.ok(await until(() => heard.length >= 2, 2_000), `heard ${heard.join(", ")}`);
    assert.deepEqual(heard, ["tools", "updated test://watched"]);
    await subscription.close();
    assert.equal(await subscription.closed, "local");
    assert.ok(await until(() => server.concurrency().listeners === 0, 2_000));

    const second = await client.listen({ toolsListChanged: true });
    assert.equal(server.concurrency().listeners, 1);
    await server.close();
    assert.equal(await second.closed, "graceful");
    assert.equal(server.concurrency().listeners, 0);
    await client.close();
  });
});

describe("2025-era sessions hear list changes on their GET stream (SDK 1.x)", () => {
  let server: McpServer;
  let url: URL;

  before(async () => {
    server = createMcpServer({ sessions: true, keepAliveMs: 60_000 });
    url = new URL((await server.listen()).url);
  });
  after(() => server.close());

  test("initialize declares listChanged; tools, prompts and resources changes arrive", async () => {
    const client = new Client({ name: "legacy", version: "1.0.0" });
    const heard: string[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      heard.push("tools");
    });
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
      heard.push("prompts");
    });
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      heard.push("resources");
    });
    await client.connect(new StreamableHTTPClientTransport(url));
    const capabilities = client.getServerCapabilities();
    assert.equal(capabilities?.tools?.listChanged, true);
    assert.equal(capabilities?.prompts?.listChanged, true);
    assert.equal(capabilities?.resources?.listChanged, true);
    // The GET stream opens asynchronously after initialize: wait for it (bounded).
    assert.ok(await until(() => server.concurrency().streams === 1, 5_000), "no GET stream");
    server.tools.add(tool("legacy-added"));
    server.prompts.add(definePrompt({ name: "legacy-prompt", get: () => "x" }));
    server.resourceTemplates.add(
      (await import("../../src/protocol/index.js")).defineResourceTemplate({
        uriTemplate: "test://t/{id}",
        name: "t",
        read: () => "t",
      }),
    );
    assert.ok(await until(() => heard.length >= 3, 2_000), `heard ${heard.join(", ")}`);
    assert.deepEqual(heard, ["tools", "prompts", "resources"]);
    await client.close();
  });
});
