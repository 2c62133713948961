/**
 * Benchmark target for the server-side figures (cancel-to-abort latency, heap per in-flight
 * request, time to stop a CPU-bound isolated tool): conduit-mcp's `server.handler` mounted on a
 * plain `node:http` server that also answers a few `/bench/*` probe routes, so every timestamp is
 * taken inside the server process with `performance.now()` (no client or network time in them).
 *
 * - A request carrying `x-bench-cancel: <id>` (the cancel POST) gets its arrival time recorded when
 *   node emits `request` (headers parsed), before conduit reads the body.
 * - A request carrying `x-bench-call: <id>` gets the time its socket ends or closes recorded (the
 *   client's disconnect), whichever node reports first.
 * - Tool `sleep {ms, key}` records when it starts and when its `ctx.signal` aborts.
 * - Tool `spin {}` is isolated and never checks anything (`for (;;) {}` in a worker); the
 *   `conduit-mcp:tool:killed` channel gives the time conduit terminated its worker.
 * - `GET /bench/sample?key=K` → the timestamps recorded so far for K; `GET /bench/heap` → heap used after
 *   full GCs; `GET /bench/stats` → in-flight count; `GET /bench/cpu?ms=N` → process CPU share
 *   (all threads) over the next N ms; `GET /bench/snapshot` → writes a heap snapshot (after full
 *   GCs) in the working directory and returns its file name (to see what a held call keeps).
 *
 * `BENCH_REDIS_URL` in the environment puts the registry on the Redis store; `BENCH_STREAM_CANCEL_MS`
 * sets `streamCancelTimeoutMs` (default 100); `BENCH_CONDUIT_BUILD=dist` runs the compiled build
 * (bench/lib/conduit-definitions.ts). Run as a child process:
 * `node --import tsx bench/lib/probe-server.ts`.
 */
import diagnosticsChannel from "node:diagnostics_channel";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { setFlagsFromString, writeHeapSnapshot } from "node:v8";
import { runInNewContext } from "node:vm";

import { z } from "zod";
import type { CancellationRegistry, Tool } from "../../src/index.js";
import { conduitTarget } from "./conduit-definitions.js";
import { announce } from "./listening.js";

// The library from the build `BENCH_CONDUIT_BUILD` names (dist/ in `npm run bench`), else src/.
const { lib, redis: redisEntry, definitions } = await conduitTarget();
const {
  CancellationRegistry: Registry,
  ChannelName,
  createMcpServer,
  defineTool,
  isolatedHandler,
} = lib;
const echoTool = definitions.tools?.[0] as Tool;

// The heap probe needs a full GC in this process; the flag is set here so the target can be
// spawned like every other target (`node --import tsx <script>`).
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Server-side timestamps of one sample (ms, `performance.now()` of this process). */
interface Sample {
  started?: number;
  aborted?: number;
  cancelArrived?: number;
  socketClosed?: number;
  killed?: number;
  terminated?: boolean;
}

/** A fresh snapshot file name in the OS temp directory (never in the checkout). */
let snapshots = 0;
const snapshotFile = (): string =>
  join(tmpdir(), `conduit-heap-${process.pid}-${snapshots++}.heapsnapshot`);

const samples = new Map<string, Sample>();
const sample = (key: string): Sample => {
  let s = samples.get(key);
  if (s === undefined) {
    s = {};
    samples.set(key, s);
  }
  return s;
};

const sleepTool: Tool = defineTool({
  name: "sleep",
  description: "Waits ms milliseconds or until cancelled; records both times under key.",
  input: z.object({ ms: z.number().int().min(0).max(600_000), key: z.string().max(100) }),
  handler: ({ ms, key }, ctx) =>
    new Promise<string>((resolve) => {
      // An empty key records nothing: the heap probe's calls leave no sample behind (the samples
      // are this probe's bookkeeping, not the server's).
      const s = key === "" ? null : sample(key);
      if (s !== null) s.started = performance.now();
      const timer = setTimeout(() => resolve("slept"), ms);
      ctx.signal.addEventListener(
        "abort",
        () => {
          if (s !== null) s.aborted = performance.now();
          clearTimeout(timer);
          resolve("aborted");
        },
        { once: true },
      );
    }),
});

