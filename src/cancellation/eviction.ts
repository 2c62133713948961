/**
 * The global-cap eviction choice of the memory store, without a full-table sort.
 *
 * The rows to evict are the first `batch` of every row sorted by
 * `(-count(scope), cancelledAt, scope, id)` (docs/architecture.md, "Eviction order"). The same rows are found here from the store's own layout — one `Map` per scope whose
 * insertion order is time order — in three steps:
 *
 * 1. One pass over the scopes groups them by row count (the counts are the snapshot the sort key
 *    uses: they do not change while the batch is chosen).
 * 2. Size groups are taken largest first. A group that fits in what is left of the batch goes
 *    whole, so its order does not matter.
 * 3. The first group that does not fit gives up its oldest rows: a k-way merge of its scopes by
 *    `(cancelledAt, scope, id)` through a small binary heap of per-scope cursors.
 *
 * Cost per reclaim: O(scopes + batch · log k), run once per `batch` inserts, so amortised O(1)
 * per insert for a fixed batch fraction (the batch is maxRows / 20).
 */
import { compareCodePoints } from "./code-point-order.js";

/** A row as the memory store keeps it. */
export interface StoredRow {
  readonly scope: string;
  readonly requestId: string;
  readonly reason: string | null;
  /** Non-decreasing across the store (see MemoryCancellationStore), so Map order is time order. */
  readonly cancelledAt: number;
  /** Write order across the whole store (for snapshots; eviction never needs it). */
  readonly sequence: number;
}

/** Scope → (request id → row), each inner Map in non-decreasing `cancelledAt` order. */
export type ScopeTable = ReadonlyMap<string, ReadonlyMap<string, StoredRow>>;

/** The batch size at the cap: `max(1, floor(maxRows / 20))`. */
export function evictionBatchSize(maxRows: number): number {
  return Math.max(1, Math.floor(maxRows / 20));
}

/**
 * Chooses the rows a full sort would put first: `min(batch, rows)` rows ordered by
 * `(-count(scope), cancelledAt, scope, id)`, strings by code point. Does not modify the table.
 */
export function chooseEvictions(table: ScopeTable, batch: number): StoredRow[] {
  const chosen: StoredRow[] = [];
  if (batch <= 0 || table.size === 0) return chosen;

  // Step 1: group scopes by their row count, in one pass.
  const groups = new Map<number, Array<ReadonlyMap<string, StoredRow>>>();
  const scopeNames = new Map<ReadonlyMap<string, StoredRow>, string>();
  for (const [scope, rows] of table) {
    const count = rows.size;
    if (count === 0) continue;
    const group = groups.get(count);
    if (group === undefined) groups.set(count, [rows]);
    else group.push(rows);
    scopeNames.set(rows, scope);
  }
  // Distinct counts sum to at most the table size, so there are O(sqrt(rows)) of them.
  const counts = [...groups.keys()].sort((a, b) => b - a);

  let remaining = batch;
  for (const count of counts) {
    const group = groups.get(count) ?? [];
    // Step 2: a group that fits goes whole; order inside it is irrelevant.
    if (count * group.length <= remaining) {
      for (const rows of group) for (const row of rows.values()) chosen.push(row);
      remaining -= count * group.length;
      if (remaining === 0) break;
      continue;
    }
    // Step 3: the oldest `remaining` rows of this group, by (cancelledAt, scope, id).
    takeOldest(group, scopeNames, remaining, chosen);
    break;
  }
  return chosen;
}

/** Appends the `take` first rows by `(cancelledAt, scope, id)` across `group`'s scopes. */
function takeOldest(
  group: ReadonlyArray<ReadonlyMap<string, StoredRow>>,
  scopeNames: ReadonlyMap<ReadonlyMap<string, StoredRow>, string>,
  take: number,
  out: StoredRow[],
): void {
  if (group.length === 1) {
    const cursor = new ScopeCursor(group[0] ?? new Map());
    for (let row = cursor.head; row !== undefined && take > 0; row = cursor.advance(), take--) {
      out.push(row);
    }
    return;
  }
  const heap: ScopeCursor[] = [];
  for (const rows of group) {
    const cursor = new ScopeCursor(rows, scopeNames.get(rows) ?? "");
    if (cursor.head !== undefined) heap.push(cursor);
  }
  // Floyd heapify: O(k).
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(heap, i);
  while (take > 0 && heap.length > 0) {
    const top = heap[0] as ScopeCursor;
    out.push(top.head as StoredRow);
    take--;
    if (top.advance() === undefined) {
      const last = heap.pop() as ScopeCursor;
      if (heap.length === 0) break;
      heap[0] = last;
    }
    siftDown(heap, 0);
  }
}

/** Heap order: `(head.cancelledAt, scope, head.requestId)` ascending. */
function cursorBefore(a: ScopeCursor, b: ScopeCursor): boolean {
  const x = a.head as StoredRow;
  const y = b.head as StoredRow;
  if (x.cancelledAt !== y.cancelledAt) return x.cancelledAt < y.cancelledAt;
  const byScope = compareCodePoints(a.scope, b.scope);
  if (byScope !== 0) return byScope < 0;
  return compareCodePoints(x.requestId, y.requestId) < 0;
}

function siftDown(heap: ScopeCursor[], start: number): void {
  const n = heap.length;
  let i = start;
  const item = heap[i] as ScopeCursor;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= n) break;
    const right = left + 1;
    let child = left;
    if (right < n && cursorBefore(heap[right] as ScopeCursor, heap[left] as ScopeCursor)) {
      child = right;
    }
    const candidate = heap[child] as ScopeCursor;
    if (!cursorBefore(candidate, item)) break;
    heap[i] = candidate;
    i = child;
  }
  heap[i] = item;
}

function compareIds(a: StoredRow, b: StoredRow): number {
  return compareCodePoints(a.requestId, b.requestId);
}

/**
 * Walks one scope's rows in `(cancelledAt, id)` order. The Map is already in time order; rows
 * sharing one `cancelledAt` (a run) are in insertion order, so each run is sorted by id when the
 * cursor reaches it — only the runs actually visited, never the whole scope.
 */
class ScopeCursor {
  readonly scope: string;
  /** The current row, or undefined when the scope is exhausted. */
  head: StoredRow | undefined;
  private readonly rows: Iterator<StoredRow>;
  /** The next row after the current run (one row of look-ahead). */
  private pending: StoredRow | undefined;
  private readonly run: StoredRow[] = [];
  private runIndex = 0;

  constructor(rows: ReadonlyMap<string, StoredRow>, scope = "") {
    this.scope = scope;
    this.rows = rows.values();
    this.pending = this.next();
    this.head = this.advance();
  }

  /** Moves to the next row and returns it (also kept in `head`). */
  advance(): StoredRow | undefined {
    if (this.runIndex < this.run.length) {
      this.head = this.run[this.runIndex++];
      return this.head;
    }
    const first = this.pending;
    if (first === undefined) {
      this.head = undefined;
      return undefined;
    }
    let following = this.next();
    if (following === undefined || following.cancelledAt !== first.cancelledAt) {
      this.pending = following;
      this.head = first;
      return first;
    }
    const run = this.run;
    run.length = 0;
    run.push(first);
    while (following !== undefined && following.cancelledAt === first.cancelledAt) {
      run.push(following);
      following = this.next();
    }
    this.pending = following;
    run.sort(compareIds);
    this.runIndex = 1;
    this.head = run[0];
    return this.head;
  }

  private next(): StoredRow | undefined {
    const step = this.rows.next();
    return step.done === true ? undefined : step.value;
  }
}
