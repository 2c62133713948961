/**
 * Graceful drain. The CLI on SIGTERM (docs/deploy.md, "Drain"): the listener closes at once (a
 * new connection is refused: not ready, the load balancer sends the work elsewhere), a call in
 * flight is answered, a call that outlives `--drain-ms` is cancelled through the registry (its
 * handler sees the abort) and answered "Server is shutting down", and the process exits 0. A
 * library server whose listener is the caller's answers `/ready` 503 and new requests 503 with
 * `Retry-After` and `Connection: close` from the moment close() begins. With `--drain-delay-ms`
 * (`closeDelayMs`), `/ready` answers 503 first while every request is still served, so a load
 * balancer moves new work away before the listener closes.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";

import { createMcpServer, defineTool } from "../../src/index.js";
import { type CliProcess, exitWithin, MCP_HEADERS, rpc, startCli } from "../cli/cli-process.js";
import { redisSkipReason, startRedisServer } from "../helpers/redis-server.js";

/** A streamed tools/call: `started` once the first progress arrives, `answer` when it ends. */
interface HeldCall {
  readonly started: Promise<void>;
  readonly answer: Promise<{ status: number; last: Record<string, unknown> | null; at: number }>;
}

function heldCall(url: string, id: number, args: Record<string, unknown>): HeldCall {
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const answer = (async () => {
    const res = await fetch(url, {
      method: "POST",
      headers: MCP_HEADERS,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "hold", arguments: args, _meta: { progressToken: `p${id}` } },
      }),
      signal: AbortSignal.timeout(30_000),
    });
    const messages: Array<Record<string, unknown>> = [];
    let buffered = "";
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        if (!line.startsWith("data:") || line.length <= 5) continue;
        const message = JSON.parse(line.slice(5)) as Record<string, unknown>;
        messages.push(message);
        if (message.method === "notifications/progress") markStarted();
      }
    }
    if (buffered.trim().length > 0 && !buffered.startsWith("data:")) {
      messages.push(JSON.parse(buffered) as Record<string, unknown>);
    }
    markStarted();
    return { status: res.status, last: messages.at(-1) ?? null, at: performance.now() };
  })();
  return { started, answer };
}

/** Resolves once the process's stderr matches `pattern` (polled; bounded by 10 s). */
async function stderrShows(cli: CliProcess, pattern: RegExp): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (!pattern.test(cli.stderr())) {
    if (performance.now() > deadline) throw new Error(`stderr never matched ${pattern}`);
    await sleep(10);
  }
}

describe("drain on SIGTERM (CLI)", () => {
  let node: CliProcess | undefined;
  after(async () => {
    await node?.kill();
  });

  it("answers the call in flight, cancels what outlives --drain-ms, refuses new connections, exits 0", async () => {
    const drainMs = 1_500;
    node = await startCli([
      "serve",
      "test/operability/fixtures/drain-tools.ts",
      "--port",
      "0",
      "--drain-ms",
      String(drainMs),
    ]);
    const short = heldCall(node.url, 1, { ms: 700, tag: "short" });
    const long = heldCall(node.url, 2, { ms: 60_000, tag: "long" });
    await Promise.all([short.started, long.started]);

    node.child.kill("SIGTERM");
    const signalledAt = performance.now();
    await stderrShows(node, /SIGTERM received, closing/);
    // Not admitting: the listener is closed, so a probe on a new connection is refused (on a
    // connection still open it would be a 503).
    const probe = await fetch(new URL("/ready", node.url), {
      signal: AbortSignal.timeout(5_000),
    }).then(
      (res) => `status ${res.status}`,
      (error: Error) => String((error.cause as Error | undefined)?.message ?? error.message),
    );
    assert.match(probe, /ECONNREFUSED|status 503/);

    const shortAnswer = await short.answer;
    assert.equal(shortAnswer.status, 200);
    const shortResult = shortAnswer.last?.result as { content: Array<{ text: string }> };
    assert.equal(shortResult.content[0]?.text, "held 700 ms");

    const longAnswer = await long.answer;
    const longAfter = longAnswer.at - signalledAt;
    console.log(`drain: the outliving call was answered ${longAfter.toFixed(0)} ms after SIGTERM`);
    assert.ok(longAfter >= drainMs - 100, `cancelled ${longAfter.toFixed(0)} ms after SIGTERM`);
    assert.ok(longAfter < drainMs + 3_000, `cancelled ${longAfter.toFixed(0)} ms after SIGTERM`);
    assert.deepEqual(longAnswer.last?.error, { code: -32603, message: "Server is shutting down" });

    assert.deepEqual(await exitWithin(node, 10_000), { code: 0, signal: null });
    const log = node.stderr();
    assert.match(log, /SIGTERM received, closing/);
    // The handler saw the abort, with the shutdown as its source; the answered call never did.
    assert.match(log, /hold long saw abort \(shutdown\)/);
    assert.doesNotMatch(log, /hold short saw abort/);
  });
});

