/**
 * Soak: a real conduit-mcp server under about 1 000 concurrent long tool calls from both protocol
 * eras, with random `notifications/cancelled` (2025 era), random disconnects (both eras), random
 * completions, cancels from a foreign tenant (must change nothing) and `stubborn` calls killed at
 * a short stream cancel timeout. At the end it checks the invariants cancellation
 * promises under misbehaving clients and prints a summary table; any violation → exit code 1.
 *
 *   node --expose-gc --import tsx scripts/soak.ts [--duration 60] [--concurrency 1000] [--redis]
 *   node --expose-gc --import tsx scripts/soak.ts --chaos [options of scripts/soak/chaos.ts]
 *
 * Memory store: one server in this process (its heap is measured here, after a warm-up). With
 * `--redis`: a private redis-server and two server processes sharing it through the Redis store;
 * half of the notification cancels are sent to the node that is *not* running the call (the row
 * and the abort travel through Redis). Each node measures its own heap and reports over IPC.
 *
 * Invariants (each a violation when broken): in-flight gauge 0 after the drain; cancellation rows
 * 0 after a cleanup past the TTL; heap after GC within 10 % of the post-warm-up baseline; no
 * unhandled rejection or uncaught exception in any process; no request answered twice (one JSON
 * body, or an SSE stream that ends after its single response); every call that was not cancelled
 * got its own result (its unique tag echoed); every cancelled call got nothing or -32800.
 *
 * Cancels are timed from evidence that the call runs *on the server*: every tool reports
 * progress 0 as it starts, and a call to be cancelled carries a progress token, so its first SSE
 * event says "tracked and started". A request on the wire is no such evidence: under load a
 * fresh connection can wait seconds in the server's accept queue (the client's `connect` fires
 * at the SYN-ACK), and a cancel that overtakes its call is rightly ignored (202). Once the
 * evidence is in, the checks are strict: the call must end within {@link CANCEL_EFFECT_MS} of
 * the cancel's 202, and an answer after a cancel the server *accepted* (its
 * `conduit-mcp:request:cancelled` channel, reported by every node) is a violation.
 */
import { type ChildProcess, fork } from "node:child_process";
import { randomUUID } from "node:crypto";
import { Agent, type IncomingMessage, request } from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { z } from "zod";

import { CancellationRegistry } from "../src/cancellation/index.js";
import type { CancellationStore } from "../src/cancellation/types.js";
import { channels } from "../src/diagnostics.js";
import type { CancellationSource } from "../src/errors.js";
import { defineTool } from "../src/protocol/index.js";
import { createMcpServer, type McpServer } from "../src/server/index.js";
import { errorCode, resultText, takeSseEvents } from "./soak/answer.js";

// ---------------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------------

/** Row TTL of the soak registry: short, so "rows 0 after a cleanup past the TTL" is checkable. */
const TTL_MS = 2_000;
/** The stream cancel timeout: a cancelled `stubborn` call is abandoned ("killed") after this. */
const STREAM_CANCEL_TIMEOUT_MS = 200;
/** Long modern calls become SSE streams with keep-alive comments after this (exercises SSE). */
const KEEP_ALIVE_MS = 400;
/** A call that must never finish on its own: only a cancel or a disconnect ends it. */
const FOREVER_MS = 120_000;
/**
 * A call that had demonstrably started before its cancel was sent must have ended this long
 * after the server answered the cancel (202): the abort is synchronous in the cancelling node,
 * so this only covers reading lag and, with Redis, the pub/sub hop to the other node.
 */
const CANCEL_EFFECT_MS = 2_000;
/** A call still open this long after its planned end is reported as hung. */
const HANG_MS = 15_000;
const TENANTS = 8;
const MODERN_VERSION = "2026-07-28";
const LEGACY_VERSION = "2025-11-25";
const HEAP_TOLERANCE = 0.1;

interface Settings {
  durationS: number;
  concurrency: number;
  redis: boolean;
  warmupS: number;
}

function parseArgs(
  argv: readonly string[],
): Settings & { role: string; redisUrl: string; prefix: string } {
  const settings = {
    durationS: 60,
    concurrency: 1000,
    redis: false,
    warmupS: -1,
    role: "main",
    redisUrl: "",
    prefix: "",
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const next = (): string => {
      const value = argv[++i];
      if (value === undefined) throw new Error(`soak: ${arg} needs a value`);
      return value;
    };
    switch (arg) {
      case "--duration":
        settings.durationS = positive(arg, next());
        break;
      case "--concurrency":
        settings.concurrency = Math.floor(positive(arg, next()));
        break;
      case "--warmup":
        settings.warmupS = positive(arg, next());
        break;
      case "--redis":
        settings.redis = true;
        break;
      case "--role":
        settings.role = next();
        break;
      case "--redis-url":
        settings.redisUrl = next();
        break;
      case "--prefix":
        settings.prefix = next();
        break;
      default:
        throw new Error(`soak: unknown argument ${arg}`);
    }
  }
  if (settings.warmupS < 0) settings.warmupS = Math.min(5, Math.max(2, settings.durationS / 5));
  return settings;
}

function positive(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`soak: ${name} must be > 0, got ${text}`);
  return value;
}

const TOKENS: Record<string, string> = {};
for (let t = 0; t < TENANTS; t++) TOKENS[`soak-secret-0123456789-${t}`] = `tenant-${t}`;

