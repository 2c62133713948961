/**
 * The chaos soak's asks (the server asking the client in the middle of a call,
 * docs/asking-the-client.md), one plan per protocol era:
 *
 * - `ask` (2025-11-25): a session (with elicitation) made on node A, an `ask` call on it; the
 *   server's `elicitation/create` arrives on the call's SSE stream and waits in node A's memory.
 *   A forged answer from another tenant goes first to node B, then the genuine answer to node C,
 *   whose reply bus carries it to A over Redis pub/sub. The call must return the genuine answer,
 *   once, never the forged one. What the chaos may cost it, and only when its timeline shows the
 *   event: node A killed (the stream is cut and the question, held only there, is gone), the
 *   session unknown on a node after Redis came back empty or while it was away (404), the answer
 *   published while Redis was away (pub/sub stores nothing: docs/redis.md, "Answers to asks
 *   across nodes"), or the call cut by a kill of its node.
 * - `ask-modern` (2026-07-28): the first round on node A ends `input_required` with a sealed
 *   `requestState`; another tenant presents that state with a forged answer on node B (it must
 *   be refused), then the genuine retry goes to node C and must return the genuine answer. Nothing
 *   waits on a server between rounds, so no kill or Redis event can lose the flow: only a round
 *   in flight at a kill of the node serving it. A refused connection (a node down) is sent again
 *   to another node, as a client behind a load balancer would.
 */
import { randomUUID } from "node:crypto";

import { errorCode, resultText } from "./answer.js";
import { headers, type LoadContext, otherNode, pickNode, thirdNode, url } from "./calls.js";
import { type Exchange, exchange } from "./exchange.js";
import {
  answered,
  firstResponse,
  LEGACY,
  MODERN,
  rpc,
  type Sent,
  sendAvoiding,
  show,
} from "./plan-helpers.js";
import type { Family } from "./tally.js";

/** How long an ask may wait for its answer before the driver hangs up and judges it. */
const ASK_DEADLINE_MS = 15_000;
const INVALID_PARAMS = -32602;

