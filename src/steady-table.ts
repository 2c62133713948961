/**
 * A Map for tables that fill and empty once per request (the calls running in a scope, in the
 * registry and in the memory store), which keeps its hash table when it empties.
 *
 * V8 shrinks a Map's hash table, allocating a new one, when a delete leaves it with fewer
 * entries than half its buckets; at the smallest table that is every time the last entry goes. A
 * server answering quick calls one after another holds one call at a time, so a plain table
 * allocated a new hash table on every call (V8's `OrderedHashTable` shrink, seen in a `perf` profile
 * of the per-call path as `Runtime_MapShrink`). The map keeps one hidden entry, inserted first and
 * never deleted, so it never empties: `size` and iteration leave it out (insertion order puts it
 * first, so iterators skip one entry).
 *
 * @example
 * ```ts
 * const calls = new SteadyMap<string, number>();
 * calls.set("7", 1);
 * calls.delete("7"); // no new hash table
 * calls.size; // 0
 * ```
 */

/** The hidden entry's key: no caller can name it. */
const KEEP: unique symbol = Symbol("conduit-mcp.keep");

/** A `Map` that keeps its hash table when it empties (see the module comment). */
export class SteadyMap<K, V> {
  private readonly table = new Map<K | typeof KEEP, V>([[KEEP, undefined as V]]);

  get size(): number {
    return this.table.size - 1;
  }

  get(key: K): V | undefined {
    return this.table.get(key);
  }

  has(key: K): boolean {
    return this.table.has(key);
  }

  set(key: K, value: V): this {
    this.table.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    return this.table.delete(key);
  }

  values(): IterableIterator<V> {
    const values = this.table.values();
    values.next(); // the hidden entry, always first
    return values;
  }
}
