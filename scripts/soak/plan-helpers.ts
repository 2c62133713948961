/**
 * What the chaos soak's stateful plans (stateful-plans.ts, ask-plans.ts) share: JSON-RPC bodies,
 * the once-only record of answered tags, and a send that goes to another node when the first one
 * refused the connection (as a client behind a load balancer would: a refused connection never
 * reached a server, so sending again is safe).
 */
import { type LoadContext, otherNode, url } from "./calls.js";
import { type Exchange, type ExchangeHooks, exchange } from "./exchange.js";

export const LEGACY = "2025-11-25";
export const MODERN = "2026-07-28";

let nextId = 1;

export function rpc(method: string, params: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: "2.0", id: `s-${nextId++}`, method, params });
}

export function firstResponse(got: { responses: unknown[] }): Record<string, unknown> | undefined {
  return got.responses[0] as Record<string, unknown> | undefined;
}

/** Records a tag answered to its call; a tag answered twice anywhere is a violation. */
export function answered(ctx: LoadContext, tag: string, what: string): boolean {
  if (ctx.tally.answeredTags.has(tag)) {
    ctx.tally.violation("a result delivered twice", `${what} ${tag}`);
    return false;
  }
  ctx.tally.answeredTags.add(tag);
  return true;
}

/** One exchange, and the node that answered it (or last refused it). */
export interface Sent {
  readonly got: Exchange;
  readonly node: number;
}

/** A request; refused by `node` (down), sent once more to an alive node not in `avoid`. */
export async function sendAvoiding(
  ctx: LoadContext,
  node: number,
  avoid: readonly number[],
  request: { method: "POST" | "DELETE"; headers: Record<string, string>; body: string | null },
  hooks?: ExchangeHooks,
): Promise<Sent> {
  const got = await exchange(url(ctx, node), request.method, request.headers, request.body, hooks)
    .done;
  if (got.ending !== "refused") return { got, node };
  ctx.tally.note("refused connection: sent again to another node");
  const next = otherNode(ctx, node, ...avoid);
  const again = await exchange(url(ctx, next), request.method, request.headers, request.body, hooks)
    .done;
  return { got: again, node: next };
}

/** One line about an exchange for a violation's example. */
export function show(node: number, got: Exchange): string {
  return `node ${node}: ${got.ending} HTTP ${got.status} ${JSON.stringify(got.responses[0] ?? null).slice(0, 160)}${got.problem === null ? "" : ` (${got.problem})`}`;
}
