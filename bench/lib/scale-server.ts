/**
 * Benchmark target of the scale benchmarks (bench/scale-*.ts): one server process, spawned pinned
 * to its own CPU, serving the MCP endpoint on one port and a control API on another, so the
 * figures it reports are taken inside the server (heap and RSS after full GCs, event-loop delay,
 * `performance.timeOrigin + performance.now()` timestamps comparable with the client process's).
 *
 * `SCALE_TARGET`:
 * - `conduit` (default): `createMcpServer(...).listen()`, its real node:http listener with the
 *   connection bounds, serving tool `sleep {ms, key}` (waits, or until `ctx.signal` aborts; with a
 *   2025-era `_meta.progressToken` it sends one progress notification first, which turns the
 *   exchange into an SSE stream) and resource `bench://watched`. `SCALE_OPTIONS` (JSON) is spread
 *   into the server options: each benchmark states its limits there. `SCALE_REDIS_URL` puts every
 *   store on that Redis (`createRedisBackends`).
 * - `bare`: a bare `node:http` server that reads and parses each POST and holds it open (for a
 *   2025 call with a progress token it writes the SSE head and one progress event first, as
 *   conduit does): the floor of any server on node:http.
 * - `bare-tool`: `bare`, also holding what the sleep tool holds by itself in any server (an
 *   `AbortController` it listens to, a timer, a pending promise, and the promise of its `async`
 *   handler, which awaits once and then returns that one: {@link sleepHandler}).
 *
 * Control routes (GET, on the control port): `/mem` (heap used, RSS, external after 4 full GCs),
 * `/stats` (calls running, listeners, sessions), `/eld/reset`, `/eld` (event-loop delay
 * percentiles since the reset, ms), `/watch?key=K` (record when the call with that key aborts),
 * `/aborted?key=K`, `/cancels` (arrival times of requests carrying `x-bench-cancel`),
 * `/snapshot` (writes a heap snapshot after full GCs in the temp dir, returns its path),
 * `/updated` (calls `resources.updated("bench://watched")`, returns the time it did).
 *
 * Announces `BENCH_LISTENING <mcp url> <control url>`. Run: `node --import tsx bench/lib/scale-server.ts`.
 */
import diagnosticsChannel from "node:diagnostics_channel";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { setFlagsFromString, writeHeapSnapshot } from "node:v8";
import { runInNewContext } from "node:vm";

import { z } from "zod";
import { conduitTarget } from "./conduit-definitions.js";
import { announce } from "./listening.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** A time both processes can compare (the same wall clock origin, a monotonic offset). */
const now = (): number => performance.timeOrigin + performance.now();

const target = process.env.SCALE_TARGET ?? "conduit";
const watched = new Set<string>();
const aborted = new Map<string, number>();
const cancels = new Map<string, number>();
const eld = monitorEventLoopDelay({ resolution: 5 });
eld.enable();

// A cancel POST's arrival (headers parsed), before conduit reads its body: the server-side start
// of the cancel path. Only requests carrying the header pay anything here.
diagnosticsChannel.subscribe("http.server.request.start", (message) => {
  const { request } = message as { request: IncomingMessage };
  const key = request.headers["x-bench-cancel"];
  if (typeof key === "string") cancels.set(key, now());
});

interface Stats {
  inFlight: number;
  listeners: number;
  sessions: number;
}

let stats: () => Promise<Stats>;
let updated: () => void = () => {};
let mcpUrl: string;

/** The sleep tool's own wait: a timer, and the abort it listens to. */
function sleepWait(ms: number, key: string, signal: AbortSignal): Promise<string> {
  return new Promise<string>((resolve) => {
    const timer = setTimeout(() => resolve("slept"), ms);
    signal.addEventListener(
      "abort",
      () => {
        if (watched.has(key)) aborted.set(key, now());
        clearTimeout(timer);
        resolve("aborted");
      },
      { once: true },
    );
  });
}

/**
 * The sleep tool's handler as conduit-mcp's `sleep` is written (`async`: one `await`, then the
 * wait's promise returned), without the server: the handler's own promise, which adopts the
 * wait's (a reaction and a promise), is the tool's in any server, not conduit-mcp's.
 */
async function sleepHandler(ms: number, key: string, signal: AbortSignal): Promise<string> {
  await null; // conduit-mcp's handler awaits its progress notification here
  return sleepWait(ms, key, signal);
}

