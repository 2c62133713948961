/**
 * The heap floor for bench/heap.ts: a bare `node:http` server that reads each POST's body, parses
 * it, and holds the response open (never answers), so the heap it holds per open request is what
 * node itself keeps for a request in flight (socket, parser, `IncomingMessage`,
 * `ServerResponse`, the parsed body) with no MCP machinery at all. It answers the probe routes
 * bench/heap.ts reads: `GET /bench/heap` (heap used after full GCs), `GET /bench/stats`
 * (requests held open) and `GET /bench/snapshot` (a heap snapshot after full GCs, written in the
 * OS temp directory; its path is returned). A held request is dropped when its client goes away.
 *
 * `BENCH_BARE_SLEEP=1`: each held request also holds what the probe's `sleep` tool holds by
 * itself in any server (bench/lib/probe-server.ts): an `AbortController` whose signal it listens
 * to, a timer and a pending promise. Bare node:http plus the tool's own objects: conduit-mcp's
 * figure minus this one is what conduit-mcp itself holds per call.
 * Run as a child process: `node --import tsx bench/lib/bare-hold-server.ts`.
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString, writeHeapSnapshot } from "node:v8";
import { runInNewContext } from "node:vm";

import { announce } from "./listening.js";

// The heap probe needs a full GC in this process (as bench/lib/probe-server.ts does).
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const held = new Map<ServerResponse, unknown>();
const withSleep = process.env.BENCH_BARE_SLEEP === "1";

/** What the probe's sleep tool holds while it waits (its handler, without conduit-mcp). */
function sleepLike(ms: number): { controller: AbortController; done: Promise<string> } {
  const controller = new AbortController();
  const signal = controller.signal;
  const done = new Promise<string>((resolve) => {
    const timer = setTimeout(() => resolve("slept"), ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve("aborted");
      },
      { once: true },
    );
  });
  return { controller, done };
}
let snapshots = 0;

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost");
  if (req.method === "GET" && url.pathname === "/bench/stats") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ inFlight: held.size }));
    return;
  }
  if (req.method === "GET" && url.pathname === "/bench/heap") {
    for (let i = 0; i < 4; i++) gc();
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ heapUsed: process.memoryUsage().heapUsed }));
    return;
  }
  if (req.method === "GET" && url.pathname === "/bench/snapshot") {
    for (let i = 0; i < 4; i++) gc();
    const path = join(tmpdir(), `bare-heap-${process.pid}-${snapshots++}.heapsnapshot`);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ path: writeHeapSnapshot(path) }));
    return;
  }
  if (req.method !== "POST" || url.pathname !== "/mcp") {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    let message: { id?: unknown; params?: { arguments?: { ms?: unknown } } };
    try {
      message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof message;
    } catch {
      res.writeHead(400).end();
      return;
    }
    // A warm-up call (`ms: 0`) is answered, as the conduit target's sleep tool answers it.
    if (message.params?.arguments?.ms === 0) {
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: message.id,
        result: { content: [{ type: "text", text: "slept 0 ms" }] },
      });
      res.writeHead(200, { "content-type": "application/json" }).end(body);
      return;
    }
    const ms = Number(message.params?.arguments?.ms);
    const sleeping = withSleep ? sleepLike(Number.isFinite(ms) ? ms : 0) : null;
    held.set(res, sleeping === null ? message : { message, sleeping });
    res.on("close", () => {
      sleeping?.controller.abort();
      held.delete(res);
    });
  });
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  announce(`http://127.0.0.1:${port}/mcp`);
});
