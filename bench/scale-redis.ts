/**
 * `npm run bench:scale:redis`: what one unit of work costs Redis, on two `conduit-mcp serve
 * --sessions --redis` nodes (the CLI's demo tools) sharing one private `redis-server`: Redis
 * commands (`INFO commandstats` deltas, by command) and Redis CPU (`used_cpu_sys` +
 * `used_cpu_user` delta) per
 * - long call: a 2025-11-25 `tools/call sleep` of 300 ms (longer than the store's `shareAfterMs`,
 *   so its in-flight entry is written), on node A;
 * - task: `tools/call sleep` of 200 ms as a task on node A, `tasks/get` polled on node B until
 *   `completed`, `tasks/result` on node B;
 * - ask: the demo's `confirm` tool on node A in a session, its `elicitation/create` answered by a
 *   POST to node B (the reply crosses nodes);
 * - short call in a session: `tools/call echo` with `Mcp-Session-Id` (a call shorter than
 *   `shareAfterMs` costs nothing without a session; with one, the session is looked up);
 * and the nodes' idle cost (leases, janitors) per node and second, subtracted from each. The
 * figures feed the capacity model in docs/redis.md ("How many nodes one Redis carries").
 *
 * Two phases per unit: the command counts come from units run one at a time (exact); Redis CPU
 * from a second, paced phase in which many units overlap (`--cpu-count`, one started every few ms,
 * a bounded number at once), so the run is short and the idle CPU subtracted from it (Redis's own
 * timers, which on a loaded VM are as large as the units) is small next to what the units cost.
 * Long calls, tasks and asks are started far enough apart that their in-flight entries are not
 * shared in one batch (that would cost less than one call alone).
 *
 * Writes the "## Scale: Redis per unit of work" section of docs/benchmarks.md (not with
 * `--no-write`). Options: `--count N` (40 of each), `--cpu-count N` (200 of each, session
 * requests 10 ×), `--idle S` (20), `--no-write`.
 */
import { createConnection } from "node:net";
import { parseArgs } from "node:util";

import {
  answer,
  isRequest,
  isResponseTo,
  openCall,
  openSession,
  sessionHeaders,
} from "../test/asking/stream.js";
import { type CliProcess, MCP_HEADERS, rpc, startCli } from "../test/cli/cli-process.js";
import { startRedisServer } from "../test/helpers/redis-server.js";
import { loadAverage, machineLine } from "./lib/machine.js";
import { BENCHMARKS_DOC, writeSection } from "./lib/markdown-section.js";

const { values: flags } = parseArgs({
  options: {
    count: { type: "string", default: "40" },
    "cpu-count": { type: "string", default: "200" },
    idle: { type: "string", default: "20" },
    "no-write": { type: "boolean", default: false },
  },
  strict: true,
});
const COUNT = Number(flags.count);
const CPU_COUNT = Number(flags["cpu-count"]);
const IDLE_S = Number(flags.idle);

/** One Redis command, its reply as text (RESP parsed just enough for INFO and COMMAND-less use). */
function redisCommand(port: number, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
      const bulk = /^\$(\d+)\r\n/.exec(text);
      if (bulk !== null && Buffer.byteLength(text) >= bulk[0].length + Number(bulk[1])) {
        socket.destroy();
        resolve(text.slice(bulk[0].length));
      } else if (/^[+:-].*\r\n/.test(text)) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on("error", reject);
    socket.write(
      `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join("")}`,
    );
  });
}

interface Snapshot {
  /** Calls per command. */
  readonly calls: Map<string, number>;
  /** used_cpu_sys + used_cpu_user, seconds. */
  readonly cpu: number;
  readonly at: number;
}

async function snapshot(port: number): Promise<Snapshot> {
  const stats = await redisCommand(port, ["INFO", "commandstats"]);
  const cpu = await redisCommand(port, ["INFO", "cpu"]);
  const calls = new Map<string, number>();
  for (const m of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    calls.set(m[1] as string, Number(m[2]));
  }
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(cpu)?.[1] ?? 0);
  return { calls, cpu: field("used_cpu_sys") + field("used_cpu_user"), at: Date.now() };
}

interface Delta {
  readonly calls: Map<string, number>;
  readonly total: number;
  readonly cpuMs: number;
  readonly seconds: number;
}

function delta(a: Snapshot, b: Snapshot): Delta {
  const calls = new Map<string, number>();
  for (const [k, v] of b.calls) {
    const d = v - (a.calls.get(k) ?? 0);
    if (d > 0 && k !== "info") calls.set(k, d);
  }
  return {
    calls,
    total: [...calls.values()].reduce((s, v) => s + v, 0),
    cpuMs: (b.cpu - a.cpu) * 1_000,
    seconds: (b.at - a.at) / 1_000,
  };
}

