/**
 * The chaos soak's plans over what a server keeps between requests, each judged against the
 * chaos timeline:
 *
 * - `task`: a 2025-era `work` call made a task on one node, polled with `tasks/get` on others
 *   until it ends, its result fetched with `tasks/result` on another node: it must be the call's
 *   own tag, delivered once; another tenant's `tasks/get` of the same id must find nothing.
 * - `ask`: a session made on one node, an `ask` call on it (the server asks on the call's
 *   stream), a forged answer from another tenant sent first to a second node, then the genuine
 *   answer to a third: the call must return the genuine answer (never the forged one), once.
 * - `listen`: a 2026-07-28 `subscriptions/listen` naming one URI of its own: the acknowledgement
 *   must carry its own subscription id and exactly its own filter.
 *
 * A plan may lose its state only when the chaos met it (its nodes killed, Redis restarted empty
 * or frozen during its window); anything else is a violation.
 */
import { randomUUID } from "node:crypto";

import { errorCode, resultText } from "./answer.js";
import { headers, type LoadContext, otherNode, pickNode, thirdNode, url } from "./calls.js";
import { exchange } from "./exchange.js";

const LEGACY = "2025-11-25";
const MODERN = "2026-07-28";
/** How long a task may take to end (its work is at most 1.5 s) before it counts as lost. */
const TASK_DEADLINE_MS = 20_000;
/** How long an ask may wait for its answer before the driver hangs up and judges it. */
const ASK_DEADLINE_MS = 15_000;
const LISTEN_DEADLINE_MS = 5_000;

let nextId = 1;

function rpc(method: string, params: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: "2.0", id: `s-${nextId++}`, method, params });
}

function firstResponse(got: { responses: unknown[] }): Record<string, unknown> | undefined {
  return got.responses[0] as Record<string, unknown> | undefined;
}

function disturbed(ctx: LoadContext, nodes: readonly number[], from: number): boolean {
  return ctx.timeline.disturbed(nodes, from, performance.now());
}

/** Records a tag answered to its call; a tag answered twice anywhere is a violation. */
function answered(ctx: LoadContext, tag: string, what: string): boolean {
  if (ctx.tally.answeredTags.has(tag)) {
    ctx.tally.violation("a result delivered twice", `${what} ${tag}`);
    return false;
  }
  ctx.tally.answeredTags.add(tag);
  return true;
}