// ---------------------------------------------------------------------------------------------
// A server node (in this process, or in a child process with --role node)
// ---------------------------------------------------------------------------------------------

/** What the driver can ask of a node, wherever it runs. */
interface NodeControl {
  readonly url: string;
  /** heapUsed after several full GCs. */
  heap(): Promise<number>;
  stats(): Promise<{ inFlight: number; rows: number; metrics: string }>;
  /** Runs the registry's cleanup with its own TTL, then reports the rows left. */
  cleanup(): Promise<number>;
  /** Problems seen inside the node (unhandled rejections, uncaught exceptions). */
  problems(): Promise<string[]>;
  /**
   * `scope|requestId` of every notification cancel this node *recorded* (the gate found the call
   * in flight in the caller's scope) since the last call; the list is emptied.
   */
  acceptedCancels(): Promise<string[]>;
  close(): Promise<void>;
}

function soakTools() {
  return [
    defineTool({
      name: "work",
      description:
        "Sleeps `ms`, honouring cancellation; with `progress`, reports progress every 100 ms",
      input: z.object({
        ms: z.number().int().min(0),
        tag: z.string(),
        progress: z.boolean().default(false),
      }),
      handler: async ({ ms, tag, progress }, ctx) => {
        // "Started" (a no-op without a progress token): the driver's evidence that the call is
        // tracked and running on the server, from which it times its cancel.
        await ctx.progress(0);
        if (!progress) {
          await sleep(ms, undefined, { signal: ctx.signal });
          return tag;
        }
        const steps = Math.max(1, Math.ceil(ms / 100));
        for (let i = 1; i <= steps; i++) {
          await sleep(Math.min(100, ms), undefined, { signal: ctx.signal });
          await ctx.progress(i, steps);
        }
        return tag;
      },
    }),
    defineTool({
      name: "stubborn",
      description: "Sleeps `ms` and ignores cancellation",
      input: z.object({ ms: z.number().int().min(0), tag: z.string() }),
      handler: async ({ ms, tag }, ctx) => {
        await ctx.progress(0);
        await sleep(ms);
        return tag;
      },
    }),
  ];
}

async function fullGcHeap(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error("soak: run with node --expose-gc");
  for (let i = 0; i < 6; i++) {
    gc();
    await sleep(20);
  }
  if (process.env.SOAK_DEBUG_HEAP !== undefined) {
    const { getHeapSpaceStatistics } = await import("node:v8");
    console.error(
      getHeapSpaceStatistics()
        .map((s) => `${s.space_name}=${(s.space_used_size / 1024).toFixed(0)}K`)
        .join(" "),
    );
  }
  return process.memoryUsage().heapUsed;
}

async function startLocalNode(options: {
  redisUrl?: string;
  prefix?: string;
}): Promise<NodeControl & { server: McpServer; registry: CancellationRegistry }> {
  let store: CancellationStore | undefined;
  if (options.redisUrl !== undefined) {
    const { RedisCancellationStore } = await import("../src/redis/index.js");
    const redisStore = new RedisCancellationStore({
      redis: options.redisUrl,
      prefix: options.prefix ?? "soak",
      maxRows: 1_000_000,
      maxRowsPerScope: Number.POSITIVE_INFINITY,
      logger: () => {},
    });
    if (!(await redisStore.ready(10_000))) throw new Error("soak: Redis store not ready");
    store = redisStore;
  }
  // All calls of one tenant share its scope: the per-scope quota is lifted so cancels are never
  // refused for quota (that is the Abuse part's subject, not the soak's).
  const registry = new CancellationRegistry(
    store === undefined
      ? {
          maxRows: 1_000_000,
          maxRowsPerScope: Number.POSITIVE_INFINITY,
          ttlMs: TTL_MS,
          janitorIntervalMs: 1_000,
        }
      : { store, ttlMs: TTL_MS, janitorIntervalMs: 1_000 },
  );
  const server = createMcpServer({
    tools: soakTools(),
    registry,
    auth: { tokens: TOKENS },
    metrics: true,
    // The per-scope bounds (Abuse part) are lifted: the soak's tenants are well-behaved and each
    // holds ~concurrency/8 calls, most of them streams.
    maxConcurrentRequestsPerScope: 100_000,
    maxOpenStreamsPerScope: 100_000,
    maxConcurrentRequests: 100_000,
    maxConnectionsPerBucket: 100_000,
    maxConnections: 100_000,
    streamCancelTimeoutMs: STREAM_CANCEL_TIMEOUT_MS,
    keepAliveMs: KEEP_ALIVE_MS,
    closeGraceMs: 100,
  });
  const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
  // Server-side probe: cancels the registry recorded, i.e. accepted by the notification gate.
  let accepted: string[] = [];
  const onCancelled = (message: unknown): void => {
    const m = message as { requestId: string; scope: string; source: CancellationSource };
    if (m.source === "notification") accepted.push(`${m.scope}|${m.requestId}`);
  };
  channels.requestCancelled.subscribe(onCancelled);
  const metricsUrl = new URL("/metrics", url).toString();
  return {
    url,
    server,
    registry,
    heap: fullGcHeap,
    async stats() {
      const response = await fetch(metricsUrl);
      const metrics = await response.text();
      return { inFlight: registry.inFlightCount, rows: await registry.size(), metrics };
    },
    async cleanup() {
      await registry.cleanup();
      return registry.size();
    },
    async problems() {
      return [...localProblems];
    },
    async acceptedCancels() {
      const list = accepted;
      accepted = [];
      return list;
    },
    async close() {
      channels.requestCancelled.unsubscribe(onCancelled);
      await server.close();
      await registry.close();
    },
  };
}

