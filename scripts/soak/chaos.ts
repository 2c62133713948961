/**
 * The chaos soak (`npm run soak -- --chaos`): a private redis-server and N `conduit-mcp serve
 * --redis` processes under the mixed load of calls.ts from several tenants, while a seeded
 * schedule SIGKILLs nodes (and restarts them on the same port), restarts Redis (it comes back
 * empty) and freezes it (SIGSTOP: a hung Redis). Then, with the load over and every node back,
 * it waits two leases plus the row TTL and checks the Redis key space, the nodes' heaps and a
 * graceful shutdown. Prints a summary; exit code 0 only when every invariant held.
 *
 *   node --expose-gc --import tsx scripts/soak.ts --chaos [--duration 60] [--seed N]
 *     [--nodes 3] [--concurrency 60] [--lease-ms 2000] [--ttl-ms 4000] [--warmup 4]
 *     [--chaos-gap 3]
 *
 * Invariants: every call gets exactly one outcome, judged against the chaos timeline
 * (timeline.ts, calls.ts); no call answered twice or with another call's result; no cancel from
 * one tenant ever ends another tenant's call; after the load + two leases + the TTL no
 * cancellation row and no in-flight entry is left in Redis and only live nodes hold a lease;
 * the heap of the node that lived through the whole run (node 0 is never killed: it is the
 * witness) grows at most {@link HEAP_GROWTH} over the run; no node crashes or prints anything
 * but the documented outage lines; every node exits 0 on SIGTERM and leaves no lease or entry.
 */
import { setTimeout as sleep } from "node:timers/promises";

import { type LoadContext, runPlan } from "./calls.js";
import { ChaosCluster } from "./cluster.js";
import { exchange } from "./exchange.js";
import { type Leftovers, pidOfNodeId, scanLeftovers } from "./leftovers.js";
import { Random } from "./random.js";
import { FAMILIES, type Family, Tally } from "./tally.js";
import { REDIS_GRACE_MS, Timeline } from "./timeline.js";

/** Largest heap growth (after full GCs) of the witness node between warm-up and the end. */
const HEAP_GROWTH = 0.25;
/** Largest heap (after full GCs) of any node at the end. */
const HEAP_LIMIT = 256 * 1_048_576;
const TENANTS = 4;
/**
 * Node stderr lines that are documented behaviour under chaos (docs/redis.md, "Outages"; Redis
 * restarted empty: docs/tenancy.md).
 */
const EXPECTED_STDERR =
  /Redis (cancellation store|session store|task store|reply bus|change feed) (unreachable|call failed)|conduit-mcp: Redis came back without the session records|conduit-mcp: Redis lost the records of tasks this node runs|^\[\d+\] conduit-mcp: SIGTERM received, closing$|^\[\d+\] conduit-mcp: Redis (unreachable: not ready \(GET \/ready answers 503\)|reachable again after [\d.]+ s: ready \(GET \/ready answers 200\))/;

interface ChaosSettings {
  durationS: number;
  seed: number;
  nodes: number;
  concurrency: number;
  leaseMs: number;
  ttlMs: number;
  warmupS: number;
  /** Mean seconds between chaos events. */
  gapS: number;
}

function parse(argv: readonly string[]): ChaosSettings {
  const s: ChaosSettings = {
    durationS: 60,
    seed: Math.floor(Math.random() * 2 ** 31),
    nodes: 3,
    concurrency: 60,
    leaseMs: 2_000,
    ttlMs: 4_000,
    warmupS: 4,
    gapS: 3,
  };
  const flags: Record<string, keyof ChaosSettings> = {
    "--duration": "durationS",
    "--seed": "seed",
    "--nodes": "nodes",
    "--concurrency": "concurrency",
    "--lease-ms": "leaseMs",
    "--ttl-ms": "ttlMs",
    "--warmup": "warmupS",
    "--chaos-gap": "gapS",
  };
  for (let i = 0; i < argv.length; i++) {
    const key = flags[argv[i] as string];
    const value = Number(argv[i + 1]);
    if (key === undefined) throw new Error(`chaos soak: unknown argument ${argv[i]}`);
    if (!Number.isFinite(value) || value < 0) {
      throw new Error(`chaos soak: ${argv[i]} needs a number ≥ 0, got ${argv[i + 1]}`);
    }
    s[key] = value;
    i++;
  }
  if (s.nodes < 2) throw new Error("chaos soak: --nodes must be ≥ 2 (cancels go to another node)");
  return s;
}

