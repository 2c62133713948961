/**
 * `npm run bench:scale:sessions`: 100 000 2025-11-25 sessions on one node (sessions on), with the
 * memory session store and with `RedisSessionStore` (every store on a private `redis-server`,
 * `createRedisBackends`). 2 000 tenants (loopback addresses 127.0.1.1 upwards), 50 sessions each
 * (within the default `maxSessionsPerScope` 64), made by `initialize` POSTs from the raw-socket
 * client process (bench/lib/raw-client.ts, CPU 0; one keep-alive connection per address, 100
 * addresses at a time) against the server (bench/lib/scale-server.ts, CPU 1).
 *
 * - Memory per session: server heap used and RSS after full GCs, minus before, per session; with
 *   Redis also Redis's `used_memory` per session.
 * - `initialize` rate: sessions per second up to the cap (all answered 200, checked).
 * - Eviction at the cap: `--over` more `initialize` from fresh addresses once `maxSessions` is
 *   reached (each evicts the least recently used session of the scope holding the most): their
 *   rate next to the rate below the cap, and the count after (still the cap).
 *
 * Writes the "## Scale: 100 000 sessions" section of docs/benchmarks.md (not with `--no-write`).
 * Options: `--sessions N` (100000), `--tenants N` (2000), `--over N` (10000), `--no-write`.
 */
import { createConnection } from "node:net";
import { parseArgs } from "node:util";

import { startRedisServer } from "../test/helpers/redis-server.js";
import { buildDist } from "./lib/bench-targets.js";
import { loadAverage, machineLine } from "./lib/machine.js";
import { BENCHMARKS_DOC, writeSection } from "./lib/markdown-section.js";
import { type Mem, tenants, waitFor, withServer } from "./lib/scale-harness.js";

const { values: flags } = parseArgs({
  options: {
    sessions: { type: "string", default: "100000" },
    tenants: { type: "string", default: "2000" },
    over: { type: "string", default: "10000" },
    "no-write": { type: "boolean", default: false },
  },
  strict: true,
});
const SESSIONS = Number(flags.sessions);
const TENANTS = Number(flags.tenants);
const OVER = Number(flags.over);
const CONCURRENCY = 100;

/** The session bounds, stated: every one at its default (the cap is `maxSessions`). */
const SESSION_OPTIONS = {
  maxSessions: SESSIONS,
  maxSessionsPerScope: 64,
  maxSessionBytesPerScope: 262_144,
  maxSessionBytes: 67_108_864,
};

const fmt = (n: number, d = 0): string =>
  Number.isFinite(n)
    ? n.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d })
    : "n/a";

/** `INFO <section>` of a Redis, as fields. */
function redisInfo(port: number, section: string): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
      const header = /^\$(\d+)\r\n/.exec(text);
      if (header !== null && text.length >= header[0].length + Number(header[1])) {
        socket.destroy();
        const out: Record<string, string> = {};
        for (const line of text.slice(header[0].length).split("\r\n")) {
          const colon = line.indexOf(":");
          if (colon > 0) out[line.slice(0, colon)] = line.slice(colon + 1);
        }
        resolve(out);
      }
    });
    socket.on("error", reject);
    socket.write(`INFO ${section}\r\n`);
  });
}

interface Row {
  store: string;
  heap: number;
  rss: number;
  redisBytes: number | null;
  rate: number;
  overRate: number;
  after: number;
  statuses: string;
}