const localProblems: string[] = [];
function watchProcess(label: string): void {
  process.on("unhandledRejection", (reason) => {
    localProblems.push(`${label}: unhandled rejection: ${describe(reason)}`);
  });
  process.on("uncaughtException", (error) => {
    localProblems.push(`${label}: uncaught exception: ${describe(error)}`);
  });
}

function describe(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  return String(value).slice(0, 200);
}

/** `--role node`: a server process driven over IPC by the soak driver. */
async function runChildNode(redisUrl: string, prefix: string): Promise<void> {
  watchProcess(`node ${process.pid}`);
  const node = await startLocalNode({ redisUrl, prefix });
  const send = (message: unknown): void => {
    process.send?.(message);
  };
  process.on("message", (raw) => {
    const message = raw as { seq: number; cmd: string };
    const answer = async (): Promise<unknown> => {
      switch (message.cmd) {
        case "heap":
          return node.heap();
        case "stats":
          return node.stats();
        case "cleanup":
          return node.cleanup();
        case "problems":
          return node.problems();
        case "accepted":
          return node.acceptedCancels();
        case "close":
          await node.close();
          setImmediate(() => process.disconnect?.());
          return null;
        default:
          throw new Error(`unknown command ${message.cmd}`);
      }
    };
    answer().then(
      (value) => send({ seq: message.seq, value }),
      (error: unknown) => send({ seq: message.seq, error: describe(error) }),
    );
  });
  send({ ready: node.url });
}

async function startChildNode(redisUrl: string, prefix: string): Promise<NodeControl> {
  const script = fileURLToPath(import.meta.url);
  const child: ChildProcess = fork(
    script,
    ["--role", "node", "--redis-url", redisUrl, "--prefix", prefix],
    {
      execArgv: ["--expose-gc", "--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    },
  );
  let seq = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const url = await new Promise<string>((resolve, reject) => {
    const onMessage = (raw: unknown): void => {
      const message = raw as { ready?: string };
      if (message.ready !== undefined) {
        child.off("message", onMessage);
        resolve(message.ready);
      }
    };
    child.on("message", onMessage);
    child.once("exit", (code) => reject(new Error(`soak: node exited early (${code})`)));
  });
  const exitProblems: string[] = [];
  child.on("exit", (code, signal) => {
    if (code !== 0 && code !== null) exitProblems.push(`node ${child.pid} exited with ${code}`);
    if (signal !== null) exitProblems.push(`node ${child.pid} killed by ${signal}`);
    for (const w of waiting.values()) w.reject(new Error("node exited"));
    waiting.clear();
  });
  child.on("message", (raw) => {
    const message = raw as { seq?: number; value?: unknown; error?: string };
    if (message.seq === undefined) return;
    const w = waiting.get(message.seq);
    if (w === undefined) return;
    waiting.delete(message.seq);
    if (message.error !== undefined) w.reject(new Error(message.error));
    else w.resolve(message.value);
  });
  const call = <T>(cmd: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = ++seq;
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ seq: id, cmd });
    });
  return {
    url,
    heap: () => call<number>("heap"),
    stats: () => call("stats"),
    cleanup: () => call<number>("cleanup"),
    problems: async () => [...(await call<string[]>("problems")), ...exitProblems],
    acceptedCancels: () => call<string[]>("accepted"),
    async close() {
      const exited = new Promise<void>((resolve) => {
        if (child.exitCode !== null) resolve();
        else child.once("exit", () => resolve());
      });
      await call("close").catch(() => {});
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The load
// ---------------------------------------------------------------------------------------------

type Era = "2025" | "modern";
type Action = "complete" | "cancel" | "disconnect" | "foreign";

interface Plan {
  readonly id: number | string;
  readonly tag: string;
  readonly era: Era;
  readonly tool: "work" | "stubborn";
  readonly progress: boolean;
  readonly ms: number;
  readonly action: Action;
  /** When the cancel or the disconnect happens, ms after the request was sent. */
  readonly delay: number;
  readonly tenant: number;
  readonly node: number;
  readonly cancelNode: number;
}

/** Counters of one phase; violations keep their first examples. */
class Tally {
  readonly counts = new Map<string, number>();
  readonly violations = new Map<string, { count: number; examples: string[] }>();
  active = 0;
  peakActive = 0;
  /** Longest wait of a call between `request()` and its bytes reaching the socket. */
  maxQueuedMs = 0;
  /** Longest wait of a call to be cancelled between its bytes on the wire and its "started". */
  maxStartLagMs = 0;
  /** Cancelled calls that got their result anyway: judged after the phase by the server probe. */
  readonly answeredDespiteCancel: { key: string; what: string }[] = [];

  add(key: string, n = 1): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + n);
  }

  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  violation(kind: string, detail: string): void {
    let v = this.violations.get(kind);
    if (v === undefined) {
      v = { count: 0, examples: [] };
      this.violations.set(kind, v);
    }
    v.count++;
    if (v.examples.length < 5) v.examples.push(detail);
  }
}