describe("drain with --drain-delay-ms (CLI)", () => {
  let node: CliProcess | undefined;
  after(async () => {
    await node?.kill();
  });

  it("not ready at once, yet serving new calls until the delay ends; then the listener closes", async () => {
    const delayMs = 1_500;
    node = await startCli([
      "serve",
      "test/operability/fixtures/drain-tools.ts",
      "--port",
      "0",
      "--drain-delay-ms",
      String(delayMs),
    ]);
    const ready = new URL("/ready", node.url);
    assert.equal((await fetch(ready)).status, 200);

    node.child.kill("SIGTERM");
    const signalledAt = performance.now();
    await stderrShows(node, /SIGTERM received, closing/);
    // Out of rotation for the load balancer's readiness check...
    const probe = await fetch(ready, { signal: AbortSignal.timeout(5_000) });
    assert.equal(probe.status, 503);
    assert.deepEqual(await probe.json(), { status: "draining" });
    // ...while a request that was already on its way to this node is still served, on a new
    // connection: nothing races the closing listener.
    const during = await rpc(node.url, {
      id: 1,
      method: "tools/call",
      params: { name: "hold", arguments: { ms: 10, tag: "during-delay" } },
    });
    const servedAt = performance.now() - signalledAt;
    assert.ok(servedAt < delayMs, `served ${servedAt.toFixed(0)} ms after SIGTERM`);
    assert.equal(during.status, 200);
    const result = during.message?.result as { content: Array<{ text: string }> } | undefined;
    assert.equal(result?.content[0]?.text, "held 10 ms");

    // After the delay the drain goes on as without one: the listener closes, the process exits 0.
    assert.deepEqual(await exitWithin(node, 15_000), { code: 0, signal: null });
    const exitedAt = performance.now() - signalledAt;
    assert.ok(exitedAt >= delayMs - 100, `exited ${exitedAt.toFixed(0)} ms after SIGTERM`);
  });
});

describe("drain of a library server on the caller's listener", () => {
  let http: Server | undefined;
  after(() => {
    http?.closeAllConnections();
    http?.close();
  });

  it("/ready turns 503 and new calls get 503 with Retry-After and Connection: close as close() begins", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gate = defineTool({
      name: "gate",
      input: z.object({}),
      handler: async (_args, ctx) => {
        await ctx.progress(0, 1, "started");
        await released;
        return "released";
      },
    });
    const server = createMcpServer({ tools: [gate], closeGraceMs: 10_000 });
    http = createServer(server.handler);
    await new Promise<void>((resolve) => http?.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    assert.equal((await fetch(`${base}/ready`)).status, 200);

    const res = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: MCP_HEADERS,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "gate", arguments: {}, _meta: { progressToken: 1 } },
      }),
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // the first progress: the call is in flight

    const closed = server.close();
    const ready = await fetch(`${base}/ready`);
    assert.equal(ready.status, 503);
    assert.equal(ready.headers.get("retry-after"), "1");
    assert.deepEqual(await ready.json(), { status: "draining" });
    const refused = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: MCP_HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("retry-after"), "1");
    assert.equal(refused.headers.get("connection"), "close");
    await refused.arrayBuffer();
    // /health stays liveness while draining.
    assert.equal((await fetch(`${base}/health`)).status, 200);

    release();
    let text = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    assert.match(text, /"released"/);
    await closed;
    await sleep(0);
  });
});

describe("drain of a --redis node running a task", { skip: redisSkipReason() ?? false }, () => {
  it("the task that outlives --drain-ms turns failed in the shared store, seen from another node", async () => {
    const redis = await startRedisServer();
    const nodes: CliProcess[] = [];
    try {
      const flags = ["serve", "--port", "0", "--redis", redis.url];
      const a = await startCli([...flags, "--drain-ms", "500"]);
      nodes.push(a);
      const b = await startCli(flags);
      nodes.push(b);
      // 2025-11-25 task augmentation: the answer is the task, the count runs on node a.
      const created = await rpc(a.url, {
        id: 1,
        method: "tools/call",
        params: { name: "count", arguments: { to: 600, intervalMs: 100 }, task: { ttl: 60_000 } },
      });
      const task = (
        created.message?.result as { task?: { taskId: string; status: string } } | undefined
      )?.task;
      assert.equal(task?.status, "working");
      a.child.kill("SIGTERM");
      assert.deepEqual(await exitWithin(a, 10_000), { code: 0, signal: null });
      // Written before the node's stores closed: no lease has to lapse first.
      const seen = await rpc(b.url, {
        id: 2,
        method: "tasks/get",
        params: { taskId: task?.taskId },
      });
      const result = seen.message?.result as { status?: string; statusMessage?: string };
      assert.equal(result.status, "failed");
      assert.equal(result.statusMessage, "Server is shutting down");
    } finally {
      await Promise.all(nodes.map((node) => node.kill()));
      await redis.stop();
    }
  });
});