if (target === "conduit") {
  const { lib, redis } = await conduitTarget();
  const extra = JSON.parse(process.env.SCALE_OPTIONS ?? "{}") as Record<string, unknown>;
  const redisUrl = process.env.SCALE_REDIS_URL;
  let backends: Awaited<
    ReturnType<Awaited<ReturnType<typeof redis>>["createRedisBackends"]>
  > | null = null;
  let sessionStore: { size(): Promise<number> } | null = null;
  if (redisUrl !== undefined && redisUrl !== "") {
    const { createRedisBackends } = await redis();
    backends = createRedisBackends(redisUrl, {
      sessions: (extra.sessions ?? {}) as Record<string, number>,
    });
    await backends.ready(5_000);
    sessionStore = backends.sessionStore ?? null;
    // The bounds the benchmark states go with the shared store, not instead of it.
    if (extra.sessions !== undefined && backends.sessionStore !== undefined) {
      extra.sessions = { ...(extra.sessions as object), store: backends.sessionStore };
    }
  } else if (extra.sessions !== undefined && extra.sessions !== false) {
    const store = new lib.MemorySessionStore(extra.sessions as Record<string, number>);
    sessionStore = store;
    extra.sessions = { ...(extra.sessions as object), store };
  }
  const sleep = lib.defineTool({
    name: "sleep",
    description: "Waits ms milliseconds or until cancelled.",
    input: z.object({ ms: z.number().int().min(0).max(3_600_000), key: z.string().max(40) }),
    handler: async ({ ms, key }, ctx) => {
      // With a progress token (2025 era) the exchange becomes an SSE stream here.
      await ctx.progress(0);
      return sleepWait(ms, key, ctx.signal);
    },
  });
  const server = lib.createMcpServer({
    tools: [sleep],
    resources: [
      lib.defineResource({ uri: "bench://watched", name: "watched", read: () => "watched" }),
    ],
    ...(backends === null ? {} : backends.serverOptions),
    ...extra,
  });
  stats = async () => {
    const c = server.concurrency();
    return {
      inFlight: server.registry.inFlightCount,
      listeners: c.listeners,
      sessions: sessionStore === null ? 0 : await sessionStore.size(),
    };
  };
  updated = () => server.resources.updated("bench://watched");
  mcpUrl = (await server.listen({ host: "127.0.0.1", port: 0 })).url;
} else {
  const withTool = target === "bare-tool";
  const held = new Set<unknown>();
  stats = async () => ({ inFlight: held.size, listeners: 0, sessions: 0 });
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let message: {
        id?: unknown;
        params?: { arguments?: { ms?: unknown; key?: unknown }; _meta?: Record<string, unknown> };
      };
      try {
        message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof message;
        // The body's bytes are not kept once parsed (conduit-mcp keeps none either): a floor
        // holding them would understate conduit-mcp's own share.
        chunks.length = 0;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const token = message.params?._meta?.progressToken;
      if (token !== undefined) {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        // The head goes out on its own before the first event, as conduit-mcp's stream sends it
        // (exchange.ts: writeHead, flushHeaders, write). Sent with the first event instead, node
        // keeps the head it built as a rope of ~20 pieces (about 640 B per call in a heap
        // snapshot) where a head sent alone is one flat string: a floor that holds its head
        // differently would count node's representation as conduit-mcp's saving.
        res.flushHeaders();
        res.write(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: 0 } })}\n\n`,
        );
      }
      const controller = withTool ? new AbortController() : null;
      const entry =
        controller === null
          ? { message, res }
          : {
              message,
              res,
              controller,
              done: sleepHandler(
                Number(message.params?.arguments?.ms ?? 0),
                String(message.params?.arguments?.key ?? ""),
                controller.signal,
              ),
            };
      held.add(entry);
      res.on("close", () => {
        controller?.abort();
        held.delete(entry);
      });
    });
  });
  http.maxHeadersCount = 100;
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  mcpUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
}

function json(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
}

const control = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://control");
  const key = url.searchParams.get("key") ?? "";
  switch (url.pathname) {
    case "/mem": {
      for (let i = 0; i < 4; i++) gc();
      const m = process.memoryUsage();
      json(res, { heapUsed: m.heapUsed, rss: m.rss, external: m.external });
      return;
    }
    case "/snapshot": {
      // For finding what a held call keeps (bench/lib/heap-snapshot-diff.ts); in the temp dir.
      for (let i = 0; i < 4; i++) gc();
      json(res, {
        path: writeHeapSnapshot(join(tmpdir(), `scale-${process.pid}-${Date.now()}.heapsnapshot`)),
      });
      return;
    }
    case "/stats":
      void stats().then((s) => json(res, s));
      return;
    case "/eld/reset":
      eld.reset();
      json(res, {});
      return;
    case "/eld":
      json(res, {
        p50: eld.percentile(50) / 1e6,
        p99: eld.percentile(99) / 1e6,
        max: eld.max / 1e6,
        mean: eld.mean / 1e6,
      });
      return;
    case "/watch":
      watched.add(key);
      json(res, {});
      return;
    case "/aborted":
      json(res, { at: aborted.get(key) ?? null, cancelArrived: cancels.get(key) ?? null });
      return;
    case "/updated": {
      const at = now();
      updated();
      json(res, { at });
      return;
    }
    default:
      res.writeHead(404).end();
  }
});
control.listen(0, "127.0.0.1", () => {
  announce(`${mcpUrl} http://127.0.0.1:${(control.address() as AddressInfo).port}`);
});
