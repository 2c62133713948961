/**
 * The default, single-process {@link CancellationStore} (rows and in-flight entries, in Maps).
 *
 * Layout, chosen so that every per-request operation is O(1) and the cap costs amortised O(1):
 * - `scopes`: scope → (request id → row). Nested Maps, never a joined key: scopes and ids are
 *   arbitrary strings, so no separator is safe. A scope's Map size is its quota count (O(1)), and
 *   its insertion order is time order because stamps never decrease and a re-cancel deletes and
 *   re-inserts the row. There is deliberately no second, global index: at the cap each insert
 *   then costs one write and one eviction delete in one big table, which is what keeps the cost
 *   per insert nearly flat from 10 000 to 1 000 000 rows (docs/benchmarks.md, "Registry").
 * - `inFlight`: scope → (request id → handle id, or a Set of them when several handles share
 *   a key, as several handles may share one).
 */
import { type CancellationSource, StoreClosedError } from "../errors.js";
import { OPTION, readOption } from "../option-schema.js";
import { SteadyMap } from "../steady-table.js";
import { chooseEvictions, evictionBatchSize, type StoredRow } from "./eviction.js";
import type {
  CancellationRow,
  CancellationStore,
  CleanupResult,
  RecordOutcome,
  RemoteCancellation,
} from "./types.js";

/** Options of {@link MemoryCancellationStore}. */
export interface MemoryCancellationStoreOptions {
  /** Global cap on rows; `Infinity` disables it. Default 10 000. */
  readonly maxRows?: number;
  /** Per-scope quota; `Infinity` disables it. Default 256. */
  readonly maxRowsPerScope?: number;
  /** Stamps rows, in ms since the epoch. Default `Date.now`. */
  readonly clock?: () => number;
}

/** Default global cap. */
export const DEFAULT_MAX_ROWS = 10_000;
/** Default per-scope quota. */
export const DEFAULT_MAX_ROWS_PER_SCOPE = 256;

// Shared settled promises: the per-request path (addInFlight, removeInFlight, clear of a row that
// is not there) allocates no promise of its own.
const RESOLVED_VOID: Promise<void> = Promise.resolve();
const RESOLVED_TRUE: Promise<boolean> = Promise.resolve(true);
const RESOLVED_FALSE: Promise<boolean> = Promise.resolve(false);
const RESOLVED_UNDEFINED: Promise<undefined> = Promise.resolve(undefined);
const RESOLVED_NULL: Promise<null> = Promise.resolve(null);
const RECORDED: Promise<RecordOutcome> = Promise.resolve("recorded");
const LIMIT_REACHED: Promise<RecordOutcome> = Promise.resolve("limit_reached");
const NOTHING_REMOVED: Promise<CleanupResult> = Promise.resolve({ removed: 0, inFlightRemoved: 0 });
const UNSUBSCRIBED = (): void => {};

/**
 * In-memory cancellation rows and in-flight entries for one process, with the per-scope
 * quota, global cap and eviction order (docs/cancellation.md, "The cancellation registry").
 *
 * Rows are stamped with the store's clock, clamped so stamps never decrease
 * (`max(clock(), last stamp)`): a clock stepping back cannot reorder the table. The row's own
 * `cancelledAt` is the caller's view and is not used for ordering.
 *
 * @example
 * ```ts
 * const store = new MemoryCancellationStore({ maxRows: 10_000, maxRowsPerScope: 256 });
 * await store.record({ scope: "ip:203.0.113.9", requestId: "7", reason: null, cancelledAt: Date.now() }, "library");
 * await store.has("ip:203.0.113.9", "7"); // true
 * ```
 */
export class MemoryCancellationStore implements CancellationStore {
  /** The global cap (`Infinity` when disabled). */
  readonly maxRows: number;
  /** The per-scope quota (`Infinity` when disabled). */
  readonly maxRowsPerScope: number;
  private readonly clock: () => number;
  private readonly batch: number;
  private readonly scopes = new Map<string, Map<string, StoredRow>>();
  private rowCount = 0;
  /** Insertion counter: orders {@link rows} across scopes (ties in time included). */
  private sequence = 0;
  private readonly inFlight = new Map<string, SteadyMap<string, string | Set<string>>>();
  /** The scope whose table in `inFlight` is kept while empty (at most one), or null. */
  private resting: string | null = null;
  private lastStamp = Number.NEGATIVE_INFINITY;
  private closed = false;
  /**
   * Whether a request is in flight among the calls of the registry that made this store (see
   * {@link adoptInFlight}); null for a store given to a registry, which writes every entry here.
   */
  private ownerInFlight: ((scope: string, requestId: string) => boolean) | null = null;

