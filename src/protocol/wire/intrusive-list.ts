/**
 * A list whose items carry their own links: adding and removing is a few field writes, with no
 * allocation and no hashing. A `Set` of objects computes and stores an identity hash for every
 * new object it is given (a runtime call); the dispatcher's running calls are a new object per
 * call, added once and removed once. An item can be in one such list at a time.
 *
 * @example
 * ```ts
 * class Call implements Listed<Call> { listPrev = null; listNext = null; listed = false; }
 * const running = new IntrusiveList<Call>();
 * const call = new Call();
 * running.add(call);
 * running.delete(call); // true
 * ```
 */

/** The links an item of an {@link IntrusiveList} carries (its own; nobody else writes them). */
export interface Listed<T> {
  listPrev: T | null;
  listNext: T | null;
  /** Whether the item is in a list now. */
  listed: boolean;
}

/** See the module comment. */
export class IntrusiveList<T extends Listed<T>> {
  private head: T | null = null;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds `item` (nothing if it is in the list already). */
  add(item: T): void {
    if (item.listed) return;
    item.listed = true;
    item.listPrev = null;
    item.listNext = this.head;
    if (this.head !== null) this.head.listPrev = item;
    this.head = item;
    this.count++;
  }

  /** Removes `item`; false if it was not in the list. */
  delete(item: T): boolean {
    if (!item.listed) return false;
    item.listed = false;
    const previous = item.listPrev;
    const next = item.listNext;
    if (previous === null) this.head = next;
    else previous.listNext = next;
    if (next !== null) next.listPrev = previous;
    item.listPrev = null;
    item.listNext = null;
    this.count--;
    return true;
  }

  /** The items, newest first, copied: the list may change while the copy is used. */
  toArray(): T[] {
    const items: T[] = [];
    for (let item = this.head; item !== null; item = item.listNext) items.push(item);
    return items;
  }
}