export async function runChaos(argv: readonly string[]): Promise<number> {
  const settings = parse(argv);
  console.log(`chaos soak: seed ${settings.seed} (replay the plan with --seed ${settings.seed})`);
  const random = new Random(settings.seed);
  const timeline = new Timeline();
  const tally = new Tally();
  const secrets = Array.from(
    { length: TENANTS },
    (_, t) => `chaos-tenant-${t}-${random.between(1e8, 9e8)}-secret`,
  );
  const tokens = Object.fromEntries(secrets.map((secret, t) => [secret, `tenant-${t}`]));
  const cluster = new ChaosCluster(
    { nodes: settings.nodes, leaseMs: settings.leaseMs, rowTtlMs: settings.ttlMs, tokens },
    timeline,
  );
  const rows: [string, string][] = [];
  const checks: [string, boolean, string][] = [];
  try {
    await cluster.start();
    const ctx: LoadContext = { cluster, timeline, tally, random: random.fork(), secrets };

    // Warm-up without chaos, then the witness's heap baseline (every code path has run once).
    await load(ctx, settings.warmupS, settings.concurrency);
    const baseline = await heaps(cluster, secrets[0] as string);
    const witnessPid = cluster.slots[0]?.pids.at(-1);

    const started = performance.now();
    const chaos = schedule(cluster, random.fork(), settings, started);
    const plans = await load(ctx, settings.durationS, settings.concurrency);
    const loadSeconds = (performance.now() - started) / 1_000;
    await chaos.done;
    const loadEnded = performance.now();
    const partingLeft = chaos.parting.left;
    // Every node back (a restart still under way has finished with the schedule).
    const allAlive = cluster.aliveIndexes().length === settings.nodes;

    // Two leases plus the TTL (plus one janitor period and slack): rows and entries must go.
    const janitorMs = Math.min(settings.leaseMs, settings.ttlMs);
    const boundMs = 2 * settings.leaseMs + settings.ttlMs + janitorMs + 3_000;
    let left: Leftovers = await scanLeftovers(cluster.redis.url);
    const livePids = (): Set<number> =>
      new Set(cluster.slots.flatMap((s) => (s.alive ? [s.pids.at(-1) as number] : [])));
    const clean = (l: Leftovers): boolean =>
      l.rows === 0 &&
      l.rowKeys === 0 &&
      l.inFlightKeys === 0 &&
      l.nodes.every((n) => livePids().has(pidOfNodeId(n))) &&
      l.leases.every((n) => livePids().has(pidOfNodeId(n)));
    const peak = { rows: left.rows, inFlight: left.inFlightEntries };
    while (!clean(left) && performance.now() - loadEnded < boundMs) {
      await sleep(250);
      left = await scanLeftovers(cluster.redis.url);
    }
    const cleanAfterMs = performance.now() - loadEnded;
    const cleanAtBound = clean(left);

    const end = await heaps(cluster, secrets[0] as string);
    const stopProblems = await cluster.stopNodes(10_000);
    const afterStop = await scanLeftovers(cluster.redis.url);
    // A session the load deleted must be gone, unless chaos met it between its initialize and
    // its last DELETE: a DELETE kept for replay by a node killed before Redis returned is lost
    // with that node, and a node down or Redis away may leave nobody to apply it.
    const sessionsLeft = afterStop.sessionIds.map((id) => ({ id, life: tally.sessions.get(id) }));
    const unexplainedSessions = sessionsLeft.filter(
      ({ life }) =>
        life === undefined ||
        !timeline.disturbed(
          cluster.slots.map((s) => s.index),
          life.from,
          life.to,
        ),
    );

    // ---- figures ----
    const mb = (b: number | undefined): string =>
      b === undefined ? "?" : `${(b / 1_048_576).toFixed(1)} MB`;
    const witnessSame = cluster.slots[0]?.pids.at(-1) === witnessPid;
    const witnessGrowth =
      baseline[0] !== undefined && end[0] !== undefined
        ? end[0].heapUsed / baseline[0].heapUsed - 1
        : Number.NaN;
    const notes = [...tally.notes.entries()].sort((a, b) => a[0].localeCompare(b[0]));
    const stderr = cluster.slots.flatMap((s) => s.stderr);
    const unexpectedStderr = stderr.filter((line) => !EXPECTED_STDERR.test(line));
    rows.push(
      ["seed", String(settings.seed)],
      [
        "cluster",
        `${settings.nodes} conduit-mcp serve --redis processes, 1 redis-server, ${TENANTS} tenants (bearer tokens)`,
      ],
      ["lease / row TTL", `${settings.leaseMs} ms / ${settings.ttlMs} ms`],
      [
        "load",
        `${loadSeconds.toFixed(1)} s after a ${settings.warmupS} s warm-up, ${settings.concurrency} concurrent plans, ${plans} plans`,
      ],
      ["work started / with one outcome", `${tally.started} / ${tally.settled}`],
      [
        "chaos events",
        `${timeline.count("node-kill")} node SIGKILLs (+ restart), ${timeline.count("redis-restart")} Redis restarts, ${timeline.count("redis-freeze")} Redis freezes`,
      ],
      ...FAMILIES.flatMap((family) => familyRows(tally, family)),
      ...notes.map(([k, n]): [string, string] => [`  ${k}`, String(n)]),
      [
        "answered twice / someone else's result / cross-tenant effects / hung",
        [/twice|after the response/, /someone else/, /cross-tenant/, /hung/]
          .map((re) =>
            [...tally.violations].reduce((n, [kind, v]) => n + (re.test(kind) ? v.count : 0), 0),
          )
          .join(" / "),
      ],
      [
        "latest lost cross-node cancel, after Redis was back",
        `${tally.maxLostAfterRedisBackMs.toFixed(0)} ms (judged lost to the outage up to ${REDIS_GRACE_MS} ms)`,
      ],
      [
        "Redis 0.3 s after the parting SIGKILL (rows / in-flight entries)",
        partingLeft === null
          ? "?"
          : `${partingLeft.rows} / ${partingLeft.inFlightEntries}, ${chaos.parting.entries} of them the killed process's`,
      ],
      [
        "the killed process's entries swept after",
        chaos.parting.sweptAfterMs < 0
          ? "not within 4 leases + 5 s"
          : chaos.parting.entries === 0
            ? "(it held none when it was killed)"
            : `${(chaos.parting.sweptAfterMs / 1_000).toFixed(1)} s (lease ${settings.leaseMs} ms; bound 2 leases + janitor)`,
      ],
      ["Redis when the load ended (rows / in-flight entries)", `${peak.rows} / ${peak.inFlight}`],
      [
        "Redis clean (no row, no entry, live leases only) after the load ended",
        `${(cleanAfterMs / 1_000).toFixed(1)} s (bound ${(boundMs / 1_000).toFixed(1)} s = 2 leases + TTL + janitor + 3 s)`,
      ],
      [
        "Redis after SIGTERM of every node",
        `rows ${afterStop.rows}, entries ${afterStop.inFlightKeys}, nodes ${afterStop.nodes.length}, leases ${afterStop.leases.length}, sessions ${afterStop.sessions}, other ${JSON.stringify(afterStop.other)}`,
      ],
      [
        "heap after GC, warm-up → end",
        cluster.slots
          .map(
            (s, i) =>
              `node ${i} (${s.generation} process${s.generation === 1 ? "" : "es"}): ${mb(baseline[i]?.heapUsed)} → ${mb(end[i]?.heapUsed)}`,
          )
          .join("; "),
      ],
      ["rss at the end", end.map((h, i) => `node ${i} ${mb(h?.rss)}`).join(", ")],
      [
        "node stderr lines (outage notices / other)",
        `${stderr.length - unexpectedStderr.length} / ${unexpectedStderr.length}`,
      ],
    );

    checks.push(
      [
        "every call has exactly one outcome",
        tally.started === tally.settled,
        `${tally.started} started, ${tally.settled} settled`,
      ],
      [
        "chaos happened (≥ 1 node kill and ≥ 1 Redis restart)",
        timeline.count("node-kill") >= 1 && timeline.count("redis-restart") >= 1,
        "",
      ],
      ["every node back after the chaos", allAlive, cluster.aliveIndexes().join(",")],
      ["every chaos event carried out", chaos.failures.length === 0, chaos.failures.join("; ")],
      [
        "the killed process's entries swept within 2 leases + 1 janitor period + 2 s",
        chaos.parting.sweptAfterMs >= 0 &&
          chaos.parting.sweptAfterMs <= 2 * settings.leaseMs + janitorMs + 2_000,
        `${chaos.parting.sweptAfterMs.toFixed(0)} ms`,
      ],
      [
        "no row or in-flight entry after 2 leases + TTL",
        cleanAtBound,
        `rows ${left.rows} (${left.rowKeys} keys), in-flight keys ${left.inFlightKeys}, nodes ${left.nodes.join(" ")}, leases ${left.leases.join(" ")}`,
      ],
      [
        `witness heap growth ≤ ${HEAP_GROWTH * 100}%`,
        witnessSame && witnessGrowth <= HEAP_GROWTH,
        `${(witnessGrowth * 100).toFixed(1)}%${witnessSame ? "" : " (witness restarted!)"}`,
      ],
      [
        `every heap ≤ ${mb(HEAP_LIMIT)}`,
        end.length === settings.nodes &&
          end.every((h) => h !== undefined && h.heapUsed <= HEAP_LIMIT),
        end.map((h) => mb(h?.heapUsed)).join(", "),
      ],
      [
        "no node crashed",
        cluster.slots.every((s) => s.unexpectedExits.length === 0),
        cluster.slots.flatMap((s) => s.unexpectedExits).join("; "),
      ],
      [
        "no unexpected node stderr",
        unexpectedStderr.length === 0,
        unexpectedStderr.slice(0, 5).join(" | "),
      ],
      ["every node exits 0 on SIGTERM", stopProblems.length === 0, stopProblems.join("; ")],
      [
        "no deleted session left in Redis without chaos meeting it",
        unexplainedSessions.length === 0,
        `${unexplainedSessions.length} of ${sessionsLeft.length}: ${unexplainedSessions
          .slice(0, 3)
          .map(({ id }) => id)
          .join(", ")}`,
      ],
      [
        "nothing left by the nodes after SIGTERM",
        afterStop.rows === 0 &&
          afterStop.inFlightKeys === 0 &&
          afterStop.nodes.length === 0 &&
          afterStop.leases.length === 0,
        JSON.stringify(afterStop),
      ],
    );
    const failedWork = FAMILIES.reduce((n, f) => n + tally.verdicts(f).failed, 0);
    checks.push([
      "no work failed (every loss explained by a chaos event on the timeline)",
      failedWork === 0,
      FAMILIES.map((f) => `${f}: ${tally.verdicts(f).failed}`).join(", "),
    ]);
    for (const [kind, v] of tally.violations) {
      checks.push([`no ${kind}`, false, `${v.count}: ${v.examples.join(" | ")}`]);
    }
    if (tally.violations.size === 0) checks.push(["no call-level violation", true, ""]);
  } finally {
    await cluster.destroy();
  }

  const width = Math.max(...rows.map(([k]) => k.length), ...checks.map(([k]) => k.length + 6));
  console.log("\nconduit-mcp chaos soak summary");
  console.log("-".repeat(width + 40));
  for (const [key, value] of rows) console.log(`${key.padEnd(width)}  ${value}`);
  console.log("-".repeat(width + 40));
  let failed = 0;
  for (const [name, ok, detail] of checks) {
    if (!ok) failed++;
    console.log(`${`${ok ? "PASS" : "FAIL"}  ${name}`.padEnd(width)}  ${ok ? "" : detail}`);
  }
  console.log("-".repeat(width + 40));
  console.log(
    failed === 0
      ? "chaos soak: all invariants held"
      : `chaos soak: ${failed} invariant(s) violated`,
  );
  return failed === 0 ? 0 : 1;
}