/** Per unit: a measured delta minus the idle rate over the same time, divided by `count`. */
function perUnit(d: Delta, idle: Delta, count: number) {
  const scale = d.seconds / idle.seconds;
  const calls = new Map<string, number>();
  for (const [k, v] of d.calls) {
    const net = (v - (idle.calls.get(k) ?? 0) * scale) / count;
    if (net > 0.05) calls.set(k, net);
  }
  return {
    calls,
    total: (d.total - idle.total * scale) / count,
    cpuUs: ((d.cpuMs - idle.cpuMs * scale) / count) * 1_000,
  };
}

/**
 * Runs `n` units, one started every `gapMs`, at most `inFlight` at once; rejects on the first
 * failure.
 */
async function paced(
  n: number,
  gapMs: number,
  inFlight: number,
  run: () => Promise<void>,
): Promise<void> {
  const running = new Set<Promise<void>>();
  for (let i = 0; i < n; i++) {
    while (running.size >= inFlight) await Promise.race(running);
    const p: Promise<void> = run().finally(() => running.delete(p));
    running.add(p);
    if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  await Promise.all(running);
}

const fmt = (n: number, d = 1): string =>
  n.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });

let nextId = 0;
const call = (url: string, method: string, params: Record<string, unknown>) =>
  rpc(url, { id: `s${nextId++}`, method, params }, { ...MCP_HEADERS });

async function sessionCall(a: string, session: string): Promise<void> {
  const r = await rpc(
    a,
    {
      id: `s${nextId++}`,
      method: "tools/call",
      params: { name: "echo", arguments: { text: "x" } },
    },
    { ...MCP_HEADERS, ...sessionHeaders(session) },
  );
  if (r.status !== 200 || JSON.stringify(r.message).includes('"error"')) {
    throw new Error(`session call answered ${r.status} ${JSON.stringify(r.message)}`);
  }
}

async function longCall(a: string): Promise<void> {
  const r = await call(a, "tools/call", { name: "sleep", arguments: { ms: 300 } });
  if (r.status !== 200 || JSON.stringify(r.message).includes('"error"')) {
    throw new Error(`long call answered ${r.status} ${JSON.stringify(r.message)}`);
  }
}

async function task(a: string, b: string): Promise<void> {
  const created = await call(a, "tools/call", {
    name: "sleep",
    arguments: { ms: 200 },
    task: { ttl: 60_000 },
  });
  const id = (created.message?.result as { task?: { taskId: string } } | undefined)?.task?.taskId;
  if (id === undefined) throw new Error(`task not created: ${JSON.stringify(created.message)}`);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const got = await call(b, "tasks/get", { taskId: id });
    const status = (got.message?.result as { status?: string } | undefined)?.status;
    if (status === "completed") break;
    if (status !== "working") throw new Error(`task ${id}: ${JSON.stringify(got.message)}`);
  }
  const result = await call(b, "tasks/result", { taskId: id });
  if (!JSON.stringify(result.message).includes("slept 200 ms")) {
    throw new Error(`tasks/result: ${JSON.stringify(result.message)}`);
  }
}

