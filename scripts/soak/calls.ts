/**
 * The chaos soak's load: one "plan" at a time per worker, each a small scenario with one or two
 * tool calls whose every outcome is judged against the chaos timeline.
 *
 * - `complete`: a call that finishes by itself (either protocol era). Redis being away must not
 *   matter (the store fails open); only a kill of its own node may cost it its answer.
 * - `cancel`: a 2025-era call cancelled by `notifications/cancelled` sent to a DIFFERENT node than
 *   the call's, once the call reported that it runs. It must end cancelled (-32800, or its stream
 *   ends without a response) unless a Redis outage or a kill met it; then it may also finish.
 * - `twin`: two tenants run calls with the SAME request id on different nodes; the second tenant
 *   cancels its own through a third node. The first tenant's call must never be cancelled.
 * - `disconnect`: a call whose client goes away (either era); nothing may be answered before.
 * - `session`: `initialize` on one node (a session in Redis), the call on another node with that
 *   session, then `DELETE` of the session on a third node, which must cancel the call.
 *
 * Every call ends in exactly one outcome, counted by kind; what breaks a rule is a violation.
 */
import { randomUUID } from "node:crypto";

import { errorCode, resultText } from "./answer.js";
import { planAsk, planAskModern } from "./ask-plans.js";
import type { ChaosCluster } from "./cluster.js";
import { type Exchange, exchange, type Running } from "./exchange.js";
import type { Random } from "./random.js";
import { planListen, planTask } from "./stateful-plans.js";
import type { Tally } from "./tally.js";
import type { Timeline } from "./timeline.js";

const MODERN = "2026-07-28";
const LEGACY = "2025-11-25";
const CANCELLED = -32800;
/** A call still open this long after its planned end is hung. */
const HANG_MS = 20_000;
/** After a cancel's 202, how long the call may take to end before the cancel is sent again. */
const CANCEL_EFFECT_MS = 2_000;
/** A call to be cancelled runs this long if no cancel reaches it (bounded: it cannot hang). */
const UNCANCELLED_MS = [9_000, 11_000] as const;

export type Era = "2025" | "modern";
export type PlanKind =
  | "complete"
  | "cancel"
  | "twin"
  | "disconnect"
  | "session"
  | "task"
  | "ask"
  | "ask-modern"
  | "listen";

export interface LoadContext {
  readonly cluster: ChaosCluster;
  readonly timeline: Timeline;
  readonly tally: Tally;
  readonly random: Random;
  /** Bearer secrets, one per tenant (index = tenant). */
  readonly secrets: readonly string[];
}

let nextId = 1;