export async function planTask(ctx: LoadContext): Promise<void> {
  const tenant = ctx.random.between(0, ctx.secrets.length - 1);
  const secret = ctx.secrets[tenant] as string;
  const tag = `task-${tenant}-${randomUUID()}`;
  const node = pickNode(ctx);
  const startedAt = performance.now();
  ctx.tally.started++;
  const created = await exchange(
    url(ctx, node),
    "POST",
    headers("2025", secret),
    rpc("tools/call", {
      name: "work",
      arguments: { ms: ctx.random.between(100, 1_500), tag },
      task: { ttl: 120_000 },
    }),
  ).done;
  const task = (firstResponse(created)?.result as { task?: { taskId?: unknown } } | undefined)
    ?.task;
  const taskId = typeof task?.taskId === "string" ? task.taskId : null;
  if (taskId === null) {
    if (disturbed(ctx, [node], startedAt)) return ctx.tally.outcome("task: not created (chaos)");
    ctx.tally.outcome("violation");
    return ctx.tally.violation(
      "task not created without chaos",
      `node ${node}: ${created.status} ${created.ending} ${JSON.stringify(created.responses[0] ?? null).slice(0, 160)}`,
    );
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
    if (status !== "working" && status !== "input_required") break;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  const resultNode = otherNode(ctx, node);
  const result = await exchange(
    url(ctx, resultNode),
    "POST",
    headers("2025", secret),
    rpc("tasks/result", { taskId }),
  ).done;
  const text = result.responses.length === 1 ? resultText(result.responses[0]) : undefined;
  if (result.responses.length > 1) ctx.tally.violation("answered twice", `tasks/result ${taskId}`);
  if (text === tag) {
    if (answered(ctx, tag, "tasks/result")) ctx.tally.outcome("task result");
    return;
  }
  if (text !== undefined) {
    ctx.tally.outcome("violation");
    return ctx.tally.violation("someone else's task result", `${taskId}: ${text.slice(0, 80)}`);
  }
  if (disturbed(ctx, [node, resultNode], startedAt)) {
    return ctx.tally.outcome(
      `task lost to chaos (${status}, ${errorCode(result.responses[0] ?? {}) ?? result.ending})`,
    );
  }
  ctx.tally.outcome("violation");
  ctx.tally.violation(
    "task lost without chaos",
    `${taskId} node ${node} status ${status}: ${result.status} ${JSON.stringify(result.responses[0] ?? null).slice(0, 160)}`,
  );
}

export async function planAsk(ctx: LoadContext): Promise<void> {
  const tenant = ctx.random.between(0, ctx.secrets.length - 1);
  const secret = ctx.secrets[tenant] as string;
  const foreign = ctx.secrets[(tenant + 1) % ctx.secrets.length] as string;
  const node = pickNode(ctx);
  const startedAt = performance.now();
  const init = await exchange(
    url(ctx, node),
    "POST",
    headers("2025", secret),
    rpc("initialize", {
      protocolVersion: LEGACY,
      capabilities: { elicitation: {} },
      clientInfo: { name: "chaos-soak", version: "1" },
    }),
  ).done;
  const sessionId = init.sessionId;
  if (sessionId === null) {
    if (disturbed(ctx, [node], startedAt)) return ctx.tally.note("ask: initialize lost to chaos");
    return ctx.tally.violation("initialize failed", `node ${node}: ${init.status} ${init.ending}`);
  }
  ctx.tally.started++;
  const tag = `ask-${tenant}-${randomUUID()}`;
  const inSession = { ...headers("2025", secret), "mcp-session-id": sessionId };
  const forgedNode = otherNode(ctx, node);
  const answerNode = thirdNode(ctx, node, forgedNode);
  const answers: Promise<unknown>[] = [];
  /** When the genuine answer's POST ended (-1: never sent). */
  const answerEndedAt = -1;
  const running = exchange(
    url(ctx, node),
    "POST",
    inSession,
    rpc("tools/call", { name: "ask", arguments: {} }),
    {
      message: (message) => {
        if (message.method !== "elicitation/create" || answers.length > 0) return;
        const reply = (answer: string) =>
          JSON.stringify({
            jsonrpc: "2.0",
            id: message.id,
            result: { action: "accept", content: { answer } },
          });
        // Forged first, by another tenant; then the genuine one, through a third node.
        answers.push(
          exchange(
            url(ctx, forgedNode),
            "POST",
            headers("2025", foreign),
            reply("forged"),
          ).done.then(() => exchange(url(ctx, answerNode), "POST", inSession, reply(tag)).done),
        );
      },
    },
  );
  const timer = setTimeout(() => running.destroy(), ASK_DEADLINE_MS);
  const got = await running.done;
  clearTimeout(timer);
  await Promise.all(answers);
  await exchange(url(ctx, node), "DELETE", inSession, null).done;
  ctx.tally.sessions.set(sessionId, { from: init.sentAt, to: performance.now() });
  if (got.responses.length > 1) ctx.tally.violation("answered twice", `ask ${tag}`);
  const text = got.responses.length >= 1 ? resultText(got.responses[0]) : undefined;
  if (text === tag) {
    if (answered(ctx, tag, "ask")) ctx.tally.outcome("ask answered");
    return;
  }
  if (text === "forged") {
    ctx.tally.outcome("violation");
    return ctx.tally.violation("cross-tenant: a forged answer was taken", `${tag} node ${node}`);
  }
  // Lost to the chaos only when it met the ask before its answer could have arrived (the
  // answer's POST, plus a second for the hop between nodes): an ask still waiting long after a
  // calm answer is hung.
  const until = answerEndedAt < 0 ? got.endedAt : Math.min(got.endedAt, answerEndedAt + 1_000);
  if (ctx.timeline.disturbed([node, forgedNode, answerNode], startedAt, until)) {
    return ctx.tally.outcome(`ask lost to chaos (${got.ending})`);
  }
  ctx.tally.outcome("violation");
  ctx.tally.violation(
    "ask lost without chaos",
    `${tag} node ${node} → answer via ${answerNode}: ${got.ending} ${got.status} ${JSON.stringify(got.responses[0] ?? null).slice(0, 160)}`,
  );
}

export async function planListen(ctx: LoadContext): Promise<void> {
  const tenant = ctx.random.between(0, ctx.secrets.length - 1);
  const secret = ctx.secrets[tenant] as string;
  const node = pickNode(ctx);
  const startedAt = performance.now();
  const uri = `soak://${tenant}/${randomUUID()}`;
  const id = `listen-${nextId++}`;
  ctx.tally.started++;
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
    if (own) return ctx.tally.outcome("listen acknowledged");
    ctx.tally.outcome("violation");
    return ctx.tally.violation(
      "cross-tenant: a listen acknowledged another filter",
      JSON.stringify(params).slice(0, 200),
    );
  }
  if (disturbed(ctx, [node], startedAt))
    return ctx.tally.outcome(`listen lost to chaos (${got.ending})`);
  ctx.tally.outcome("violation");
  ctx.tally.violation(
    "listen not acknowledged without chaos",
    `node ${node}: ${got.status} ${got.ending} ${got.problem ?? ""}`,
  );
}
