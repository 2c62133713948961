/**
 * Shared test fixtures for the server, http and protocol tests: probe-instrumented tools, a raw
 * JSON-RPC POST helper and small waiting utilities. Not a test file itself.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";

import type { RequestCancelledError } from "../../src/errors.js";
import { defineTool, type Tool } from "../../src/protocol/index.js";

/** What a probed tool call did, as the server saw it. */
export interface Probe {
  startedAt: number;
  abortedAt: number | null;
  reason: RequestCancelledError | null;
  remainingRan: boolean;
  finishedAt: number | null;
  scope: string;
  requestId: unknown;
}

/** Probes by tag (the `tag` argument of the probed tools). */
export const probes = new Map<string, Probe>();

function probe(
  tag: string,
  ctx: { signal: AbortSignal; scope: string; requestId: unknown },
): Probe {
  const p: Probe = {
    startedAt: performance.now(),
    abortedAt: null,
    reason: null,
    remainingRan: false,
    finishedAt: null,
    scope: ctx.scope,
    requestId: ctx.requestId,
  };
  probes.set(tag, p);
  ctx.signal.addEventListener(
    "abort",
    () => {
      p.abortedAt = performance.now();
      p.reason = ctx.signal.reason as RequestCancelledError;
    },
    { once: true },
  );
  return p;
}

/** The test tools. */
export function testTools(): Tool[] {
  return [
    defineTool({
      name: "echo",
      description: "Echoes its text",
      input: z.object({ text: z.string() }),
      handler: ({ text }) => text,
    }),
    defineTool({
      name: "sleep",
      description: "Sleeps, honouring cancellation",
      input: z.object({ ms: z.number().int().min(0), tag: z.string().default("sleep") }),
      handler: async ({ ms, tag }, ctx) => {
        const p = probe(tag, ctx);
        try {
          await sleep(ms, undefined, { signal: ctx.signal });
        } finally {
          p.finishedAt = performance.now();
        }
        p.remainingRan = true;
        return `slept ${ms} ms`;
      },
    }),
    defineTool({
      name: "stubborn",
      description: "Ignores cancellation",
      input: z.object({ ms: z.number().int().min(0), tag: z.string().default("stubborn") }),
      handler: async ({ ms, tag }, ctx) => {
        const p = probe(tag, ctx);
        await sleep(ms);
        p.remainingRan = true;
        p.finishedAt = performance.now();
        return `ignored cancellation for ${ms} ms`;
      },
    }),
    defineTool({
      name: "count",
      description: "Counts with progress",
      input: z.object({
        to: z.number().int().min(1).max(100),
        intervalMs: z.number().int().min(0).default(5),
        tag: z.string().default("count"),
      }),
      handler: async ({ to, intervalMs, tag }, ctx) => {
        const p = probe(tag, ctx);
        for (let i = 1; i <= to; i++) {
          await sleep(intervalMs, undefined, { signal: ctx.signal });
          await ctx.progress(i, to, `step ${i}`);
        }
        p.remainingRan = true;
        return `counted to ${to}`;
      },
    }),
    defineTool({
      name: "chatty",
      description: "Logs three messages",
      handler: async (_args, ctx) => {
        await ctx.log("info", "Tool execution started");
        await ctx.log("debug", "a debug line");
        await ctx.log("error", { detail: "Tool execution completed" });
        return "logged";
      },
    }),
    defineTool({
      name: "boom",
      description: "Throws with internals in the message",
      handler: () => {
        throw new Error("database password at 10.0.0.5 is sensitive %s");
      },
    }),
    defineTool({
      name: "soft_fail",
      description: "A tool-level failure",
      handler: () => ({ isError: true, content: [{ type: "text", text: "it failed" }] }),
    }),
  ];
}

/** A parsed answer of {@link rpc}. */
export interface RpcAnswer {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: test convenience
  json: any;
}

/** POSTs one JSON-RPC body (already an object, or raw text) and reads the whole answer. */
export async function rpc(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<RpcAnswer> {
  const response = await fetch(url, {
    ...(signal === undefined ? {} : { signal }),
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown = null;
  if (response.headers.get("content-type")?.startsWith("application/json")) json = JSON.parse(text);
  return { status: response.status, headers: response.headers, text, json };
}

/** A tools/call body. */
export function callBody(
  id: string | number,
  name: string,
  args: Record<string, unknown>,
  meta?: Record<string, unknown>,
) {
  return {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: meta === undefined ? { name, arguments: args } : { name, arguments: args, _meta: meta },
  };
}

/** A notifications/cancelled body. */
export function cancelBody(requestId: unknown, reason?: unknown) {
  return {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: reason === undefined ? { requestId } : { requestId, reason },
  };
}

/** Waits until `check()` is true, polling every 5 ms, failing after `timeoutMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 2000,
  what = "condition",
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/**
 * POSTs many bodies over a small pool of keep-alive connections (faster than fetch for sweeps);
 * resolves the status codes in order.
 */
export async function postMany(
  url: string,
  bodies: readonly unknown[],
  headers: Record<string, string> = {},
  connections = 16,
): Promise<number[]> {
  const { Agent, request } = await import("node:http");
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const one = (body: unknown): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = request(url, {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
      });
      req.on("response", (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.on("error", reject);
      req.end(JSON.stringify(body));
    });
  try {
    return await Promise.all(bodies.map(one));
  } finally {
    agent.destroy();
  }
}
