/**
 * Minimal `node:http` client helpers for the server-side benchmarks: a request whose socket the
 * caller can destroy (a client disconnect), JSON-RPC bodies for both protocol eras, and polling a
 * probe route until a condition holds (bounded, so a broken target fails the run, never hangs it).
 *
 * @example
 * ```ts
 * const call = post(url, toolCallBody(1, "sleep", { ms: 5_000, key: "a" }), headersFor("2025"));
 * call.destroy();
 * ```
 */
import { type Agent, type ClientRequest, request } from "node:http";

import { BENCH_PROTOCOL_VERSION } from "./echo-request.js";

/** The two protocol eras a call can be sent in. */
export type Era = "2025" | "2026";

/** The 2026-07-28 revision (https://modelcontextprotocol.io/specification/2026-07-28). */
export const MODERN_PROTOCOL_VERSION = "2026-07-28";

/** An answer read to its end. */
export interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/** A request in flight: its answer, and a way to drop the connection (the client going away). */
export interface PendingCall {
  readonly answer: Promise<Answer>;
  readonly request: ClientRequest;
  destroy(): void;
}

/**
 * Headers of a `tools/call` in an era: 2025-11-25 (header version only) or 2026-07-28 (version,
 * `Mcp-Method` and `Mcp-Name` headers that must match the body, https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http).
 *
 * @example
 * ```ts
 * headersFor("2026", "sleep"); // { …, "mcp-method": "tools/call", "mcp-name": "sleep" }
 * ```
 */
export function headersFor(era: Era, tool = "echo"): Record<string, string> {
  const base = {
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
  };
  return era === "2025"
    ? { ...base, "mcp-protocol-version": BENCH_PROTOCOL_VERSION }
    : {
        ...base,
        "mcp-protocol-version": MODERN_PROTOCOL_VERSION,
        "mcp-method": "tools/call",
        "mcp-name": tool,
      };
}

/**
 * A `tools/call` body; in the 2026 era it carries the required per-request `_meta` envelope.
 *
 * @example
 * ```ts
 * toolCallBody(7, "sleep", { ms: 100, key: "k" }, "2026");
 * ```
 */
export function toolCallBody(
  id: number,
  name: string,
  args: Record<string, unknown>,
  era: Era = "2025",
): string {
  const params: Record<string, unknown> = { name, arguments: args };
  if (era === "2026") {
    params._meta = {
      "io.modelcontextprotocol/protocolVersion": MODERN_PROTOCOL_VERSION,
      "io.modelcontextprotocol/clientCapabilities": {},
    };
  }
  return JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params });
}

/**
 * The 2025-era `notifications/cancelled` body for a request id.
 *
 * @example
 * ```ts
 * cancelBody(7); // {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,…}}
 * ```
 */
export function cancelBody(id: number): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: id, reason: "benchmark" },
  });
}

/**
 * POSTs `body`; `agent: false` gives the request a socket of its own (so destroying it is a real
 * disconnect that no other request shares).
 *
 * @example
 * ```ts
 * const { status } = await post(url, cancelBody(7), headersFor("2025")).answer;
 * ```
 */
export function post(
  url: string,
  body: string,
  headers: Record<string, string>,
  agent: Agent | false = false,
): PendingCall {
  let req!: ClientRequest;
  const answer = new Promise<Answer>((resolve, reject) => {
    req = request(url, { method: "POST", headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: res.headers["content-type"] ?? "",
          body: Buffer.concat(chunks).toString("utf8"),
        }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
  return {
    answer,
    request: req,
    destroy() {
      // The caller dropped it on purpose: the rejection is expected, not an unhandled one.
      answer.catch(() => {});
      req.destroy();
    },
  };
}

/**
 * GETs a probe route of bench/lib/probe-server.ts and parses its JSON.
 *
 * @example
 * ```ts
 * const { inFlight } = await probe<{ inFlight: number }>(url, "/bench/stats");
 * ```
 */
export async function probe<T>(mcpUrl: string, route: string): Promise<T> {
  const res = await fetch(new URL(route, mcpUrl), { signal: AbortSignal.timeout(30_000) });
  if (res.status !== 200) throw new Error(`${route}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/**
 * Calls `check` every `everyMs` until it returns a value other than undefined; throws `what` after
 * `timeoutMs`.
 *
 * @example
 * ```ts
 * await until(() => probe(url, "/bench/stats").then((s) => (s.inFlight === 0 ? true : undefined)), "drain");
 * ```
 */
export async function until<T>(
  check: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 5_000,
  everyMs = 1,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * Percentile (nearest rank) of a non-empty list.
 *
 * @example
 * ```ts
 * percentile([1, 2, 3, 4], 0.5); // 2
 * ```
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new RangeError("percentile of an empty list");
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(p * sorted.length)));
  return sorted[rank - 1] as number;
}
