/**
 * A server's tools, resources, resource templates or prompts, changeable while serving: items
 * are added, removed, enabled and disabled; lists come out in one deterministic order (by key,
 * code-unit order, the same on every node whatever order items were added in); each request
 * sees only what its caller may see (`visible`, `scopes`); and every change is announced to
 * `onChanged` listeners, from which `list_changed` notifications can be sent
 * (https://modelcontextprotocol.io/specification/2025-11-25/server/tools#list-changed-notification).
 */
import { InvalidOptionError } from "../../errors.js";
import { isPlainObject, type ListKind } from "../wire/index.js";
import type { VisibilityContext } from "./primitive.js";

/** What every served item has, whatever its kind. */
export interface ListedItem {
  /** Its list entry. */
  readonly descriptor: Readonly<Record<string, unknown>>;
  readonly scopes: readonly string[];
  readonly visible: ((ctx: VisibilityContext) => boolean) | null;
}

/**
 * What a caller may do with an item: use it, not know it exists, or know it exists but lack
 * the authorization scopes to use it (403 with a challenge naming them).
 */
export type ItemAccess = "allowed" | "hidden" | "forbidden";

/**
 * What a served item of one kind looks like, as its `define*` function makes it: a plain object
 * with a descriptor, its scopes, the string field naming it and the functions it has. Checked when
 * an item is added, so a wrong value fails at once, naming what was expected.
 */
export interface ItemShape {
  /** The string field naming the item, unique in its collection (`name`, `uri`, `uriTemplate`). */
  readonly key: string;
  /** The functions every such item has. */
  readonly methods: readonly string[];
  /** What a valid item is, for the error (e.g. "a defineTool() result"). */
  readonly what: string;
}

/** One change to a collection, as told to its `onChanged` listeners. */
export interface CollectionChange {
  readonly list: ListKind;
  readonly change: "added" | "removed" | "enabled" | "disabled";
  /** The item's key: a tool or prompt name, a resource URI or a template's URI template. */
  readonly key: string;
}

/** One page of a list. */
export interface ListPage<T> {
  readonly items: readonly T[];
  /** The key of the page's last item when more visible items follow, else null. */
  readonly lastKey: string | null;
}

/**
 * Whether `ctx` may see and use `item`. A `visible` predicate that throws counts as false (a
 * bug in it must hide, never reveal). Scopes follow RFC 6750 §3.1 `insufficient_scope`: a
 * caller without a principal never sees a scoped item; one lacking a scope sees it forbidden.
 */
export function accessOf(item: ListedItem, ctx: VisibilityContext): ItemAccess {
  if (item.visible !== null) {
    let shown = false;
    try {
      shown = item.visible(ctx) === true;
    } catch {
      shown = false;
    }
    if (!shown) return "hidden";
  }
  if (item.scopes.length === 0) return "allowed";
  const granted = ctx.principal?.scopes;
  if (granted === undefined) return "hidden";
  for (const scope of item.scopes) if (!granted.includes(scope)) return "forbidden";
  return "allowed";
}

/**
 * A changeable, ordered set of served items of one kind.
 *
 * @example
 * ```ts
 * const server = createMcpServer({ tools: [echo] });
 * server.tools.add(sleep);
 * server.tools.disable("echo"); // hidden from lists and answered as unknown
 * const stop = server.tools.onChanged((change) => console.log(change));
 * ```
 */
export class PrimitiveCollection<T extends ListedItem> {
  /** Which list this is (`tools`, `resources`, `resourceTemplates`, `prompts`). */
  readonly list: ListKind;
  private readonly shape: ItemShape;
  private readonly items = new Map<string, T>();
  private readonly disabled = new Set<string>();
  private readonly listeners = new Set<(change: CollectionChange) => void>();
  /** Enabled items in list order, and each one's index; rebuilt lazily after a change. */
  private sorted: readonly T[] | null = null;
  private indexOf = new Map<string, number>();
  private callerDependent = false;

  /** @internal Built by the dispatcher's features; `shape` says what an item must look like. */
  constructor(options: {
    readonly list: ListKind;
    readonly shape: ItemShape;
    readonly items?: readonly unknown[] | undefined;
  }) {
    this.list = options.list;
    this.shape = options.shape;
    for (const item of options.items ?? []) this.insert(item);
  }

  /** How many items are held, enabled or not. */
  get size(): number {
    return this.items.size;
  }

  /**
   * Adds an item; throws InvalidOptionError when it is not one of this kind or its key is
   * already taken (a duplicate would make which one answers depend on order).
   */
  add(item: T): void {
    this.emit("added", this.insert(item));
  }