  constructor(options: MemoryCancellationStoreOptions = {}) {
    this.maxRows = readOption(OPTION.positiveLimit, "maxRows", options.maxRows, DEFAULT_MAX_ROWS);
    this.maxRowsPerScope = readOption(
      OPTION.positiveLimit,
      "maxRowsPerScope",
      options.maxRowsPerScope,
      DEFAULT_MAX_ROWS_PER_SCOPE,
    );
    this.clock = readOption(OPTION.clock, "clock", options.clock, Date.now);
    this.batch = evictionBatchSize(this.maxRows);
  }

  /**
   * Quota first (the only rejection; a scope at quota cannot even refresh a row), then a
   * batch eviction at the cap (the caller's own scope included), then the write.
   */
  record(row: CancellationRow, _source: CancellationSource): Promise<RecordOutcome> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    const { scope, requestId } = row;
    let rows = this.scopes.get(scope);
    if (rows !== undefined && rows.size >= this.maxRowsPerScope) return LIMIT_REACHED;
    if (this.rowCount >= this.maxRows) {
      this.reclaim();
      // The eviction may have emptied (and dropped) the caller's scope.
      rows = this.scopes.get(scope);
    }
    const now = this.clock();
    const stamp = Math.max(now, this.lastStamp);
    this.lastStamp = stamp;
    if (rows === undefined) {
      rows = new Map();
      this.scopes.set(scope, rows);
    }
    const stored: StoredRow = {
      scope,
      requestId,
      reason: row.reason,
      cancelledAt: stamp,
      sequence: this.sequence++,
    };
    // Write first, look later: a new key (the common case) costs one hash operation. A key that
    // existed was overwritten in place, so it is moved to the end to keep the Map in time order.
    const before = rows.size;
    rows.set(requestId, stored);
    if (rows.size === before) {
      rows.delete(requestId);
      rows.set(requestId, stored);
    } else {
      this.rowCount++;
    }
    return RECORDED;
  }

  has(scope: string, requestId: string): Promise<boolean> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    return this.scopes.get(scope)?.has(requestId) === true ? RESOLVED_TRUE : RESOLVED_FALSE;
  }

  reason(scope: string, requestId: string): Promise<string | null | undefined> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    const row = this.scopes.get(scope)?.get(requestId);
    if (row === undefined) return RESOLVED_UNDEFINED;
    return row.reason === null ? RESOLVED_NULL : Promise.resolve(row.reason);
  }

  /** Reads before it writes: a request that was never cancelled touches nothing. */
  clear(scope: string, requestId: string): Promise<boolean> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    return this.clearNow(scope, requestId) ? RESOLVED_TRUE : RESOLVED_FALSE;
  }

  /** {@link clear} without a promise (see {@link recordInFlight}); false when closed. */
  clearNow(scope: string, requestId: string): boolean {
    if (this.closed) return false;
    const rows = this.scopes.get(scope);
    if (rows === undefined) return false;
    const row = rows.get(requestId);
    if (row === undefined) return false;
    this.remove(rows, row);
    return true;
  }

  addInFlight(scope: string, requestId: string, handleId: string): Promise<void> {
    return this.recordInFlight(scope, requestId, handleId)
      ? RESOLVED_VOID
      : Promise.reject(new StoreClosedError());
  }

  /**
   * {@link addInFlight} without a promise (the registry's request path calls it: this store
   * never makes a call wait); false when the store is closed.
   */
  recordInFlight(scope: string, requestId: string, handleId: string): boolean {
    if (this.closed) return false;
    let ids = this.inFlight.get(scope);
    if (ids === undefined) {
      ids = new SteadyMap();
      this.inFlight.set(scope, ids);
    } else if (scope === this.resting) {
      this.resting = null;
    }
    const held = ids.get(requestId);
    if (held === undefined) ids.set(requestId, handleId);
    else if (typeof held === "string") {
      if (held !== handleId) ids.set(requestId, new Set([held, handleId]));
    } else held.add(handleId);
    return true;
  }

  /** Removes only that handle's entry: namesakes stay in flight. */
  removeInFlight(scope: string, requestId: string, handleId: string): Promise<void> {
    return this.dropInFlight(scope, requestId, handleId)
      ? RESOLVED_VOID
      : Promise.reject(new StoreClosedError());
  }

  /** {@link removeInFlight} without a promise (see {@link recordInFlight}); false when closed. */
  dropInFlight(scope: string, requestId: string, handleId: string): boolean {
    if (this.closed) return false;
    const ids = this.inFlight.get(scope);
    const held = ids?.get(requestId);
    if (ids === undefined || held === undefined) return true;
    if (typeof held === "string") {
      if (held === handleId) ids.delete(requestId);
    } else {
      held.delete(handleId);
      if (held.size === 1) ids.set(requestId, held.values().next().value as string);
    }
    if (ids.size === 0 && scope !== this.resting) {
      // Kept for the scope's next call, in place of the one kept before (at most one empty
      // table: calls that follow one another do not build and drop a table each).
      const resting = this.resting;
      if (resting !== null && this.inFlight.get(resting)?.size === 0) this.inFlight.delete(resting);
      this.resting = scope;
    }
    return true;
  }

  isInFlight(scope: string, requestId: string): Promise<boolean> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    return this.ownerInFlight?.(scope, requestId) === true ||
      this.inFlight.get(scope)?.has(requestId) === true
      ? RESOLVED_TRUE
      : RESOLVED_FALSE;
  }

  /**
   * For the registry that made this store (nothing else writes its calls' entries): its own
   * table of handles answers {@link isInFlight} for its calls, which it then does not write here,
   * so a call costs one table entry instead of two. Entries added through {@link addInFlight}
   * are kept here as before.
   *
   * @internal
   */
  adoptInFlight(ownerInFlight: (scope: string, requestId: string) => boolean): void {
    this.ownerInFlight = ownerInFlight;
  }

  /**
   * Whether the store still takes writes (false once closed).
   *
   * @internal
   */
  get open(): boolean {
    return !this.closed;
  }

  /**
   * Removes rows with `now - cancelledAt > ttlMs` (strictly). Each scope is walked from
   * its oldest row and left at its first fresh one: O(scopes + removed), never a row scan.
   * In-flight liveness is the registry's to judge (it owns the handles), so `inFlightRemoved` is
   * always 0 here.
   */
  cleanup(ttlMs: number, now: number): Promise<CleanupResult> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    let removed = 0;
    for (const rows of this.scopes.values()) {
      for (const row of rows.values()) {
        if (!(now - row.cancelledAt > ttlMs)) break;
        this.remove(rows, row);
        removed++;
      }
    }
    return removed === 0 ? NOTHING_REMOVED : Promise.resolve({ removed, inFlightRemoved: 0 });
  }

  size(): Promise<number> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    return Promise.resolve(this.rowCount);
  }

  /** A single-process store has no other process to hear from: the listener is never called. */
  onRemoteCancellation(_listener: (event: RemoteCancellation) => void): () => void {
    return UNSUBSCRIBED;
  }

  /** Drops every row and entry; later calls reject with {@link StoreClosedError}. Idempotent. */
  close(): Promise<void> {
    this.closed = true;
    this.scopes.clear();
    this.rowCount = 0;
    this.inFlight.clear();
    this.resting = null;
    return RESOLVED_VOID;
  }

  /**
   * A snapshot of every row in the order they were written, oldest first (diagnostics and tests;
   * O(rows log rows)).
   */
  rows(): CancellationRow[] {
    const all: StoredRow[] = [];
    for (const rows of this.scopes.values()) for (const row of rows.values()) all.push(row);
    all.sort((a, b) => a.sequence - b.sequence);
    return all.map(({ scope, requestId, reason, cancelledAt }) => ({
      scope,
      requestId,
      reason,
      cancelledAt,
    }));
  }

  /** Evicts one batch in the eviction order (src/cancellation/eviction.ts); the batch is always full unless the table is smaller. */
  private reclaim(): void {
    for (const row of chooseEvictions(this.scopes, this.batch)) {
      const rows = this.scopes.get(row.scope);
      if (rows !== undefined) this.remove(rows, row);
    }
  }

  private remove(rows: Map<string, StoredRow>, row: StoredRow): void {
    rows.delete(row.requestId);
    this.rowCount--;
    if (rows.size === 0) this.scopes.delete(row.scope);
  }
}