/** Runs one randomly chosen plan to its end. Never rejects. */
export async function runPlan(ctx: LoadContext): Promise<void> {
  const kind = ctx.random.pick<PlanKind>([
    ["complete", 0.25],
    ["cancel", 0.15],
    ["twin", 0.1],
    ["disconnect", 0.1],
    ["session", 0.1],
    ["task", 0.12],
    ["ask", 0.06],
    ["ask-modern", 0.06],
    ["listen", 0.06],
  ]);
  ctx.tally.note(`plan ${kind}`);
  try {
    switch (kind) {
      case "complete":
        return await planComplete(ctx);
      case "cancel":
        return await planCancel(ctx);
      case "twin":
        return await planTwin(ctx);
      case "disconnect":
        return await planDisconnect(ctx);
      case "session":
        return await planSession(ctx);
      case "task":
        return await planTask(ctx);
      case "ask":
        return await planAsk(ctx);
      case "ask-modern":
        return await planAskModern(ctx);
      case "listen":
        return await planListen(ctx);
    }
  } catch (error) {
    ctx.tally.violation(
      "driver error",
      error instanceof Error ? (error.stack ?? error.message) : String(error),
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------------

async function planComplete(ctx: LoadContext): Promise<void> {
  const era: Era = ctx.random.chance(0.4) ? "modern" : "2025";
  const call = newCall(ctx, era, pickNode(ctx), ctx.random.between(0, ctx.secrets.length - 1));
  const got = await startCall(ctx, call, ctx.random.between(100, 1_500)).done;
  if (!common(ctx, call, got)) return;
  if (ownResult(got, call)) return ctx.tally.outcome("call", "ok", "its own result");
  judgeFailure(ctx, call, got, [call.node], "complete call");
}

async function planCancel(ctx: LoadContext): Promise<void> {
  const tenant = ctx.random.between(0, ctx.secrets.length - 1);
  const call = newCall(ctx, "2025", pickNode(ctx), tenant);
  const cancelNode = otherNode(ctx, call.node);
  const delay = ctx.random.between(30, 1_000);
  const judged = await cancelledCall(ctx, call, tenant, cancelNode, delay);
  judgeCancelled(ctx, call, judged, "cancel");
}

async function planTwin(ctx: LoadContext): Promise<void> {
  const tenants = ctx.secrets.length;
  const victimTenant = ctx.random.between(0, tenants - 1);
  const cancellerTenant = (victimTenant + 1 + ctx.random.between(0, tenants - 2)) % tenants;
  const id = nextId++;
  const victimNode = pickNode(ctx);
  const cancellerNode = otherNode(ctx, victimNode);
  const cancelVia = thirdNode(ctx, victimNode, cancellerNode);
  const victim = newCall(ctx, "2025", victimNode, victimTenant, id);
  const canceller = newCall(ctx, "2025", cancellerNode, cancellerTenant, id);
  const delay = ctx.random.between(30, 800);
  // The victim runs past the canceller's whole story (cancel, re-sends), so a cancel leaking
  // across tenants would find it still running.
  const victimRun = startCall(ctx, victim, delay + 7_000);
  const [victimGot, judged] = await Promise.all([
    victimRun.done,
    cancelledCall(ctx, canceller, cancellerTenant, cancelVia, delay),
  ]);
  judgeCancelled(ctx, canceller, judged, "twin canceller");
  if (!common(ctx, victim, victimGot)) return;
  if (ownResult(victimGot, victim))
    return ctx.tally.outcome(
      "call",
      "ok",
      "its own result despite another tenant's cancel of its id (twin)",
    );
  if (victimGot.responses.length === 1 && errorCode(victimGot.responses[0]) === CANCELLED) {
    ctx.tally.outcome("call", "failed", "cross-tenant cancel");
    ctx.tally.violation("cross-tenant cancel", describe(victim, victimGot));
    return;
  }
  judgeFailure(ctx, victim, victimGot, [victim.node], "twin victim");
}

async function planDisconnect(ctx: LoadContext): Promise<void> {
  const era: Era = ctx.random.chance(0.4) ? "modern" : "2025";
  const call = newCall(ctx, era, pickNode(ctx), ctx.random.between(0, ctx.secrets.length - 1));
  const running = startCall(ctx, call, 60_000);
  const timer = setTimeout(() => running.destroy(), ctx.random.between(50, 1_500));
  const got = await running.done;
  clearTimeout(timer);
  if (!common(ctx, call, got)) return;
  if (got.ending === "destroyed" && got.responses.length === 0) {
    return ctx.tally.outcome("call", "ok", "disconnected by the client, nothing answered before");
  }
  if (got.responses.length > 0) {
    ctx.tally.outcome("call", "failed", "answer before the disconnect");
    ctx.tally.violation("answer before the disconnect", describe(call, got));
    return;
  }
  judgeFailure(ctx, call, got, [call.node], "disconnect call");
}

async function planSession(ctx: LoadContext): Promise<void> {
  const tenant = ctx.random.between(0, ctx.secrets.length - 1);
  const secret = ctx.secrets[tenant] as string;
  const initNode = pickNode(ctx);
  const init = await exchange(
    url(ctx, initNode),
    "POST",
    headers("2025", secret),
    JSON.stringify({
      jsonrpc: "2.0",
      id: `init-${nextId++}`,
      method: "initialize",
      params: {
        protocolVersion: LEGACY,
        capabilities: {},
        clientInfo: { name: "chaos-soak", version: "1" },
      },
    }),
  ).done;
  if (init.status !== 200 || init.sessionId === null) {
    // No call was made: the session step's own outcome.
    if (
      init.ending !== "complete" &&
      ctx.timeline.nodeKilled(initNode, init.sentAt, init.endedAt)
    ) {
      return ctx.tally.note("session: initialize lost to a node kill");
    }
    ctx.tally.violation(
      "initialize failed",
      `node ${initNode}: ${init.status} ${init.ending} ${init.problem}`,
    );
    return;
  }
  const sessionId = init.sessionId;
  ctx.tally.note("sessions created");
  const call = newCall(ctx, "2025", otherNode(ctx, initNode), tenant);
  call.sessionId = sessionId;
  const deleteNode = thirdNode(ctx, initNode, call.node);
  const delay = ctx.random.between(30, 800);
  const ms = delay + ctx.random.between(...UNCANCELLED_MS);
  let deletedAt = -1;
  let lastDeleteAt = -1;
  const deletes: Promise<void>[] = [];
  const sendDelete = (node: number): Promise<number> =>
    exchange(
      url(ctx, node),
      "DELETE",
      { ...headers("2025", secret), "mcp-session-id": sessionId },
      null,
    ).done.then((d) => {
      lastDeleteAt = performance.now();
      ctx.tally.note(`session DELETE → ${d.ending === "complete" ? d.status : d.ending}`);
      return d.status;
    });
  const running = startCall(ctx, call, ms, () => {
    const timer = setTimeout(() => {
      deletedAt = performance.now();
      deletes.push(
        sendDelete(deleteNode).then(async (status) => {
          // Not ended where it was asked (node down, or unknown there during an outage): the
          // creating node, which holds a local copy, ends it so no session is left behind.
          if (status !== 204) await sendDelete(initNode);
        }),
      );
    }, delay);
    void running.done.then(() => clearTimeout(timer));
  });
  const got = await running.done;
  if (deletedAt < 0) {
    deletes.push(
      sendDelete(deleteNode).then(async (s) => void (s !== 204 && (await sendDelete(initNode)))),
    );
  }
  await Promise.all(deletes);
  ctx.tally.sessions.set(sessionId, { from: init.sentAt, to: performance.now() });
  if (got.status === 404 && got.responses.length <= 1) {
    if (!common(ctx, call, got)) return;
    if (ctx.timeline.redisDisturbed(got.sentAt, got.endedAt)) {
      return ctx.tally.outcome(
        "call",
        "chaos",
        "session unknown on another node during a Redis outage (404)",
      );
    }
    ctx.tally.outcome("call", "failed", "session unknown (404)");
    ctx.tally.violation("session unknown without an outage", describe(call, got));
    return;
  }
  judgeCancelled(
    ctx,
    call,
    {
      got,
      firstCancelAt: deletedAt,
      lastCancelAt: lastDeleteAt,
      cancelNodes: [deleteNode, initNode],
    },
    "session call (DELETE)",
  );
}

// ---------------------------------------------------------------------------------------------
// Calls
// ---------------------------------------------------------------------------------------------

interface Call {
  readonly id: number | string;
  readonly tag: string;
  readonly era: Era;
  readonly node: number;
  readonly tenant: number;
  readonly secret: string;
  sessionId?: string;
  /** Planned duration of the tool. */
  ms: number;
}

function newCall(ctx: LoadContext, era: Era, node: number, tenant: number, id?: number): Call {
  const n = id ?? nextId++;
  ctx.tally.start("call");
  return {
    // Both JSON-RPC id kinds; unique per plan over the whole run.
    id: n % 2 === 0 ? n : `c-${n}`,
    tag: `${n}-${tenant}-${randomUUID()}`,
    era,
    node,
    tenant,
    secret: ctx.secrets[tenant] as string,
    ms: 0,
  };
}

/** Starts a `work` call; `onStarted` runs at its first progress event (it runs on the node). */
function startCall(ctx: LoadContext, call: Call, ms: number, onStarted?: () => void): Running {
  call.ms = ms;
  const meta: Record<string, unknown> = {};
  if (onStarted !== undefined) meta.progressToken = `p-${call.tag}`;
  if (call.era === "modern") {
    meta["io.modelcontextprotocol/protocolVersion"] = MODERN;
    meta["io.modelcontextprotocol/clientCapabilities"] = {};
  }
  const params: Record<string, unknown> = { name: "work", arguments: { ms, tag: call.tag } };
  if (Object.keys(meta).length > 0) params._meta = meta;
  const body = JSON.stringify({ jsonrpc: "2.0", id: call.id, method: "tools/call", params });
  const h = headers(call.era, call.secret);
  if (call.era === "modern") {
    h["mcp-method"] = "tools/call";
    h["mcp-name"] = "work";
  }
  if (call.sessionId !== undefined) h["mcp-session-id"] = call.sessionId;
  let started = false;
  const running = exchange(url(ctx, call.node), "POST", h, body, () => {
    if (started) return;
    started = true;
    onStarted?.();
  });
  const hang = setTimeout(() => {
    ctx.tally.violation(
      "hung",
      `${call.era} id=${JSON.stringify(call.id)} node ${call.node} open ${ms + HANG_MS} ms`,
    );
    running.destroy();
  }, ms + HANG_MS);
  void running.done.then(() => clearTimeout(hang));
  return running;
}

interface CancelStory {
  readonly got: Exchange;
  /** When the first cancel was sent (-1: never, the call ended first). */
  readonly firstCancelAt: number;
  /** When the last cancel's answer came (-1: none came). */
  readonly lastCancelAt: number;
  /** Every node a cancel went to. */
  readonly cancelNodes: readonly number[];
}

/**
 * Runs a 2025-era call and, `delay` ms after it reported that it runs, sends
 * `notifications/cancelled` as `tenant` to `cancelNode` (never the call's node when there are
 * two or more). While the call stays open {@link CANCEL_EFFECT_MS} after a cancel's answer, the
 * cancel is sent again (at most twice, to another node if the first is down), so a cancel lost
 * to an outage is told apart from one that is stuck.
 */
async function cancelledCall(
  ctx: LoadContext,
  call: Call,
  tenant: number,
  cancelNode: number,
  delay: number,
): Promise<CancelStory> {
  let firstCancelAt = -1;
  let lastCancelAt = -1;
  const cancelNodes: number[] = [];
  const timers: NodeJS.Timeout[] = [];
  let ended = false;
  const ms = delay + ctx.random.between(...UNCANCELLED_MS);
  const sendCancel = (attempt: number, node: number): void => {
    if (ended) return;
    if (firstCancelAt < 0) firstCancelAt = performance.now();
    if (attempt > 0) ctx.tally.note("cancels re-sent");
    cancelNodes.push(node);
    const body = JSON.stringify({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: call.id, reason: "chaos soak cancel" },
    });
    void exchange(
      url(ctx, node),
      "POST",
      headers("2025", ctx.secrets[tenant] as string),
      body,
    ).done.then((answer) => {
      lastCancelAt = performance.now();
      const status = answer.ending === "complete" ? String(answer.status) : answer.ending;
      ctx.tally.note(`cancel notification → ${status}`);
      if (answer.ending === "complete" && answer.status !== 202) {
        ctx.tally.violation("cancel notification not 202", `${answer.status} on node ${node}`);
      }
      if (ended || attempt >= 2) return;
      const next = answer.ending === "complete" ? node : otherNode(ctx, call.node, node);
      timers.push(setTimeout(() => sendCancel(attempt + 1, next), CANCEL_EFFECT_MS));
    });
  };
  let started = false;
  const running = startCall(ctx, call, ms, () => {
    started = true;
    timers.push(setTimeout(() => sendCancel(0, cancelNode), delay));
  });
  const got = await running.done;
  ended = true;
  for (const t of timers) clearTimeout(t);
  if (started && got.ending === "broken") {
    // Its node died under it: the client gives up and cancels anyway, through a live node. The
    // dead node's in-flight entry is still in Redis until its lease lapses, so the cancel is
    // recorded, and nobody will ever clear that row: only the TTL janitor removes it.
    const late = await exchange(
      url(ctx, otherNode(ctx, call.node)),
      "POST",
      headers("2025", ctx.secrets[tenant] as string),
      JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: call.id, reason: "chaos soak: its node died" },
      }),
    ).done;
    ctx.tally.note(
      `cancel after the call's node died → ${late.ending === "complete" ? late.status : late.ending}`,
    );
  }
  return { got, firstCancelAt, lastCancelAt, cancelNodes };
}

