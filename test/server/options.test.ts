import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { InvalidOptionError } from "../../src/errors.js";
import {
  createMcpServer,
  defineTool,
  PACKAGE_VERSION,
  resolveOptions,
} from "../../src/server/index.js";

const echo = defineTool({ name: "echo", handler: () => "x" });

describe("createMcpServer options", () => {
  test("defaults", () => {
    const options = resolveOptions({ tools: [echo] });
    assert.equal(options.name, "conduit-mcp");
    assert.equal(options.version, PACKAGE_VERSION);
    assert.match(PACKAGE_VERSION, /^\d+\.\d+\.\d+/);
    assert.equal(options.path, "/mcp");
    assert.equal(options.sessions, null);
    assert.equal(options.maxBodyBytes, 1_048_576);
    assert.equal(options.cancelOnDisconnect, true);
    assert.equal(options.streamCancelTimeoutMs, 5_000);
    assert.equal(options.keepAliveMs, 15_000);
    assert.equal(options.closeGraceMs, 5_000);
    assert.equal(options.metrics, false);
    assert.deepEqual(resolveOptions({ tools: [], sessions: true }).sessions, {
      maxSessions: 100_000,
      maxSessionsPerScope: 64,
      maxSessionBytesPerScope: 262_144,
      maxSessionBytes: 67_108_864,
      ttlMs: 1_800_000,
      store: undefined,
      maxSubscriptionsPerSession: 64,
      maxSubscriptionsPerScope: 256,
      maxSubscriptionBytesPerScope: 1_048_576,
      maxSubscriptions: 100_000,
      maxSubscriptionBytes: 33_554_432,
    });
    assert.throws(
      () => resolveOptions({ sessions: { maxSubscriptionsPerSession: -1 } }),
      /sessions\.maxSubscriptionsPerSession/,
    );
  });

  test("bad options throw InvalidOptionError at construction", () => {
    const bad: unknown[] = [
      null,
      { tools: [{}] },
      { resources: [{}] },
      { resourceTemplates: [{ uriTemplate: "x://{a}" }] },
      { prompts: [{ name: "p" }] },
      { title: 5 },
      { icons: [{ src: "" }] },
      { websiteUrl: "ftp://example.com" },
      { instructions: 5 },
      { pageSize: 0 },
      { maxUriLength: 10 },
      { maxTemplateValueLength: 0 },
      { cursorSecret: "too short" },
      { tools: [echo, echo] },
      { tools: [], name: "" },
      { tools: [], path: "mcp" },
      { tools: [], path: "/health" },
      { tools: [], sessions: "yes" },
      { tools: [], sessions: { ttlMs: 0 } },
      { tools: [], sessions: { maxSessions: -1 } },
      { tools: [], requireSession: true },
      { tools: [], maxBodyBytes: 0 },
      { tools: [], streamCancelTimeoutMs: -1 },
      { tools: [], keepAliveMs: 2 ** 40 },
      { tools: [], closeGraceMs: "5s" },
      { tools: [], metrics: 1 },
      { tools: [], cancelOnDisconnect: "no" },
      { tools: [], registry: {} },
      { tools: [], auth: {} },
      { tools: [], auth: { tokens: { s: 5 } } },
      { tools: [], auth: { verify: "x" } },
      { tools: [], trustProxy: "not-a-cidr" },
      { tools: [], allowedOrigins: "https://a.example" },
      { tools: [], allowedOrigins: ["ftp://a.example"] },
    ];
    for (const options of bad) {
      assert.throws(
        () => createMcpServer(options as never),
        InvalidOptionError,
        JSON.stringify(options),
      );
    }
  });

  test("a server that never listened closes cleanly, twice", async () => {
    const server = createMcpServer({ tools: [echo], sessions: true, metrics: true });
    await server.close();
    await server.close();
  });
});
