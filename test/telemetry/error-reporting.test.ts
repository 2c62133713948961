/**
 * Errors the operator can see (docs/errors.md, "Errors the operator can see"), over a real HTTP server on
 * 127.0.0.1: a handler that throws or returns an invalid value is reported once through
 * `onError` and once on `conduit-mcp:tool:error`, with its kind, name, request id, scope,
 * principal and era, while the client sees only -32603 (or the tool's `isError` result). A
 * cancelled handler's AbortError, a killed tool, a tool's own `isError` result and a full worker
 * pool are not reported. The default `onError` writes one line on stderr, without a stack.
 */
import assert from "node:assert/strict";
import diagnosticsChannel from "node:diagnostics_channel";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { z } from "zod";

import { ChannelName, type ToolErrorMessage } from "../../src/diagnostics.js";
import { CannotAskClientError, InvalidParamsError } from "../../src/errors.js";
import {
  definePrompt,
  defineResource,
  defineResourceTemplate,
  defineTool,
} from "../../src/protocol/index.js";
import { createMcpServer, type McpServerOptions } from "../../src/server/index.js";
import {
  formatHandlerError,
  type HandlerErrorContext,
  logHandlerError,
} from "../../src/telemetry/error-reporter.js";
import { callBody, cancelBody, rpc, until } from "../server/fixtures.js";

const SECRET = "database password at 10.0.0.5";

function handlers(): Pick<
  McpServerOptions,
  "tools" | "resources" | "resourceTemplates" | "prompts"
> {
  return {
    tools: [
      defineTool({
        name: "boom",
        handler: () => {
          throw new Error(SECRET);
        },
      }),
      defineTool({ name: "bad_value", handler: () => 42 as never }),
      defineTool({
        name: "bad_structured",
        output: z.object({ n: z.number() }),
        handler: () => ({ content: [], structuredContent: { n: "not a number" } }) as never,
      }),
      defineTool({
        name: "refuses",
        handler: () => {
          throw new InvalidParamsError("n must be even");
        },
      }),
      defineTool({
        name: "asks",
        handler: () => {
          throw new CannotAskClientError();
        },
      }),
      defineTool({
        name: "soft_fail",
        handler: () => ({ isError: true, content: [{ type: "text", text: "it failed" }] }),
      }),
      defineTool({
        name: "sleep",
        input: z.object({ ms: z.number() }),
        // Rethrows the AbortError of its cancelled sleep, as most handlers would.
        handler: async ({ ms }, ctx) => {
          await sleep(ms, undefined, { signal: ctx.signal });
          return "slept";
        },
      }),
      defineTool({
        name: "stubborn",
        handler: async () => {
          await sleep(400);
          throw new Error("late failure after being abandoned");
        },
      }),
    ],
    resources: [
      defineResource({
        uri: "demo://broken",
        name: "broken",
        read: () => {
          throw new Error(SECRET);
        },
      }),
    ],
    resourceTemplates: [
      defineResourceTemplate({
        uriTemplate: "demo://item/{id}",
        name: "item",
        read: () => {
          throw new RangeError(SECRET);
        },
        complete: {
          id: () => {
            throw new Error(SECRET);
          },
        },
      }),
    ],
    prompts: [
      definePrompt({
        name: "bad_prompt",
        get: () => ({ messages: [{ role: "wizard", content: "x" }] }) as never,
      }),
    ],
  };
}

interface Report {
  error: unknown;
  context: HandlerErrorContext;
}

async function withServer(
  options: Omit<McpServerOptions, "tools" | "onError">,
  run: (
    url: string,
    hooked: Report[],
    published: ToolErrorMessage[],
    inFlight: () => number,
  ) => Promise<void>,
): Promise<void> {
  const hooked: Report[] = [];
  const published: ToolErrorMessage[] = [];
  const listener = (message: unknown): void => {
    published.push(message as ToolErrorMessage);
  };
  diagnosticsChannel.subscribe(ChannelName.toolError, listener);
  const server = createMcpServer({
    ...handlers(),
    ...options,
    onError: (error, context) => hooked.push({ error, context }),
  });
  const { url } = await server.listen({ host: "127.0.0.1" });
  try {
    await run(url, hooked, published, () => server.registry.inFlightCount);
  } finally {
    await server.close();
    diagnosticsChannel.unsubscribe(ChannelName.toolError, listener);
  }
}

const json = { accept: "application/json" };
const body = (id: number, method: string, params: object) => ({
  jsonrpc: "2.0",
  id,
  method,
  params,
});

