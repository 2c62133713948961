/**
 * The extension seam (src/protocol/calls/extension.ts) over a real listening server, with both
 * official clients: an extension defined here is declared in `server/discover` (2026-07-28) and
 * in `initialize` (2025-11-25, SEP-2133 "Server Capabilities"); its method is called with the
 * clients' own raw request API and learns what each client declared; a method that requires the
 * client's declaration refuses one without it (-32021 / HTTP 400, and -32601 in 2025-11-25); the
 * method is cancelled by `notifications/cancelled` (1.x client abort) and by closing its stream
 * (2.x client abort), refused past `maxConcurrentRequestsPerScope`, abandoned at the stream
 * cancel timeout when it ignores its signal, counted by the handler metrics and reported with
 * kind `extension` to observers.
 */
import assert from "node:assert/strict";
import diagnosticsChannel from "node:diagnostics_channel";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { z } from "zod";

import { ChannelName, type RequestCancelledMessage } from "../../src/diagnostics.js";
import { InvalidOptionError, InvalidParamsError } from "../../src/errors.js";
import { defineExtension, type ExtensionRequest } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { rpc, until } from "../server/fixtures.js";

const ID = "com.example/probe";
const V2026 = "2026-07-28";

/** What the `probe/wait` handler saw, by key. */
interface Run {
  started: number;
  aborted: boolean;
  reason: unknown;
  request: ExtensionRequest;
}

const runs = new Map<string, Run>();
let release: () => void = () => {};
let held = new Promise<void>((resolve) => {
  release = resolve;
});

const probe = defineExtension({
  id: ID,
  settings: { version: 2, features: ["wait"] },
  methods: {
    "probe/echo": {
      checkParams: (params) => (typeof params.text === "string" ? null : "text must be a string"),
      handler: (params, ctx, request) => ({
        text: params.text,
        scope: ctx.scope.split(":")[0],
        clientSettings: request.clientSettings,
        era: request.era,
      }),
    },
    "probe/wait": {
      handler: async (params, ctx, request) => {
        const key = String(params.key);
        const run: Run = { started: performance.now(), aborted: false, reason: null, request };
        runs.set(key, run);
        ctx.signal.addEventListener("abort", () => {
          run.aborted = true;
          run.reason = ctx.signal.reason;
        });
        if (params.hold === true) await held;
        else if (params.stubborn === true) await delay(Number(params.ms ?? 2_000));
        else await delay(Number(params.ms ?? 30_000), undefined, { signal: ctx.signal });
        return { waited: key };
      },
    },
    "probe/strict": {
      requireClientDeclaration: true,
      handler: () => ({ ok: true }),
    },
    "probe/bad": {
      handler: (params) => {
        if (params.kind === "params") throw new InvalidParamsError("kind is wrong");
        throw new Error("secret internals");
      },
    },
  },
});