// A never-checking CPU-bound tool: the worker only stops when conduit terminates it. A data: URL
// keeps the worker free of any loader.
const spinTool: Tool = defineTool({
  name: "spin",
  description: "Spins the CPU forever without ever checking for cancellation (isolated).",
  input: { type: "object", properties: {} },
  isolated: isolatedHandler("data:text/javascript,export function spin(){for(;;){}}", "spin"),
});

diagnosticsChannel.subscribe(ChannelName.toolKilled, (message) => {
  const { requestId, terminated } = message as { requestId: string; terminated: boolean };
  const s = sample(`spin:${requestId}`);
  s.killed = performance.now();
  s.terminated = terminated;
});

const redisUrl = process.env.BENCH_REDIS_URL;
let registry: CancellationRegistry | undefined;
if (redisUrl !== undefined && redisUrl !== "") {
  const { RedisCancellationStore } = await redisEntry();
  const store = new RedisCancellationStore({ redis: redisUrl });
  await store.ready(2_000);
  registry = new Registry({ store });
}

const server = createMcpServer({
  tools: [echoTool, sleepTool, spinTool],
  ...(registry === undefined ? {} : { registry }),
  streamCancelTimeoutMs: Number(process.env.BENCH_STREAM_CANCEL_MS ?? "100"),
  // The heap probe holds thousands of calls from one client address (one scope) at once.
  maxConcurrentRequestsPerScope: 20_000,
  maxConcurrentRequests: 20_000,
  maxOpenStreamsPerScope: 20_000,
  // ...each call on a connection of its own.
  maxConnectionsPerBucket: 20_000,
  maxConnections: 20_000,
});

function json(res: import("node:http").ServerResponse, value: unknown): void {
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
}

/** Share of one core the whole process (every thread) used over the next `ms` milliseconds. */
async function cpuShare(ms: number): Promise<number> {
  const before = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1_000 / (performance.now() - t0);
}

const http = createServer((req, res) => {
  const now = performance.now();
  const url = new URL(req.url ?? "/", "http://probe");
  if (url.pathname.startsWith("/bench/")) {
    const key = url.searchParams.get("key") ?? "";
    if (url.pathname === "/bench/sample") {
      // Kept (a few hundred small objects per run): clients poll a key until it fills in.
      json(res, samples.get(key) ?? {});
    } else if (url.pathname === "/bench/stats") {
      json(res, { inFlight: server.registry.inFlightCount });
    } else if (url.pathname === "/bench/snapshot") {
      // A heap snapshot, for finding what a call holds (`npm run bench:heap -- --snapshot`).
      for (let i = 0; i < 4; i++) gc();
      json(res, { path: writeHeapSnapshot(snapshotFile()) });
    } else if (url.pathname === "/bench/heap") {
      for (let i = 0; i < 4; i++) gc();
      json(res, { heapUsed: process.memoryUsage().heapUsed });
    } else if (url.pathname === "/bench/cpu") {
      void cpuShare(Number(url.searchParams.get("ms") ?? "100")).then((share) =>
        json(res, { share }),
      );
    } else {
      res.writeHead(404).end();
    }
    return;
  }
  const cancelKey = req.headers["x-bench-cancel"];
  if (typeof cancelKey === "string") sample(cancelKey).cancelArrived = now;
  const callKey = req.headers["x-bench-call"];
  if (typeof callKey === "string") {
    const mark = (): void => {
      const s = sample(callKey);
      s.socketClosed ??= performance.now();
    };
    req.socket.once("end", mark);
    req.socket.once("close", mark);
  }
  server.handler(req, res);
});

http.listen(0, "127.0.0.1", () => {
  const { port } = http.address() as AddressInfo;
  announce(`http://127.0.0.1:${port}/mcp`);
});
