/**
 * The HTTP benchmark's latency percentiles count each request once (bench/lib/wrk-latency.ts):
 * wrk's histogram, read by its script (bench/lib/load-generator.ts), has wrk's
 * coordinated-omission correction (`stats_correct`, wrk's src/stats.c) undone exactly.
 */
import assert from "node:assert/strict";
import type { Socket } from "node:net";
import { test } from "node:test";

import { loadGenerator } from "../../bench/lib/load-generator.js";
import {
  asTimed,
  type LatencyBuckets,
  percentileUs,
  wrkCorrectionInterval,
} from "../../bench/lib/wrk-latency.js";
import { loadAgainst } from "./load-against.js";

/** wrk's correction as src/stats.c applies it to a histogram indexed by µs. */
function wrkCorrect(counts: Map<number, number>, expected: number): LatencyBuckets {
  const out = new Map(counts);
  const max = Math.max(...counts.keys());
  for (let n = expected * 2; n <= max; n++) {
    const count = counts.get(n) ?? 0;
    for (let m = n - expected; count > 0 && m > expected; m -= expected) {
      out.set(m, (out.get(m) ?? 0) + count);
    }
  }
  return [...out.entries()].filter(([, c]) => c > 0);
}

/** A repeatable stream of numbers in [0, 1) (a linear congruential generator). */
function numbers(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

test("undoing wrk's correction gives back every request's latency, each once", () => {
  const next = numbers(7);
  const raw = new Map<number, number>();
  // 20 000 requests of 0.5-3 ms, and 50 first requests of 10-170 ms (connections accepted late).
  for (let i = 0; i < 20_000; i++) {
    const us = 500 + Math.floor(next() * 2_500);
    raw.set(us, (raw.get(us) ?? 0) + 1);
  }
  for (let i = 0; i < 50; i++) {
    const us = 10_000 + Math.floor(next() * 160_000);
    raw.set(us, (raw.get(us) ?? 0) + 1);
  }
  const run = { durationUs: 5_000_000, requests: 20_050, connections: 50 };
  const expected = wrkCorrectionInterval(run);
  assert.equal(expected, Math.floor(5_000_000 / Math.floor(20_050 / 50)));
  const corrected = wrkCorrect(raw, expected);
  const timed = asTimed({ ...run, buckets: corrected });
  assert.deepEqual(
    timed,
    [...raw.entries()].sort((a, b) => a[0] - b[0]),
    "the histogram after undoing is the requests' own",
  );
  // The correction made the 50 slow first requests set the p99; counted once, they do not.
  assert.ok(percentileUs(corrected, 99) > 10_000, `corrected p99 ${percentileUs(corrected, 99)}`);
  assert.ok(percentileUs(timed, 99) < 3_000, `p99 as timed ${percentileUs(timed, 99)}`);
});

test("percentiles rank as wrk's stats_percentile does", () => {
  const buckets: LatencyBuckets = [
    [300, 1],
    [100, 2],
    [200, 1],
  ];
  // rank = round(p / 100 × 4 + 0.5): p50 → 3 (200 µs), p25 → 2 (100 µs), p99 → 4 (300 µs).
  assert.equal(percentileUs(buckets, 50), 200);
  assert.equal(percentileUs(buckets, 25), 100);
  assert.equal(percentileUs(buckets, 99), 300);
  assert.ok(Number.isNaN(percentileUs([], 99)));
});

test("a histogram that no run of its requests could give is refused", () => {
  const run = { durationUs: 1_000_000, requests: 1_000, connections: 10 };
  // 10 000 µs interval: one request at 50 ms adds samples at 40, 30 and 20 ms, absent here.
  assert.throws(
    () =>
      asTimed({
        ...run,
        buckets: [
          [1_000, 999],
          [50_000, 1],
        ],
      }),
    /fewer samples at 40000 µs than its correction adds/,
  );
  assert.throws(
    () => asTimed({ ...run, buckets: [[1_000, 990]] }),
    /holds 990 requests once its correction is undone, not 1000/,
  );
});

test("through wrk: slow first requests set wrk's corrected p99, not the p99 of the requests", async (t) => {
  const generator = loadGenerator();
  if (generator.name !== "wrk") {
    t.skip(`${generator.name} runs instead of wrk (Debian package wrk): no wrk histogram to read`);
    return;
  }
  // The first request on each connection is answered after 150 ms, every later one at once: the
  // shape of a measured run whose connections are accepted late.
  const answered = new WeakSet<Socket>();
  const result = await loadAgainst(
    (req, res) => {
      const answer = () => res.writeHead(200, { "content-type": "application/json" }).end("{}");
      if (answered.has(req.socket)) answer();
      else {
        answered.add(req.socket);
        setTimeout(answer, 150);
      }
    },
    { seconds: 2, connections: 10, label: "slow-first server" },
  );
  assert.ok(result.requests >= 1_000, `only ${result.requests} requests in 2 s`);
  assert.ok(result.wrkP99 !== undefined, "wrk's own p99 is reported beside");
  // 10 requests of 150 ms among thousands: not the p99 once each counts once ...
  assert.ok(result.p99 < 20, `p99 as timed ${result.p99} ms`);
  // ... while wrk's correction counts each of them hundreds of times.
  assert.ok(result.wrkP99 > 50, `wrk's corrected p99 ${result.wrkP99} ms`);
});
