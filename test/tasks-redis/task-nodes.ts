/**
 * Test helper for the multi-node task tests (not a test file): `conduit-mcp serve <probe module>
 * --redis URL` processes on one private redis-server, the 2025-11-25 task requests over raw HTTP
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks), and the abort
 * times each node's `hold` handler prints.
 */
import { createInterface } from "node:readline";

import { type CliProcess, MCP_HEADERS, type RpcAnswer, rpc, startCli } from "../cli/cli-process.js";

/** The probe module every node serves (test/tasks-redis/fixtures/probe-tools.ts). */
export const PROBE_MODULE = "test/tasks-redis/fixtures/probe-tools.ts";

/** One node and what its handlers reported. */
export interface TaskNode {
  readonly cli: CliProcess;
  readonly url: string;
  /** Epoch ms (sub-ms) at which the `hold` handler with this tag saw its signal abort. */
  readonly aborts: Map<string, number>;
  /** Resolves the abort time of `tag` once printed, or null after `ms`. */
  abortOf(tag: string, ms: number): Promise<number | null>;
  /** Epoch ms at which the `ask_later` handler with this tag asked. */
  readonly asks: Map<string, number>;
}

/** Wraps a started CLI: follows its stdout for `aborted <tag> <time>` lines. */
export function wrapNode(cli: CliProcess): TaskNode {
  const aborts = new Map<string, number>();
  const asks = new Map<string, number>();
  const waiting = new Map<string, (at: number) => void>();
  const lines = createInterface({ input: cli.child.stdout as NodeJS.ReadableStream });
  lines.on("line", (line) => {
    const match = /^(aborted|asking) (\S+) (\d+(?:\.\d+)?)$/.exec(line);
    if (match === null) return;
    const tag = match[2] as string;
    const at = Number(match[3]);
    if (match[1] === "asking") {
      asks.set(tag, at);
      return;
    }
    aborts.set(tag, at);
    waiting.get(tag)?.(at);
  });
  return {
    cli,
    url: cli.url,
    aborts,
    asks,
    abortOf(tag, ms) {
      const seen = aborts.get(tag);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiting.delete(tag);
          resolve(null);
        }, ms);
        waiting.set(tag, (at) => {
          clearTimeout(timer);
          waiting.delete(tag);
          resolve(at);
        });
      });
    },
  };
}

/** Starts one node serving the probe module with `flags` (e.g. `--redis URL`). */
export async function startProbeNode(flags: readonly string[]): Promise<TaskNode> {
  return wrapNode(await startCli(["serve", PROBE_MODULE, "--port", "0", ...flags]));
}

/** Starts `count` nodes in parallel serving the probe module with `--redis url` and `flags`. */
export async function startTaskNodes(
  url: string,
  count: number,
  flags: readonly string[],
): Promise<TaskNode[]> {
  const started = await Promise.allSettled(
    Array.from({ length: count }, () => startProbeNode(["--redis", url, ...flags])),
  );
  const nodes = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const failed = started.find((s) => s.status === "rejected");
  if (failed !== undefined) {
    await Promise.all(nodes.map((n) => n.cli.kill()));
    throw (failed as PromiseRejectedResult).reason;
  }
  return nodes;
}

/** The wall clock comparable with the nodes' abort times (see the probe module). */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}

/** A 2025-11-25 task as the wire carries it. */
export interface WireTask {
  readonly taskId: string;
  readonly status: string;
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly ttl: number | null;
  readonly pollInterval?: number;
}

let nextId = 0;

/** One JSON-RPC request with the given credentials; a fresh id each. */
export function request(
  url: string,
  method: string,
  params: Record<string, unknown>,
  auth: Readonly<Record<string, string>>,
): Promise<RpcAnswer> {
  nextId++;
  return rpc(url, { id: `r${nextId}`, method, params }, { ...MCP_HEADERS, ...auth });
}

/** `tools/call` augmented with a task; resolves the created task or the JSON-RPC error. */
export async function createTask(
  url: string,
  name: string,
  args: Record<string, unknown>,
  auth: Readonly<Record<string, string>>,
): Promise<{ task?: WireTask; error?: { code: number; message: string }; status: number }> {
  const answer = await request(
    url,
    "tools/call",
    { name, arguments: args, task: { ttl: 60_000 } },
    auth,
  );
  const task = (answer.message?.result as { task?: WireTask } | undefined)?.task;
  if (task !== undefined) return { task, status: answer.status };
  if (answer.message?.error !== undefined) {
    return { error: answer.message.error, status: answer.status };
  }
  return { status: answer.status };
}

/** `tasks/get`: the task, or the JSON-RPC error. */
export async function getTask(
  url: string,
  taskId: string,
  auth: Readonly<Record<string, string>>,
): Promise<{ task?: WireTask; error?: { code: number; message: string } }> {
  const answer = await request(url, "tasks/get", { taskId }, auth);
  if (answer.message?.error !== undefined) return { error: answer.message.error };
  return { task: answer.message?.result as unknown as WireTask };
}

/** `tasks/cancel`: the task after the cancel, or the JSON-RPC error. */
export async function cancelTask(
  url: string,
  taskId: string,
  auth: Readonly<Record<string, string>>,
): Promise<{ task?: WireTask; error?: { code: number; message: string } }> {
  const answer = await request(url, "tasks/cancel", { taskId }, auth);
  if (answer.message?.error !== undefined) return { error: answer.message.error };
  return { task: answer.message?.result as unknown as WireTask };
}

/** `tasks/list`, every page (at most 100 pages): the task ids, or the JSON-RPC error. */
export async function listTasks(
  url: string,
  auth: Readonly<Record<string, string>>,
): Promise<{ ids?: string[]; error?: { code: number; message: string } }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const answer = await request(url, "tasks/list", cursor === undefined ? {} : { cursor }, auth);
    if (answer.message?.error !== undefined) return { error: answer.message.error };
    const result = answer.message?.result as { tasks?: WireTask[]; nextCursor?: string };
    ids.push(...(result.tasks ?? []).map((task) => task.taskId));
    if (result.nextCursor === undefined) return { ids };
    cursor = result.nextCursor;
  }
  throw new Error("tasks/list never ended");
}

/** `tasks/result` with a deadline (it blocks until the task is terminal). */
export async function taskResult(
  url: string,
  taskId: string,
  auth: Readonly<Record<string, string>>,
): Promise<RpcAnswer> {
  return request(url, "tasks/result", { taskId }, auth);
}