async function run(store: "memory" | "redis"): Promise<Row> {
  const redis = store === "redis" ? await startRedisServer() : null;
  try {
    return await withServer(
      {
        target: "conduit",
        options: { sessions: SESSION_OPTIONS, limits: { maxConnections: 20_000 } },
        ...(redis === null ? {} : { redisUrl: redis.url }),
      },
      async (server, client) => {
        const addresses = tenants(TENANTS + Math.ceil(OVER / (SESSIONS / TENANTS)));
        const own = addresses.slice(0, TENANTS);
        const fresh = addresses.slice(TENANTS);
        // Warm-up on the fresh addresses' first one, then gone: code paths compiled.
        const before = await server.ctl<Mem>("/mem");
        const redisBefore =
          redis === null ? 0 : Number((await redisInfo(redis.port, "memory")).used_memory);
        const fill = await client.send<{ seconds: number; statuses: Record<string, number> }>({
          op: "initialize",
          count: SESSIONS,
          addresses: own,
          concurrency: CONCURRENCY,
        });
        const filled = await waitFor(
          async () => {
            const s = await server.ctl<{ sessions: number }>("/stats");
            return s.sessions >= SESSIONS ? s.sessions : undefined;
          },
          "sessions stored",
          30_000,
        ).catch(async () => (await server.ctl<{ sessions: number }>("/stats")).sessions);
        const during = await server.ctl<Mem>("/mem");
        const redisDuring =
          redis === null ? 0 : Number((await redisInfo(redis.port, "memory")).used_memory);
        if ((fill.statuses["200"] ?? 0) !== SESSIONS) {
          throw new Error(`${store}: initialize answers ${JSON.stringify(fill.statuses)}`);
        }
        const over = await client.send<{ seconds: number; statuses: Record<string, number> }>({
          op: "initialize",
          count: OVER,
          addresses: fresh,
          concurrency: CONCURRENCY,
        });
        if ((over.statuses["200"] ?? 0) !== OVER) {
          throw new Error(
            `${store}: initialize at the cap answered ${JSON.stringify(over.statuses)}`,
          );
        }
        const after = (await server.ctl<{ sessions: number }>("/stats")).sessions;
        const row: Row = {
          store: store === "memory" ? "memory store" : "Redis store (`RedisSessionStore`)",
          heap: (during.heapUsed - before.heapUsed) / filled,
          rss: (during.rss - before.rss) / filled,
          redisBytes: redis === null ? null : (redisDuring - redisBefore) / filled,
          rate: SESSIONS / fill.seconds,
          overRate: OVER / over.seconds,
          after,
          statuses: `${fmt(filled)} stored`,
        };
        console.error(JSON.stringify(row));
        return row;
      },
    );
  } finally {
    await redis?.stop();
  }
}

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const started = Date.now();
  buildDist(process.cwd());
  const rows = [await run("memory"), await run("redis")];
  const seconds = Math.round((Date.now() - started) / 1_000);
  const table = rows.map(
    (r) =>
      `| ${r.store} | ${fmt(r.heap)} | ${fmt(r.rss)} | ${r.redisBytes === null ? "—" : fmt(r.redisBytes)} | ${fmt(r.rate)} | ${fmt(r.overRate)} (${fmt(r.overRate / r.rate, 2)}×) | ${fmt(r.after)} |`,
  );
  const body = `${fmt(SESSIONS)} 2025-11-25 sessions on one node (sessions on), made by \`initialize\` POSTs
from ${fmt(TENANTS)} tenants (loopback addresses 127.0.1.1 upwards, ${fmt(SESSIONS / TENANTS)} sessions each) over
one keep-alive connection per address, ${CONCURRENCY} addresses at a time, by the raw-socket client
process (bench/lib/raw-client.ts, CPU 0) against the server (bench/lib/scale-server.ts, compiled
build, CPU 1). Session bounds, set explicitly at their defaults: \`maxSessions\` ${fmt(SESSION_OPTIONS.maxSessions)},
\`maxSessionsPerScope\` 64, \`maxSessionBytesPerScope\` 256 KiB, \`maxSessionBytes\` 64 MiB. With
Redis every store is on one private \`redis-server\` (\`createRedisBackends\`, loopback,
persistence off, not pinned: it shares the CPUs).

- **Memory per session**: the server's heap used and RSS after full GCs with every session
  stored, minus before, per session; Redis's \`used_memory\` likewise.
- **initialize/s**: sessions made per second up to the cap, every answer 200 (checked).
- **At the cap**: ${fmt(OVER)} more \`initialize\` from fresh addresses once \`maxSessions\` is
  reached; each evicts the least recently used session of the scope holding the most. Their
  rate (and its ratio to the rate below the cap), and the sessions held after (the cap).

| store | heap B per session | RSS B per session | Redis B per session | initialize/s | initialize/s at the cap (evicting) | sessions after |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${table.join("\n")}

- Command: \`npm run bench:scale:sessions\` (\`node --import tsx bench/scale-sessions.ts\`), ${seconds} s
- Date: ${new Date().toISOString().slice(0, 10)}; machine: ${machineLine()}
- Load average (1 / 5 / 15 min): ${loadBefore} before, ${loadAverage()} after, on 2 CPUs shared with other work (the rates move with it)`;
  console.log(body);
  if (!flags["no-write"]) writeSection(BENCHMARKS_DOC, "Scale: 100 000 sessions", body);
}

await main();
