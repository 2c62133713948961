/**
 * A small least-recently-used map with a per-entry expiry, bounded in entries: the cache of
 * token introspection answers, so that one token is not sent to the authorization server on
 * every request while a flood of distinct tokens cannot grow memory without bound.
 */

/** One bounded map; entries expire at their own `expiresAt` (ms since the epoch). */
export class BoundedCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private readonly maxEntries: number;
  private readonly now: () => number;

  /**
   * @example
   * ```ts
   * const cache = new BoundedCache<string>(2);
   * cache.set("a", "1", Date.now() + 1000);
   * cache.get("a"); // "1"
   * ```
   */
  constructor(maxEntries: number, now: () => number = Date.now) {
    this.maxEntries = maxEntries;
    this.now = now;
  }

  /** The value, if present and not expired (an expired entry is removed). */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    // Re-inserted: a Map iterates in insertion order, so the first key is the least recent.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Stores a value until `expiresAt`; at the bound the least recently used entry goes. */
  set(key: string, value: V, expiresAt: number): void {
    if (this.maxEntries <= 0 || expiresAt <= this.now()) return;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt });
  }

  /** Entries held (expired ones included until they are next looked at or pushed out). */
  get size(): number {
    return this.entries.size;
  }
}
