/**
 * Per-scope concurrency counters, so that one tenant cannot exhaust the server. A
 * scope is the one the cancellation uses (`session:` > `principal:` > `ip:` bucket, identity/scope),
 * so one IPv6 /64 rotating its addresses is one counter. One `Map` of integers: O(1) per acquire
 * and release, and an entry is deleted when it returns to 0, so idle scopes cost no memory —
 * except the one that returned to 0 last, which rests at 0 until another scope does: a client
 * whose requests follow one another does not delete and re-add its entry each time (a `Map`
 * that keeps losing and regaining its only entry is rebuilt over and over).
 */

/**
 * Counts what each scope holds, under a per-scope and a global bound.
 *
 * @example
 * ```ts
 * const limiter = new ScopeLimiter(64, 10_000);
 * if (limiter.tryAcquire("ip:203.0.113.7") !== ACQUIRED) reply(429);
 * try { await work(); } finally { limiter.release("ip:203.0.113.7"); }
 * ```
 */
export class ScopeLimiter {
  /** Most held by one scope at once. */
  readonly maxPerScope: number;
  /** Most held by all scopes together. */
  readonly maxTotal: number;
  /** Units per scope, each in a counter of its own: changed in place, one lookup per call. */
  private readonly counts = new Map<string, { n: number }>();
  private held = 0;
  /** The scope whose entry rests at 0 (at most one), or null. */
  private resting: string | null = null;

  constructor(maxPerScope: number, maxTotal: number) {
    this.maxPerScope = maxPerScope;
    this.maxTotal = maxTotal;
  }

  /** Takes one unit for `scope`: {@link ACQUIRED}, or which bound refused it. */
  tryAcquire(scope: string): LimitOutcome {
    if (this.held >= this.maxTotal) return GLOBAL_LIMIT;
    let counter = this.counts.get(scope);
    if (counter === undefined) {
      if (this.maxPerScope < 1) return SCOPE_LIMIT;
      counter = { n: 0 };
      this.counts.set(scope, counter);
    } else if (counter.n >= this.maxPerScope) {
      return SCOPE_LIMIT;
    }
    if (counter.n === 0 && scope === this.resting) this.resting = null;
    counter.n++;
    this.held++;
    return ACQUIRED;
  }

  /** Gives one unit of `scope` back (call exactly once per successful acquire). */
  release(scope: string): void {
    const counter = this.counts.get(scope);
    if (counter === undefined || counter.n === 0) return; // never below 0, whatever a caller does
    counter.n--;
    this.held--;
    if (counter.n === 0) {
      // It rests at 0 in place of the one that rested before (deleted now: still at 0).
      const resting = this.resting;
      if (resting !== null && resting !== scope) this.counts.delete(resting);
      this.resting = scope;
    }
  }

  /** Units `scope` holds now. */
  count(scope: string): number {
    return this.counts.get(scope)?.n ?? 0;
  }

  /** Units held by all scopes. */
  get total(): number {
    return this.held;
  }

  /** Scopes holding at least one unit. */
  get scopes(): number {
    return this.resting === null ? this.counts.size : this.counts.size - 1;
  }
}

/** The outcome of {@link ScopeLimiter.tryAcquire}. */
export type LimitOutcome = typeof ACQUIRED | typeof SCOPE_LIMIT | typeof GLOBAL_LIMIT;
/** The unit was taken. */
export const ACQUIRED = 0;
/** The scope holds its maximum (429). */
export const SCOPE_LIMIT = 1;
/** The server holds its global maximum (503). */
export const GLOBAL_LIMIT = 2;
