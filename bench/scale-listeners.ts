/**
 * `npm run bench:scale:listeners`: 10 000 change listeners on one node across 1 000 tenants
 * (loopback addresses 127.0.1.1 upwards, 10 each), in each era: 2026-07-28
 * `subscriptions/listen` streams naming one resource, and 2025-11-25 sessions that subscribed to
 * it (`resources/subscribe`) and hold their GET stream. Server pinned to CPU 1, the raw-socket
 * client process (bench/lib/raw-client.ts) to CPU 0.
 *
 * - Memory per listener: heap used and RSS after full GCs with every listener open, minus before,
 *   over the count (for 2025 the session records are in it: a GET stream needs its session).
 * - Fan-out: `server.resources.updated(uri)` called once (the control route records when), the
 *   client records when each stream received its `notifications/resources/updated`; latency per
 *   listener = received − called (both clocks `performance.timeOrigin + performance.now()`);
 *   p50 / p99 / max over all listeners, `--fanouts` fan-outs per round, medians.
 *
 * Writes the "## Scale: 10 000 listeners" section of docs/benchmarks.md (not with `--no-write`).
 * Options: `--listeners N` (10000), `--tenants N` (1000), `--rounds N` (2), `--fanouts N` (5),
 * `--no-write`.
 */
import { parseArgs } from "node:util";

import { buildDist } from "./lib/bench-targets.js";
import { loadAverage, machineLine } from "./lib/machine.js";
import { BENCHMARKS_DOC, writeSection } from "./lib/markdown-section.js";
import { type Mem, tenants, waitFor, withServer } from "./lib/scale-harness.js";
import { median, percentile } from "./lib/stats.js";

const { values: flags } = parseArgs({
  options: {
    listeners: { type: "string", default: "10000" },
    tenants: { type: "string", default: "1000" },
    rounds: { type: "string", default: "2" },
    fanouts: { type: "string", default: "5" },
    "no-write": { type: "boolean", default: false },
  },
  strict: true,
});
const LISTENERS = Number(flags.listeners);
const ADDRESSES = tenants(Number(flags.tenants));
const ROUNDS = Number(flags.rounds);
const FANOUTS = Number(flags.fanouts);
const PER_TENANT = Math.ceil(LISTENERS / ADDRESSES.length);

/**
 * The limits, stated. Per tenant: `maxListenersPerScope` raised from its default 8 to the
 * benchmark's listeners per tenant (10); everything else per tenant at its default (10 sessions,
 * 10 subscriptions and 10 streams per address are within 64, 256 and 32). Globally
 * `maxListeners` (default 10 000) and the connection and request bounds just above the count,
 * so no listener is evicted by a global bound while measured.
 */
const OPTIONS = {
  limits: {
    maxListenersPerScope: Math.max(8, PER_TENANT),
    maxListeners: LISTENERS + 1_000,
    maxConcurrentRequestsPerScope: 64,
    maxOpenStreamsPerScope: 32,
    maxConnectionsPerBucket: 128,
    maxConcurrentRequests: LISTENERS + 1_000,
    maxConnections: LISTENERS + 1_000,
  },
  sessions: { maxSessions: 100_000, maxSessionsPerScope: 64, maxSubscriptions: 100_000 },
};

type Era = "2025" | "2026";
interface Figures {
  heap: number[];
  rss: number[];
  p50: number[];
  p99: number[];
  max: number[];
  open: number[];
}

const fmt = (n: number, d = 0): string =>
  Number.isFinite(n)
    ? n.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d })
    : "n/a";

