/**
 * Whether the clear at the end of a call needs Redis. Nearly every call ends uncancelled, and its
 * clear would be a wasted round trip: the store remembers the keys it recorded a cancel for or
 * heard one announced for (a row may exist), and the calls that ended with no such key (their
 * clear can answer "nothing removed" at once). Both are bounded FIFO sets: a key pushed out only
 * costs a clear sent to Redis, or a stale row living until its TTL; no check depends on them.
 */

/** Keys a row may exist for. */
const MAX_ROW_HINTS = 10_000;
/** Recently ended calls whose key has no row known here; consumed by the clear that follows. */
const MAX_QUIET = 10_000;

/**
 * The row hints of one store.
 *
 * @example
 * ```ts
 * const hints = new RowHints();
 * hints.ended(scope, requestId); // no cancel known: the clear that follows skips Redis
 * hints.clearNeedsRedis(scope, requestId); // false
 * ```
 */
export class RowHints {
  /** Key → when last recorded or heard (`performance.now()`), oldest first. */
  private readonly rows = new Map<string, number>();
  /** Keys of calls that ended with no row known here. */
  private readonly quiet = new Set<string>();

  /** A row of the key may exist (recorded here or announced by another node). */
  hint(scope: string, requestId: string): void {
    const key = hintKey(scope, requestId);
    // Re-inserted so the map stays in time order (prune works from the front).
    this.rows.delete(key);
    if (this.rows.size >= MAX_ROW_HINTS) this.rows.delete(this.rows.keys().next().value ?? "");
    this.rows.set(key, performance.now());
  }

  /** The call of the key ended on this node: unless a row may exist, its clear skips Redis. */
  ended(scope: string, requestId: string): void {
    const key = hintKey(scope, requestId);
    if (this.rows.has(key)) return;
    if (this.quiet.size >= MAX_QUIET) this.quiet.delete(this.quiet.values().next().value ?? "");
    this.quiet.add(key);
  }

  /** Whether the clear of the key must go to Redis; either way the key's hints are consumed. */
  clearNeedsRedis(scope: string, requestId: string): boolean {
    const key = hintKey(scope, requestId);
    if (this.quiet.delete(key) && !this.rows.has(key)) return false;
    this.rows.delete(key);
    return true;
  }

  /** Forgets the hints older than `cutoff` (`performance.now()` time): rows that old expired. */
  prune(cutoff: number): void {
    for (const [key, at] of this.rows) {
      if (at >= cutoff) break;
      this.rows.delete(key);
    }
  }

  clear(): void {
    this.rows.clear();
    this.quiet.clear();
  }
}

/** A key of both sets: unambiguous (the scope's length first). */
function hintKey(scope: string, requestId: string): string {
  return `${scope.length}:${scope}${requestId}`;
}