let nextId = 1;

function pick<T>(items: readonly (readonly [T, number])[]): T {
  let r = Math.random();
  for (const [item, weight] of items) {
    if (r < weight) return item;
    r -= weight;
  }
  return (items[items.length - 1] as readonly [T, number])[0];
}

function between(lo: number, hi: number): number {
  return lo + Math.floor(Math.random() * (hi - lo + 1));
}

function makePlan(nodes: number): Plan {
  const n = nextId++;
  // Ids of both JSON-RPC kinds; unique over the whole run so no two calls ever share a key.
  const id = n % 2 === 0 ? n : `r-${n}`;
  const era: Era = Math.random() < 0.4 ? "modern" : "2025";
  const action: Action =
    era === "2025"
      ? pick<Action>([
          ["complete", 0.45],
          ["cancel", 0.25],
          ["disconnect", 0.2],
          ["foreign", 0.1],
        ])
      : pick<Action>([
          ["complete", 0.55],
          ["disconnect", 0.35],
          ["foreign", 0.1],
        ]);
  const tool = Math.random() < 0.12 ? "stubborn" : "work";
  const progress = tool === "work" && Math.random() < 0.25;
  const interrupted = action === "cancel" || action === "disconnect";
  const delay = interrupted ? between(30, 1_500) : between(50, 600);
  // Interrupted calls never finish by themselves before the interruption: a `work` call runs
  // "forever"; a `stubborn` one ends 2.5 s or more after the cancel, long after its abandonment
  // (and after a possible re-sent cancel, see runCall).
  const ms = interrupted
    ? tool === "work"
      ? FOREVER_MS
      : delay + between(2_500, 3_500)
    : between(100, 1_500);
  const node = Math.floor(Math.random() * nodes);
  const cancelNode = nodes > 1 && Math.random() < 0.5 ? (node + 1) % nodes : node;
  return {
    id,
    tag: `${n}-${randomUUID()}`,
    era,
    tool,
    progress,
    ms,
    action,
    delay,
    tenant: n % TENANTS,
    node,
    cancelNode,
  };
}

function callBody(plan: Plan): string {
  const args: Record<string, unknown> = { ms: plan.ms, tag: plan.tag };
  if (plan.tool === "work") args.progress = plan.progress;
  const meta: Record<string, unknown> = {};
  // A call to be cancelled always carries a token: its "started" progress times the cancel.
  if (plan.progress || plan.action === "cancel") meta.progressToken = `p-${plan.tag}`;
  if (plan.era === "modern") {
    meta["io.modelcontextprotocol/protocolVersion"] = MODERN_VERSION;
    meta["io.modelcontextprotocol/clientCapabilities"] = {};
  }
  const params: Record<string, unknown> = { name: plan.tool, arguments: args };
  if (Object.keys(meta).length > 0) params._meta = meta;
  return JSON.stringify({ jsonrpc: "2.0", id: plan.id, method: "tools/call", params });
}

function callHeaders(plan: Plan, body: string): Record<string, string | number> {
  const headers: Record<string, string | number> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer soak-secret-0123456789-${plan.tenant}`,
    "content-length": Buffer.byteLength(body),
  };
  if (plan.era === "modern") {
    headers["mcp-protocol-version"] = MODERN_VERSION;
    headers["mcp-method"] = "tools/call";
    headers["mcp-name"] = plan.tool;
  } else {
    headers["mcp-protocol-version"] = LEGACY_VERSION;
  }
  return headers;
}

interface Driver {
  readonly nodes: readonly NodeControl[];
  readonly callAgents: readonly Agent[];
  readonly notifyAgents: readonly Agent[];
}

const cancelErrors = new Set<string>();

/** Sends `notifications/cancelled` for `plan` as `tenant`; resolves the HTTP status. */
function sendCancel(driver: Driver, plan: Plan, tenant: number): Promise<number> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: plan.id, reason: `soak cancel of ${plan.tag}` },
  });
  const node = driver.nodes[plan.cancelNode] as NodeControl;
  return sendCancelOnce(driver, plan, tenant, body, node).then((status) =>
    // A keep-alive socket the server closed as idle just as the client reused it: the request
    // never reached the server, and Node's documented remedy is to send it again (see
    // `request.reusedSocket` in the node:http docs). Only such a failure is retried, once.
    status === REUSED_SOCKET_RESET ? sendCancelOnce(driver, plan, tenant, body, node) : status,
  );
}

/** The status of a cancel whose reused keep-alive socket was reset before any answer. */
const REUSED_SOCKET_RESET = -2;

function sendCancelOnce(
  driver: Driver,
  plan: Plan,
  tenant: number,
  body: string,
  node: NodeControl,
): Promise<number> {
  return new Promise((resolve) => {
    const req = request(node.url, {
      method: "POST",
      agent: driver.notifyAgents[plan.cancelNode],
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer soak-secret-0123456789-${tenant}`,
        "mcp-protocol-version": LEGACY_VERSION,
        "content-length": Buffer.byteLength(body),
      },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", () => resolve(-1));
    });
    req.on("error", (error) => {
      if (req.reusedSocket && (error as NodeJS.ErrnoException).code === "ECONNRESET") {
        resolve(REUSED_SOCKET_RESET);
        return;
      }
      cancelErrors.add(error.message);
      resolve(-1);
    });
    req.end(body);
  });
}