describe("errors the operator can see", () => {
  test("a throwing tool is reported once (hook and channel) with name, id, scope; the client sees -32603 only", async () => {
    await withServer(
      { auth: { tokens: { "s3cret-token-of-alice": "alice" } } },
      async (url, hooked, published) => {
        const answer = await rpc(url, callBody(7, "boom", {}), {
          ...json,
          authorization: "Bearer s3cret-token-of-alice",
        });
        assert.deepEqual(answer.json, {
          jsonrpc: "2.0",
          id: 7,
          error: { code: -32603, message: "Internal server error" },
        });
        assert.doesNotMatch(answer.text, /password|10\.0\.0\.5|at .*\.ts/);
        assert.equal(hooked.length, 1, "onError called once");
        assert.equal(published.length, 1, "published once");
        const [report] = hooked;
        assert.ok(report?.error instanceof Error);
        assert.equal((report.error as Error).message, SECRET);
        assert.deepEqual(report.context, {
          kind: "tool",
          method: "tools/call",
          name: "boom",
          requestId: 7,
          scope: "principal:alice",
          scopeKind: "principal",
          protocolEra: "2025-11-25",
          principalId: "alice",
          sessionId: null,
        });
        assert.deepEqual(published[0], { error: report.error, ...report.context });
      },
    );
  });

  test("resources, templates, prompts and completers are reported with their kind", async () => {
    await withServer({}, async (url, hooked, published) => {
      const read = await rpc(url, body(1, "resources/read", { uri: "demo://broken" }), json);
      assert.equal(read.json.error.code, -32603);
      const template = await rpc(url, body(2, "resources/read", { uri: "demo://item/9" }), json);
      assert.equal(template.json.error.code, -32603);
      const prompt = await rpc(url, body(3, "prompts/get", { name: "bad_prompt" }), json);
      assert.equal(prompt.json.error.code, -32603);
      const completion = await rpc(
        url,
        body(4, "completion/complete", {
          ref: { type: "ref/resource", uri: "demo://item/{id}" },
          argument: { name: "id", value: "" },
        }),
        json,
      );
      assert.equal(completion.json.error.code, -32603);
      for (const answer of [read, template, prompt, completion]) {
        assert.doesNotMatch(answer.text, /password|10\.0\.0\.5/);
      }
      assert.deepEqual(
        hooked.map((r) => [r.context.kind, r.context.method, r.context.name, r.context.requestId]),
        [
          ["resource", "resources/read", "demo://broken", 1],
          ["resource-template", "resources/read", "demo://item/9", 2],
          ["prompt", "prompts/get", "bad_prompt", 3],
          ["completion", "completion/complete", "demo://item/{id}", 4],
        ],
      );
      assert.ok(hooked[1]?.error instanceof RangeError, "the template's own error");
      assert.ok(hooked[2]?.error instanceof TypeError, "why the prompt's value was refused");
      assert.equal(hooked[0]?.context.scope, "ip:127.0.0.1");
      assert.equal(hooked[0]?.context.scopeKind, "ip");
      assert.equal(published.length, 4);
    });
  });

  test("invalid tool values are reported; the tool's own isError result is not", async () => {
    await withServer({}, async (url, hooked) => {
      const bad = await rpc(url, callBody(1, "bad_value", {}), json);
      assert.equal(bad.json.error.code, -32603);
      const structured = await rpc(url, callBody(2, "bad_structured", {}), json);
      assert.equal(structured.json.result.isError, true, "the client gets an isError result");
      const soft = await rpc(url, callBody(3, "soft_fail", {}), json);
      assert.equal(soft.json.result.isError, true);
      assert.deepEqual(
        hooked.map((r) => [r.context.name, (r.error as Error).constructor.name]),
        [
          ["bad_value", "TypeError"],
          ["bad_structured", "TypeError"],
        ],
      );
    });
  });

  test("refusals meant for the client (InvalidParamsError, cannot ask the client) are not reported", async () => {
    await withServer({}, async (url, hooked, published) => {
      const refused = await rpc(url, callBody(1, "refuses", {}), json);
      assert.equal(refused.json.result.isError, true);
      assert.match(refused.text, /n must be even/, "the client gets the refusal");
      const asks = await rpc(url, callBody(2, "asks", {}), json);
      assert.equal(asks.json.result.isError, true);
      const boom = await rpc(url, callBody(3, "boom", {}), json);
      assert.equal(boom.json.error.code, -32603);
      assert.deepEqual(
        hooked.map((r) => r.context.name),
        ["boom"],
      );
      assert.equal(published.length, 1);
    });
  });

  test("a cancelled handler's AbortError and a killed tool are not errors", async () => {
    await withServer(
      { streamCancelTimeoutMs: 50, sessions: false },
      async (url, hooked, published, inFlight) => {
        const call = rpc(url, callBody(11, "sleep", { ms: 60_000 }), json);
        await until(() => inFlight() === 1, 5000, "the call to run");
        await rpc(url, cancelBody(11));
        assert.equal((await call).json.error.code, -32800);
        await until(() => inFlight() === 0, 5000, "the cancelled call to end");
        const stubborn = rpc(url, callBody(12, "stubborn", {}), json);
        await until(() => inFlight() === 1, 5000, "the stubborn call to run");
        await rpc(url, cancelBody(12));
        assert.equal((await stubborn).json.error.code, -32800);
        // Past the cancel timeout (killed) and past the stubborn handler's late throw.
        await sleep(600);
        assert.deepEqual(hooked, []);
        assert.deepEqual(published, []);
      },
    );
  });

  test("a 2026-07-28 call is reported with its era (official client 2.x)", async () => {
    await withServer({}, async (url, hooked) => {
      const client = new ModernClient(
        { name: "modern", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(new ModernTransport(new URL(url)));
      try {
        await assert.rejects(client.callTool({ name: "boom", arguments: {} }), (error: Error) => {
          assert.doesNotMatch(error.message, /password|10\.0\.0\.5/);
          return true;
        });
      } finally {
        await client.close();
      }
      await until(() => hooked.length === 1);
      assert.equal(hooked[0]?.context.protocolEra, "2026-07-28");
      assert.equal(hooked[0]?.context.name, "boom");
      assert.equal(hooked[0]?.context.sessionId, null);
    });
  });

  test("an onError that throws changes nothing for the client", async () => {
    const server = createMcpServer({
      ...handlers(),
      onError: () => {
        throw new Error("the hook failed");
      },
    });
    const { url } = await server.listen();
    try {
      const answer = await rpc(url, callBody(1, "boom", {}), json);
      assert.equal(answer.json.error.code, -32603);
      const ok = await rpc(url, callBody(2, "soft_fail", {}), json);
      assert.equal(ok.json.result.isError, true, "the server keeps serving");
    } finally {
      await server.close();
    }
  });

  test("the default onError writes one line on stderr, without a stack or control characters", async () => {
    const server = createMcpServer({
      tools: [
        defineTool({
          name: "forger",
          handler: () => {
            throw new Error("bad\n2026-01-01 [info] all good\u001b[31m");
          },
        }),
      ],
      sessions: true,
    });
    const { url } = await server.listen();
    const written: string[] = [];
    const original = process.stderr.write;
    try {
      const init = await rpc(
        url,
        body(1, "initialize", {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "t", version: "1" },
        }),
        json,
      );
      const session = init.headers.get("mcp-session-id") ?? "";
      assert.ok(session.length > 16);
      process.stderr.write = ((chunk: string | Uint8Array) => {
        written.push(String(chunk));
        return true;
      }) as typeof process.stderr.write;
      const answer = await rpc(url, callBody("req-9", "forger", {}), {
        ...json,
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
      });
      process.stderr.write = original;
      assert.equal(answer.json.error.code, -32603);
      assert.equal(written.length, 1, "one write");
      const line = written[0] ?? "";
      assert.equal(line.indexOf("\n"), line.length - 1, "one line");
      assert.doesNotMatch(line, /\u001b| {4}at /);
      assert.equal(
        line,
        `conduit-mcp: tool "forger" failed: Error: bad2026-01-01 [info] all good[31m ` +
          `(request req-9, scope session:${session.slice(0, 8)}…, 2025-11-25)\n`,
      );
      assert.ok(!line.includes(session), "the full session id is not logged");
    } finally {
      process.stderr.write = original;
      await server.close();
    }
  });

  test("an error whose getters throw still makes one line", () => {
    const hostile = new Error("x");
    Object.defineProperty(hostile, "message", {
      get() {
        throw new Error("gotcha");
      },
    });
    const context: HandlerErrorContext = {
      kind: "tool",
      method: "tools/call",
      name: "t",
      requestId: 1,
      scope: "ip:127.0.0.1",
      scopeKind: "ip",
      protocolEra: "2025-11-25",
      principalId: null,
      sessionId: null,
    };
    assert.equal(
      formatHandlerError(hostile, context),
      'conduit-mcp: tool "t" failed: Error: <unreadable> (request 1, scope ip:127.0.0.1, 2025-11-25)',
    );
  });

  test("the line names the principal, and onError: false silences it", async () => {
    const context: HandlerErrorContext = {
      kind: "prompt",
      method: "prompts/get",
      name: "p",
      requestId: 3,
      scope: "principal:bob",
      scopeKind: "principal",
      protocolEra: "2026-07-28",
      principalId: "bob",
      sessionId: null,
    };
    assert.equal(
      formatHandlerError("not an Error", context),
      'conduit-mcp: prompt "p" failed: not an Error (request 3, scope principal:bob, principal bob, 2026-07-28)',
    );
    assert.equal(typeof logHandlerError, "function");
    const server = createMcpServer({ ...handlers(), onError: false });
    const { url } = await server.listen();
    const written: string[] = [];
    const original = process.stderr.write;
    process.stderr.write = ((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      const answer = await rpc(url, callBody(1, "boom", {}), json);
      assert.equal(answer.json.error.code, -32603);
    } finally {
      process.stderr.write = original;
      await server.close();
    }
    assert.deepEqual(written, []);
    assert.throws(
      () => createMcpServer({ onError: "yes" as never }),
      /onError/,
      "a bad onError is refused at construction",
    );
  });
});
