/**
 * Raw HTTP helpers of the task tests: 2025-era and 2026-07-28 requests to a real server, and a
 * tool whose runs the tests can watch (when each started and whether its signal aborted).
 */
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";

import { z } from "zod";

import { defineTool } from "../../src/protocol/index.js";
import { type RpcAnswer, rpc } from "../server/fixtures.js";

export const V2026 = "2026-07-28";
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** A 2025-era request (no session unless `sessionId`); `token` authenticates. */
export function legacy(
  url: string,
  method: string,
  params: Record<string, unknown>,
  options: { token?: string; sessionId?: string; id?: number } = {},
): Promise<RpcAnswer> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.sessionId !== undefined) headers["mcp-session-id"] = options.sessionId;
  return rpc(url, { jsonrpc: "2.0", id: options.id ?? 1, method, params }, headers);
}

/**
 * A 2026-07-28 request: envelope `_meta`, `Mcp-Method` and (for names and task ids) `Mcp-Name`;
 * `extension` declares the tasks extension (default true).
 */
export function modern(
  url: string,
  method: string,
  params: Record<string, unknown>,
  options: {
    token?: string;
    extension?: boolean;
    name?: string;
    id?: number;
    capabilities?: Record<string, unknown>;
    /** Aborting it closes the request's stream (its 2026-07-28 cancellation). */
    signal?: AbortSignal;
  } = {},
): Promise<RpcAnswer> {
  const capabilities = {
    ...options.capabilities,
    ...(options.extension === false ? {} : { extensions: { [TASKS_EXTENSION]: {} } }),
  };
  const headers: Record<string, string> = { "mcp-protocol-version": V2026, "mcp-method": method };
  const name = options.name ?? params.taskId ?? params.name;
  if (typeof name === "string") headers["mcp-name"] = name;
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const body = {
    jsonrpc: "2.0",
    id: options.id ?? 1,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
      },
    },
  };
  return rpc(url, body, headers, options.signal);
}

/** What a watched run saw. */
export interface WatchedRun {
  readonly startedAt: number;
  abortedAt: number | null;
  reason: unknown;
}

/**
 * A task-supporting tool `watched {key, ms}` that waits `ms` (or until its signal aborts) and
 * records its run under `key`; `ignoreSignal` keeps waiting after the abort (a stubborn handler).
 */
export function watchedTool(runs: Map<string, WatchedRun>, name = "watched") {
  return defineTool({
    name,
    description: "Waits, recording its run; a task when asked",
    input: z.object({
      key: z.string(),
      ms: z.number().int().min(0).max(600_000),
      ignoreSignal: z.boolean().optional(),
    }),
    task: "optional",
    handler: async ({ key, ms, ignoreSignal }, ctx) => {
      const run: WatchedRun = { startedAt: performance.now(), abortedAt: null, reason: undefined };
      runs.set(key, run);
      ctx.signal.addEventListener("abort", () => {
        run.abortedAt = performance.now();
        run.reason = ctx.signal.reason;
      });
      if (ignoreSignal === true) await delay(ms);
      else await delay(ms, undefined, { signal: ctx.signal });
      return `waited ${ms} ms`;
    },
  });
}

/** Polls `tasks/get` (through `get`) until the status is terminal; bounded by `timeoutMs`. */
export async function untilTerminal(
  get: () => Promise<RpcAnswer>,
  timeoutMs = 10_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (let round = 0; round < 1_000 && Date.now() < deadline; round++) {
    const answer = await get();
    const result = (answer.json as { result?: Record<string, unknown> }).result;
    if (result === undefined) throw new Error(`tasks/get failed: ${answer.text}`);
    if (["completed", "failed", "cancelled"].includes(String(result.status))) return result;
    await delay(25);
  }
  throw new Error("the task never became terminal");
}

/** `only_task` (runs only as a task) and `tool_error` (a task whose tool reports an error). */
export function taskTestTools() {
  return [
    defineTool({
      name: "only_task",
      description: "Runs only as a task",
      task: "required",
      handler: () => "ran as a task",
    }),
    defineTool({
      name: "tool_error",
      description: "Reports a tool error",
      task: "optional",
      handler: () => ({ isError: true, content: [{ type: "text", text: "no luck" }] }),
    }),
  ];
}

/**
 * `ask_name`: a tool that may run as a task and asks the client a name through it
 * (`ctx.elicit`, form mode), then greets ("no name" when declined).
 */
export function askNameTaskTool() {
  return defineTool({
    name: "ask_name",
    description: "Asks a name through the task, then greets",
    task: "optional",
    handler: async (_args, ctx) => {
      const answer = await ctx.elicit(
        "Your name?",
        { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
        { key: "name" },
      );
      return answer.action === "accept" ? `Hello, ${answer.content.name}!` : "no name";
    },
  });
}

/** Opens a 2025-11-25 session; resolves its id. */
export async function openSession(url: string): Promise<string> {
  const answer = await rpc(url, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "expiry-test", version: "1.0.0" },
    },
  });
  assert.equal(answer.status, 200, answer.text);
  const id = answer.headers.get("mcp-session-id");
  assert.ok(id !== null, "a session id");
  return id;
}

/** One request in `session` (2025-11-25). */
export function inSession(
  url: string,
  session: string,
  method: string,
  params: Record<string, unknown>,
) {
  return rpc(
    url,
    { jsonrpc: "2.0", id: 1, method, params },
    { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
  );
}

/** Creates a {@link watchedTool} task `{key}` (120 s) in `session`; resolves its id. */
export async function watchedTask(url: string, session: string, key: string): Promise<string> {
  const answer = await inSession(url, session, "tools/call", {
    name: "watched",
    arguments: { key, ms: 120_000 },
    task: {},
  });
  const taskId = answer.json?.result?.task?.taskId;
  assert.equal(typeof taskId, "string", answer.text);
  return taskId as string;
}