interface Received {
  responses: unknown[];
  afterResponse: number;
  transportError: string | null;
  sse: boolean;
  status: number;
  ended: boolean;
}

/** Parses one JSON-RPC response object, or returns why it is not one. */
function checkEnvelope(message: unknown, plan: Plan): string | null {
  if (typeof message !== "object" || message === null || Array.isArray(message))
    return "not an object";
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== "2.0") return "jsonrpc is not 2.0";
  if ("result" in m === "error" in m) return "not exactly one of result/error";
  if (m.id !== plan.id) return `id ${JSON.stringify(m.id)} ≠ ${JSON.stringify(plan.id)}`;
  return null;
}

/** Reads an answer: one JSON body, or an SSE stream (responses counted, events after one noted). */
function readAnswer(
  res: IncomingMessage,
  got: Received,
  onResponse: () => void,
  onProgress: () => void = () => {},
): void {
  got.status = res.statusCode ?? 0;
  const type = res.headers["content-type"] ?? "";
  res.setEncoding("utf8");
  if (type.startsWith("text/event-stream")) {
    got.sse = true;
    let buffer = "";
    res.on("data", (chunk: string) => {
      buffer += chunk;
      const taken = takeSseEvents(buffer);
      buffer = taken.rest;
      for (const data of taken.events) {
        if (data === "") {
          if (got.responses.length > 0) got.afterResponse++;
          continue;
        }
        let message: unknown;
        try {
          message = JSON.parse(data);
        } catch {
          got.transportError = `unparsable SSE data ${data.slice(0, 80)}`;
          continue;
        }
        if (got.responses.length > 0) got.afterResponse++;
        if (
          typeof message === "object" &&
          message !== null &&
          "id" in message &&
          !("method" in message)
        ) {
          got.responses.push(message);
          onResponse();
        } else if (
          typeof message === "object" &&
          message !== null &&
          (message as { method?: unknown }).method === "notifications/progress"
        ) {
          onProgress();
        }
      }
    });
    res.on("end", () => {
      if (buffer.trim() !== "") got.transportError = "SSE stream ended mid-event";
    });
    return;
  }
  let text = "";
  res.on("data", (chunk: string) => {
    text += chunk;
  });
  res.on("end", () => {
    if (text === "") return;
    try {
      got.responses.push(JSON.parse(text));
      onResponse();
    } catch {
      got.transportError = `unparsable JSON body ${text.slice(0, 80)}`;
    }
  });
}

/** Runs one call to its end and judges it. Never rejects. */
function runCall(driver: Driver, plan: Plan, tally: Tally): Promise<void> {
  tally.add(`started ${plan.era}`);
  tally.add(`action ${plan.era} ${plan.action}`);
  if (plan.tool === "stubborn") tally.add(`stubborn ${plan.action}`);
  tally.active++;
  if (tally.active > tally.peakActive) tally.peakActive = tally.active;
  const body = callBody(plan);
  const node = driver.nodes[plan.node] as NodeControl;
  const got: Received = {
    responses: [],
    afterResponse: 0,
    transportError: null,
    sse: false,
    status: 0,
    ended: false,
  };
  let destroyedByUs = false;
  let cancelStatus: Promise<number> | null = null;
  const timers: NodeJS.Timeout[] = [];

  return new Promise<void>((resolve) => {
    const req = request(node.url, {
      method: "POST",
      agent: driver.callAgents[plan.node],
      headers: callHeaders(plan, body),
    });
    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      tally.active--;
      const finish = async (): Promise<void> => {
        const status = cancelStatus === null ? null : await cancelStatus;
        judge(plan, got, destroyedByUs, status, tally);
      };
      finish().then(resolve, (error: unknown) => {
        tally.violation("driver error", describe(error));
        resolve();
      });
    };
    req.on("response", (res) => {
      readAnswer(res, got, () => {}, onStarted);
      res.on("end", () => {
        got.ended = true;
        settle();
      });
      res.on("aborted", settle);
      res.on("error", () => {
        if (!destroyedByUs) got.transportError ??= "response error";
        settle();
      });
      res.on("close", settle);
    });
    req.on("error", (error) => {
      if (!destroyedByUs) got.transportError ??= `request error: ${error.message}`;
      settle();
    });
    req.end(body);
    // Timers start once the request is on the wire: a request still queued in the agent (all
    // its sockets busy) must not be "cancelled" before the server could have seen it.
    const sentAt = performance.now();
    req.once("finish", () => {
      const queued = performance.now() - sentAt;
      if (queued > tally.maxQueuedMs) tally.maxQueuedMs = queued;
      if (!settled) arm();
    });

    let onWire = -1;
    let started = false;
    /** The call's first progress event: it is tracked and running on the server. */
    function onStarted(): void {
      if (started || settled || plan.action !== "cancel") return;
      started = true;
      const lag = onWire < 0 ? 0 : performance.now() - onWire;
      if (lag > tally.maxStartLagMs) tally.maxStartLagMs = lag;
      // Sent only now: a cancel that overtakes its call is ignored (202), as the spec allows, and
      // proves nothing. Once sent, the server's 202 says the gate ran while the call was in
      // flight, so the call must end within CANCEL_EFFECT_MS; if not, that is a violation (the
      // cancel is re-sent up to twice, to tell "ignored" from "stuck" in the report).
      const cancel = (attempt: number): void => {
        if (settled) return;
        if (attempt > 0) tally.add("cancels re-sent");
        const status = sendCancel(driver, plan, plan.tenant);
        cancelStatus ??= status;
        void status.then(() => {
          if (settled) return;
          timers.push(
            setTimeout(() => {
              if (settled) return;
              if (attempt === 0)
                tally.violation(
                  "started call still open after its cancel was answered",
                  `${plan.era} ${plan.tool} id=${JSON.stringify(plan.id)} delay ${plan.delay} ms node ${plan.node}→${plan.cancelNode}`,
                );
              if (attempt < 2) cancel(attempt + 1);
            }, CANCEL_EFFECT_MS),
          );
        });
      };
      timers.push(setTimeout(cancel, plan.delay, 0));
    }

    function arm(): void {
      onWire = performance.now();
      if (plan.action === "cancel") {
        // Armed by onStarted (the first progress event), not by the request being on the wire.
      } else if (plan.action === "foreign") {
        timers.push(
          setTimeout(() => {
            cancelStatus = sendCancel(driver, plan, (plan.tenant + 1) % TENANTS);
          }, plan.delay),
        );
      } else if (plan.action === "disconnect") {
        timers.push(
          setTimeout(() => {
            destroyedByUs = true;
            req.destroy();
            settle();
          }, plan.delay),
        );
      }
      const hangAfter =
        (plan.action === "complete" || plan.action === "foreign" ? plan.ms : plan.delay) + HANG_MS;
      timers.push(
        setTimeout(() => {
          tally.violation(
            "hung",
            `${plan.era} ${plan.action} ${plan.tool} id=${String(plan.id)} still open ${hangAfter} ms after sending`,
          );
          destroyedByUs = true;
          req.destroy();
          settle();
        }, hangAfter),
      );
    }
  });
}