/**
 * The summary rows of one kind of work: started, then ok / lost to the chaos / failed, each with
 * its reasons.
 */
function familyRows(tally: Tally, family: Family): [string, string][] {
  const v = tally.verdicts(family);
  const rows: [string, string][] = [
    [
      family === "call"
        ? "calls (complete, cancel, twin, disconnect, session plans)"
        : `${family}${family === "task" ? "s" : ""}`,
      `${tally.startedBy.get(family) ?? 0} started: ${v.ok} ok, ${v.chaos} lost to chaos, ${v.failed} failed`,
    ],
  ];
  const label = { ok: "ok", chaos: "lost to chaos", failed: "FAILED" } as const;
  for (const verdict of ["ok", "chaos", "failed"] as const) {
    for (const [what, n] of tally.reasons(family, verdict)) {
      rows.push([`  ${label[verdict]}: ${what}`, String(n)]);
      if (verdict === "ok") continue;
      for (const e of tally.examples.get(`${family}|${verdict}|${what}`) ?? []) {
        rows.push(["      e.g.", e]);
      }
    }
  }
  return rows;
}

/** Runs `concurrency` workers of plans for `seconds`; resolves the number of plans run. */
async function load(ctx: LoadContext, seconds: number, concurrency: number): Promise<number> {
  const end = performance.now() + seconds * 1_000;
  let plans = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      plans++;
      await runPlan(ctx);
    }
  };
  const workers: Promise<void>[] = [];
  for (let i = 0; i < concurrency; i++) {
    workers.push(worker());
    // Ramped: a burst of connects on a busy box only measures the listen backlog.
    if (i % 10 === 9) await sleep(50);
  }
  await Promise.all(workers);
  return plans;
}