// ---------------------------------------------------------------------------------------------
// Judging
// ---------------------------------------------------------------------------------------------

/** Rules for every exchange; false when a violation already decided the call's outcome. */
function common(ctx: LoadContext, call: Call, got: Exchange): boolean {
  let ok = true;
  if (got.responses.length > 1) {
    ctx.tally.violation("answered twice", describe(call, got));
    ok = false;
  }
  if (got.afterResponse > 0) {
    ctx.tally.violation("events after the response", describe(call, got));
    ok = false;
  }
  for (const response of got.responses) {
    const problem = envelopeProblem(response, call);
    if (problem !== null) {
      ctx.tally.violation("malformed response", `${describe(call, got)}: ${problem}`);
      ok = false;
    }
    const text = resultText(response);
    if (text !== undefined) {
      if (ctx.tally.answeredTags.has(text)) {
        ctx.tally.violation("a result delivered twice", describe(call, got));
        ok = false;
      }
      ctx.tally.answeredTags.add(text);
      if (text !== call.tag) {
        ctx.tally.violation("someone else's result", describe(call, got));
        ok = false;
      }
    }
  }
  if (got.ending === "complete" && got.problem !== null) {
    ctx.tally.violation("malformed answer", `${describe(call, got)}: ${got.problem}`);
    ok = false;
  }
  if (!ok) ctx.tally.outcome("call", "failed", "violation (see below)");
  return ok;
}