function judge(
  plan: Plan,
  got: Received,
  destroyedByUs: boolean,
  cancelStatus: number | null,
  tally: Tally,
): void {
  const what = `${plan.era} ${plan.action} ${plan.tool}${plan.progress ? "+progress" : ""} id=${JSON.stringify(plan.id)}`;
  if (got.transportError !== null && !destroyedByUs)
    tally.violation("transport", `${what}: ${got.transportError}`);
  if (got.responses.length > 1)
    tally.violation("answered twice", `${what}: ${got.responses.length} responses`);
  if (got.afterResponse > 0)
    tally.violation("events after the response", `${what}: ${got.afterResponse} more events`);
  if (got.sse) tally.add("answers as SSE streams");
  for (const response of got.responses) {
    const problem = checkEnvelope(response, plan);
    if (problem !== null) tally.violation("malformed response", `${what}: ${problem}`);
  }
  const response = got.responses[0];
  if (cancelStatus !== null) {
    tally.add(`cancel notification → ${cancelStatus}`);
    if (cancelStatus !== 202) {
      tally.violation(
        "cancel notification not 202",
        `${what}: ${cancelStatus} ${[...cancelErrors].join(", ")}`,
      );
    }
  }
  switch (plan.action) {
    case "complete":
    case "foreign": {
      if (response === undefined) {
        tally.violation("lost result", `${what}: status ${got.status}, no response`);
        return;
      }
      const text = resultText(response);
      if (text !== plan.tag) {
        tally.violation(
          text === undefined ? "lost result" : "wrong result",
          `${what}: got ${JSON.stringify(response).slice(0, 160)}`,
        );
        return;
      }
      tally.add(
        plan.action === "complete" ? "completed with own result" : "foreign cancel ignored",
      );
      return;
    }
    case "cancel": {
      if (response === undefined) {
        if (!got.ended) {
          tally.violation("cancelled call left open", `${what}: no end`);
          return;
        }
        tally.add("cancelled: stream ended, no response");
        return;
      }
      if (errorCode(response) === -32800) {
        tally.add("cancelled: -32800");
        return;
      }
      if (plan.tool === "stubborn" && resultText(response) === plan.tag) {
        // A stubborn call ends by itself 2.5–3.5 s after its cancel was due; a cancel whose own
        // connection waited that long to be accepted arrives after the end and is rightly
        // ignored. Whether the server had accepted it is known only after the phase (probe).
        tally.answeredDespiteCancel.push({
          key: `principal:tenant-${plan.tenant}|${String(plan.id)}`,
          what,
        });
        return;
      }
      tally.violation(
        "answer after cancel",
        `${what}: got ${JSON.stringify(response).slice(0, 160)}`,
      );
      return;
    }
    case "disconnect": {
      if (response !== undefined) {
        tally.violation(
          "answer before disconnect",
          `${what}: got ${JSON.stringify(response).slice(0, 160)}`,
        );
        return;
      }
      tally.add("disconnected");
      return;
    }
  }
}

async function runPhase(
  driver: Driver,
  seconds: number,
  concurrency: number,
  tally: Tally,
): Promise<number> {
  const end = performance.now() + seconds * 1_000;
  let calls = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      calls++;
      await runCall(driver, makePlan(driver.nodes.length), tally);
    }
  };
  // Ramped up over ~2 s (25 new connections per 50 ms): a burst of 1 000 connects overflows the
  // listen backlog (511) and SYN retries then delay calls by seconds.
  const workers: Promise<void>[] = [];
  for (let i = 0; i < concurrency; i++) {
    workers.push(worker());
    if (i % 25 === 24) await sleep(50);
  }
  await Promise.all(workers);
  return calls;
}

