/**
 * The tools each chaos-soak node serves (`conduit-mcp serve scripts/soak/chaos-tools.ts`), loaded
 * by the real CLI as a user module (docs/cli.md, "Your own module"):
 *
 * - `work {ms, tag}` reports progress 0 as it starts (the driver's evidence that the call is
 *   tracked and running, from which it times a cancel), then sleeps `ms` honouring cancellation
 *   and returns its unique `tag`, so an answer can be matched to exactly one call;
 * - `heap {}` runs a few full garbage collections (the node runs with `--expose-gc`) and returns
 *   `{ heapUsed, rss }` in bytes: the driver's probe for "heap bounded" on a node it cannot reach
 *   otherwise;
 * - `ask {}` asks the client (2025-11-25 elicitation on the call's stream) and returns its answer,
 *   and `work` may run as a task: the driver's ask and task plans.
 */
import { setTimeout as sleep } from "node:timers/promises";

import { z } from "zod";

import { defineTool } from "../../src/protocol/index.js";

/** Longest `work` call the driver plans (a call to be cancelled that is never cancelled). */
const MAX_WORK_MS = 120_000;

export const work = defineTool({
  name: "work",
  description: "Reports progress 0, sleeps `ms` honouring cancellation, returns `tag`",
  input: z.object({ ms: z.number().int().min(0).max(MAX_WORK_MS), tag: z.string().max(100) }),
  // The driver's task plans run it as a task (docs/tasks.md).
  task: "optional",
  handler: async ({ ms, tag }, ctx) => {
    await ctx.progress(0);
    await sleep(ms, undefined, { signal: ctx.signal });
    return tag;
  },
});

/** `ask {}` asks the client for a string `answer` (a form elicitation) and returns it. */
export const ask = defineTool({
  name: "ask",
  description: "Asks the client for `answer` and returns it",
  input: z.object({}),
  handler: async (_args, ctx) => {
    const reply = await ctx.elicit("chaos soak question", {
      type: "object",
      properties: { answer: { type: "string" } },
    });
    return reply.action === "accept" ? String(reply.content?.answer ?? "") : reply.action;
  },
});

export const heap = defineTool({
  name: "heap",
  description: "heapUsed after full GCs, and rss, in bytes (JSON text)",
  input: z.object({}),
  handler: async () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    for (let i = 0; gc !== undefined && i < 4; i++) {
      gc();
      await sleep(20);
    }
    const { heapUsed, rss } = process.memoryUsage();
    return JSON.stringify({ heapUsed, rss, gc: gc !== undefined });
  },
});
