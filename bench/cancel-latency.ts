/**
 * Cancel-to-abort latency, measured inside the server (bench/lib/probe-server.ts), one cancel at a
 * time so each figure is the server's own path, not queueing behind other cancels:
 *
 * - `notification` (2025 era): a 2025-11-25 `tools/call sleep` runs; a `notifications/cancelled`
 *   POST for its id arrives; the figure is the time from the cancel POST's arrival (node's
 *   `request` event, headers parsed) to the tool's `ctx.signal` aborting — body read, parse, scope,
 *   registry write (a Redis round trip with the Redis store), local abort.
 * - `disconnect` (2026-07-28): a modern `tools/call sleep` runs; the client destroys its socket;
 *   the figure is the time from the server's socket `end`/`close` to the signal aborting.
 *
 * Used by bench/report.ts (`npm run bench`).
 *
 * @example
 * ```ts
 * const ms = await measureCancelLatency(url, "notification", 200);
 * ```
 */
import { cancelBody, headersFor, post, probe, toolCallBody, until } from "./lib/http-client.js";

/** How a call gets cancelled. */
export type CancelPath = "notification" | "disconnect";

interface Sample {
  started?: number;
  aborted?: number;
  cancelArrived?: number;
  socketClosed?: number;
}

let nextId = 1;

/** One cancel; returns its latency in ms (server clock). Throws on a wrong answer or a miss. */
async function once(url: string, path: CancelPath, tag: string): Promise<number> {
  const id = nextId++;
  const key = `${tag}-${path}-${id}`;
  const era = path === "notification" ? "2025" : "2026";
  const headers = { ...headersFor(era, "sleep"), "x-bench-call": key };
  const call = post(url, toolCallBody(id, "sleep", { ms: 30_000, key }, era), headers);
  const sampleOf = () => probe<Sample>(url, `/bench/sample?key=${encodeURIComponent(key)}`);
  // Cancel only once the tool listens to its signal, else there would be nothing to time.
  await until(async () => ((await sampleOf()).started === undefined ? undefined : true), "start");
  if (path === "notification") {
    const cancel = await post(url, cancelBody(id), { ...headersFor("2025"), "x-bench-cancel": key })
      .answer;
    if (cancel.status !== 202) throw new Error(`cancel answered HTTP ${cancel.status}`);
    const answer = await call.answer;
    // A JSON exchange ends with -32800 (docs/protocol-eras.md).
    if (answer.status !== 200 || !answer.body.includes("-32800")) {
      throw new Error(`cancelled call answered ${answer.status} ${answer.body.slice(0, 200)}`);
    }
  } else {
    call.destroy();
  }
  const done = await until(
    async () => {
      const s = await sampleOf();
      return s.aborted === undefined ? undefined : s;
    },
    `${path} abort of ${key}`,
    2_000,
  );
  const from = path === "notification" ? done.cancelArrived : done.socketClosed;
  if (from === undefined || done.aborted === undefined) {
    throw new Error(`${key}: missing timestamp ${JSON.stringify(done)}`);
  }
  return done.aborted - from;
}

/**
 * `count` sequential cancels by `path` against a probe server; latencies in ms (server clock).
 *
 * @example
 * ```ts
 * const latencies = await measureCancelLatency("http://127.0.0.1:4000/mcp", "disconnect", 200);
 * ```
 */
export async function measureCancelLatency(
  url: string,
  path: CancelPath,
  count: number,
  tag = "c",
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(await once(url, path, tag));
  return out;
}
