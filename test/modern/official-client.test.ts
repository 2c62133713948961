/**
 * End to end with the official 2026-07-28 client (`@modelcontextprotocol/client` 2.x, pinned to
 * 2026-07-28) over Streamable HTTP: an aborted call is cancelled on the
 * server by the stream close alone (no notification is POSTed) within 10 ms of the socket
 * closing; a stubborn call is abandoned at the stream cancel timeout and the in-flight gauge
 * returns to 0; an isolated CPU loop that never checks its signal is terminated (process CPU time
 * stops growing).
 */
import assert from "node:assert/strict";
import diagnosticsChannel from "node:diagnostics_channel";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { z } from "zod";

import {
  ChannelName,
  type RequestCancelledMessage,
  type ToolKilledMessage,
} from "../../src/diagnostics.js";
import { isolatedHandler } from "../../src/isolation/index.js";
import { defineTool } from "../../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../../src/server/index.js";
import { probes, testTools, until } from "../server/fixtures.js";

const ISOLATED = new URL("../fixtures/isolated-tools.ts", import.meta.url);
const STREAM_CANCEL_TIMEOUT_MS = 200;

/** Process CPU time (all threads, user + system) spent during `ms` of wall time. */
async function cpuDuring(ms: number): Promise<{ cpuMs: number; wallMs: number }> {
  const before = process.cpuUsage();
  const start = performance.now();
  await sleep(ms);
  const used = process.cpuUsage(before);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - start };
}

/** One POST as the wrapping listener saw it (before the library did). */
interface Post {
  readonly at: number;
  readonly method: string | undefined;
  closedAt: number | null;
}