function makeDriver(nodes: readonly NodeControl[], concurrency: number): Driver {
  return {
    nodes,
    callAgents: nodes.map(() => new Agent({ keepAlive: true, maxSockets: concurrency })),
    notifyAgents: nodes.map(() => new Agent({ keepAlive: true, maxSockets: 32 })),
  };
}

function closeDriver(driver: Driver): void {
  for (const agent of [...driver.callAgents, ...driver.notifyAgents]) agent.destroy();
}

function metricValue(text: string, name: string): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(name) && !line.startsWith("#"))
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (performance.now() > deadline) return false;
    await sleep(50);
  }
}

/**
 * The end of a phase: wait for the in-flight gauge to reach 0 (by the registry and by /metrics),
 * scrape, wait past the row TTL, run the cleanup, then let abandoned `stubborn` handlers (which
 * sleep up to 3.5 s past their cancel) end before anyone measures the heap.
 */
async function settle(nodes: readonly NodeControl[]) {
  const drained = await waitFor(async () => {
    const stats = await Promise.all(nodes.map((n) => n.stats()));
    return stats.every(
      (s) => s.inFlight === 0 && metricValue(s.metrics, "conduit_mcp_in_flight_requests") === 0,
    );
  }, 10_000);
  const stats = await Promise.all(nodes.map((n) => n.stats()));
  await sleep(TTL_MS + 200);
  const rowsLeft = await Promise.all(nodes.map((n) => n.cleanup()));
  await sleep(1_800);
  return { drained, stats, rowsLeft };
}