function ownResult(got: Exchange, call: Call): boolean {
  return (
    got.ending === "complete" &&
    got.responses.length === 1 &&
    resultText(got.responses[0]) === call.tag
  );
}

/**
 * A call that got neither its result nor (where expected) its cancellation: allowed only as a
 * connection failure when its own node was killed while it ran.
 */
function judgeFailure(
  ctx: LoadContext,
  call: Call,
  got: Exchange,
  nodes: readonly number[],
  what: string,
): void {
  const killed = nodes.some((n) => ctx.timeline.nodeKilled(n, got.sentAt, got.endedAt));
  if (got.ending === "refused" && killed) {
    ctx.tally.outcome("call", "chaos", "connection refused (its node down)");
  } else if (got.ending === "broken" && killed) {
    ctx.tally.outcome("call", "chaos", "connection lost (its node killed)");
  } else if (got.ending === "destroyed") {
    // Destroyed by the hang bound (reported as "hung" already).
    ctx.tally.outcome("call", "failed", "hung");
  } else {
    const kind =
      got.ending === "complete"
        ? "error answer without a kill"
        : `connection ${got.ending} without a kill`;
    ctx.tally.violation(`${what}: ${kind}`, describe(call, got));
    ctx.tally.outcome("call", "failed", kind);
  }
}