describe("official 2026-07-28 client (@modelcontextprotocol/client 2.x)", () => {
  let server: McpServer;
  let http: Server;
  let url: URL;
  const posts: Post[] = [];
  const cancelled: RequestCancelledMessage[] = [];
  const killed: ToolKilledMessage[] = [];
  const onCancelled = (m: unknown): void => {
    cancelled.push(m as RequestCancelledMessage);
  };
  const onKilled = (m: unknown): void => {
    killed.push(m as ToolKilledMessage);
  };

  before(async () => {
    diagnosticsChannel.subscribe(ChannelName.requestCancelled, onCancelled);
    diagnosticsChannel.subscribe(ChannelName.toolKilled, onKilled);
    server = createMcpServer({
      tools: [
        ...testTools(),
        defineTool({
          name: "spin",
          description: "Burns CPU and never checks its signal (isolated)",
          input: z.object({ ms: z.number().int().min(0) }),
          isolated: isolatedHandler(ISOLATED, "spin"),
        }),
      ],
      metrics: true,
      // Explicitly off: a modern disconnect cancels regardless (https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation).
      cancelOnDisconnect: false,
      streamCancelTimeoutMs: STREAM_CANCEL_TIMEOUT_MS,
      workerPool: { maxWorkers: 1 },
    });
    // Wrapped to stamp arrivals and socket closes server-side; the listener is the library's.
    // This `close` listener is registered before the library's own, so it fires first.
    http = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.method === "POST") {
        const post: Post = {
          at: performance.now(),
          method: req.headers["mcp-method"] as string | undefined,
          closedAt: null,
        };
        posts.push(post);
        res.once("close", () => {
          post.closedAt = performance.now();
        });
      }
      server.handler(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
  });

  after(async () => {
    diagnosticsChannel.unsubscribe(ChannelName.requestCancelled, onCancelled);
    diagnosticsChannel.unsubscribe(ChannelName.toolKilled, onKilled);
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
    await server.close();
  });

  async function connect(): Promise<Client> {
    const client = new Client(
      { name: "modern-test", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(new StreamableHTTPClientTransport(url));
    return client;
  }

  async function metric(pattern: RegExp): Promise<boolean> {
    const text = await (await fetch(new URL("/metrics", url))).text();
    return pattern.test(text);
  }

  test("speaks 2026-07-28: lists tools, calls one, receives progress", async () => {
    const client = await connect();
    try {
      assert.equal(client.getProtocolEra(), "modern");
      const { tools } = await client.listTools();
      assert.ok(tools.some((tool) => tool.name === "spin"));
      const result = await client.callTool({ name: "echo", arguments: { text: "hello" } });
      assert.deepEqual(result.content, [{ type: "text", text: "hello" }]);
      const steps: number[] = [];
      const counted = await client.callTool(
        { name: "count", arguments: { to: 3, intervalMs: 1, tag: "modern-progress" } },
        { onprogress: (p) => steps.push(p.progress) },
      );
      assert.deepEqual(counted.content, [{ type: "text", text: "counted to 3" }]);
      assert.deepEqual(steps, [1, 2, 3]);
      // The modern era has no sessions: none was minted.
      assert.ok(posts.every((p) => p.method !== "initialize"));
    } finally {
      await client.close();
    }
  });

  test("an AbortSignal cancels by closing the stream: ctx.signal aborts within 10 ms of the socket close, no notification is sent", async (t) => {
    const client = await connect();
    try {
      const controller = new AbortController();
      const call = client.callTool(
        { name: "sleep", arguments: { ms: 5000, tag: "modern-abort" } },
        { signal: controller.signal },
      );
      await until(() => probes.has("modern-abort"), 2000, "tool started");
      const postsBefore = posts.length;
      const callPost = posts.at(-1) as Post;
      assert.equal(callPost.method, "tools/call");
      controller.abort(new Error("user pressed stop"));
      await assert.rejects(call);
      await until(() => probes.get("modern-abort")?.abortedAt != null, 2000, "server-side abort");
      const probe = probes.get("modern-abort");
      assert.ok(probe?.abortedAt != null && callPost.closedAt !== null);
      const latency = probe.abortedAt - callPost.closedAt;
      t.diagnostic(`socket close → ctx.signal abort: ${latency.toFixed(3)} ms`);
      assert.ok(latency >= 0, `aborted ${latency.toFixed(2)} ms before the close`);
      assert.equal(probe.reason?.source, "disconnect");
      // Recorded under the request's own scope and published.
      const recorded = cancelled.filter((m) => m.source === "disconnect");
      assert.equal(recorded.length, 1);
      assert.equal(recorded[0]?.scope, "ip:127.0.0.1");
      await until(() => server.registry.inFlightCount === 0, 2000, "in-flight gauge 0");
      // No notifications/cancelled (nor anything else) was POSTed for the cancel.
      await sleep(50);
      assert.equal(posts.length, postsBefore, "the stream close alone cancelled the call");
      assert.ok(await metric(/^conduit_mcp_cancellations_total\{source="disconnect"\} 1$/m));
      assert.ok(!(await metric(/method="notifications\/cancelled",status="202"\} [1-9]/)));
      assert.equal(probe.remainingRan, false);
      // One sample on a shared machine can be late by a scheduling slice; a mechanism that waits
      // for anything (a poll, a timer) is late every time. Up to two more aborts, the best counts.
      const latencies = [latency];
      for (let retry = 1; retry <= 2 && Math.min(...latencies) >= 10; retry++) {
        latencies.push(await abortLatency(client, `modern-abort-${retry}`));
      }
      const best = Math.min(...latencies);
      t.diagnostic(
        `socket close → ctx.signal abort, samples: ${latencies.map((l) => l.toFixed(3)).join(", ")} ms`,
      );
      assert.ok(best < 10, `aborted ${best.toFixed(2)} ms after the close at best`);
    } finally {
      await client.close();
    }
  });

  /** Aborts one `sleep` call of `client` by closing its stream; ms from the close to ctx.signal. */
  async function abortLatency(client: Client, tag: string): Promise<number> {
    const controller = new AbortController();
    const call = client.callTool(
      { name: "sleep", arguments: { ms: 5000, tag } },
      { signal: controller.signal },
    );
    await until(() => probes.has(tag), 2000, "tool started");
    const callPost = posts.at(-1) as Post;
    controller.abort(new Error("user pressed stop"));
    await assert.rejects(call);
    await until(() => probes.get(tag)?.abortedAt != null, 2000, "server-side abort");
    const abortedAt = probes.get(tag)?.abortedAt;
    assert.ok(abortedAt != null && callPost.closedAt !== null);
    return abortedAt - callPost.closedAt;
  }

  test("a stubborn call is abandoned at the stream cancel timeout and the gauge returns to 0", async () => {
    const client = await connect();
    try {
      const controller = new AbortController();
      const call = client.callTool(
        { name: "stubborn", arguments: { ms: 1500, tag: "modern-stubborn" } },
        { signal: controller.signal },
      );
      await until(() => probes.has("modern-stubborn"), 2000, "tool started");
      assert.equal(server.registry.inFlightCount, 1);
      const aborted = performance.now();
      controller.abort();
      await assert.rejects(call);
      await until(
        () => killed.some((m) => m.tool === "stubborn"),
        3000,
        "toolKilled for the stubborn call",
      );
      const elapsed = performance.now() - aborted;
      assert.ok(
        elapsed >= STREAM_CANCEL_TIMEOUT_MS - 10 && elapsed < STREAM_CANCEL_TIMEOUT_MS + 500,
        `abandoned after ${elapsed.toFixed(0)} ms`,
      );
      assert.equal(killed.find((m) => m.tool === "stubborn")?.terminated, false);
      assert.equal(server.registry.inFlightCount, 0, "the gauge drops at once");
      assert.equal(probes.get("modern-stubborn")?.finishedAt, null, "the tool itself still runs");
      assert.ok(await metric(/^conduit_mcp_in_flight_requests 0$/m));
      assert.ok(
        await metric(/^conduit_mcp_tool_calls_total\{tool="stubborn",outcome="killed"\} 1$/m),
      );
    } finally {
      await client.close();
    }
  });

  test("an isolated CPU loop that never checks its signal is terminated: process CPU time stops growing", async (t) => {
    const client = await connect();
    try {
      const controller = new AbortController();
      let started!: () => void;
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const call = client.callTool(
        { name: "spin", arguments: { ms: 30_000 } },
        { signal: controller.signal, onprogress: () => started() },
      );
      await running;
      const busy = await cpuDuring(150);
      // A small share is enough on a loaded machine: the proof is the contrast with after the kill.
      assert.ok(busy.cpuMs > busy.wallMs * 0.05, `the spinning worker shows in CPU time`);
      controller.abort();
      await assert.rejects(call);
      await until(() => killed.some((m) => m.tool === "spin"), 3000, "toolKilled for spin");
      assert.equal(killed.find((m) => m.tool === "spin")?.terminated, true);
      await sleep(30); // the thread's exit
      const afterKill = await cpuDuring(300);
      t.diagnostic(
        `process CPU: ${busy.cpuMs.toFixed(1)} ms in ${busy.wallMs.toFixed(0)} ms while spinning, ` +
          `${afterKill.cpuMs.toFixed(1)} ms in ${afterKill.wallMs.toFixed(0)} ms after the kill`,
      );
      assert.ok(
        afterKill.cpuMs < afterKill.wallMs * 0.1,
        `CPU time stopped growing (${afterKill.cpuMs} ms in ${afterKill.wallMs} ms)`,
      );
      assert.equal(server.registry.inFlightCount, 0);
      assert.ok(await metric(/^conduit_mcp_tool_calls_total\{tool="spin",outcome="killed"\} 1$/m));
    } finally {
      await client.close();
    }
  });
});