async function ask(a: string, b: string, session: string): Promise<void> {
  const id = `q${nextId++}`;
  const headers = sessionHeaders(session);
  const open = await openCall(
    a,
    {
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "confirm", arguments: { action: "bench" } },
    },
    headers,
  );
  const asked = await open.next(isRequest("elicitation/create"), 10_000);
  const posted = await answer(
    b,
    asked.id,
    { result: { action: "accept", content: { confirm: true } } },
    headers,
  );
  if (posted.status !== 202) throw new Error(`answer POST answered ${posted.status}`);
  const done = await open.next(isResponseTo(id), 10_000);
  if (done.result?.content?.[0]?.text !== "Done: bench") {
    throw new Error(`confirm answered ${JSON.stringify(done)}`);
  }
  await open.ended;
}

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const started = Date.now();
  const redis = await startRedisServer();
  const nodes: CliProcess[] = [];
  try {
    nodes.push(
      ...(await Promise.all(
        [0, 1].map(() => startCli(["serve", "--sessions", "--port", "0", "--redis", redis.url])),
      )),
    );
    const [a, b] = nodes.map((n) => n.url) as [string, string];
    const session = await openSession(a, { elicitation: {} });
    // Warm-up: connections, scripts loaded (SCRIPT LOAD / EVALSHA), JIT.
    for (let i = 0; i < 3; i++) {
      await longCall(a);
      await task(a, b);
      await ask(a, b, session);
    }
    const i0 = await snapshot(redis.port);
    await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1_000));
    const idle = delta(i0, await snapshot(redis.port));
    const measured: Record<string, ReturnType<typeof perUnit>> = {};
    const cpuOf: Record<string, number> = {};
    // Each unit, its pacing in the CPU phase: ms between starts, most at once, how many.
    const units: [string, () => Promise<void>, number, number, number][] = [
      ["long call (2025-11-25 `tools/call sleep` 300 ms)", () => longCall(a), 10, 64, CPU_COUNT],
      [
        "task (create on A, `tasks/get` polls and `tasks/result` on B)",
        () => task(a, b),
        15,
        64,
        // Under the bucket's quota of 100 tasks with those run before: a create beyond it would
        // also remove the bucket's oldest finished task, which the counts above do not include.
        Math.min(CPU_COUNT, 50),
      ],
      [
        "ask (`elicitation/create` on A, answer POSTed to B)",
        () => ask(a, b, session),
        10,
        16,
        CPU_COUNT,
      ],
      [
        "short call in a session (2025-11-25 `tools/call echo` with `Mcp-Session-Id`)",
        () => sessionCall(a, session),
        0,
        8,
        CPU_COUNT * 10,
      ],
    ];
    for (const [label, run, gapMs, inFlight, cpuCount] of units) {
      const s0 = await snapshot(redis.port);
      for (let i = 0; i < COUNT; i++) await run();
      const d = delta(s0, await snapshot(redis.port));
      measured[label] = perUnit(d, idle, COUNT);
      const c0 = await snapshot(redis.port);
      await paced(cpuCount, gapMs, inFlight, run);
      cpuOf[label] = perUnit(delta(c0, await snapshot(redis.port)), idle, cpuCount).cpuUs;
      console.error(
        label,
        fmt(measured[label].total),
        "commands",
        fmt(measured[label].cpuUs),
        "µs one at a time,",
        fmt(cpuOf[label] ?? 0),
        "µs paced",
      );
    }
    const idleRate = idle.total / idle.seconds / 2;
    const idleCpu = (idle.cpuMs / idle.seconds / 2) * 1_000;
    const rows = Object.entries(measured).map(
      ([label, m]) =>
        `| ${label} | ${fmt(m.total)} | ${[...m.calls.entries()]
          .sort((x, y) => y[1] - x[1])
          .map(([k, v]) => `${k} ${fmt(v)}`)
          .join(", ")} | ${fmt(cpuOf[label] ?? 0, 0)} |`,
    );
    const idleCalls = [...idle.calls.entries()]
      .sort((x, y) => y[1] - x[1])
      .map(([k, v]) => `${k} ${fmt(v / idle.seconds / 2, 2)}`)
      .join(", ");
    const seconds = Math.round((Date.now() - started) / 1_000);
    const body = `Redis commands and Redis CPU per unit of work on two \`conduit-mcp serve --sessions --redis\`
nodes (the CLI's demo tools, through tsx) sharing one private \`redis-server\` (loopback,
persistence off). Commands: \`INFO commandstats\` before and after ${COUNT} units of each kind,
one at a time, minus the nodes' idle rate over the same time (measured over ${IDLE_S} s with
nothing running), divided by ${COUNT}; exact. Redis CPU: \`INFO cpu\` (\`used_cpu_sys\` +
\`used_cpu_user\`) over a second run of ${CPU_COUNT} units of each kind (${Math.min(CPU_COUNT, 50)} tasks, under their
bucket's quota; ${CPU_COUNT * 10} session requests) that overlap (long calls, tasks and asks started 10-15 ms apart, so their in-flight
entries are not shared in one batch; session requests 8 at a time), minus the idle rate, divided
by the units: the run is short, so the idle CPU subtracted (Redis's own timers) stays small next
to the units'. Read it as this loaded VM's figure, within some tens of percent.

| unit | Redis commands per unit | by command | Redis CPU µs per unit |
| --- | ---: | --- | ---: |
${rows.join("\n")}
| idle, per node and second | ${fmt(idleRate, 2)} | ${idleCalls} | ${fmt(idleCpu, 0)} per s |

The model built on these figures: [Redis, "How many nodes one Redis carries"](redis.md#how-many-nodes-one-redis-carries).

- Command: \`npm run bench:scale:redis\` (\`node --import tsx bench/scale-redis.ts\`), ${seconds} s
- Date: ${new Date().toISOString().slice(0, 10)}; machine: ${machineLine()}
- Load average (1 / 5 / 15 min): ${loadBefore} before, ${loadAverage()} after`;
    console.log(body);
    if (!flags["no-write"]) writeSection(BENCHMARKS_DOC, "Scale: Redis per unit of work", body);
  } finally {
    await Promise.all(nodes.map((n) => n.kill()));
    await redis.stop();
  }
}

await main();