async function round(era: Era, out: Figures): Promise<void> {
  await withServer({ target: "conduit", options: OPTIONS }, async (server, client) => {
    const before = await server.ctl<Mem>("/mem");
    const opened = Date.now();
    await client.send({ op: "listen", count: LISTENERS, era, addresses: ADDRESSES, width: 200 });
    out.open.push((Date.now() - opened) / 1_000);
    const during = await server.ctl<Mem>("/mem");
    out.heap.push((during.heapUsed - before.heapUsed) / LISTENERS);
    out.rss.push((during.rss - before.rss) / LISTENERS);
    for (let f = 0; f < FANOUTS; f++) {
      await client.send({ op: "arm" });
      const { at } = await server.ctl<{ at: number }>("/updated");
      const got = await waitFor(
        async () => {
          const d = await client.send<{ at: (number | null)[]; ended: number }>({
            op: "deliveries",
          });
          if (d.ended > 0) throw new Error(`${d.ended} ${era} streams ended`);
          return d.at.every((t) => t !== null) ? (d.at as number[]) : undefined;
        },
        `${era} fan-out to ${LISTENERS}`,
        30_000,
        50,
      );
      const lat = got.map((t) => t - at);
      out.p50.push(percentile(lat, 50));
      out.p99.push(percentile(lat, 99));
      out.max.push(Math.max(...lat));
      console.error(
        `${era} fan-out ${f + 1}: p50 ${fmt(percentile(lat, 50), 1)} ms, p99 ${fmt(percentile(lat, 99), 1)} ms, max ${fmt(Math.max(...lat), 1)} ms`,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    console.error(
      `${era}: heap ${fmt(out.heap.at(-1) as number)} B, RSS ${fmt(out.rss.at(-1) as number)} B per listener`,
    );
    await client.send({ op: "closeAll" });
  });
}

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const started = Date.now();
  buildDist(process.cwd());
  const figures: Record<Era, Figures> = {
    "2025": { heap: [], rss: [], p50: [], p99: [], max: [], open: [] },
    "2026": { heap: [], rss: [], p50: [], p99: [], max: [], open: [] },
  };
  for (let r = 0; r < ROUNDS; r++) {
    const order: Era[] = r % 2 === 0 ? ["2026", "2025"] : ["2025", "2026"];
    for (const era of order) await round(era, figures[era]);
  }
  const rows = (["2026", "2025"] as const).map((era) => {
    const f = figures[era];
    return `| ${era === "2026" ? "2026-07-28 `subscriptions/listen`" : "2025-11-25 session + `resources/subscribe` + GET stream"} | ${fmt(median(f.heap))} | ${fmt(median(f.rss))} | ${fmt(median(f.p50), 1)} | ${fmt(median(f.p99), 1)} (${f.p99.map((v) => fmt(v, 1)).join(" / ")}) | ${fmt(Math.max(...f.max), 1)} | ${fmt(median(f.open), 1)} |`;
  });
  const seconds = Math.round((Date.now() - started) / 1_000);
  const body = `${fmt(LISTENERS)} change listeners open on one node, from ${fmt(ADDRESSES.length)} tenants (loopback
addresses 127.0.1.1 upwards, ${PER_TENANT} listeners each), every one naming the resource
\`bench://watched\`; one era per server process. 2026-07-28: a \`subscriptions/listen\` stream
with \`resourceSubscriptions\` (acknowledged before it counts as open). 2025-11-25: \`initialize\`
(sessions on), \`notifications/initialized\`, \`resources/subscribe\`, then the session's GET
stream. Server (bench/lib/scale-server.ts, compiled build) pinned to CPU 1; the streams are held
by the raw-socket client process (bench/lib/raw-client.ts) pinned to CPU 0. Limits, set
explicitly: \`limits.maxListenersPerScope\` ${OPTIONS.limits.maxListenersPerScope} (default 8: ten
listeners per tenant need it), every other per-tenant bound at its default, the global bounds
(\`maxListeners\`, \`maxConnections\`, \`maxConcurrentRequests\`) at ${fmt(LISTENERS + 1_000)}.

**Fan-out**: one \`server.resources.updated("bench://watched")\`; latency per listener from that
call (server clock) to the client process reading the stream's
\`notifications/resources/updated\` (client clock; both \`performance.timeOrigin + performance.now()\`),
so it includes the server writing ${fmt(LISTENERS)} streams and the one client process reading
them in turn. ${FANOUTS} fan-outs per round, ${ROUNDS} rounds (eras in rotating order); medians of
the per-fan-out percentiles. **Memory**: heap used and RSS after full GCs with every listener
open, minus before, per listener (the 2025 figure includes the session record, its subscription
and its GET stream: a listener needs all three).

| listener | heap B per listener | RSS B per listener | fan-out p50 ms | fan-out p99 ms (all fan-outs) | max ms | s to open all |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${rows.join("\n")}

- Command: \`npm run bench:scale:listeners\` (\`node --import tsx bench/scale-listeners.ts\`), ${seconds} s
- Date: ${new Date().toISOString().slice(0, 10)}; machine: ${machineLine()}
- Load average (1 / 5 / 15 min): ${loadBefore} before, ${loadAverage()} after, on 2 CPUs shared with other work`;
  console.log(body);
  if (!flags["no-write"]) writeSection(BENCHMARKS_DOC, "Scale: 10 000 listeners", body);
}

await main();
