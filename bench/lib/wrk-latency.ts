/**
 * Every request's latency as wrk timed it, from wrk's own histogram with its coordinated-omission
 * correction taken back out.
 *
 * Why: when a run ends, wrk corrects its latency histogram for coordinated omission
 * (`stats_correct` in wrk's src/stats.c, called from src/wrk.c before the script's `done`). With
 * `expected` the run's time divided by its requests per connection (about the mean latency), every
 * request slower than twice `expected` adds one synthetic sample at each of its latency minus
 * `expected`, minus `2 × expected`, … down to `expected`. A closed-loop benchmark opens its
 * connections when each measured run starts, and node (libuv 1.45 and later: Node 20 bundles
 * 1.46) accepts one connection per event-loop turn while it already serves the first ones, so
 * the last of 50 new connections waits 30-170 ms for its first answer. The correction turned
 * runs of 85,000-122,000 requests into up to 4 % more samples, most from those 50 requests: wrk's
 * p99 then measures how long the start took, and a faster server, with a shorter `expected`, is
 * charged more samples per slow request (docs/profile.md, "Fourteenth round"). Here each request
 * counts once.
 *
 * The histogram is read in wrk's script (bench/lib/load-generator.ts) as `[µs, count]` pairs, and
 * undone exactly: the counts left sum to the run's requests, which {@link asTimed} checks.
 *
 * @example
 * ```ts
 * const timed = asTimed({ buckets, durationUs: 5_000_000, requests: 120_000, connections: 50 });
 * percentileUs(timed, 99); // 4_140
 * ```
 */

/** A latency histogram: `[latency µs, count]`, one pair per latency that occurred. */
export type LatencyBuckets = ReadonlyArray<readonly [number, number]>;

/** One wrk run's histogram and what wrk's correction was computed from. */
export interface WrkHistogram {
  /** wrk's histogram after its correction, as its script read it. */
  readonly buckets: LatencyBuckets;
  /** The run's length as wrk measured it (`summary.duration`), µs. */
  readonly durationUs: number;
  /** Requests completed (`summary.requests`). */
  readonly requests: number;
  /** wrk's `-c`. */
  readonly connections: number;
}

/**
 * The interval wrk's correction used: the run's µs divided by its requests per connection, both
 * in integer arithmetic as in src/wrk.c; 0 when no connection completed a request (no correction).
 */
export function wrkCorrectionInterval(run: Omit<WrkHistogram, "buckets">): number {
  const perConnection = Math.floor(run.requests / run.connections);
  return perConnection > 0 ? Math.floor(run.durationUs / perConnection) : 0;
}

/**
 * The histogram of the requests themselves: wrk's correction undone, highest latency first (a
 * bucket receives synthetic samples only from higher ones, and wrk computed them from the counts
 * before correcting, so each bucket's own count is known once every higher one is).
 *
 * @throws Error when the histogram cannot be the correction of any run of `requests` requests
 *   (a count goes negative, or the counts left do not sum to `requests`): wrong input, or a wrk
 *   whose correction differs from the one described above.
 */
export function asTimed(run: WrkHistogram): LatencyBuckets {
  const expected = wrkCorrectionInterval(run);
  const counts = new Map<number, number>();
  for (const [us, count] of run.buckets) counts.set(us, (counts.get(us) ?? 0) + count);
  const synthetic = new Map<number, number>();
  const own: Array<[number, number]> = [];
  let total = 0;
  for (const us of [...counts.keys()].sort((a, b) => b - a)) {
    const requests = (counts.get(us) as number) - (synthetic.get(us) ?? 0);
    if (requests === 0) continue;
    own.push([us, requests]);
    total += requests;
    if (expected > 0 && us >= 2 * expected) {
      for (let at = us - expected; at > expected; at -= expected) {
        const added = (synthetic.get(at) ?? 0) + requests;
        if (added > (counts.get(at) ?? 0)) {
          throw new Error(`wrk's histogram has fewer samples at ${at} µs than its correction adds`);
        }
        synthetic.set(at, added);
      }
    }
  }
  if (total !== run.requests) {
    throw new Error(
      `wrk's histogram holds ${total} requests once its correction is undone, not ${run.requests}`,
    );
  }
  return own.reverse();
}

/**
 * The `p`th percentile of `buckets`, µs, ranked as wrk's `stats_percentile` ranks (the first
 * latency at which the running count reaches `round(p / 100 × count + 0.5)`); NaN when empty.
 */
export function percentileUs(buckets: LatencyBuckets, p: number): number {
  const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
  const count = sorted.reduce((sum, [, n]) => sum + n, 0);
  if (count === 0) return Number.NaN;
  const rank = Math.round((p / 100) * count + 0.5);
  let seen = 0;
  for (const [us, n] of sorted) {
    seen += n;
    if (seen >= rank) return us;
  }
  return sorted.at(-1)?.[0] ?? Number.NaN;
}
