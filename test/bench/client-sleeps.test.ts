/**
 * How often the HTTP benchmark's load generator slept per answer (`LoadResult.clientSleeps`,
 * bench/lib/load-generator.ts): wrk's script reads its own voluntary context switches with
 * getrusage(2) when the run ends, and bench/lib/http-bench.ts states the median per row. On
 * loopback each sleep is a wake-up the server's CPU pays for (docs/profile.md, "Twelfth round").
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { BENCH_PATHS } from "../../bench/lib/bench-paths.js";
import { TARGETS } from "../../bench/lib/bench-targets.js";
import {
  clientSleepsOf,
  type HttpBenchResult,
  httpTable,
  type RowResult,
} from "../../bench/lib/http-bench.js";
import { loadGenerator } from "../../bench/lib/load-generator.js";
import { loadAgainst } from "./load-against.js";

test("wrk says it slept about once per answer when every answer comes after a timer", async (t) => {
  // wrk when it is on the PATH, else the autocannon fallback, which reports no sleeps.
  const generator = loadGenerator();
  if (generator.name !== "wrk") {
    t.skip(`${generator.name} runs instead of wrk (Debian package wrk): no sleep count to read`);
    return;
  }
  // One connection, each answer 3 ms after its request: wrk has nothing to do but wait for it.
  const result = await loadAgainst(
    (_req, res) => {
      setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end("{}"), 3);
    },
    { seconds: 1, connections: 1, label: "timer server" },
  );
  assert.ok(result.requests >= 50, `only ${result.requests} requests in 1 s`);
  assert.ok(result.clientSleeps !== undefined, "wrk's script printed no sleep count");
  // At least one sleep per request; a few more from starting and stopping its threads.
  assert.ok(
    result.clientSleeps >= 0.9 && result.clientSleeps <= 2,
    `${result.clientSleeps} sleeps per request`,
  );
});

test("a row states the median of its rounds' sleeps per answer, n/a when the generator does not say", () => {
  const path = BENCH_PATHS["tools/call"];
  const spec = (key: string) => {
    const found = TARGETS.find((target) => target.key === key);
    assert.ok(found !== undefined, key);
    return found;
  };
  const row = (key: string, sleeps: (number | undefined)[]): RowResult =>
    ({
      target: spec(key),
      path,
      answer: "application/json",
      rounds: sleeps.map((clientSleeps) => ({
        rps: 100,
        p50: 1,
        p99: 2,
        requests: 500,
        ...(clientSleeps === undefined ? {} : { clientSleeps }),
      })),
      cpuUs: sleeps.map(() => 30),
    }) as RowResult;
  const bare = row("bare", [0.5, 0.7, 0.55]);
  const conduit = row("conduit", [0.9, undefined, 0.8]);
  const fallback = row("cli", [undefined, undefined, undefined]);
  assert.equal(clientSleepsOf(bare), 0.55);
  assert.ok(Math.abs(clientSleepsOf(conduit) - 0.85) < 1e-9);
  assert.ok(Number.isNaN(clientSleepsOf(fallback)));
  assert.ok(Number.isNaN(clientSleepsOf(undefined)));

  const table = httpTable({
    options: { paths: ["tools/call"] },
    rows: [bare, conduit, fallback],
  } as unknown as HttpBenchResult).split("\n");
  const header = table[0]?.split("|").map((cell) => cell.trim()) ?? [];
  const column = header.indexOf("client sleeps/req");
  assert.ok(column > 0, "no client sleeps column");
  const cells = table.slice(2).map((line) => line.split("|").map((cell) => cell.trim())[column]);
  assert.deepEqual(cells, ["0.55", "0.85", "n/a"]);
  // Every line has as many cells as the header.
  for (const line of table) assert.equal(line.split("|").length, header.length, line);
});
