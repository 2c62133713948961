/**
 * The chaos soak's plans over what a server keeps between requests, each judged against the
 * chaos timeline (the asks are in ask-plans.ts):
 *
 * - `task`: a 2025-era `work` call made a task on one node, polled with `tasks/get` on others
 *   until it ends, its result fetched with `tasks/result` on another node: it must be the call's
 *   own tag, delivered once; another tenant's `tasks/get` of the same id must find nothing.
 * - `listen`: a 2026-07-28 `subscriptions/listen` naming one URI of its own: the acknowledgement
 *   must carry its own subscription id and exactly its own filter.
 *
 * A plan may lose its state only to a chaos event that can cost exactly that state (docs/redis.md,
 * "Tasks"): its node killed while the task ran (the task reads `failed`), Redis restarted empty
 * after the task was made (its record is gone), Redis away while the task was made or read (the
 * task store fails closed: 503). Each loss is counted with its reason; anything else is a
 * violation.
 */
import { randomUUID } from "node:crypto";

import { errorCode, resultText } from "./answer.js";
import { headers, type LoadContext, otherNode, pickNode, url } from "./calls.js";
import { exchange } from "./exchange.js";
import { answered, firstResponse, MODERN, rpc, sendAvoiding, show } from "./plan-helpers.js";

/** How long a task may take to end (its work is at most 1.5 s) before it counts as lost. */
const TASK_DEADLINE_MS = 20_000;
const LISTEN_DEADLINE_MS = 5_000;
/** A task ending `failed` for this reason was run by a node that died (docs/redis.md, "Tasks"). */
const NODE_STOPPED = "stopped before it finished";

