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
  private readonly counts = new Map<string, Counter>();
  private held = 0;
  /** The scope whose entry rests at 0 (at most one), or null. */
  private resting: string | null = null;
  /** The global bound makes room (see {@link ScopeLimiterOptions.evict}) rather than refusing. */
  private readonly evicting: boolean;
  private evictions = 0;

  constructor(maxPerScope: number, maxTotal: number, options?: ScopeLimiterOptions) {
    this.maxPerScope = maxPerScope;
    this.maxTotal = maxTotal;
    this.evicting = options?.evict === true;
  }

  /**
   * Takes one unit for `scope`: {@link ACQUIRED}, or which bound refused it. The scope's own
   * bound is checked first: it is the one that matters. On an evicting limiter, `holder` is what
   * is destroyed should the unit be taken back to make room; give it to {@link release} too.
   */
  tryAcquire(scope: string, holder?: Evictable): LimitOutcome {
    let counter = this.counts.get(scope);
    if (counter === undefined) {
      if (this.maxPerScope < 1) return SCOPE_LIMIT;
    } else if (counter.n >= this.maxPerScope) {
      return SCOPE_LIMIT;
    }
    if (this.held >= this.maxTotal && !(this.evicting && this.makeRoom())) return GLOBAL_LIMIT;
    if (counter === undefined) {
      counter = { n: 0, holders: null };
      this.counts.set(scope, counter);
    }
    if (counter.n === 0 && scope === this.resting) this.resting = null;
    counter.n++;
    this.held++;
    if (this.evicting && holder !== undefined) {
      counter.holders ??= new Set();
      counter.holders.add(holder);
    }
    return ACQUIRED;
  }

  /**
   * Gives one unit of `scope` back (call exactly once per successful acquire, with the same
   * `holder`). A unit taken back to make room was given back then: its release changes nothing.
   */
  release(scope: string, holder?: Evictable): void {
    const counter = this.counts.get(scope);
    if (counter === undefined || counter.n === 0) return; // never below 0, whatever a caller does
    if (this.evicting && holder !== undefined && counter.holders?.delete(holder) !== true) return;
    this.decrement(scope, counter);
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

  /** Calls `visit` with each scope holding units and how many (metrics, at scrape time). */
  forEachHeld(visit: (scope: string, units: number) => void): void {
    for (const [scope, counter] of this.counts) if (counter.n > 0) visit(scope, counter.n);
  }

  /** Units taken back to make room at the global bound, since construction. */
  get evicted(): number {
    return this.evictions;
  }

  /**
   * The global bound is reached: takes back the oldest unit of the scope holding the most (the
   * first found among equals) and destroys its holder. One pass over the scopes, only at the
   * bound. False when no unit there can be taken back (none was acquired with a holder).
   */
  private makeRoom(): boolean {
    let largest: string | null = null;
    let most: Counter | null = null;
    for (const [scope, counter] of this.counts) {
      if (counter.n > (most?.n ?? 0) && (counter.holders?.size ?? 0) > 0) {
        largest = scope;
        most = counter;
      }
    }
    if (largest === null || most === null || most.holders === null) return false;
    const victim = most.holders.values().next().value as Evictable;
    most.holders.delete(victim);
    this.decrement(largest, most);
    this.evictions++;
    victim.destroy();
    return true;
  }

  private decrement(scope: string, counter: Counter): void {
    counter.n--;
    this.held--;
    if (counter.n === 0) {
      // It rests at 0 in place of the one that rested before (deleted now: still at 0).
      const resting = this.resting;
      if (resting !== null && resting !== scope) this.counts.delete(resting);
      this.resting = scope;
    }
  }
}

/** What one scope holds. */
interface Counter {
  n: number;
  /** On an evicting limiter: the holders of its units, oldest first. */
  holders: Set<Evictable> | null;
}

/** Options of a {@link ScopeLimiter}. */
export interface ScopeLimiterOptions {
  /**
   * The global bound never refuses a scope under its own bound: it takes back the oldest unit
   * of the scope holding the most and destroys that unit's holder, so scopes each within their
   * bound cannot fill the total and lock another scope out. Default false (refuse).
   */
  readonly evict?: boolean;
}

/** What holds a unit of an evicting {@link ScopeLimiter}: destroyed when the unit is taken back. */
export interface Evictable {
  destroy(): void;
}

/** The outcome of {@link ScopeLimiter.tryAcquire}. */
export type LimitOutcome = typeof ACQUIRED | typeof SCOPE_LIMIT | typeof GLOBAL_LIMIT;
/** The unit was taken. */
export const ACQUIRED = 0;
/** The scope holds its maximum (429). */
export const SCOPE_LIMIT = 1;
/** The server holds its global maximum (503). */
export const GLOBAL_LIMIT = 2;
