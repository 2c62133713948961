/**
 * Per-tool deadlines (`timeoutMs`, server default `toolTimeoutMs`; docs/limits.md, "Deadlines")
 * over a real listening server with both official clients: `@modelcontextprotocol/sdk` 1.x
 * (2025-11-25) and `@modelcontextprotocol/client` 2.x pinned to 2026-07-28. Past the deadline the
 * handler's `ctx.signal` aborts with a `RequestCancelledError` of source `timeout`, the client
 * gets a tool execution error (`isError: true`; MCP Tools, "Error Handling":
 * https://modelcontextprotocol.io/specification/2026-07-28/server/tools#error-handling), the
 * registry publishes `conduit-mcp:request:cancelled` with source `timeout`, and `/metrics`
 * counts it. A task whose run passes its deadline ends `cancelled` (both eras) with the deadline
 * in its status message. Option values above the Node timer limit are refused.
 */
import assert from "node:assert/strict";
import diagnosticsChannel from "node:diagnostics_channel";
import { after, before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { z } from "zod";

import { ChannelName, type RequestCancelledMessage } from "../../src/diagnostics.js";
import { InvalidOptionError, RequestCancelledError } from "../../src/errors.js";
import { createMcpServer, defineTool, type McpServer } from "../../src/index.js";
import { until } from "../server/fixtures.js";
import { inSession, modern, openSession, untilTerminal } from "../tasks/wire.js";

/** What each run of `sleepy` saw: when it started and why its signal aborted. */
const runs = new Map<string, { startedAt: number; abortedAt: number | null; reason: unknown }>();

function sleepyTool(name: string, timeoutMs?: number) {
  return defineTool({
    name,
    description: "Sleeps `ms` or until its signal aborts",
    input: z.object({ key: z.string(), ms: z.number().int().min(0).max(60_000) }),
    task: "optional",
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    handler: async ({ key, ms }, ctx) => {
      const run = { startedAt: performance.now(), abortedAt: null as number | null, reason: null };
      runs.set(key, run);
      ctx.signal.addEventListener("abort", () => {
        run.abortedAt = performance.now();
        run.reason = ctx.signal.reason;
      });
      await delay(ms, undefined, { signal: ctx.signal });
      return `slept ${ms} ms`;
    },
  });
}

const DEADLINE_MS = 150;

describe("tool deadlines (timeoutMs)", () => {
  let server: McpServer;
  let url: string;
  const cancels: RequestCancelledMessage[] = [];
  const onCancel = (message: unknown): void => {
    cancels.push(message as RequestCancelledMessage);
  };

  before(async () => {
    diagnosticsChannel.subscribe(ChannelName.requestCancelled, onCancel);
    server = createMcpServer({
      tools: [
        sleepyTool("sleepy", DEADLINE_MS),
        // No deadline of its own: the server's default applies.
        sleepyTool("defaulted"),
        // Infinity: no deadline even with a server default.
        sleepyTool("patient", Number.POSITIVE_INFINITY),
      ],
      toolTimeoutMs: 400,
      sessions: true,
      metrics: true,
    });
    url = (await server.listen({ host: "127.0.0.1", port: 0 })).url;
  });

  after(async () => {
    diagnosticsChannel.unsubscribe(ChannelName.requestCancelled, onCancel);
    await server.close();
  });

  async function legacyClient(): Promise<LegacyClient> {
    const client = new LegacyClient({ name: "timeout-test", version: "1.0.0" });
    await client.connect(new LegacyTransport(new URL(url)));
    return client;
  }

  async function modernClient(): Promise<ModernClient> {
    const client = new ModernClient(
      { name: "timeout-test", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new ModernTransport(new URL(url)));
    return client;
  }

  function assertTimedOut(key: string, limit: number): void {
    const run = runs.get(key);
    assert.ok(run !== undefined, `${key} ran`);
    assert.ok(run.abortedAt !== null, `${key}: ctx.signal aborted`);
    assert.ok(run.reason instanceof RequestCancelledError, "the reason is a RequestCancelledError");
    assert.equal(run.reason.source, "timeout");
    const after = run.abortedAt - run.startedAt;
    // Generous both ways: a Node timer counts from the event loop's cached time, which a busy
    // turn leaves behind the clock (so it may fire early by that turn's length), and a loaded
    // host may fire it late.
    assert.ok(after >= limit - 60 && after < limit + 2_000, `aborted after ${after} ms`);
    assert.ok(
      cancels.some((c) => c.source === "timeout" && c.reason?.includes(`${limit} ms`)),
      "conduit-mcp:request:cancelled says timeout",
    );
  }

  test("2025-11-25 (SDK 1.x): past its deadline a call gets a tool error, its signal says timeout", async () => {
    const client = await legacyClient();
    try {
      const started = performance.now();
      const result = await client.callTool({
        name: "sleepy",
        arguments: { key: "legacy", ms: 20_000 },
      });
      const took = performance.now() - started;
      assert.equal(result.isError, true, JSON.stringify(result));
      const [block] = result.content as { type: string; text: string }[];
      assert.equal(block?.type, "text");
      assert.match(block?.text ?? "", /sleepy did not finish within its 150 ms deadline/);
      assert.ok(took < 5_000, `answered after ${took} ms, not after the 20 s sleep`);
      assertTimedOut("legacy", DEADLINE_MS);
      // A call that ends in time is untouched.
      const quick = await client.callTool({ name: "sleepy", arguments: { key: "q1", ms: 1 } });
      assert.notEqual(quick.isError, true);
    } finally {
      await client.close();
    }
  });

  test("2026-07-28 (client 2.x): the same, with resultType complete", async () => {
    const client = await modernClient();
    try {
      const result = await client.callTool({
        name: "sleepy",
        arguments: { key: "modern", ms: 20_000 },
      });
      assert.equal(result.isError, true, JSON.stringify(result));
      const [block] = result.content as { type: string; text: string }[];
      assert.match(block?.text ?? "", /within its 150 ms deadline/);
      assertTimedOut("modern", DEADLINE_MS);
    } finally {
      await client.close();
    }
  });

  test("the server's toolTimeoutMs applies to a tool without its own; Infinity opts out", async () => {
    const client = await modernClient();
    try {
      const result = await client.callTool({
        name: "defaulted",
        arguments: { key: "defaulted", ms: 20_000 },
      });
      assert.equal(result.isError, true);
      assertTimedOut("defaulted", 400);
      // `patient` outlives the server default (400 ms) and completes.
      const patient = await client.callTool({
        name: "patient",
        arguments: { key: "patient", ms: 700 },
      });
      assert.notEqual(patient.isError, true, JSON.stringify(patient));
      assert.equal(runs.get("patient")?.abortedAt, null);
    } finally {
      await client.close();
    }
  });

  test("metrics count the cancellation under source timeout", async () => {
    const text = await (await fetch(new URL("/metrics", url))).text();
    const match = /conduit_mcp_cancellations_total\{source="timeout"\} (\d+)/.exec(text);
    assert.ok(match !== null, "the series exists");
    assert.ok(Number(match[1]) >= 3, text);
    assert.match(text, /conduit_mcp_tool_calls_total\{tool="sleepy",outcome="cancelled"\} [1-9]/);
  });

  test("2025-11-25 task: a run past its deadline ends the task cancelled, saying so", async () => {
    const session = await openSession(url);
    const created = await inSession(url, session, "tools/call", {
      name: "sleepy",
      arguments: { key: "task-2025", ms: 20_000 },
      task: {},
    });
    const taskId = created.json?.result?.task?.taskId as string;
    assert.equal(typeof taskId, "string", created.text);
    const task = await untilTerminal(() => inSession(url, session, "tasks/get", { taskId }));
    assert.equal(task.status, "cancelled");
    assert.match(String(task.statusMessage), /timed out after 150 ms/);
    assertTimedOut("task-2025", DEADLINE_MS);
  });

  test("2026-07-28 task: the same", async () => {
    const created = await modern(url, "tools/call", {
      name: "sleepy",
      arguments: { key: "task-2026", ms: 20_000 },
    });
    const taskId = created.json?.result?.task?.taskId ?? created.json?.result?.taskId;
    assert.equal(typeof taskId, "string", created.text);
    await until(
      () => runs.get("task-2026")?.abortedAt != null,
      5_000,
      "the task's run to time out",
    );
    const task = await untilTerminal(() => modern(url, "tasks/get", { taskId }));
    assert.equal(task.status, "cancelled", JSON.stringify(task));
    assert.match(String(task.statusMessage), /timed out after 150 ms/);
    assertTimedOut("task-2026", DEADLINE_MS);
  });
});

describe("timeoutMs options", () => {
  test("above the Node timer limit, zero, fractions and strings are refused at definition", () => {
    for (const bad of [2 ** 31, 0, -1, 1.5, "100", Number.NaN]) {
      assert.throws(
        () => defineTool({ name: "t", timeoutMs: bad as number, handler: () => "x" }),
        (error: unknown) => error instanceof InvalidOptionError && /timeoutMs/.test(error.message),
        String(bad),
      );
    }
    assert.doesNotThrow(() => defineTool({ name: "t", timeoutMs: 2 ** 31 - 1, handler: () => "" }));
  });

  test("toolTimeoutMs above the Node timer limit is refused at construction", () => {
    assert.throws(
      () => createMcpServer({ toolTimeoutMs: 2 ** 31 }),
      (error: unknown) =>
        error instanceof InvalidOptionError && /toolTimeoutMs/.test(error.message),
    );
    assert.throws(() => createMcpServer({ toolTimeoutMs: Number.POSITIVE_INFINITY }));
  });
});