describe("extension seam: defineExtension served over HTTP", () => {
  let server: McpServer;
  let url: string;
  const cancelled: RequestCancelledMessage[] = [];
  const onCancelled = (message: unknown): void => {
    cancelled.push(message as RequestCancelledMessage);
  };
  const handlerKinds: string[] = [];

  before(async () => {
    diagnosticsChannel.subscribe(ChannelName.requestCancelled, onCancelled);
    server = createMcpServer({
      name: "seam",
      version: "1.0.0",
      sessions: true,
      metrics: true,
      extensions: [probe],
      streamCancelTimeoutMs: 300,
      maxConcurrentRequestsPerScope: 4,
      onError: (_error, context) => {
        handlerKinds.push(`${context.kind} ${context.method}`);
      },
    });
    ({ url } = await server.listen({ host: "127.0.0.1", port: 0 }));
  });

  after(async () => {
    release();
    diagnosticsChannel.unsubscribe(ChannelName.requestCancelled, onCancelled);
    await server.close();
  });

  async function modernClient(declare = true): Promise<Client> {
    const client = new Client(
      { name: "seam-modern", version: "1.0.0" },
      {
        versionNegotiation: { mode: { pin: V2026 } },
        // A client always sends its capabilities; "bare" declares another extension only.
        capabilities: {
          extensions: declare ? { [ID]: { want: "wait" } } : { "com.example/other": {} },
        },
      },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    return client;
  }

  async function legacyClient(declare = true): Promise<LegacyClient> {
    const client = new LegacyClient(
      { name: "seam-legacy", version: "1.0.0" },
      { capabilities: declare ? ({ extensions: { [ID]: {} } } as never) : {} },
    );
    await client.connect(new LegacyTransport(new URL(url)));
    return client;
  }

  const Echo = z.object({
    text: z.string(),
    scope: z.string(),
    clientSettings: z.record(z.string(), z.unknown()).nullable(),
    era: z.string(),
  });

  test("defineExtension refuses a bad id, settings or method at definition", () => {
    assert.throws(() => defineExtension({ id: "no-prefix" }), InvalidOptionError);
    assert.throws(() => defineExtension({ id: "com.example/" }), InvalidOptionError);
    assert.throws(() => defineExtension({ id: "1com.example/x" }), InvalidOptionError);
    assert.throws(
      () => defineExtension({ id: "com.example/x", settings: { f: () => 1 } as never }),
      InvalidOptionError,
    );
    assert.throws(
      () => defineExtension({ id: "com.example/x", methods: { "a b": { handler: () => ({}) } } }),
      InvalidOptionError,
    );
    assert.throws(
      () => defineExtension({ id: "com.example/x", methods: { "x/y": {} as never } }),
      InvalidOptionError,
    );
    assert.throws(
      () => createMcpServer({ extensions: [{ id: "com.example/x", methods: {} } as never] }),
      InvalidOptionError,
    );
    // Two extensions may not define one method, nor a built-in one.
    const clash = defineExtension({
      id: "com.example/clash",
      methods: { "tools/list": { handler: () => ({}) } },
    });
    assert.throws(() => createMcpServer({ extensions: [clash] }), /tools\/list/);
    assert.throws(() => createMcpServer({ extensions: [probe, probe] }), /already served/);
  });

  test("2026-07-28 client: server/discover declares it; the method answers with what the client declared", async () => {
    const client = await modernClient();
    try {
      const capabilities = client.getServerCapabilities() as Record<string, unknown>;
      assert.deepEqual((capabilities.extensions as Record<string, unknown>)[ID], {
        version: 2,
        features: ["wait"],
      });
      // The built-in tasks extension is declared through the same seam.
      assert.deepEqual(
        (capabilities.extensions as Record<string, unknown>)["io.modelcontextprotocol/tasks"],
        {},
      );
      const result = await client.request(
        { method: "probe/echo", params: { text: "hi" } },
        Echo.passthrough(),
      );
      assert.equal(result.text, "hi");
      assert.equal(result.era, "2026-07-28");
      assert.equal(result.scope, "ip");
      assert.deepEqual(result.clientSettings, { want: "wait" });
    } finally {
      await client.close();
    }
  });

  test("2025-11-25 client: initialize declares it; the session keeps the client's declaration", async () => {
    const client = await legacyClient();
    const bare = await legacyClient(false);
    try {
      const capabilities = client.getServerCapabilities() as Record<string, unknown>;
      assert.deepEqual((capabilities.extensions as Record<string, unknown>)[ID], {
        version: 2,
        features: ["wait"],
      });
      // 2025-11-25 keeps the core `tasks` capability (not an extension).
      assert.ok(capabilities.tasks !== undefined);
      const result = await client.request(
        { method: "probe/echo", params: { text: "old" } },
        Echo.passthrough(),
      );
      assert.equal(result.era, "2025-11-25");
      assert.equal(result.scope, "session");
      assert.deepEqual(result.clientSettings, {});
      const undeclared = await bare.request(
        { method: "probe/echo", params: { text: "x" } },
        Echo.passthrough(),
      );
      assert.equal(undeclared.clientSettings, null);
    } finally {
      await client.close();
      await bare.close();
    }
  });

  test("a method requiring the declaration refuses a client without it, in both eras", async () => {
    const bare = await modernClient(false);
    const legacyBare = await legacyClient(false);
    const declared = await modernClient();
    try {
      await assert.rejects(
        bare.request({ method: "probe/strict", params: {} }, z.object({ ok: z.boolean() })),
        (error: { code?: number; data?: unknown }) => {
          assert.equal(error.code, -32021);
          assert.deepEqual(error.data, { requiredCapabilities: { extensions: { [ID]: {} } } });
          return true;
        },
      );
      await assert.rejects(
        legacyBare.request({ method: "probe/strict", params: {} }, z.object({ ok: z.boolean() })),
        (error: { code?: number }) => error.code === -32601,
      );
      const ok = await declared.request(
        { method: "probe/strict", params: {} },
        z.object({ ok: z.boolean() }),
      );
      assert.equal(ok.ok, true);
      // The raw answer: HTTP 400 with -32021 (2026-07-28 basic, "_meta").
      const raw = await rpc(
        url,
        {
          jsonrpc: "2.0",
          id: 7,
          method: "probe/strict",
          params: {
            _meta: {
              "io.modelcontextprotocol/protocolVersion": V2026,
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          },
        },
        { "mcp-protocol-version": V2026, "mcp-method": "probe/strict" },
      );
      assert.equal(raw.status, 400);
      assert.equal((raw.json as { error: { code: number } }).error.code, -32021);
    } finally {
      await bare.close();
      await legacyBare.close();
      await declared.close();
    }
  });

  test("params check, InvalidParamsError and a throwing handler answer -32602 / -32603 without internals", async () => {
    const client = await modernClient();
    try {
      await assert.rejects(
        client.request({ method: "probe/echo", params: { text: 1 } }, Echo),
        (error: { code?: number; message?: string }) =>
          error.code === -32602 && /text must be a string/.test(String(error.message)),
      );
      await assert.rejects(
        client.request({ method: "probe/bad", params: { kind: "params" } }, z.object({})),
        (error: { code?: number; message?: string }) =>
          error.code === -32602 && /kind is wrong/.test(String(error.message)),
      );
      await assert.rejects(
        client.request({ method: "probe/bad", params: {} }, z.object({})),
        (error: { code?: number; message?: string }) =>
          error.code === -32603 && !/secret/.test(String(error.message)),
      );
    } finally {
      await client.close();
    }
  });

  test("cancelled by notifications/cancelled (2025-11-25 client abort)", async () => {
    const client = await legacyClient();
    try {
      const abort = new AbortController();
      const pending = client.request(
        { method: "probe/wait", params: { key: "by-notification" } },
        z.object({ waited: z.string() }),
        { signal: abort.signal },
      );
      await until(() => runs.has("by-notification"), 5_000, "the run to start");
      const before = cancelled.length;
      abort.abort("user stopped");
      await assert.rejects(pending);
      await until(() => runs.get("by-notification")?.aborted === true, 5_000, "the abort");
      await until(
        () => cancelled.slice(before).some((m) => m.source === "notification"),
        5_000,
        "a notification cancel",
      );
    } finally {
      await client.close();
    }
  });

  test("cancelled by closing its stream (2026-07-28 client abort)", async () => {
    const client = await modernClient();
    try {
      const abort = new AbortController();
      const pending = client.request(
        { method: "probe/wait", params: { key: "by-disconnect" } },
        z.object({ waited: z.string() }),
        { signal: abort.signal },
      );
      await until(() => runs.has("by-disconnect"), 5_000, "the run to start");
      const before = cancelled.length;
      abort.abort();
      await assert.rejects(pending);
      await until(() => runs.get("by-disconnect")?.aborted === true, 5_000, "the abort");
      assert.ok(
        cancelled.slice(before).some((m) => m.source === "disconnect"),
        "the cancel's source is the disconnect",
      );
    } finally {
      await client.close();
    }
  });

  test("refused past maxConcurrentRequestsPerScope (429), served again once they end", async () => {
    held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const body = (key: string) => ({
      jsonrpc: "2.0",
      id: key,
      method: "probe/wait",
      params: {
        key,
        hold: true,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": V2026,
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    });
    const headers = { "mcp-protocol-version": V2026, "mcp-method": "probe/wait" };
    const holding = ["h1", "h2", "h3", "h4"].map((key) => rpc(url, body(key), headers));
    await until(() => ["h1", "h2", "h3", "h4"].every((k) => runs.has(k)), 5_000, "four runs");
    const refused = await rpc(url, body("h5"), headers);
    assert.equal(refused.status, 429);
    assert.equal(runs.has("h5"), false, "the refused request never ran");
    release();
    const answers = await Promise.all(holding);
    for (const answer of answers) assert.equal(answer.status, 200);
    const again = await rpc(
      url,
      { ...body("h6"), params: { ...body("h6").params, ms: 1 } },
      headers,
    );
    assert.equal(again.status, 200);
    assert.deepEqual((again.json as { result: unknown }).result, {
      waited: "h6",
      resultType: "complete",
    });
  });

  test("a handler ignoring its signal is abandoned at the stream cancel timeout", async () => {
    const client = await modernClient();
    try {
      const abort = new AbortController();
      const pending = client.request(
        { method: "probe/wait", params: { key: "stubborn", stubborn: true, ms: 3_000 } },
        z.object({ waited: z.string() }),
        { signal: abort.signal },
      );
      await until(() => runs.has("stubborn"), 5_000, "the run to start");
      const inFlight = (): Promise<boolean> => metricIs(/conduit_mcp_in_flight_requests 0\b/);
      abort.abort();
      await assert.rejects(pending);
      // Released 300 ms after the cancel, long before the handler's 3 s.
      await until(inFlight, 2_000, "the abandoned call's release");
      assert.ok(performance.now() - (runs.get("stubborn")?.started ?? 0) < 2_500);
      await until(
        () =>
          metricIs(/conduit_mcp_handler_calls_total\{method="probe\/wait",outcome="killed"\} 1/),
        2_000,
        "the killed count",
      );
    } finally {
      await client.close();
    }
  });

  test("handler metrics count the extension's methods; onError sees kind extension", async () => {
    assert.ok(
      await metricIs(/conduit_mcp_handler_calls_total\{method="probe\/echo",outcome="ok"\} [1-9]/),
    );
    assert.ok(
      await metricIs(
        /conduit_mcp_handler_calls_total\{method="probe\/wait",outcome="cancelled"\} [1-9]/,
      ),
    );
    assert.ok(handlerKinds.includes("extension probe/bad"), handlerKinds.join());
  });

  async function metricIs(pattern: RegExp): Promise<boolean> {
    const text = await (await fetch(new URL("/metrics", url))).text();
    return pattern.test(text);
  }
});
