/**
 * `npm run bench:elicitation`: the 2025-11-25 elicitation round trip on real `conduit-mcp serve
 * --sessions` processes (the demo's `confirm` tool):
 * - same node, memory (no `--redis`);
 * - same node, `--redis` (the answer POST reaches the node that asked);
 * - cross node: two `--redis` nodes on one private `redis-server`; the call runs on node A, the
 *   client's answer POST goes to node B, which hands it to A over `RedisReplyBus`.
 * Each sample opens a `tools/call confirm` whose request-scoped SSE stream carries the
 * `elicitation/create` request, then measures from the moment this client has read that request
 * until it has read the tool's result on the same stream, having POSTed its answer in between
 * (answer POST → 202, routing, the handler resuming, the result written). One call at a time;
 * several rounds rotating the order of the targets; p50/p99 per round, medians over rounds.
 * Writes the "## Elicitation round trip" section of docs/benchmarks.md (not with `--no-write`).
 *
 * Options: `--rounds N` (5), `--samples N` per target per round (40), `--no-write`.
 *
 * @example
 * ```sh
 * node --import tsx bench/elicitation.ts --rounds 2 --samples 10 --no-write
 * ```
 */
import { cpus } from "node:os";

import {
  answer,
  isRequest,
  isResponseTo,
  openCall,
  openSession,
  sessionHeaders,
} from "../test/asking/stream.js";
import { type CliProcess, startCli } from "../test/cli/cli-process.js";
import { startRedisServer } from "../test/helpers/redis-server.js";
import { loadAverage, machineLine } from "./lib/machine.js";
import { BENCHMARKS_DOC, writeSection } from "./lib/markdown-section.js";
import { readRoundFlags } from "./lib/round-flags.js";
import { median, percentile } from "./lib/stats.js";

const { rounds, samples: samplesPerRound, write } = readRoundFlags({ rounds: 5, samples: 40 });
const HEADING = "Elicitation round trip";
const YES = { result: { action: "accept", content: { confirm: true } } };

let nextId = 0;

/** One sample: `confirm` on `run`, answered through `reply`, in `session`; ms. */
async function sample(run: string, reply: string, session: string): Promise<number> {
  const id = `e${nextId++}`;
  const headers = sessionHeaders(session);
  const call = await openCall(
    run,
    {
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "confirm", arguments: { action: "bench" } },
    },
    headers,
  );
  const asked = await call.next(isRequest("elicitation/create"), 10_000);
  const started = performance.now();
  const posted = await answer(reply, asked.id, YES, headers);
  if (posted.status !== 202) throw new Error(`answer POST answered ${posted.status}`);
  const done = await call.next(isResponseTo(id), 10_000);
  const ms = performance.now() - started;
  const text = done.result?.content?.[0]?.text;
  if (text !== "Done: bench") throw new Error(`unexpected result ${JSON.stringify(done)}`);
  await call.ended;
  return ms;
}

const fmt = (n: number, digits = 2): string =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const redis = await startRedisServer();
  const nodes: CliProcess[] = [];
  try {
    const started = await Promise.all([
      startCli(["serve", "--sessions", "--port", "0"]),
      startCli(["serve", "--sessions", "--port", "0", "--redis", redis.url]),
      startCli(["serve", "--sessions", "--port", "0", "--redis", redis.url]),
    ]);
    nodes.push(...started);
    const [memory, nodeA, nodeB] = started as [CliProcess, CliProcess, CliProcess];
    const capabilities = { elicitation: {} };
    const memorySession = await openSession(memory.url, capabilities);
    const redisSession = await openSession(nodeA.url, capabilities);
    const targets = [
      { label: "same node, memory", run: memory.url, reply: memory.url, session: memorySession },
      { label: "same node, --redis", run: nodeA.url, reply: nodeA.url, session: redisSession },
      {
        label: "cross node, --redis (call on A, answer POST to B)",
        run: nodeA.url,
        reply: nodeB.url,
        session: redisSession,
      },
    ];
    // Warm-up: connections, JIT, the subscribers.
    for (const t of targets) for (let i = 0; i < 10; i++) await sample(t.run, t.reply, t.session);

    const results = new Map<string, { p50: number[]; p99: number[]; all: number[] }>();
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < targets.length; k++) {
        const t = targets[(k + round) % targets.length];
        if (t === undefined) continue;
        const entry = results.get(t.label) ?? { p50: [], p99: [], all: [] };
        results.set(t.label, entry);
        const samples: number[] = [];
        for (let i = 0; i < samplesPerRound; i++) {
          samples.push(await sample(t.run, t.reply, t.session));
        }
        entry.p50.push(percentile(samples, 50));
        entry.p99.push(percentile(samples, 99));
        entry.all.push(...samples);
        console.error(
          `round ${round + 1}/${rounds} ${t.label}: p50 ${fmt(percentile(samples, 50))} ms, p99 ${fmt(percentile(samples, 99))} ms`,
        );
      }
    }

    const table = [
      "| path | p50 ms (median of rounds) | p99 ms (median of rounds) | p99 ms (all samples) | max ms | samples |",
      "| --- | ---: | ---: | ---: | ---: | ---: |",
      ...targets.map((t) => {
        const e = results.get(t.label);
        if (e === undefined) return `| ${t.label} | – | – | – | – | 0 |`;
        return `| ${t.label} | ${fmt(median(e.p50))} | ${fmt(median(e.p99))} | ${fmt(percentile(e.all, 99))} | ${fmt(Math.max(...e.all))} | ${e.all.length} |`;
      }),
    ].join("\n");
    const section = `The 2025-11-25 elicitation round trip ([Asking the client](asking-the-client.md)) on three
\`conduit-mcp serve --sessions\` processes: one in memory, two with \`--redis\` on one private
\`redis-server\` (loopback, persistence off). Each sample calls the demo's \`confirm\` tool; its SSE
stream carries the \`elicitation/create\` request; the time runs from the moment this client has
read that request until it has read the tool's result on the same stream, having POSTed its answer
in between (the 202, routing by the server request id within the session's scope, the handler
resuming, the result written). Cross node, the answer POST goes to node B, which publishes it on
node A's reply channel. One call at a time, ${samplesPerRound} samples per target per round, ${rounds}
rounds rotating the order.

- Command: \`npm run bench:elicitation\` (\`node --import tsx bench/elicitation.ts\`)
- Date: ${new Date().toISOString().slice(0, 10)}
- Machine: ${machineLine()}; redis-server on the same machine; load average ${loadBefore} before the
  run, ${loadAverage()} after (on ${cpus().length} cores)

${table}
`;
    console.log(`\n${table}\n`);
    if (write) {
      writeSection(BENCHMARKS_DOC, HEADING, section);
    }
  } finally {
    await Promise.all(nodes.map((n) => n.kill()));
    await redis.stop();
  }
}

await main();