function judgeCancelled(ctx: LoadContext, call: Call, story: CancelStory, what: string): void {
  const { got, firstCancelAt, cancelNodes } = story;
  // A cancel takes effect within CANCEL_EFFECT_MS of its answer, or it is sent again: the chaos
  // must have met the cancels themselves, not merely the rest of the call's run.
  const effectBy =
    story.lastCancelAt < 0
      ? got.endedAt
      : Math.min(got.endedAt, story.lastCancelAt + CANCEL_EFFECT_MS);
  if (!common(ctx, call, got)) return;
  const answered = got.ending === "complete";
  if (answered && got.responses.length === 1 && errorCode(got.responses[0]) === CANCELLED) {
    ctx.tally.outcome("call", "ok", "cancelled (-32800)");
  } else if (answered && got.responses.length === 0 && got.sse && got.status === 200) {
    ctx.tally.outcome("call", "ok", "cancelled (stream ended without a response)");
  } else if (!ownResult(got, call)) {
    judgeFailure(ctx, call, got, [call.node], what);
  } else if (firstCancelAt < 0) {
    ctx.tally.outcome("call", "ok", "its own result (ended before its cancel was due)");
  } else if (ctx.timeline.disturbed([call.node, ...cancelNodes], firstCancelAt, effectBy)) {
    ctx.tally.outcome(
      "call",
      "chaos",
      "its cross-node cancel lost to a Redis outage or a kill (it ended with its result)",
      `call on node ${call.node}, cancels to nodes ${cancelNodes.join(",")} ${ctx.timeline.at(firstCancelAt)}–${ctx.timeline.at(effectBy)}; chaos: ${ctx.timeline.around(firstCancelAt, effectBy)}`,
    );
    const nodes = [call.node, ...cancelNodes];
    const killed = nodes.some((n) => ctx.timeline.nodeKilled(n, firstCancelAt, effectBy));
    const since = ctx.timeline.sinceRedisBack(firstCancelAt);
    if (!killed && Number.isFinite(since) && since > ctx.tally.maxLostAfterRedisBackMs) {
      ctx.tally.maxLostAfterRedisBackMs = since;
    }
  } else {
    ctx.tally.outcome("call", "failed", "result despite a cancel");
    ctx.tally.violation(`${what}: cancel had no effect without any chaos`, describe(call, got));
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

export function headers(era: Era, secret: string): Record<string, string> {
  return {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${secret}`,
    "mcp-protocol-version": era === "modern" ? MODERN : LEGACY,
  };
}

export function url(ctx: LoadContext, node: number): string {
  return ctx.cluster.slots[node]?.url as string;
}

/** A node the driver believes alive (as a load balancer with health checks would pick). */
export function pickNode(ctx: LoadContext): number {
  const alive = ctx.cluster.aliveIndexes();
  const pool = alive.length > 0 ? alive : ctx.cluster.slots.map((s) => s.index);
  return pool[ctx.random.between(0, pool.length - 1)] as number;
}

/** An alive node other than the given ones, else any other node. */
export function otherNode(ctx: LoadContext, ...not: number[]): number {
  const all = ctx.cluster.slots.map((s) => s.index);
  const alive = ctx.cluster.aliveIndexes().filter((n) => !not.includes(n));
  const pool = alive.length > 0 ? alive : all.filter((n) => !not.includes(n));
  if (pool.length === 0) return not[0] ?? 0;
  return pool[ctx.random.between(0, pool.length - 1)] as number;
}

export function thirdNode(ctx: LoadContext, a: number, b: number): number {
  return otherNode(ctx, a, b);
}

function envelopeProblem(message: unknown, call: Call): string | null {
  if (typeof message !== "object" || message === null || Array.isArray(message))
    return "not an object";
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== "2.0") return "jsonrpc is not 2.0";
  if ("result" in m === "error" in m) return "not exactly one of result/error";
  // An answer given before the body was read (an unknown session: HTTP 404) cannot name the id.
  if (m.id === null && "error" in m) return null;
  if (m.id !== call.id) return `id ${JSON.stringify(m.id)} ≠ ${JSON.stringify(call.id)}`;
  return null;
}

function describe(call: Call, got: Exchange): string {
  const first =
    got.responses[0] === undefined ? "" : ` ${JSON.stringify(got.responses[0]).slice(0, 140)}`;
  return `${call.era} id=${JSON.stringify(call.id)} tenant ${call.tenant} node ${call.node}: ${got.ending} HTTP ${got.status}${first}${got.problem === null ? "" : ` (${got.problem})`} after ${(got.endedAt - got.sentAt).toFixed(0)} ms`;
}
