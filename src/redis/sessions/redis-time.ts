/**
 * This node's estimate of Redis's clock (`TIME`, in ms), for deciding without a script whether a
 * session's refresh window has passed. Learned from each refresh script, which answers Redis's
 * time in whole milliseconds, rounded down (session-scripts.ts `nowMs`): the script ran between
 * the moment it was sent and the moment its answer came, and Redis's clock then read between
 * `now` and `now + 1`, so at a later local time `t` it reads between `now + (t - received)` and
 * `now + 1 + (t - sent)`, widened by 1 ms per second since (clock rate drift, NTP slewing).
 * Forgotten when the connection drops (Redis may be another host, with another clock).
 */

/** The interval Redis's clock is in, as seen from this node's monotonic clock. */
export class RedisTime {
  /** Redis's time minus local `performance.now()`: the lower and upper bounds. */
  private low = 0;
  private high = 0;
  /** Local time of the answer learned from; null when nothing is known. */
  private learnedAt: number | null = null;

  /**
   * Learns from a script that read Redis's clock as `redisNow`, sent at local `sent`, answered at
   * local `received` (both `performance.now()`).
   */
  learn(redisNow: number, sent: number, received: number): void {
    if (!Number.isFinite(redisNow) || received < sent) return;
    this.low = redisNow - received;
    // The answer dropped the microseconds: Redis's clock may have read up to 1 ms more. Without
    // it, a session another node refreshed in the next millisecond looks a window ahead.
    this.high = redisNow + 1 - sent;
    this.learnedAt = received;
  }

  /** The interval Redis's clock is in at local time `at`, or null when nothing is known. */
  bounds(at: number = performance.now()): readonly [number, number] | null {
    if (this.learnedAt === null) return null;
    const drift = Math.max(0, at - this.learnedAt) / 1_000;
    return [at + this.low - drift, at + this.high + drift];
  }

  forget(): void {
    this.learnedAt = null;
  }
}

/**
 * Whether a session whose refresh window ends at `until` (Redis's time, from its hash; undefined
 * or not a number for none) is due for a refresh, Redis's clock being in `bounds`: when the
 * window may have ended (the upper bound has reached it), when the clock is not known, and when
 * the window ends more than a whole window after even the upper bound (a forged record, or a
 * clock stepped back), and when the session was seen later than the window's start (`lastSeenAt`
 * less than a window before `until`: a write that did not set a window).
 */
export function refreshDue(
  until: string | undefined,
  bounds: readonly [number, number] | null,
  windowMs: number,
  lastSeenAt?: string,
): boolean {
  if (bounds === null || until === undefined) return true;
  const end = Number(until);
  if (!Number.isFinite(end)) return true;
  // Seen after the window was written (by a node that refreshes on every get without one, as
  // an older version does, scoring the session at that time): its score is not the window's end.
  if (lastSeenAt !== undefined && end - Number(lastSeenAt) < windowMs) return true;
  return bounds[1] >= end || end - bounds[1] > windowMs;
}
