/**
 * Resources, resource templates, prompts, completions and structured tool output end to end with
 * the official clients against a real listening server holding the CLI demo's definitions:
 * `@modelcontextprotocol/sdk` 1.x (2025-11-25) and `@modelcontextprotocol/client` 2.x pinned to
 * 2026-07-28. A slow `prompts/get` and a slow `resources/read` are cancelled by the client's
 * `notifications/cancelled` (2025) and by closing the stream (2026-07-28).
 *
 * Spec pages: https://modelcontextprotocol.io/specification/2025-11-25/server/resources,
 * …/server/prompts, …/server/utilities/completion, …/server/utilities/pagination, and
 * https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation.
 */
import assert from "node:assert/strict";
import diagnosticsChannel from "node:diagnostics_channel";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { z } from "zod";

import { demoPrompts } from "../../src/cli/demo-prompts.js";
import {
  demoResources,
  demoResourceTemplates,
  LOGO_PNG_BASE64,
} from "../../src/cli/demo-resources.js";
import { demoTools } from "../../src/cli/demo-tools.js";
import { ChannelName, type RequestCancelledMessage } from "../../src/diagnostics.js";
import { definePrompt, defineTool } from "../../src/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { until } from "../server/fixtures.js";

/** Server-side view of the slow prompt: when each run started and how its signal ended. */
const slowRuns = new Map<
  string,
  { startedAt: number; abortedAt: number | null; source?: string }
>();

const slowPrompt = definePrompt({
  name: "slow_review",
  description: "Waits until cancelled (at most 30 s), for the cancellation tests",
  arguments: z.object({ tag: z.string() }),
  get: async ({ tag }, ctx) => {
    const run = { startedAt: performance.now(), abortedAt: null as number | null, source: "" };
    slowRuns.set(tag, run);
    ctx.signal.addEventListener("abort", () => {
      run.abortedAt = performance.now();
      run.source = (ctx.signal.reason as { source?: string }).source ?? "";
    });
    await delay(30_000, undefined, { signal: ctx.signal });
    return "never reached when cancelled";
  },
});

/** A tool whose `region` argument a 2026-07-28 client must mirror into `Mcp-Param-Region`. */
const routeTool = defineTool({
  name: "route",
  description: "Says where a query would run",
  input: z.object({ region: z.string().meta({ "x-mcp-header": "Region" }), query: z.string() }),
  handler: ({ region, query }) => `${query} @ ${region}`,
});

