/**
 * `npm run bench:scale:inflight`: 10 000 concurrent `tools/call sleep` held open on one node, in
 * each era (2025-11-25 upgraded to an SSE stream by a progress notification; 2026-07-28 a JSON
 * exchange), from 400 loopback addresses (25 calls each: distinct tenants, each within the default
 * per-scope bounds). Server pinned to CPU 1 (bench/lib/scale-server.ts, compiled build), the
 * calls made by a raw-socket client process pinned to CPU 0 (bench/lib/raw-client.ts).
 *
 * - Heap and RSS per call: after full GCs with the calls held, minus before, over the count; for
 *   conduit-mcp, bare `node:http` holding the same requests, and bare `node:http` also holding the
 *   sleep tool's own objects. conduit-mcp's own share = conduit-mcp − the latter.
 * - Event-loop delay p99 (`monitorEventLoopDelay`, 5 ms resolution) over `--idle` seconds while
 *   all calls are held.
 * - Cancel → abort for `--cancels` random calls while the others stay held: from the client
 *   sending the 2025 `notifications/cancelled` POST (same address, fresh connection) or destroying
 *   the 2026 call's socket, to the tool's `ctx.signal` aborting (both clocks
 *   `performance.timeOrigin + performance.now()`); for 2025 also from the cancel POST's arrival.
 *
 * Writes the "## Scale: 10 000 calls in flight" section of docs/benchmarks.md (not with
 * `--no-write`). Options: `--calls N` (10000), `--addresses N` (400), `--rounds N` (2),
 * `--cancels N` (60), `--idle S` (10), `--no-write`, `--snapshot` (also V8 heap snapshots at rest and
 * with the calls held, per target and round, summed by kind (bench/lib/heap-snapshot-diff.ts);
 * printed per call for each target and, by kind, conduit-mcp's rows minus bare + the tool's:
 * where the own share lies; the files are deleted), `--holders` (as `--snapshot`, and arrays,
 * strings and numbers named by what holds them, `array ← Map.table ← ConnectionBounds.tracked`:
 * which table grows with the calls). On a shared machine, run it while nothing
 * else heavy runs: the memory figures hold under load, the latency figures do not.
 */
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { buildDist } from "./lib/bench-targets.js";
import { type DiffRow, diffSnapshots, formatDiff } from "./lib/heap-snapshot-diff.js";
import { loadAverage, machineLine } from "./lib/machine.js";
import { BENCHMARKS_DOC, writeSection } from "./lib/markdown-section.js";
import {
  type Mem,
  type RawClient,
  type ScaleServer,
  tenants,
  waitFor,
  withServer,
} from "./lib/scale-harness.js";
import { median, percentile } from "./lib/stats.js";

const { values: flags } = parseArgs({
  options: {
    calls: { type: "string", default: "10000" },
    addresses: { type: "string", default: "400" },
    rounds: { type: "string", default: "2" },
    cancels: { type: "string", default: "60" },
    idle: { type: "string", default: "10" },
    "no-write": { type: "boolean", default: false },
    snapshot: { type: "boolean", default: false },
    holders: { type: "boolean", default: false },
  },
  strict: true,
});
const CALLS = Number(flags.calls);
const ADDRESSES = tenants(Number(flags.addresses));
const ROUNDS = Number(flags.rounds);
const CANCELS = Number(flags.cancels);
const IDLE_S = Number(flags.idle);
/** With `--snapshot`: what one held call adds, by kind, per `${era} ${target}` (last round). */
const snapshotRows = new Map<string, DiffRow[]>();

/**
 * The limits, stated: per tenant the defaults (25 calls per address is within
 * `maxConcurrentRequestsPerScope` 64, `maxOpenStreamsPerScope` 32 and `maxConnectionsPerBucket`
 * 128); the global bounds above the 10 000 held calls plus the cancels' own connections, so the
 * global bound's eviction (it cancels the oldest call of the largest scope) plays no part.
 */
