/**
 * Heap per in-flight request, measured inside the server (bench/lib/probe-server.ts): heap used
 * after full GCs with `count` concurrent `tools/call sleep` running (2025-11-25, each on its own
 * connection, as many clients would hold them), minus the same with none running, divided by
 * `count`. It is everything one running call costs the server: socket, request and response
 * objects, the parsed message, conduit's exchange, tool context, registry handle and the
 * sleeping tool's own timer and closure. Used by bench/report.ts (`npm run bench`).
 *
 * @example
 * ```ts
 * const bytes = await measureHeapPerRequest(url, 5_000);
 * ```
 */
import {
  headersFor,
  type PendingCall,
  post,
  probe,
  toolCallBody,
  until,
} from "./lib/http-client.js";

let nextId = 10_000_000;

const heapUsed = async (url: string): Promise<number> =>
  (await probe<{ heapUsed: number }>(url, "/bench/heap")).heapUsed;
const inFlight = async (url: string): Promise<number> =>
  (await probe<{ inFlight: number }>(url, "/bench/stats")).inFlight;

/**
 * One round: baseline heap, `count` calls held open, heap again; bytes per call. The calls are
 * then dropped (a 2025-era disconnect cancels them) and the server drains back to zero.
 *
 * @example
 * ```ts
 * await measureHeapPerRequest("http://127.0.0.1:4000/mcp", 1_000);
 * ```
 */
export async function measureHeapPerRequest(url: string, count: number): Promise<number> {
  // Warm-up: a few completed calls so lazily built state is in the baseline, not in the delta.
  for (let i = 0; i < 20; i++) {
    const id = nextId++;
    const answer = await post(
      url,
      toolCallBody(id, "sleep", { ms: 0, key: "" }),
      headersFor("2025", "sleep"),
    ).answer;
    if (answer.status !== 200 || !answer.body.includes("slept")) {
      throw new Error(`heap warm-up call answered ${answer.status} ${answer.body.slice(0, 200)}`);
    }
  }
  await until(async () => ((await inFlight(url)) === 0 ? true : undefined), "idle server", 10_000);
  const before = await heapUsed(url);
  const calls: PendingCall[] = [];
  for (let i = 0; i < count; i++) {
    const id = nextId++;
    calls.push(
      post(url, toolCallBody(id, "sleep", { ms: 120_000, key: "" }), headersFor("2025", "sleep")),
    );
    // Spread the connects a little so the listen backlog never overflows.
    if (i % 500 === 499) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  for (const call of calls) {
    call.answer.then(
      (a) => {
        throw new Error(`held call answered early: ${a.status} ${a.body.slice(0, 200)}`);
      },
      () => {},
    );
  }
  await until(
    async () => ((await inFlight(url)) >= count ? true : undefined),
    `${count} calls in flight`,
    60_000,
    50,
  );
  const during = await heapUsed(url);
  for (const call of calls) call.destroy();
  await until(async () => ((await inFlight(url)) === 0 ? true : undefined), "drain", 30_000, 50);
  return (during - before) / count;
}