describe("official clients: resources, templates, prompts, completion, structured output", () => {
  let server: McpServer;
  let http: Server;
  let url: URL;
  /** The `Mcp-Method` header of every 2026-07-28 POST (2025-era requests carry none). */
  const posts: string[] = [];
  const cancels: RequestCancelledMessage[] = [];
  const onCancel = (message: unknown): void => {
    cancels.push(message as RequestCancelledMessage);
  };

  before(async () => {
    diagnosticsChannel.subscribe(ChannelName.requestCancelled, onCancel);
    server = createMcpServer({
      tools: [...demoTools, routeTool],
      resources: demoResources,
      resourceTemplates: demoResourceTemplates,
      prompts: [...demoPrompts, slowPrompt],
      // One item per page, so every list is paged by the clients.
      pageSize: 1,
    });
    // Wrapped only to count modern requests per method; the listener is the library's own.
    http = createServer((req, res) => {
      const method = req.headers["mcp-method"];
      if (req.method === "POST" && typeof method === "string") posts.push(method);
      server.handler(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  });

  after(async () => {
    diagnosticsChannel.unsubscribe(ChannelName.requestCancelled, onCancel);
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await server.close();
  });

  async function legacy(): Promise<LegacyClient> {
    const client = new LegacyClient({ name: "e2e-2025", version: "1.0.0" });
    await client.connect(new LegacyTransport(url));
    return client;
  }

  async function modern(): Promise<ModernClient> {
    const client = new ModernClient(
      { name: "e2e-2026", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new ModernTransport(url));
    assert.equal(client.getProtocolEra(), "modern");
    return client;
  }

  /** Follows `nextCursor` to the end, one page per request; at most 20 pages. */
  async function allPages<T>(
    page: (cursor: string | undefined) => Promise<{ nextCursor?: string | undefined; items: T[] }>,
  ): Promise<{ items: T[]; pages: number }> {
    const items: T[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const result = await page(cursor);
      items.push(...result.items);
      cursor = result.nextCursor;
      pages++;
    } while (cursor !== undefined && pages < 20);
    return { items, pages };
  }

  /** The same surface checks for both clients (their method names and shapes are the same). */
  async function exerciseSurface(client: LegacyClient | ModernClient): Promise<void> {
    const c = client as LegacyClient;
    const resources = await allPages(async (cursor) => {
      const r = await c.listResources(cursor === undefined ? {} : { cursor });
      return { nextCursor: r.nextCursor, items: r.resources.map((x) => x.uri) };
    });
    assert.deepEqual(resources.items, ["demo://logo.png", "demo://readme", "ui://demo/dice.html"]);
    // SDK 1.x returns one page per call; the 2.x client walks every page itself when asked
    // without a cursor. Either way the server answered one resource per page.
    const listPosts = posts.filter((m) => m === "resources/list").length;
    assert.ok(
      resources.pages === 3 || listPosts >= 3,
      `paged: ${resources.pages} pages, ${listPosts} POSTs`,
    );

    const readme = await c.readResource({ uri: "demo://readme" });
    const text = readme.contents[0] as { uri: string; mimeType?: string; text?: string };
    assert.equal(text.uri, "demo://readme");
    assert.equal(text.mimeType, "text/markdown");
    assert.match(text.text ?? "", /^# conduit-mcp demo server/);
    const logo = await c.readResource({ uri: "demo://logo.png" });
    assert.deepEqual(logo.contents[0], {
      uri: "demo://logo.png",
      mimeType: "image/png",
      blob: LOGO_PNG_BASE64,
    });

    const templates = await c.listResourceTemplates();
    assert.deepEqual(
      templates.resourceTemplates.map((t) => t.uriTemplate),
      ["demo://sleep/{ms}"],
    );
    const slept = await c.readResource({ uri: "demo://sleep/5" });
    assert.equal((slept.contents[0] as { text?: string }).text, "slept 5 ms");

    const prompts = await allPages(async (cursor) => {
      const r = await c.listPrompts(cursor === undefined ? {} : { cursor });
      return {
        nextCursor: r.nextCursor,
        items: r.prompts as Array<{ name: string; arguments?: unknown }>,
      };
    });
    const review = prompts.items.find((p) => p.name === "review");
    assert.deepEqual(review?.arguments, [
      { name: "code", description: "The code to review", required: true },
      { name: "language", description: "Its programming language", required: false },
    ]);
    const got = await c.getPrompt({
      name: "review",
      arguments: { code: "fn main() {}", language: "rust" },
    });
    assert.equal(got.messages.length, 1);
    assert.equal(got.messages[0]?.role, "user");
    assert.match(
      (got.messages[0]?.content as { text?: string } | undefined)?.text ?? "",
      /this rust code/,
    );

    const languages = await c.complete({
      ref: { type: "ref/prompt", name: "review" },
      argument: { name: "language", value: "ja" },
    });
    assert.deepEqual(languages.completion.values, ["java", "javascript"]);
    const durations = await c.complete({
      ref: { type: "ref/resource", uri: "demo://sleep/{ms}" },
      argument: { name: "ms", value: "60" },
    });
    assert.deepEqual(durations.completion.values, ["60000", "600000"]);

    // The client caches stats' outputSchema from tools/list and validates structuredContent.
    const tools = await allPages(async (cursor) => {
      const r = await c.listTools(cursor === undefined ? {} : { cursor });
      return { nextCursor: r.nextCursor, items: r.tools };
    });
    const stats = tools.items.find((t) => t.name === "stats");
    assert.equal(stats?.outputSchema?.type, "object");
    const result = await c.callTool({ name: "stats", arguments: { numbers: [1, 2, 3, 10] } });
    assert.deepEqual(result.structuredContent, {
      count: 4,
      sum: 16,
      mean: 4,
      median: 2.5,
      min: 1,
      max: 10,
    });
    assert.notEqual(result.isError, true);
  }

  test("SDK 1.x (2025-11-25): list (paged), read, templates, prompt, complete, structured output", async () => {
    const client = await legacy();
    try {
      await exerciseSurface(client);
    } finally {
      await client.close();
    }
  });

  test("client 2.x pinned to 2026-07-28: the same, and it mirrors x-mcp-header into Mcp-Param-*", async () => {
    const client = await modern();
    try {
      await exerciseSurface(client);
      // Served only when the header matches the body (a mismatch would be 400 / -32020).
      const routed = await client.callTool({
        name: "route",
        arguments: { region: "eu-west-3", query: "select 1" },
      });
      assert.deepEqual(routed.content, [{ type: "text", text: "select 1 @ eu-west-3" }]);
    } finally {
      await client.close();
    }
  });

  test("SDK 1.x: an aborted slow prompts/get is cancelled by its notifications/cancelled", async () => {
    const client = await legacy();
    try {
      const controller = new AbortController();
      const pending = client.getPrompt(
        { name: "slow_review", arguments: { tag: "legacy-prompt" } },
        { signal: controller.signal },
      );
      await until(() => slowRuns.has("legacy-prompt"), 5_000, "the prompt started");
      controller.abort(new Error("user pressed stop"));
      await assert.rejects(pending);
      await until(
        () => slowRuns.get("legacy-prompt")?.abortedAt != null,
        5_000,
        "server-side abort",
      );
      assert.equal(slowRuns.get("legacy-prompt")?.source, "notification");
      await until(() => server.registry.inFlightCount === 0, 5_000, "in-flight gauge back to 0");
    } finally {
      await client.close();
    }
  });

  test("SDK 1.x: an aborted slow resources/read (demo://sleep/60000) is cancelled the same way", async () => {
    const client = await legacy();
    try {
      const before = cancels.length;
      const started = performance.now();
      await assert.rejects(
        client.readResource({ uri: "demo://sleep/60000" }, { signal: AbortSignal.timeout(200) }),
      );
      await until(
        () => cancels.slice(before).some((m) => m.source === "notification"),
        5_000,
        "a notification-sourced cancel",
      );
      await until(() => server.registry.inFlightCount === 0, 5_000, "in-flight gauge back to 0");
      assert.ok(performance.now() - started < 10_000, "long before the 60 s read would end");
    } finally {
      await client.close();
    }
  });

  test("client 2.x (2026-07-28): aborting a slow prompts/get closes its stream, which cancels it", async () => {
    const client = await modern();
    try {
      const controller = new AbortController();
      const pending = client.getPrompt(
        { name: "slow_review", arguments: { tag: "modern-prompt" } },
        { signal: controller.signal },
      );
      await until(() => slowRuns.has("modern-prompt"), 5_000, "the prompt started");
      controller.abort(new Error("user pressed stop"));
      await assert.rejects(pending);
      await until(
        () => slowRuns.get("modern-prompt")?.abortedAt != null,
        5_000,
        "server-side abort",
      );
      assert.equal(slowRuns.get("modern-prompt")?.source, "disconnect");
      await until(() => server.registry.inFlightCount === 0, 5_000, "in-flight gauge back to 0");
    } finally {
      await client.close();
    }
  });

  test("client 2.x (2026-07-28): aborting a slow resources/read cancels it by disconnect", async () => {
    const client = await modern();
    try {
      const before = cancels.length;
      await assert.rejects(
        client.readResource({ uri: "demo://sleep/60000" }, { signal: AbortSignal.timeout(200) }),
      );
      await until(
        () => cancels.slice(before).some((m) => m.source === "disconnect"),
        5_000,
        "a disconnect-sourced cancel",
      );
      await until(() => server.registry.inFlightCount === 0, 5_000, "in-flight gauge back to 0");
    } finally {
      await client.close();
    }
  });
});