export async function planAsk(ctx: LoadContext): Promise<void> {
  const F: Family = "ask 2025-11-25";
  const tenant = ctx.random.between(0, ctx.secrets.length - 1);
  const secret = ctx.secrets[tenant] as string;
  const foreign = ctx.secrets[(tenant + 1) % ctx.secrets.length] as string;
  const node = pickNode(ctx);
  ctx.tally.start(F);
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
    if (init.ending !== "complete" && ctx.timeline.nodeKilled(node, init.sentAt, init.endedAt)) {
      return ctx.tally.outcome(F, "chaos", "initialize cut: its node killed");
    }
    ctx.tally.outcome(F, "failed", "initialize failed without chaos");
    return ctx.tally.violation("initialize failed", show(node, init));
  }
  const tag = `ask-${tenant}-${randomUUID()}`;
  const inSession = { ...headers("2025", secret), "mcp-session-id": sessionId };
  const answers: Promise<void>[] = [];
  let questionAt = -1;
  let answer: Sent | null = null;
  const running = exchange(
    url(ctx, node),
    "POST",
    inSession,
    rpc("tools/call", { name: "ask", arguments: {} }),
    {
      message: (message) => {
        if (message.method !== "elicitation/create" || questionAt >= 0) return;
        questionAt = performance.now();
        // Chosen now among the nodes alive now: the forged answer to another node, the genuine
        // one to a third (else to the forged one's: still a hop between nodes).
        const forgedNode = otherNode(ctx, node);
        const third = ctx.cluster.aliveIndexes().filter((n) => n !== node && n !== forgedNode);
        const answerNode = third[0] ?? forgedNode;
        const reply = (text: string) =>
          JSON.stringify({
            jsonrpc: "2.0",
            id: message.id,
            result: { action: "accept", content: { answer: text } },
          });
        // Forged first, by another tenant; then the genuine one, through a third node.
        answers.push(
          (async () => {
            const forged = await exchange(
              url(ctx, forgedNode),
              "POST",
              headers("2025", foreign),
              reply("forged"),
            ).done;
            ctx.tally.note(
              `ask: forged answer → ${forged.ending === "complete" ? forged.status : forged.ending}`,
            );
            answer = await sendAvoiding(ctx, answerNode, [node], {
              method: "POST",
              headers: inSession,
              body: reply(tag),
            });
            const a = answer.got;
            ctx.tally.note(
              `ask: genuine answer → ${a.ending === "complete" ? a.status : a.ending}`,
            );
          })(),
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
  if (got.responses.length > 1) {
    ctx.tally.outcome(F, "failed", "answered twice");
    return ctx.tally.violation("answered twice", `ask ${tag}`);
  }
  const text = got.responses.length === 1 ? resultText(got.responses[0]) : undefined;
  if (text === tag) {
    if (answered(ctx, tag, "ask")) ctx.tally.outcome(F, "ok", "the genuine answer, once");
    else ctx.tally.outcome(F, "failed", "its answer delivered twice");
    return;
  }
  if (text === "forged") {
    ctx.tally.outcome(F, "failed", "took another tenant's forged answer");
    return ctx.tally.violation("cross-tenant: a forged answer was taken", `${tag} node ${node}`);
  }
  const reason = lostAsk(ctx, { init, node, got, questionAt, answer });
  const sent = answer as Sent | null;
  const t = ctx.timeline;
  const story = `initialize on node ${node} at ${t.at(init.sentAt)}, call ${got.ending} HTTP ${got.status} ${t.at(got.sentAt)}–${t.at(got.endedAt)}, question ${questionAt < 0 ? "never came" : `at ${t.at(questionAt)}`}, answer ${sent === null ? "not sent" : `to node ${sent.node} ${sent.got.ending} HTTP ${sent.got.status} ${t.at(sent.got.sentAt)}–${t.at(sent.got.endedAt)}`}; chaos: ${t.around(init.sentAt, got.endedAt)}`;
  if (reason !== null) return ctx.tally.outcome(F, "chaos", reason, story);
  ctx.tally.outcome(F, "failed", "lost without chaos", story);
  ctx.tally.violation(
    "ask lost without chaos",
    `${tag} call ${show(node, got)}; answer ${sent === null ? "not sent" : show(sent.node, sent.got)}; ${story}`,
  );
}

/** Why a 2025 ask got no answer, when a chaos event on the timeline explains it; else null. */
function lostAsk(
  ctx: LoadContext,
  at: { init: Exchange; node: number; got: Exchange; questionAt: number; answer: Sent | null },
): string | null {
  const { timeline } = ctx;
  const { got, node, answer, init } = at;
  const callCut =
    (got.ending === "broken" || got.ending === "refused") &&
    timeline.nodeKilled(node, got.sentAt, got.endedAt);
  if (got.status === 404 && timeline.redisDisturbed(init.sentAt, got.endedAt)) {
    return `the call: ${unknownSession(ctx, init, got)}`;
  }
  const a = answer?.got;
  // Whatever happened first lost it: the answer refused or cut, or the call's stream cut.
  if (a !== undefined && answer !== null && !(callCut && got.endedAt < a.sentAt)) {
    if (a.ending !== "complete" && timeline.nodeKilled(answer.node, a.sentAt, a.endedAt)) {
      return "the answer's POST cut by a kill of the node it reached";
    }
    if (a.status === 404 && timeline.redisDisturbed(init.sentAt, a.endedAt)) {
      return `the answer: ${unknownSession(ctx, init, a)}`;
    }
  }
  if (callCut) {
    return at.questionAt < 0
      ? "the call cut by a kill of its node before it asked"
      : "its node, holding the pending ask, killed: the stream cut, the question gone";
  }
  if (a !== undefined && a.status === 202 && got.ending === "destroyed") {
    if (timeline.redisDisturbed(a.sentAt, a.endedAt)) {
      return "the answer published while Redis was away (pub/sub keeps nothing)";
    }
  }
  return null;
}

/**
 * Why a node answered 404 for a session it could not read (docs/redis.md, "Outages": a session
 * known only to other nodes is unknown to this one until Redis is back): made during an outage
 * (known only to its node until written back), or read while Redis was restarting (empty until
 * the nodes holding sessions write them back) or frozen.
 */
function unknownSession(ctx: LoadContext, init: Exchange, got: Exchange): string {
  const { timeline } = ctx;
  if (timeline.redisDisturbed(init.sentAt, init.endedAt)) {
    return "session made during a Redis outage, known only to its node until written back (404 elsewhere)";
  }
  if (timeline.redisRestarted(init.endedAt, got.endedAt)) {
    return "session unreadable on the answering node while Redis was restarting (404)";
  }
  return "session unreadable while Redis was away (404)";
}

export async function planAskModern(ctx: LoadContext): Promise<void> {
  const F: Family = "ask 2026-07-28";
  const tenant = ctx.random.between(0, ctx.secrets.length - 1);
  const secret = ctx.secrets[tenant] as string;
  const foreign = ctx.secrets[(tenant + 1) % ctx.secrets.length] as string;
  const tag = `ask26-${tenant}-${randomUUID()}`;
  ctx.tally.start(F);
  const round = (who: string, extra: Record<string, unknown>) => ({
    method: "POST" as const,
    headers: { ...headers("modern", who), "mcp-method": "tools/call", "mcp-name": "ask" },
    body: rpc("tools/call", {
      name: "ask",
      arguments: {},
      ...extra,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
      },
    }),
  });
  const cut = (sent: Sent): boolean =>
    sent.got.ending !== "complete" &&
    ctx.timeline.nodeKilled(sent.node, sent.got.sentAt, sent.got.endedAt);
  const first = await sendAvoiding(ctx, pickNode(ctx), [], round(secret, {}));
  if (cut(first)) return ctx.tally.outcome(F, "chaos", "first round cut by a kill of its node");
  const r1 = firstResponse(first.got)?.result as
    | { resultType?: unknown; inputRequests?: Record<string, unknown>; requestState?: unknown }
    | undefined;
  const keys = Object.keys(r1?.inputRequests ?? {});
  if (
    r1?.resultType !== "input_required" ||
    typeof r1.requestState !== "string" ||
    keys.length !== 1
  ) {
    ctx.tally.outcome(F, "failed", "first round not input_required");
    return ctx.tally.violation(
      "ask 2026: first round not input_required",
      show(first.node, first.got),
    );
  }
  const key = keys[0] as string;
  const retry = (who: string, text: string) =>
    round(who, {
      inputResponses: { [key]: { action: "accept", content: { answer: text } } },
      requestState: r1.requestState,
    });
  // Another tenant presents the sealed state with its own answer: refused (bound to the scope).
  const forgedNode = otherNode(ctx, first.node);
  const stolen = retry(foreign, "forged");
  const forged = await exchange(url(ctx, forgedNode), "POST", stolen.headers, stolen.body).done;
  const forgedAnswer = firstResponse(forged);
  ctx.tally.note(
    `ask 2026: forged retry → ${forged.ending === "complete" ? (errorCode(forgedAnswer ?? {}) ?? "a result") : forged.ending}`,
  );
  if (forgedAnswer?.result !== undefined) {
    const what = resultText(forgedAnswer) === "forged" ? "took" : "was not refused";
    ctx.tally.violation(
      `cross-tenant: another tenant's retry with a stolen requestState ${what}`,
      show(forgedNode, forged),
    );
  } else if (forged.ending === "complete" && errorCode(forgedAnswer ?? {}) !== INVALID_PARAMS) {
    ctx.tally.violation(
      "ask 2026: a stolen requestState not refused with -32602",
      show(forgedNode, forged),
    );
  }
  const second = await sendAvoiding(
    ctx,
    thirdNode(ctx, first.node, forgedNode),
    [first.node],
    retry(secret, tag),
  );
  const text = second.got.responses.length === 1 ? resultText(second.got.responses[0]) : undefined;
  if (second.got.responses.length > 1) {
    ctx.tally.outcome(F, "failed", "answered twice");
    return ctx.tally.violation("answered twice", `ask 2026 ${tag}`);
  }
  if (text === tag) {
    if (answered(ctx, tag, "ask 2026")) ctx.tally.outcome(F, "ok", "the genuine answer, once");
    else ctx.tally.outcome(F, "failed", "its answer delivered twice");
    return;
  }
  if (text === "forged") {
    ctx.tally.outcome(F, "failed", "took another tenant's forged answer");
    return ctx.tally.violation(
      "cross-tenant: a forged answer was taken",
      show(second.node, second.got),
    );
  }
  if (cut(second)) return ctx.tally.outcome(F, "chaos", "the retry cut by a kill of its node");
  ctx.tally.outcome(F, "failed", "the retry failed without chaos");
  ctx.tally.violation("ask 2026: the retry failed without chaos", show(second.node, second.got));
}