/**
 * The chaos schedule: an event every ~`gapS` seconds (seeded), until the load's end. The first
 * is a node kill and the second a Redis restart, so even a short run has both; then kills (of
 * any node but the witness, node 0), Redis restarts and freezes at random. A node kill and a
 * Redis event may overlap; two kills may not (a majority stays up to sweep).
 */
function schedule(
  cluster: ChaosCluster,
  random: Random,
  settings: ChaosSettings,
  started: number,
): {
  done: Promise<void>;
  parting: Parting;
  failures: string[];
} {
  const parting: Parting = { killedAt: 0, left: null, entries: 0, sweptAfterMs: -1 };
  /** Chaos events that could not be carried out (a restart that failed): reported, never thrown. */
  const failures: string[] = [];
  const failed = (what: string) => (error: unknown) => {
    failures.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
  };
  const endAt = started + settings.durationS * 1_000;
  const running: Promise<void>[] = [];
  let nodeBusy = false;
  let redisBusy = false;
  const done = (async () => {
    for (let n = 0; ; n++) {
      const gap = random.between(settings.gapS * 500, settings.gapS * 1_500);
      if (performance.now() + gap > endAt - 1_000) break;
      await sleep(gap);
      const kind =
        n === 0
          ? "kill"
          : n === 1
            ? "redis-restart"
            : random.pick<"kill" | "redis-restart" | "redis-freeze">([
                ["kill", 0.5],
                ["redis-restart", 0.35],
                ["redis-freeze", 0.15],
              ]);
      if (kind === "kill" && !nodeBusy) {
        nodeBusy = true;
        const victim = random.between(1, settings.nodes - 1);
        const downMs = random.between(200, 2_500);
        running.push(
          cluster
            .killAndRestart(victim, downMs)
            .catch(failed(`kill and restart of node ${victim}`))
            .finally(() => {
              nodeBusy = false;
            }),
        );
      } else if (kind !== "kill" && !redisBusy) {
        redisBusy = true;
        const ms = random.between(300, 2_500);
        const event = kind === "redis-restart" ? cluster.restartRedis(ms) : cluster.freezeRedis(ms);
        running.push(
          event.catch(failed(kind)).finally(() => {
            redisBusy = false;
          }),
        );
      }
    }
    // The parting shot: the load's end, while its longest calls still run. The victim's
    // in-flight entries (and the rows of cancels aimed at its calls) stay behind in Redis until
    // its lease lapses and the TTL passes, which is what the end check then watches go.
    await sleep(Math.max(0, endAt - performance.now()));
    await Promise.all(running);
    // The node (never the witness) whose process holds the most in-flight entries, so the sweep
    // below has something to sweep.
    const before = await scanLeftovers(cluster.redis.url);
    let victim = random.between(1, settings.nodes - 1);
    for (let i = 1; i < settings.nodes; i++) {
      const held = (n: number) => before.entriesByPid.get(cluster.slots[n]?.pids.at(-1) ?? -1) ?? 0;
      if (held(i) > held(victim)) victim = i;
    }
    const pid = cluster.slots[victim]?.pids.at(-1) ?? -1;
    const event = cluster.timeline.open("node-kill", victim);
    await cluster.kill(victim);
    parting.killedAt = performance.now();
    await sleep(300);
    parting.left = await scanLeftovers(cluster.redis.url);
    parting.entries = parting.left.entriesByPid.get(pid) ?? 0;
    // Restarted in the background: the sweep is timed from the kill, while the node comes back.
    const restarted = sleep(random.between(200, 1_000))
      .then(() => cluster.restart(victim))
      .finally(() => cluster.timeline.close(event));
    // The dead process's entries go once its lease lapses and a live node's janitor runs.
    while (performance.now() - parting.killedAt < 4 * settings.leaseMs + 5_000) {
      const left = await scanLeftovers(cluster.redis.url);
      if ((left.entriesByPid.get(pid) ?? 0) === 0) {
        parting.sweptAfterMs = performance.now() - parting.killedAt;
        break;
      }
      await sleep(100);
    }
    await restarted;
  })();
  return { done: done.catch(failed("the schedule")), parting, failures };
}

/** The parting SIGKILL at the load's end, and how long its entries stayed in Redis. */
interface Parting {
  killedAt: number;
  /** Redis 0.3 s after the kill. */
  left: Leftovers | null;
  /** The killed process's in-flight entries then. */
  entries: number;
  /** When they were all gone (-1: not within four leases + 5 s). */
  sweptAfterMs: number;
}

/** Each node's `heap` tool result (undefined where the node could not answer). */
async function heaps(
  cluster: ChaosCluster,
  secret: string,
): Promise<({ heapUsed: number; rss: number } | undefined)[]> {
  return Promise.all(
    cluster.slots.map(async (slot) => {
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: "heap",
        method: "tools/call",
        params: { name: "heap", arguments: {} },
      });
      const got = await exchange(
        slot.url,
        "POST",
        {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${secret}`,
          "mcp-protocol-version": "2025-11-25",
        },
        body,
      ).done;
      const text = (got.responses[0] as { result?: { content?: { text?: string }[] } } | undefined)
        ?.result?.content?.[0]?.text;
      if (text === undefined) return undefined;
      return JSON.parse(text) as { heapUsed: number; rss: number };
    }),
  );
}
