/**
 * Heap per in-flight request, measured inside the server (bench/lib/probe-server.ts): heap used
 * after full GCs with `count` concurrent `tools/call sleep` running (2025-11-25, each on its own
 * connection, as many clients would hold them), minus the same with none running, divided by
 * `count`. It is everything one running call costs the server: socket, request and response
 * objects, the parsed message, conduit's exchange, tool context, registry handle and the
 * sleeping tool's own timer and closure. Used by bench/report.ts (`npm run bench`) and
 * bench/heap-cli.ts (`npm run bench:heap`, which also compares heap snapshots by kind).
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
const snapshotPath = async (url: string): Promise<string> =>
  (await probe<{ path: string }>(url, "/bench/snapshot")).path;

/**
 * Runs `measure` at rest and again while `count` calls are held open; the calls are then dropped
 * (a 2025-era disconnect cancels them) and the server drains back to zero.
 */
async function withHeldCalls<T>(
  url: string,
  count: number,
  measure: (url: string) => Promise<T>,
): Promise<{ before: T; during: T }> {
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
  const before = await measure(url);
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
  const during = await measure(url);
  for (const call of calls) call.destroy();
  await until(async () => ((await inFlight(url)) === 0 ? true : undefined), "drain", 30_000, 50);
  return { before, during };
}

/**
 * One round: baseline heap, `count` calls held open, heap again; bytes per call.
 *
 * @example
 * ```ts
 * await measureHeapPerRequest("http://127.0.0.1:4000/mcp", 1_000);
 * ```
 */
export async function measureHeapPerRequest(url: string, count: number): Promise<number> {
  const { before, during } = await withHeldCalls(url, count, heapUsed);
  return (during - before) / count;
}

/**
 * Heap snapshots (after full GCs) of the server at rest and with `count` calls held open, for
 * bench/lib/heap-snapshot-diff.ts; resolves their paths (in the server's temp directory).
 *
 * @example
 * ```ts
 * const { before, during } = await snapshotHeldCalls("http://127.0.0.1:4000/mcp", 500);
 * ```
 */
export function snapshotHeldCalls(
  url: string,
  count: number,
): Promise<{ before: string; during: string }> {
  return withHeldCalls(url, count, snapshotPath);
}