  /** Removes an item; resolves whether it was there. Calls already running finish. */
  remove(key: string): boolean {
    if (!this.items.delete(key)) return false;
    this.disabled.delete(key);
    this.emit("removed", key);
    return true;
  }

  /** Makes a disabled item listed and usable again; whether anything changed. */
  enable(key: string): boolean {
    if (!this.items.has(key) || !this.disabled.delete(key)) return false;
    this.emit("enabled", key);
    return true;
  }

  /** Hides an item from every caller (answered as unknown) without forgetting it. */
  disable(key: string): boolean {
    if (!this.items.has(key) || this.disabled.has(key)) return false;
    this.disabled.add(key);
    this.emit("disabled", key);
    return true;
  }

  /** Whether an item with this key is held (enabled or not). */
  has(key: string): boolean {
    return this.items.has(key);
  }

  /** Whether the item is held and enabled. */
  isEnabled(key: string): boolean {
    return this.items.has(key) && !this.disabled.has(key);
  }

  /** The enabled item with this key, whoever asks; undefined otherwise. */
  get(key: string): T | undefined {
    return this.disabled.has(key) ? undefined : this.items.get(key);
  }

  /** Every enabled item, in list order. */
  values(): readonly T[] {
    this.sort();
    return this.sorted as readonly T[];
  }

  /**
   * Whether what a caller sees can depend on who it is (an enabled item has `visible` or
   * `scopes`): then lists are cached `private`, never `public`
   * (https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching).
   */
  get dependsOnCaller(): boolean {
    this.sort();
    return this.callerDependent;
  }

  /**
   * Listens to changes; returns the function that stops listening. A listener that throws is
   * ignored (it cannot stop the change or the other listeners).
   */
  onChanged(listener: (change: CollectionChange) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * @internal The page of items `ctx` may see after `afterKey` (null: from the start); null when
   * `afterKey` is no longer listed (removed or disabled since): the client starts over, as MCP
   * pagination allows for a cursor that became invalid.
   */
  page(ctx: VisibilityContext, afterKey: string | null, pageSize: number): ListPage<T> | null {
    const all = this.values();
    let index = 0;
    if (afterKey !== null) {
      const at = this.indexOf.get(afterKey);
      if (at === undefined) return null;
      index = at + 1;
    }
    const items: T[] = [];
    for (; index < all.length; index++) {
      const item = all[index] as T;
      if (accessOf(item, ctx) !== "allowed") continue;
      if (items.length === pageSize) {
        return { items, lastKey: this.keyOf(items[items.length - 1] as T) };
      }
      items.push(item);
    }
    return { items, lastKey: null };
  }

  /** Adds a checked item; returns its key. */
  private insert(item: unknown): string {
    const { shape } = this;
    if (!hasShape(item, shape)) throw new InvalidOptionError(this.list, shape.what, item);
    const key = item[shape.key] as string;
    if (this.items.has(key)) {
      throw new InvalidOptionError(this.list, `unique keys (${key} is already defined)`, key);
    }
    this.items.set(key, item as unknown as T);
    this.sorted = null;
    return key;
  }

  private keyOf(item: T): string {
    return (item as unknown as Readonly<Record<string, unknown>>)[this.shape.key] as string;
  }

  private emit(change: CollectionChange["change"], key: string): void {
    this.sorted = null;
    if (this.listeners.size === 0) return;
    const event: CollectionChange = Object.freeze({ list: this.list, change, key });
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  private sort(): void {
    if (this.sorted !== null) return;
    const enabled: T[] = [];
    const indexOf = new Map<string, number>();
    let dependent = false;
    for (const [key, item] of this.items) {
      if (this.disabled.has(key)) continue;
      indexOf.set(key, enabled.length);
      enabled.push(item);
      if (item.visible !== null || item.scopes.length > 0) dependent = true;
    }
    this.sorted = Object.freeze(enabled);
    this.indexOf = indexOf;
    this.callerDependent = dependent;
  }
}

/** Whether `value` looks like an item of `shape` (a plain object with its fields and functions). */
function hasShape(value: unknown, shape: ItemShape): value is Readonly<Record<string, unknown>> {
  return (
    isPlainObject(value) &&
    typeof value[shape.key] === "string" &&
    isPlainObject(value.descriptor) &&
    Array.isArray(value.scopes) &&
    shape.methods.every((method) => typeof value[method] === "function")
  );
}