export async function planTask(ctx: LoadContext): Promise<void> {
  const F = "task";
  const tenant = ctx.random.between(0, ctx.secrets.length - 1);
  const secret = ctx.secrets[tenant] as string;
  const tag = `task-${tenant}-${randomUUID()}`;
  ctx.tally.start(F);
  const ms = ctx.random.between(100, 1_500);
  const made = await sendAvoiding(ctx, pickNode(ctx), [], {
    method: "POST",
    headers: headers("2025", secret),
    body: rpc("tools/call", {
      name: "work",
      arguments: { ms, tag },
      task: { ttl: 120_000 },
    }),
  });
  const { got: created, node } = made;
  const task = (firstResponse(created)?.result as { task?: { taskId?: unknown } } | undefined)
    ?.task;
  const taskId = typeof task?.taskId === "string" ? task.taskId : null;
  if (taskId === null) {
    const { sentAt, endedAt } = created;
    if (created.ending !== "complete" && ctx.timeline.nodeKilled(node, sentAt, endedAt)) {
      return ctx.tally.outcome(F, "chaos", "not made: its node killed during tools/call");
    }
    if (created.status === 503 && ctx.timeline.redisDisturbed(sentAt, endedAt)) {
      return ctx.tally.outcome(F, "chaos", "not made: task store unavailable, Redis away (503)");
    }
    ctx.tally.outcome(F, "failed", "not made without chaos");
    return ctx.tally.violation("task not made without chaos", show(node, created));
  }
  // Another tenant names the id: it must find nothing.
  const foreign = (tenant + 1) % ctx.secrets.length;
  const peek = await exchange(
    url(ctx, pickNode(ctx)),
    "POST",
    headers("2025", ctx.secrets[foreign] as string),
    rpc("tasks/get", { taskId }),
  ).done;
  if (firstResponse(peek)?.result !== undefined) {
    ctx.tally.violation(
      "cross-tenant: another tenant read a task",
      `${taskId} by tenant ${foreign}`,
    );
  }
  // Poll on any node until it ends.
  let status = "working";
  /** What each poll read, in order, runs of the same merged: `working ×3, 503 ×2, completed`. */
  const polls: [string, number][] = [];
  /** When the last poll that read `working` was sent: the task had not finished before. */
  let lastWorkingAt = 0;
  /** When the first poll that found no such task was sent (-1: none did). */
  let firstGoneAt = -1;
  const deadline = performance.now() + TASK_DEADLINE_MS;
  while (performance.now() < deadline) {
    const got = await exchange(
      url(ctx, pickNode(ctx)),
      "POST",
      headers("2025", secret),
      rpc("tasks/get", { taskId }),
    ).done;
    const seen = (firstResponse(got)?.result as { status?: unknown } | undefined)?.status;
    if (typeof seen === "string") status = seen;
    if (seen === "working") lastWorkingAt = got.sentAt;
    if (firstGoneAt < 0 && errorCode(got.responses[0] ?? {}) === -32602) firstGoneAt = got.sentAt;
    const read =
      typeof seen === "string"
        ? seen
        : got.ending !== "complete"
          ? got.ending
          : `${got.status}/${errorCode(got.responses[0] ?? {}) ?? "?"}`;
    const last = polls.at(-1);
    if (last?.[0] === read) last[1]++;
    else polls.push([read, 1]);
    if (status !== "working" && status !== "input_required") break;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  const fetched = await sendAvoiding(ctx, otherNode(ctx, node), [node], {
    method: "POST",
    headers: headers("2025", secret),
    body: rpc("tasks/result", { taskId }),
  });
  const result = fetched.got;
  const text = result.responses.length === 1 ? resultText(result.responses[0]) : undefined;
  if (result.responses.length > 1) {
    ctx.tally.outcome(F, "failed", "answered twice");
    return ctx.tally.violation("answered twice", `tasks/result ${taskId}`);
  }
  if (text === tag) {
    if (answered(ctx, tag, "tasks/result")) ctx.tally.outcome(F, "ok", "its own result, once");
    else ctx.tally.outcome(F, "failed", "its result delivered twice");
    return;
  }
  if (text !== undefined) {
    ctx.tally.outcome(F, "failed", "someone else's result");
    return ctx.tally.violation("someone else's task result", `${taskId}: ${text.slice(0, 80)}`);
  }
  const reason = lostTask(ctx, {
    created,
    node,
    ms,
    lastWorkingAt,
    firstGoneAt,
    result,
    resultNode: fetched.node,
    status,
  });
  const t = ctx.timeline;
  const history = polls.map(([what, n]) => (n === 1 ? what : `${what} ×${n}`)).join(", ");
  const restart = t.lastRestart(created.sentAt, firstGoneAt >= 0 ? firstGoneAt : result.sentAt);
  const margin =
    restart === undefined
      ? ""
      : ` (Redis stopped for a restart ${(restart.from - (created.sentAt + ms)).toFixed(0)} ms and exited ${((restart.down ?? restart.to) - (created.sentAt + ms)).toFixed(0)} ms after its planned end)`;
  const story = `made on node ${node} at ${t.at(created.sentAt)}–${t.at(created.endedAt)} to work ${ms} ms${margin}, polls: ${history}, tasks/result on node ${fetched.node} ${result.ending} HTTP ${result.status} code ${errorCode(result.responses[0] ?? {})} at ${t.at(result.sentAt)}; chaos: ${t.around(created.sentAt, result.endedAt)}`;
  if (reason !== null) return ctx.tally.outcome(F, "chaos", reason, story);
  ctx.tally.outcome(F, "failed", "lost without chaos", story);
  ctx.tally.violation(
    "task lost without chaos",
    `${taskId} made on node ${node}, status ${status}; tasks/result ${show(fetched.node, result)}`,
  );
}

/** Why a task without its result was lost to the chaos, or null when no chaos explains it. */
function lostTask(
  ctx: LoadContext,
  at: {
    created: { sentAt: number; endedAt: number };
    node: number;
    ms: number;
    lastWorkingAt: number;
    firstGoneAt: number;
    result: {
      sentAt: number;
      endedAt: number;
      ending: string;
      status: number;
      responses: unknown[];
    };
    resultNode: number;
    status: string;
  },
): string | null {
  const { timeline } = ctx;
  const { result } = at;
  const from = at.created.sentAt;
  const code = errorCode(result.responses[0] ?? {});
  const message = String(
    (result.responses[0] as { error?: { message?: unknown } } | undefined)?.error?.message ?? "",
  );
  if (
    result.ending !== "complete" &&
    timeline.nodeKilled(at.resultNode, result.sentAt, result.endedAt)
  ) {
    return "tasks/result cut: its node killed";
  }
  if (result.status === 503 && timeline.redisDisturbed(result.sentAt, result.endedAt)) {
    return "tasks/result: task store unavailable, Redis away (503)";
  }
  if (at.status === "failed" || message.includes(NODE_STOPPED)) {
    if (timeline.nodeKilled(at.node, from, result.endedAt)) {
      return "failed: the node running it was killed";
    }
  }
  // Gone from a Redis restarted empty: its finished record is lost with Redis (docs/redis.md,
  // "Tasks": what no node holds is gone). A task still running when Redis went away is held by
  // its node and written again when Redis is back, so only its node's death may lose it then.
  // The restart that lost it is the last one before a read first found it gone; the task had
  // finished in time only if it could have before that Redis process exited.
  if (code === -32602) {
    const goneBy = at.firstGoneAt >= 0 ? at.firstGoneAt : result.sentAt;
    const wiper = timeline.lastRestart(from, goneBy);
    if (wiper !== undefined) {
      // It cannot have finished before its planned work nor before a poll that read `working`.
      const finishedNotBefore = Math.max(at.created.sentAt + at.ms, at.lastWorkingAt);
      if (finishedNotBefore < (wiper.down ?? wiper.to)) {
        return "record gone: Redis restarted empty after it could have finished";
      }
      if (timeline.nodeKilled(at.node, from, result.endedAt)) {
        return "record gone: Redis restarted empty while it ran, and its node killed";
      }
    }
  }
  return null;
}

export async function planListen(ctx: LoadContext): Promise<void> {
  const F = "listen";
  const tenant = ctx.random.between(0, ctx.secrets.length - 1);
  const secret = ctx.secrets[tenant] as string;
  const node = pickNode(ctx);
  const uri = `soak://${tenant}/${randomUUID()}`;
  const id = `listen-${randomUUID()}`;
  ctx.tally.start(F);
  let ack: Record<string, unknown> | null = null;
  const h = { ...headers("modern", secret), "mcp-method": "subscriptions/listen" };
  const running = exchange(
    url(ctx, node),
    "POST",
    h,
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": MODERN,
          "io.modelcontextprotocol/clientCapabilities": {},
        },
        notifications: { resourceSubscriptions: [uri] },
      },
    }),
    {
      message: (message) => {
        if (message.method !== "notifications/subscriptions/acknowledged") return;
        ack = message;
        running.destroy();
      },
    },
  );
  const timer = setTimeout(() => running.destroy(), LISTEN_DEADLINE_MS);
  const got = await running.done;
  clearTimeout(timer);
  const params = (ack as { params?: Record<string, unknown> } | null)?.params;
  if (params !== undefined) {
    const meta = params._meta as Record<string, unknown> | undefined;
    const filter = params.notifications as { resourceSubscriptions?: unknown } | undefined;
    const own =
      meta?.["io.modelcontextprotocol/subscriptionId"] === id &&
      JSON.stringify(filter?.resourceSubscriptions) === JSON.stringify([uri]);
    if (own) return ctx.tally.outcome(F, "ok", "acknowledged with its own id and filter");
    ctx.tally.outcome(F, "failed", "acknowledged another filter");
    return ctx.tally.violation(
      "cross-tenant: a listen acknowledged another filter",
      JSON.stringify(params).slice(0, 200),
    );
  }
  if (
    (got.ending === "broken" || got.ending === "refused") &&
    ctx.timeline.nodeKilled(node, got.sentAt, got.endedAt)
  ) {
    return ctx.tally.outcome(F, "chaos", `not acknowledged: its node killed (${got.ending})`);
  }
  ctx.tally.outcome(F, "failed", "not acknowledged without chaos");
  ctx.tally.violation("listen not acknowledged without chaos", show(node, got));
}