// ---------------------------------------------------------------------------------------------
// The driver
// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  // `--chaos`: the multi-process chaos soak (scripts/soak/chaos.ts), with its own options.
  if (process.argv.includes("--chaos")) {
    const { runChaos } = await import("./soak/chaos.js");
    return runChaos(process.argv.slice(2).filter((arg) => arg !== "--chaos"));
  }
  const settings = parseArgs(process.argv.slice(2));
  if (settings.role === "node") {
    await runChildNode(settings.redisUrl, settings.prefix);
    return -1; // stays alive, driven over IPC
  }
  watchProcess("driver");
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });

  let redis: { url: string; stop(): Promise<void> } | null = null;
  const nodes: NodeControl[] = [];
  const rows: [string, string][] = [];
  const checks: [string, boolean, string][] = [];
  let tally = new Tally();
  try {
    if (settings.redis) {
      const { startRedisServer } = await import("../test/helpers/redis-server.js");
      redis = await startRedisServer();
      const prefix = `soak-${process.pid}`;
      nodes.push(await startChildNode(redis.url, prefix), await startChildNode(redis.url, prefix));
    } else {
      nodes.push(await startLocalNode({}));
    }

    // Warm-up: same load, then the heap baseline.
    const warm = makeDriver(nodes, settings.concurrency);
    await runPhase(warm, settings.warmupS, settings.concurrency, new Tally());
    closeDriver(warm);
    // The same end-of-run sequence as below (drain, scrape, cleanup), so every code path that
    // runs at the end has run once before the baseline (lazily loaded modules, compiled code).
    await settle(nodes);
    await Promise.all(nodes.map((n) => n.acceptedCancels()));
    const baseline = await Promise.all(nodes.map((n) => n.heap()));

    loopDelay.enable();
    tally = new Tally();
    const driver = makeDriver(nodes, settings.concurrency);
    const started = performance.now();
    const calls = await runPhase(driver, settings.durationS, settings.concurrency, tally);
    const elapsed = (performance.now() - started) / 1_000;
    loopDelay.disable();
    closeDriver(driver);
    // Every call has ended and every cancel was answered: the probe's lists are complete.
    // A block: the probe's lists are not alive when the heap is measured.
    let acceptedCount = 0;
    {
      const accepted = new Set((await Promise.all(nodes.map((n) => n.acceptedCancels()))).flat());
      acceptedCount = accepted.size;
      for (const { key, what } of tally.answeredDespiteCancel) {
        if (accepted.has(key)) tally.violation("answer after an accepted cancel", what);
        else tally.add("stubborn finished before its cancel reached the server");
      }
      tally.answeredDespiteCancel.length = 0;
    }

    const { drained, stats, rowsLeft } = await settle(nodes);
    const inFlight = stats.map((s) => s.inFlight);
    const rowsBefore = stats[0]?.rows ?? -1;
    const metricsText = stats.map((s) => s.metrics);
    const sum = (name: string): number =>
      metricsText.reduce((acc, text) => acc + metricValue(text, name), 0);
    const after = await Promise.all(nodes.map((n) => n.heap()));
    const problems = (await Promise.all(nodes.map((n) => n.problems()))).flat();

    const heapRatios = after.map((a, i) => a / (baseline[i] as number) - 1);
    const mb = (b: number): string => `${(b / 1_048_576).toFixed(1)} MB`;

    rows.push(
      [
        "store",
        settings.redis
          ? "redis (2 server processes, 1 redis-server)"
          : "memory (1 in-process server)",
      ],
      ["duration / warm-up", `${elapsed.toFixed(1)} s / ${settings.warmupS} s`],
      ["concurrency (target / peak)", `${settings.concurrency} / ${tally.peakActive}`],
      ["calls", `${calls} (${(calls / elapsed).toFixed(0)}/s)`],
      ["calls 2025 / modern", `${tally.get("started 2025")} / ${tally.get("started modern")}`],
      ["completed with own result", String(tally.get("completed with own result"))],
      ["foreign-tenant cancels ignored", String(tally.get("foreign cancel ignored"))],
      [
        "cancelled by notification",
        `${tally.get("cancelled: -32800") + tally.get("cancelled: stream ended, no response")} (-32800: ${tally.get("cancelled: -32800")}, stream ended: ${tally.get("cancelled: stream ended, no response")})`,
      ],
      [
        "disconnected (2025 / modern)",
        `${tally.get("action 2025 disconnect")} / ${tally.get("action modern disconnect")}`,
      ],
      [
        "stubborn calls cancelled / killed",
        `${tally.get("stubborn cancel") + tally.get("stubborn disconnect")} / ${sum('conduit_mcp_tool_calls_total{tool="stubborn",outcome="killed"}')}`,
      ],
      ["longest client-side wait for a socket", `${tally.maxQueuedMs.toFixed(0)} ms`],
      [
        "longest wait on the wire → server 'started' (cancel calls)",
        `${tally.maxStartLagMs.toFixed(0)} ms`,
      ],
      ["notification cancels accepted by the server", String(acceptedCount)],
      [
        "stubborn finished before its cancel reached the server",
        String(tally.get("stubborn finished before its cancel reached the server")),
      ],
      ["answers as SSE streams", String(tally.get("answers as SSE streams"))],
      [
        `cancel notifications re-sent (call open ${CANCEL_EFFECT_MS} ms after the 202)`,
        String(tally.get("cancels re-sent")),
      ],
      [
        "server cancellations by source",
        `notification ${sum('conduit_mcp_cancellations_total{source="notification"}')}, disconnect ${sum('conduit_mcp_cancellations_total{source="disconnect"}')}`,
      ],
      [
        "event-loop delay p99 / max (driver)",
        `${(loopDelay.percentile(99) / 1e6).toFixed(1)} / ${(loopDelay.max / 1e6).toFixed(1)} ms`,
      ],
      ["in-flight after drain", inFlight.join(", ")],
      ["rows after drain → after cleanup past TTL", `${rowsBefore} → ${rowsLeft.join(", ")}`],
      [
        "heap after GC: baseline → end",
        after
          .map(
            (a, i) =>
              `${mb(baseline[i] as number)} → ${mb(a)} (${((heapRatios[i] as number) * 100).toFixed(1)}%)`,
          )
          .join("; "),
      ],
    );

    checks.push(
      ["in-flight gauge 0", drained && inFlight.every((n) => n === 0), inFlight.join(", ")],
      ["rows 0 after cleanup past TTL", rowsLeft.every((n) => n === 0), rowsLeft.join(", ")],
      [
        `heap within ${HEAP_TOLERANCE * 100}%`,
        heapRatios.every((r) => r <= HEAP_TOLERANCE),
        heapRatios.map((r) => `${(r * 100).toFixed(1)}%`).join(", "),
      ],
      [
        "no unhandled rejection / exception",
        problems.length === 0 && localProblems.length === 0,
        [...problems, ...localProblems].slice(0, 5).join("; "),
      ],
      ["some calls ran", calls > 0, String(calls)],
    );
    for (const kind of [
      "answered twice",
      "events after the response",
      "lost result",
      "wrong result",
      "answer after cancel",
      "answer after an accepted cancel",
      "started call still open after its cancel was answered",
      "answer before disconnect",
      "cancelled call left open",
      "malformed response",
      "cancel notification not 202",
      "transport",
      "hung",
      "driver error",
    ]) {
      const v = tally.violations.get(kind);
      checks.push([
        `no ${kind}`,
        v === undefined,
        v === undefined ? "0" : `${v.count}: ${v.examples.join(" | ")}`,
      ]);
    }
    for (const kind of tally.violations.keys()) {
      if (!checks.some(([name]) => name === `no ${kind}`)) {
        const v = tally.violations.get(kind);
        checks.push([`no ${kind}`, false, `${v?.count}: ${v?.examples.join(" | ")}`]);
      }
    }
  } finally {
    for (const node of nodes) await node.close().catch(() => {});
    await redis?.stop();
  }

  const width = Math.max(...rows.map(([k]) => k.length), ...checks.map(([k]) => k.length + 7));
  console.log("\nconduit-mcp soak summary");
  console.log("-".repeat(width + 40));
  for (const [key, value] of rows) console.log(`${key.padEnd(width)}  ${value}`);
  console.log("-".repeat(width + 40));
  let failed = 0;
  for (const [name, ok, detail] of checks) {
    if (!ok) failed++;
    console.log(`${`${ok ? "PASS" : "FAIL"}  ${name}`.padEnd(width)}  ${ok ? "" : detail}`);
  }
  console.log("-".repeat(width + 40));
  console.log(failed === 0 ? "soak: all invariants held" : `soak: ${failed} invariant(s) violated`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    console.error("soak: failed to run:", error);
    process.exit(2);
  },
);