const LIMITS = {
  maxConcurrentRequestsPerScope: 64,
  maxOpenStreamsPerScope: 32,
  maxConnectionsPerBucket: 128,
  maxConcurrentRequests: CALLS + 1_000,
  maxConnections: CALLS + 1_000,
};
const ERAS = ["2025", "2026"] as const;
const TARGETS = ["bare", "bare-tool", "conduit"] as const;
const SLEEP_MS = 3_600_000;

type Era = (typeof ERAS)[number];
interface Figures {
  heap: number[];
  rss: number[];
  eld: number[];
  eldRest: number[];
  cancel: number[][];
  cancelServer: number[][];
}

const fmt = (n: number, d = 0): string =>
  Number.isFinite(n)
    ? n.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d })
    : "n/a";

const stats = (s: ScaleServer) => s.ctl<{ inFlight: number }>("/stats");

async function held(server: ScaleServer, client: RawClient, era: Era, count: number) {
  await client.send({ op: "hold", count, era, addresses: ADDRESSES, sleepMs: SLEEP_MS });
  await waitFor(
    async () => ((await stats(server)).inFlight >= count ? true : undefined),
    `${count} ${era} calls in flight`,
  );
}

async function drain(server: ScaleServer, client: RawClient): Promise<void> {
  await client.send({ op: "closeAll" });
  await waitFor(async () => ((await stats(server)).inFlight === 0 ? true : undefined), "drain");
}

/** One round of one target in one era: memory, and for conduit-mcp ELD and cancels. */
async function round(target: string, era: Era, out: Figures): Promise<void> {
  await withServer(
    { target, options: target === "conduit" ? { limits: LIMITS } : {} },
    async (server, client) => {
      // Warm-up: lazily built state goes into the baseline, not the per-call figure.
      await held(server, client, era, 200);
      await drain(server, client);
      if (target === "conduit") {
        // The same server at rest: the reference for the figure with every call held.
        await server.ctl("/eld/reset");
        await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1_000));
        out.eldRest.push((await server.ctl<{ p99: number }>("/eld")).p99);
      }
      const before = await server.ctl<Mem>("/mem");
      const snapBefore =
        flags.snapshot || flags.holders ? await server.ctl<{ path: string }>("/snapshot") : null;
      await held(server, client, era, CALLS);
      const during = await server.ctl<Mem>("/mem");
      if (snapBefore !== null) {
        const snapDuring = await server.ctl<{ path: string }>("/snapshot");
        snapshotRows.set(
          `${era} ${target}`,
          diffSnapshots(snapBefore.path, snapDuring.path, CALLS, { holders: flags.holders }),
        );
        rmSync(snapBefore.path, { force: true });
        rmSync(snapDuring.path, { force: true });
      }
      out.heap.push((during.heapUsed - before.heapUsed) / CALLS);
      out.rss.push((during.rss - before.rss) / CALLS);
      console.error(
        `${era} ${target}: heap ${fmt(out.heap.at(-1) as number)} B, RSS ${fmt(out.rss.at(-1) as number)} B per call`,
      );
      if (target === "conduit") {
        await server.ctl("/eld/reset");
        await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1_000));
        const eld = await server.ctl<{ p99: number }>("/eld");
        out.eld.push(eld.p99);
        const picks = new Set<number>();
        while (picks.size < Math.min(CANCELS, CALLS)) picks.add(Math.floor(Math.random() * CALLS));
        const e2e: number[] = [];
        const serverSide: number[] = [];
        for (const index of picks) {
          const key = `k${index + 1}`;
          await server.ctl(`/watch?key=${key}`);
          const sent = await client.send<{ at: number; key: string }>({ op: "cancel", index });
          const got = await waitFor(
            async () => {
              const a = await server.ctl<{ at: number | null; cancelArrived: number | null }>(
                `/aborted?key=${key}`,
              );
              return a.at === null ? undefined : a;
            },
            `abort of ${key}`,
            5_000,
            2,
          );
          const abortedAt = got.at as number;
          e2e.push(abortedAt - sent.at);
          if (got.cancelArrived !== null) serverSide.push(abortedAt - got.cancelArrived);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        out.cancel.push(e2e);
        out.cancelServer.push(serverSide);
        console.error(
          `${era} cancel → abort: p50 ${fmt(percentile(e2e, 50), 2)} ms, p99 ${fmt(percentile(e2e, 99), 2)} ms; ELD p99 ${fmt(eld.p99, 2)} ms`,
        );
      }
      const status = await client.send<{ ended: number }>({ op: "status" });
      if (status.ended > (target === "conduit" ? picks(era) : 0)) {
        throw new Error(`${status.ended} held ${era} calls ended early on ${target}`);
      }
      await drain(server, client);
    },
  );
}

/** Calls the cancels themselves end (a 2026 cancel is the disconnect; a 2025 one ends its stream). */
const picks = (_era: Era): number => Math.min(CANCELS, CALLS);

/** Kind by kind, `a` minus `b` (per call), largest first. */
function minusRows(a: readonly DiffRow[], b: readonly DiffRow[]): DiffRow[] {
  const by = new Map<string, DiffRow>();
  for (const row of a) by.set(row.kind, { ...row });
  for (const row of b) {
    const x = by.get(row.kind) ?? { kind: row.kind, count: 0, bytes: 0 };
    by.set(row.kind, { kind: row.kind, count: x.count - row.count, bytes: x.bytes - row.bytes });
  }
  return [...by.values()]
    .filter((row) => row.count !== 0 || row.bytes !== 0)
    .sort((p, q) => q.bytes - p.bytes);
}

function printSnapshots(): void {
  for (const era of ERAS) {
    for (const t of TARGETS) {
      const rows = snapshotRows.get(`${era} ${t}`);
      if (rows === undefined) continue;
      console.error(`\nWhat one held ${era} call adds, ${t} (heap snapshots, ${fmt(CALLS)} held):`);
      console.error(formatDiff(rows, 30));
    }
    const c = snapshotRows.get(`${era} conduit`);
    const b = snapshotRows.get(`${era} bare-tool`);
    if (c === undefined || b === undefined) continue;
    const own = minusRows(c, b);
    console.error(`\n${era}: conduit-mcp minus bare + the tool's objects, by kind (own share):`);
    console.error(formatDiff(own, 50));
    console.error(`\n${era}: kinds bare + the tool's objects holds more of than conduit-mcp:`);
    console.error(
      formatDiff(
        [...own].reverse().filter((row) => row.bytes < 0),
        20,
      ),
    );
  }
}

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const started = Date.now();
  buildDist(process.cwd());
  const figures = new Map<string, Figures>();
  for (const era of ERAS) {
    for (const target of TARGETS) {
      figures.set(`${era} ${target}`, {
        heap: [],
        rss: [],
        eld: [],
        eldRest: [],
        cancel: [],
        cancelServer: [],
      });
    }
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const era of ERAS) {
      // Rotating order: no target always runs first (or last) in a round.
      const order = r % 2 === 0 ? TARGETS : [...TARGETS].reverse();
      for (const target of order) {
        await round(target, era, figures.get(`${era} ${target}`) as Figures);
      }
    }
  }
  const loadAfter = loadAverage();
  if (flags.snapshot || flags.holders) printSnapshots();
  const rows: string[] = [];
  const verdicts: string[] = [];
  const med = (v: number[]) => (v.length === 0 ? Number.NaN : median(v));
  for (const era of ERAS) {
    const f = (t: string) => figures.get(`${era} ${t}`) as Figures;
    const c = f("conduit");
    const ownHeap = med(c.heap) - med(f("bare-tool").heap);
    const ownRss = med(c.rss) - med(f("bare-tool").rss);
    const label = era === "2025" ? "2025-11-25 (SSE stream)" : "2026-07-28 (JSON)";
    for (const t of TARGETS) {
      const x = f(t);
      rows.push(
        `| ${label} | ${t === "bare" ? "bare node:http (floor)" : t === "bare-tool" ? "bare node:http + the sleep tool's objects" : "conduit-mcp"} | ${fmt(med(x.heap))} | ${x.heap.map((v) => fmt(v)).join(" / ")} | ${fmt(med(x.rss))} | ${x.rss.map((v) => fmt(v)).join(" / ")} |`,
      );
    }
    const p99s = c.cancel.map((v) => percentile(v, 99));
    const p50s = c.cancel.map((v) => percentile(v, 50));
    const all = c.cancel.flat();
    const srv = c.cancelServer.flat();
    verdicts.push(
      `| ${label} | ${fmt(ownHeap)} B (≤ 1,024 B: ${ownHeap <= 1_024 ? "met" : "**not met**"}) | ${fmt(ownRss)} B (≤ 2,048 B: ${ownRss <= 2_048 ? "met" : "**not met**"}) | ${fmt(med(c.eld), 2)} (${c.eld.map((v) => fmt(v, 2)).join(" / ")}) | ${fmt(med(c.eldRest), 2)} | ${fmt(med(p50s), 2)} | ${fmt(med(p99s), 2)} (${p99s.map((v) => fmt(v, 2)).join(" / ")}; < 10 ms: ${med(p99s) < 10 ? "met" : "**not met**"}) | ${all.length === 0 ? "n/a" : fmt(Math.max(...all), 2)} | ${srv.length === 0 ? "—" : `${fmt(percentile(srv, 50), 2)} / ${fmt(percentile(srv, 99), 2)}`} |`,
    );
  }
  const seconds = Math.round((Date.now() - started) / 1_000);
  const body = `${fmt(CALLS)} concurrent \`tools/call sleep\` held open on one node, each on its own
connection, from ${ADDRESSES.length} loopback addresses (127.0.1.1 upwards; ${fmt(CALLS / ADDRESSES.length)} calls each, so every
tenant stays within the default per-scope bounds). 2025-11-25 calls carry a progress token and
the tool sends one progress notification, so each is an SSE stream (with its keep-alive timer);
2026-07-28 calls are JSON exchanges. The server (bench/lib/scale-server.ts, the compiled build)
runs pinned to CPU 1; the calls come from a raw-socket client in its own process pinned to CPU 0
(bench/lib/raw-client.ts: \`node:net\` sockets, no HTTP client library). Limits, set explicitly:
per tenant the defaults (\`maxConcurrentRequestsPerScope\` 64, \`maxOpenStreamsPerScope\` 32,
\`maxConnectionsPerBucket\` 128), globally \`maxConcurrentRequests\` and \`maxConnections\`
${fmt(LIMITS.maxConnections)} (above the held calls, so the global bound's eviction plays no part).

**Memory**: heap used and RSS after 4 full GCs with all calls held, minus the same after a
warm-up with none held, divided by ${fmt(CALLS)}; a fresh server process per target and round,
${ROUNDS} rounds in rotating order, medians. The floor is bare \`node:http\` reading and parsing
each POST and holding it open (for 2025, the SSE head sent on its own and then one progress
event, as conduit-mcp's stream does); "+ the sleep tool's objects" also holds what the tool holds
in any server (an \`AbortController\` it listens to, a timer, the wait's promise, and the promise
of its \`async\` handler, which awaits once and returns the wait's). conduit-mcp's **own share**
is its figure minus that one. Both floors were made like conduit-mcp on 2026-12-04: before,
bare sent its SSE head together with the first event, and node then keeps the head as a rope of
about 20 pieces (about 460 B per call more than the flat string a head sent alone leaves), which
counted as conduit-mcp's saving; and bare + the tool left out the handler's own promise (about
110 B), which counted as conduit-mcp's cost.

| era | server | heap B per call (median) | rounds | RSS B per call (median) | rounds |
| --- | --- | ---: | --- | ---: | --- |
${rows.join("\n")}

**Against the targets** (own share: conduit-mcp minus bare node:http with the tool's objects).
Event-loop delay: \`monitorEventLoopDelay\` (5 ms resolution) over ${IDLE_S} s with every call held,
and over ${IDLE_S} s on the same server at rest before; node's histogram counts the whole interval
between its 5 ms samples, so an idle loop reads about 5 ms and the delay proper is the excess.
Cancel → abort: ${CANCELS} random calls per round cancelled one at a time while the others
stay held, from the client sending the 2025 \`notifications/cancelled\` POST (from the call's
own address, on a fresh connection) or destroying the 2026 call's socket, to the tool's
\`ctx.signal\` aborting in the server (both clocks \`performance.timeOrigin + performance.now()\`);
p50/p99 per round, medians over rounds; "server side" is from the cancel POST's arrival
(node's \`request\` start) to the abort, pooled.

What the own share is made of (\`--holders\`: heap snapshots of 2 000 held calls, summed by
kind, arrays and strings named by what holds them, conduit-mcp's rows minus bare + the tool's):
conduit-mcp's own per-call objects (\`HandlerCall\` 192 B, \`HttpExchange\` 136,
\`LocalRequestHandle\` 88, \`NodeRequest\` 64, \`NodeResponse\` 48, \`ToolInvocation\` 48; on
2026-07-28 also \`FirstRound\` 56, which makes the round and its binding at a first ask); the
handler call's promise and reaction on the tool's (96 B); about 150 B of hash tables that grow
with the calls (the registry's in-flight tables per scope, the keep-alive clock's queue, the
per-bucket socket sets, the request bound's holders per scope, the silent-connection check's
queue, which a connection leaves 10 s after it opened); the call's start time for the metrics
(a heap number, 16 B, only with an observer) and on 2026-07-28 its flow's expiry (16 B); node's
peer address, which the bounds read and bare never does.
Cut so far (per held call): the per-connection timer, callback and \`close\` listener of the
silent-connection check (one timer serves every connection; about 400 B); on 2026-07-28 calls that
never ask, the \`InputRound\`'s Map and object, and since 2026-12-05 the \`CallBinding\` (64 B);
on node:http, every call's and GET stream's keep-alive waits in one clock per interval instead of
a timer each (about 170 B; fetch doors keep a timer each: on Cloudflare's workerd a timer belongs
to the request that armed it, so a clock shared across requests never reached the others'
streams); the request core's context (152 B) is no longer kept by a running call (the exchange
is the source of \`ctx.request\`); a handler call gives its exchange's slots back itself when it
ends, so the core keeps no reaction, promise and two closures on the dispatch (about 250 B); the
call's progress and log-threshold fields hold no heap box (16 B each); on node:http the core's
promise settles once the call runs (the door learns the answer's end from node's response,
\`ResponseTarget.awaitsAnswer\`), so neither the \`POST\` step's promise adopting the call's nor the
door's \`.catch\` with its promise and closure is kept (about 260-300 B; the fetch doors still
wait for the answer, which closes their \`Response\`); the connection bounds listen for a socket's
\`close\` with one module function, not a closure wrapped by \`once\` per connection (about 220 B),
and in place of node's own listeners, which they call first, so a socket keeps node's count of
\`close\` listeners and V8 does not grow node's two-slot listener array to 19 slots when a
response is attached (about 140 B); their record lives on the socket, not in a Map; anonymous
scopes are remembered per address, not per connection; the per-call objects' flags and state are
packed into one integer each, shared options are one object per server, and what node's request
and the tool already hold is read from them, not copied (about 230 B in all).

Held calls are not free of timers: each 2025 stream writes a keep-alive comment every
\`timeouts.keepAliveMs\` (15 s), and each 2026 call still waiting after 15 s becomes a stream
with a first comment (on node:http one timer ticks each at its own deadline). Calls opened
within a few seconds, as here, come due together: about
10 000 writes in a burst, which shows as event-loop delay in the rounds whose window holds one,
and a cancel that lands in a burst waits for it (the likely cause of a round whose p99 is far
above the others'). Clients that arrive spread over time spread these writes too.

| era | own heap per call | own RSS per call | ELD p99 ms while held (rounds) | ELD p99 ms at rest | cancel → abort p50 ms | cancel → abort p99 ms (rounds) | max ms | server side p50 / p99 ms |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
${verdicts.join("\n")}

- Command: \`npm run bench:scale:inflight\` (\`node --import tsx bench/scale-inflight.ts\`), ${seconds} s
- Date: ${new Date().toISOString().slice(0, 10)}; machine: ${machineLine()}
- Load average (1 / 5 / 15 min): ${loadBefore} before, ${loadAfter} after, on 2 CPUs shared with other work: memory figures hold under load, latency figures move with it`;
  console.log(body);
  if (!flags["no-write"]) writeSection(BENCHMARKS_DOC, "Scale: 10 000 calls in flight", body);
}

await main();
