/**
 * The cancellation registry over a {@link CancellationStore}: a local `AbortController` per
 * tracked request, aborted at once when a matching cancel is recorded, instead of tools polling
 * (docs/cancellation.md, "The cancellation registry"). Limits (quota, cap, eviction) belong to the store.
 */
import { channels } from "../diagnostics.js";
import {
  type CancellationSource,
  InvalidOptionError,
  RequestCancelledError,
  StoreClosedError,
} from "../errors.js";
import { OPTION, readOption } from "../option-schema.js";
import { reflectText } from "../reflect.js";
import { SteadyMap } from "../steady-table.js";
import { CancellationJanitor, DEFAULT_JANITOR_INTERVAL_MS } from "./janitor.js";
import { LocalRequestHandle } from "./local-handle.js";
import { MemoryCancellationStore } from "./memory-store.js";
import { normalizeRequestId } from "./request-id.js";
import type {
  CancellationStore,
  CancelResult,
  CleanupResult,
  HandleLifetime,
  RemoteCancellation,
  RequestHandle,
} from "./types.js";

/** Options of {@link CancellationRegistry}. */
export interface CancellationRegistryOptions {
  /**
   * Where rows and in-flight entries live. Default: a {@link MemoryCancellationStore} built from
   * `maxRows`, `maxRowsPerScope` and `clock`. A given store carries its own limits, so giving
   * `maxRows` or `maxRowsPerScope` with it is an error.
   */
  readonly store?: CancellationStore;
  /** Global cap of the default store; `Infinity` disables it. Default 10 000. */
  readonly maxRows?: number;
  /** Per-scope quota of the default store; `Infinity` disables it. Default 256. */
  readonly maxRowsPerScope?: number;
  /** Age after which the janitor removes a row. Default 300 000 ms (5 min). */
  readonly ttlMs?: number;
  /** Janitor interval. Default 60 000 ms. */
  readonly janitorIntervalMs?: number;
  /** Whether to run the janitor. Default true. */
  readonly janitor?: boolean;
  /** Called with the error of a failed janitor sweep; the janitor keeps running. */
  readonly onJanitorError?: (error: unknown) => void;
  /** Time source in ms since the epoch (row stamps of the default store, cleanup's "now"). */
  readonly clock?: () => number;
}

/** Options of {@link CancellationRegistry.track}. */
export interface TrackOptions {
  /** The request's exchange: once it aborts, the handle is dead and cleanup removes it. */
  readonly lifetime?: HandleLifetime;
  /**
   * False for a request that `notifications/cancelled` must never reach (a 2026-07-28 request:
   * its client cancels by closing its stream, and another client may use the same id). Such a
   * handle ignores every cancel whose source is `"notification"`, local or from another node.
   * Default true.
   */
  readonly notifiable?: boolean;
}

/** Default row TTL: 5 min. */
export const DEFAULT_TTL_MS = 300_000;

const OK: CancelResult = Object.freeze({ ok: true });
const INVALID_REQUEST_ID: CancelResult = Object.freeze({
  ok: false,
  error: "invalid_request_id",
});
const LIMIT_REACHED: CancelResult = Object.freeze({
  ok: false,
  error: "cancellation_limit_reached",
});
const RESOLVED_VOID: Promise<void> = Promise.resolve();
const RESOLVED_FALSE: Promise<boolean> = Promise.resolve(false);
const RESOLVED_NULL: Promise<null> = Promise.resolve(null);

/** A memory store whose in-flight and clear methods are its class's own (as they are at this moment). */
function isPlainMemoryStore(store: CancellationStore): store is MemoryCancellationStore {
  const own = MemoryCancellationStore.prototype;
  return (
    store instanceof MemoryCancellationStore &&
    store.addInFlight === own.addInFlight &&
    store.removeInFlight === own.removeInFlight &&
    store.clear === own.clear
  );
}

function ignore(): void {
  // A failed background store write: the sweep removes what it left.
}

type HandleSlot = LocalRequestHandle | LocalRequestHandle[];

/** Sources of cancels that target a `(scope, id)` key rather than one handle. */
const KEY_WIDE_SOURCES: ReadonlySet<CancellationSource> = new Set(["notification", "library"]);

/**
 * Records cancellations per `(scope, request id)` and aborts the matching in-flight requests.
 * Ids are safe integers or strings of at most 256 UTF-8 bytes (`5` and `"5"` are one key); a
 * `null` id is a no-op; the per-scope quota is the only rejection; reasons go through
 * `reflectText(reason, 200)`. A stale row never cancels: only a cancel that arrives while a
 * request is in flight aborts it.
 *
 * @example
 * ```ts
 * const registry = new CancellationRegistry({ maxRowsPerScope: 256 });
 * const handle = await registry.track(7, "principal:alice");
 * handle.signal.addEventListener("abort", () => console.log("stop"), { once: true });
 * await registry.cancel(7, "user pressed stop", "principal:alice"); // logs "stop"
 * await registry.untrack(handle);
 * ```
 */
export class CancellationRegistry {
  /** The store holding rows and in-flight entries. */
  readonly store: CancellationStore;
  /** Default TTL of {@link cleanup} and the janitor, in ms. */
  readonly ttlMs: number;
  private readonly clock: () => number;
  private readonly ownsStore: boolean;
  /** The store, when it is the memory store: its in-flight writes are made without a promise. */
  private readonly memoryStore: MemoryCancellationStore | null;
  /** The memory store this registry made: `handles` is its in-flight table (adoptInFlight). */
  private readonly adopted: boolean;
  /** scope → request id → local handle(s); nested so no key separator can collide. */
  private readonly handles = new Map<string, SteadyMap<string, HandleSlot>>();
  /** The scope whose table in `handles` is kept while empty (at most one), or null. */
  private resting: string | null = null;
  /** Handles without a usable id: not in the store, but reachable by abortAll. */
  private readonly untracked = new Set<LocalRequestHandle>();
  private registered = 0;
  private readonly janitor: CancellationJanitor | undefined;
  private readonly unsubscribe: () => void;
  private closed = false;

  constructor(options: CancellationRegistryOptions = {}) {
    this.clock = readOption(OPTION.clock, "clock", options.clock, Date.now);
    this.ttlMs = readOption(OPTION.durationMs, "ttlMs", options.ttlMs, DEFAULT_TTL_MS);
    const intervalMs = readOption(
      OPTION.intervalMs,
      "janitorIntervalMs",
      options.janitorIntervalMs,
      DEFAULT_JANITOR_INTERVAL_MS,
    );
    readOption(OPTION.boolean, "janitor", options.janitor, undefined);
    if (options.store !== undefined) {
      if (options.maxRows !== undefined) {
        throw new InvalidOptionError(
          "maxRows",
          "unset when a store is given (set it on the store)",
          options.maxRows,
        );
      }
      if (options.maxRowsPerScope !== undefined) {
        throw new InvalidOptionError(
          "maxRowsPerScope",
          "unset when a store is given (set it on the store)",
          options.maxRowsPerScope,
        );
      }
      if (
        typeof options.store !== "object" ||
        options.store === null ||
        typeof options.store.record !== "function"
      ) {
        throw new InvalidOptionError("store", "a CancellationStore", options.store);
      }
      this.store = options.store;
      this.ownsStore = false;
    } else {
      const storeOptions: { maxRows?: number; maxRowsPerScope?: number; clock: () => number } = {
        clock: this.clock,
      };
      if (options.maxRows !== undefined) storeOptions.maxRows = options.maxRows;
      if (options.maxRowsPerScope !== undefined)
        storeOptions.maxRowsPerScope = options.maxRowsPerScope;
      this.store = new MemoryCancellationStore(storeOptions);
      this.ownsStore = true;
    }
    // The memory store, with its own in-flight and clear methods (a subclass or a caller may
    // have replaced them, e.g. to make them wait: then they are called as the contract says).
    this.memoryStore = isPlainMemoryStore(this.store) ? this.store : null;
    this.adopted = this.ownsStore && this.memoryStore !== null;
    if (this.adopted) {
      (this.store as MemoryCancellationStore).adoptInFlight(
        (scope, requestId) => this.handles.get(scope)?.has(requestId) === true,
      );
    }
    this.unsubscribe = this.store.onRemoteCancellation((event: RemoteCancellation) => {
      const reason = () => new RequestCancelledError(event.source, event.reason);
      // Every handle of a scope (cancelScope on another node).
      if (event.requestId === null) return this.abortScope(event.scope, reason);
      // Disconnects and shutdowns concern one handle on the node that saw them
      // (cancelHandle); only key-wide cancels abort namesakes elsewhere.
      if (!KEY_WIDE_SOURCES.has(event.source)) return;
      this.abortLocal(event.scope, event.requestId, event.source, reason);
    });
    if (options.janitor !== false) {
      const janitorOptions: {
        intervalMs: number;
        sweep: () => Promise<number>;
        onError?: (error: unknown) => void;
      } = { intervalMs, sweep: async () => (await this.cleanup(this.ttlMs)).removed };
      if (options.onJanitorError !== undefined) janitorOptions.onError = options.onJanitorError;
      this.janitor = new CancellationJanitor(janitorOptions);
      this.janitor.start();
    }
  }

  /** Local handles tracked and not yet untracked or swept (requests in flight here). */
  get inFlightCount(): number {
    return this.registered;
  }

  /** Whether the janitor is running. */
  get janitorRunning(): boolean {
    return this.janitor?.running === true;
  }

  /**
   * Records a cancellation, publishes `conduit-mcp:request:cancelled` and, before resolving,
   * aborts every local handle of the key with `new RequestCancelledError(source, reason)`.
   * Resolves `{ ok: true }` (also for a null id, which records nothing), `invalid_request_id`,
   * or `cancellation_limit_reached` when the scope is at its quota.
   */
  async cancel(
    id: unknown,
    reason?: unknown,
    scope = "global",
    source: CancellationSource = "library",
  ): Promise<CancelResult> {
    const requestId = normalizeRequestId(id);
    if (requestId === undefined) return INVALID_REQUEST_ID;
    if (requestId === null) return OK;
    const text = reason === null || reason === undefined ? null : reflectText(reason, 200);
    const result = await this.record(scope, requestId, text, source);
    if (result.ok) {
      this.abortLocal(scope, requestId, source, () => new RequestCancelledError(source, text));
    }
    return result;
  }

  /**
   * Cancels one handle for a cause that concerns it alone (disconnect, session end, shutdown): it
   * aborts at once and a row is recorded under its scope, so `isCancelled(id, scope)` is true
   * afterwards. Unlike {@link cancel}, namesakes (same id and scope, e.g. two anonymous clients
   * behind one address) keep running here and on other nodes: one client hanging up must never
   * stop another's call. Resolves `{ ok: true }` when a row was written; otherwise (null id,
   * quota reached) the handle is still aborted.
   */
  async cancelHandle(
    handle: RequestHandle,
    reason?: unknown,
    source: CancellationSource = "disconnect",
  ): Promise<CancelResult> {
    const text = reason === null || reason === undefined ? null : reflectText(reason, 200);
    handle.abort(new RequestCancelledError(source, text));
    const { scope, requestId } = handle;
    if (requestId === null) return OK;
    return this.record(scope, requestId, text, source);
  }

  /**
   * Aborts every in-flight handle of `scope` here and, through the store, on other nodes (e.g. a
   * session ended). Records no row, so nothing counts against the quota. Never rejects: a store
   * outage leaves the other nodes' handles to their own ends.
   */
  async cancelScope(
    scope: string,
    reason?: unknown,
    source: CancellationSource = "library",
  ): Promise<void> {
    const text = reason === null || reason === undefined ? null : reflectText(reason, 200);
    this.abortScope(scope, () => new RequestCancelledError(source, text));
    try {
      await this.store.announceScopeCancel?.(scope, text, source);
    } catch {
      // Fail-open: the local handles are aborted all the same.
    }
  }

  /**
   * For a cancel whose key is in flight nowhere the store can see: asks the other processes to
   * abort a call of the key they run but have not shared yet (the Redis store shares a call only
   * once it has run `shareAfterMs`). Records no row; never rejects; a no-op on a store that has no
   * one to tell.
   */
  async announceCancel(
    id: unknown,
    reason: unknown,
    scope: string,
    source: CancellationSource = "notification",
  ): Promise<void> {
    if (this.store.announceCancel === undefined) return;
    const requestId = normalizeRequestId(id);
    if (requestId == null) return;
    const text = reason === null || reason === undefined ? null : reflectText(reason, 200);
    try {
      await this.store.announceCancel(scope, requestId, text, source);
    } catch {
      // Fail-open, as cancelScope.
    }
  }

  /** Writes the row (quota, then cap) and, once written, publishes `request:cancelled`. */
  private async record(
    scope: string,
    requestId: string,
    reason: string | null,
    source: CancellationSource,
  ): Promise<CancelResult> {
    const outcome = await this.store.record(
      { scope, requestId, reason, cancelledAt: this.clock() },
      source,
    );
    if (outcome !== "recorded") return LIMIT_REACHED;
    if (channels.requestCancelled.hasSubscribers) {
      channels.requestCancelled.publish({ requestId, scope, reason, source });
    }
    return OK;
  }

  /** Whether a cancellation row exists for the key (false for null or invalid ids). */
  isCancelled(id: unknown, scope = "global"): Promise<boolean> {
    const requestId = normalizeRequestId(id);
    if (requestId == null) return RESOLVED_FALSE;
    return this.store.has(scope, requestId);
  }

  /** The recorded reason, or null (no row, no reason, or a null/invalid id). */
  async reason(id: unknown, scope = "global"): Promise<string | null> {
    const requestId = normalizeRequestId(id);
    if (requestId == null) return RESOLVED_NULL;
    return (await this.store.reason(scope, requestId)) ?? null;
  }

  /** Removes the key's row; resolves whether one was removed (null or invalid id: no-op). */
  clear(id: unknown, scope = "global"): Promise<boolean> {
    const requestId = normalizeRequestId(id);
    if (requestId == null) return RESOLVED_FALSE;
    return this.store.clear(scope, requestId);
  }

  /**
   * Starts tracking a request: a new handle whose signal a matching cancel aborts. Several
   * handles may share a key. A null or invalid id yields a handle that is not in the store (no
   * cancel can reach it) but can still be aborted locally and by {@link abortAll}.
   *
   * @example
   * ```ts
   * const handle = await registry.track(msg.id, scope, { lifetime: exchangeSignal });
   * await tool({ signal: handle.signal });
   * ```
   */
  track(id: unknown, scope: string, options?: TrackOptions): Promise<RequestHandle> {
    const tracked = this.trackNow(id, scope, options);
    return tracked instanceof Promise ? tracked : Promise.resolve(tracked);
  }

  /**
   * {@link track}, but the handle itself when it is tracked at once: with the memory store (its
   * writes never wait; unless its in-flight or clear methods were replaced, which are then called
   * as the contract says) a request starts without a promise and its microtask hop. A store that
   * failed is a rejected promise, as from track.
   *
   * @example
   * ```ts
   * const tracked = registry.trackNow(msg.id, scope);
   * const handle = tracked instanceof Promise ? await tracked : tracked;
   * ```
   */
  trackNow(
    id: unknown,
    scope: string,
    options?: TrackOptions,
  ): RequestHandle | Promise<RequestHandle> {
    const requestId = normalizeRequestId(id);
    const handle = new LocalRequestHandle(
      scope,
      requestId ?? null,
      options?.lifetime,
      options?.notifiable !== false,
    );
    this.registered++;
    if (requestId == null) {
      this.untracked.add(handle);
      return handle;
    }
    // Registered locally first, so a cancel landing while the store write is pending finds it.
    this.addLocal(handle, scope, requestId);
    if (this.memoryStore !== null) {
      if (
        this.adopted
          ? this.memoryStore.open
          : this.memoryStore.recordInFlight(scope, requestId, handle.handleId)
      )
        return handle;
      this.release(handle);
      return Promise.reject(new StoreClosedError());
    }
    return this.store.addInFlight(scope, requestId, handle.handleId).then(
      () => handle,
      (error: unknown) => {
        this.release(handle);
        throw error;
      },
    );
  }

  /**
   * Stops tracking that handle only (namesakes stay in flight) and marks it dead; idempotent. It
   * does not wait for the store, so an answer never waits on a shared-store round trip: the entry
   * is removed in the background, in order with later store calls, and the dead-handle sweep (or
   * the Redis node lease) removes it if that fails. An aborted handle stays aborted. Never
   * rejects.
   */
  untrack(handle: RequestHandle): Promise<void> {
    if (!(handle instanceof LocalRequestHandle) || handle.released) return RESOLVED_VOID;
    this.release(handle);
    if (handle.requestId === null) return RESOLVED_VOID;
    if (this.memoryStore !== null) {
      // A closed store has nothing left to remove; an adopted one has nothing of this call.
      if (!this.adopted)
        this.memoryStore.dropInFlight(handle.scope, handle.requestId, handle.handleId);
      return RESOLVED_VOID;
    }
    this.store.removeInFlight(handle.scope, handle.requestId, handle.handleId).catch(ignore);
    return RESOLVED_VOID;
  }

  /**
   * A call that ended: {@link untrack} its handle, then {@link clear} the row of `(scope, id)`
   * (the request the call answered). Undefined when both are done at once (the memory store);
   * else the clear's promise, which never rejects (a store outage leaves the row to the TTL
   * janitor). A handle without an id (never in the store) clears nothing.
   *
   * @example
   * ```ts
   * await (registry.finish(handle, msg.id, scope) ?? Promise.resolve());
   * ```
   */
  finish(handle: RequestHandle, id: unknown, scope: string): Promise<void> | undefined {
    void this.untrack(handle);
    if (handle.requestId === null) return undefined;
    const requestId = normalizeRequestId(id);
    if (requestId == null) return undefined;
    if (this.memoryStore !== null) {
      this.memoryStore.clearNow(scope, requestId);
      return undefined;
    }
    return this.store.clear(scope, requestId).then(ignore, ignore);
  }

  /**
   * {@link finish} for the request the handle was tracked for: the row cleared is the handle's own
   * key, so the id is not normalized (its decimal text made) a second time per call.
   *
   * @example
   * ```ts
   * await (registry.finishTracked(await registry.track(msg.id, scope)) ?? Promise.resolve());
   * ```
   */
  finishTracked(handle: RequestHandle): Promise<void> | undefined {
    void this.untrack(handle);
    const { requestId, scope } = handle;
    if (requestId === null) return undefined;
    if (this.memoryStore !== null) {
      this.memoryStore.clearNow(scope, requestId);
      return undefined;
    }
    return this.store.clear(scope, requestId).then(ignore, ignore);
  }

  /** Whether any handle, here or (shared store) on another node, is in flight for the key. */
  isInFlight(id: unknown, scope: string): Promise<boolean> {
    const requestId = normalizeRequestId(id);
    if (requestId == null) return RESOLVED_FALSE;
    // A live handle of this process answers without the store: a Redis outage (where the store
    // fails open with `false`) must not make this process's own calls uncancellable (docs/redis.md,
    // "Outages": local cancellation keeps working).
    if (this.handles.get(scope)?.has(requestId) === true) return Promise.resolve(true);
    return this.store.isInFlight(scope, requestId);
  }

  /**
   * One cleanup pass: drops local handles that are dead but still registered (their `lifetime`
   * ended) with their store entries, then rows older than `ttlMs` (strictly). Publishes
   * `conduit-mcp:cancellation:cleanup` `{ removed, inFlightRemoved }` and returns both counts.
   */
  async cleanup(ttlMs: number = this.ttlMs): Promise<CleanupResult> {
    if (typeof ttlMs !== "number" || Number.isNaN(ttlMs) || ttlMs < 0) {
      throw new InvalidOptionError("ttlMs", "a non-negative number of milliseconds", ttlMs);
    }
    const dead: LocalRequestHandle[] = [];
    for (const ids of this.handles.values()) {
      for (const slot of ids.values()) {
        if (slot instanceof LocalRequestHandle) {
          if (!slot.alive) dead.push(slot);
        } else {
          for (const handle of slot) if (!handle.alive) dead.push(handle);
        }
      }
    }
    for (const handle of this.untracked) if (!handle.alive) dead.push(handle);
    const removals: Promise<void>[] = [];
    for (const handle of dead) {
      this.release(handle);
      if (handle.requestId !== null) {
        removals.push(this.store.removeInFlight(handle.scope, handle.requestId, handle.handleId));
      }
    }
    const [stored] = await Promise.all([this.store.cleanup(ttlMs, this.clock()), ...removals]);
    const result: CleanupResult = {
      removed: stored.removed,
      inFlightRemoved: dead.length + stored.inFlightRemoved,
    };
    if (channels.cancellationCleanup.hasSubscribers) {
      channels.cancellationCleanup.publish({
        removed: result.removed,
        inFlightRemoved: result.inFlightRemoved,
      });
    }
    return result;
  }

  /** Number of cancellation rows in the store. */
  size(): Promise<number> {
    return this.store.size();
  }

  /**
   * Aborts every local handle (tracked or not) with `reason`, e.g. on shutdown. Writes nothing
   * and untracks nothing: each request still runs its own `finally`.
   */
  abortAll(reason: RequestCancelledError): void {
    const all: LocalRequestHandle[] = [...this.untracked];
    for (const ids of this.handles.values()) {
      for (const slot of ids.values()) {
        if (slot instanceof LocalRequestHandle) all.push(slot);
        else all.push(...slot);
      }
    }
    // Collected first: abort listeners may untrack synchronously.
    for (const handle of all) handle.abort(reason);
  }

  /** Stops the janitor (idempotent). */
  stopJanitor(): void {
    this.janitor?.stop();
  }

  /**
   * Stops the janitor and store listener, and closes the store if the registry created it (a
   * store passed in belongs to the caller). Idempotent.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopJanitor();
    this.unsubscribe();
    if (this.ownsStore) await this.store.close();
  }

  /** Aborts every registered handle of the scope; the error is built only if there is one. */
  private abortScope(scope: string, reason: () => RequestCancelledError): void {
    const ids = this.handles.get(scope);
    if (ids === undefined) return;
    const error = reason();
    // Collected first: abort listeners may untrack (and so change the maps) synchronously.
    const all: LocalRequestHandle[] = [];
    for (const slot of ids.values()) {
      if (slot instanceof LocalRequestHandle) all.push(slot);
      else all.push(...slot);
    }
    for (const handle of all) handle.abort(error);
  }

  /**
   * Aborts every registered handle of the key that `source` may reach (a notification never
   * reaches a handle tracked with `notifiable: false`); the error is built only if needed.
   */
  private abortLocal(
    scope: string,
    requestId: string,
    source: CancellationSource,
    reason: () => RequestCancelledError,
  ): void {
    const slot = this.handles.get(scope)?.get(requestId);
    if (slot === undefined) return;
    const byNotification = source === "notification";
    if (slot instanceof LocalRequestHandle) {
      if (byNotification && !slot.notifiable) return;
      slot.abort(reason());
      return;
    }
    let error: RequestCancelledError | null = null;
    // A copy: an abort listener may untrack (and so splice) synchronously.
    for (const handle of [...slot]) {
      if (byNotification && !handle.notifiable) continue;
      error ??= reason();
      handle.abort(error);
    }
  }

  private addLocal(handle: LocalRequestHandle, scope: string, requestId: string): void {
    let ids = this.handles.get(scope);
    if (ids === undefined) {
      ids = new SteadyMap();
      this.handles.set(scope, ids);
    } else if (scope === this.resting) {
      this.resting = null;
    }
    const slot = ids.get(requestId);
    if (slot === undefined) ids.set(requestId, handle);
    else if (slot instanceof LocalRequestHandle) ids.set(requestId, [slot, handle]);
    else slot.push(handle);
  }

  /** Marks the handle released and drops it from the local maps (not from the store). */
  private release(handle: LocalRequestHandle): void {
    if (handle.released) return;
    handle.released = true;
    this.registered--;
    const { scope, requestId } = handle;
    if (requestId === null) {
      this.untracked.delete(handle);
      return;
    }
    const ids = this.handles.get(scope);
    const slot = ids?.get(requestId);
    if (ids === undefined || slot === undefined) return;
    if (slot === handle) ids.delete(requestId);
    else if (Array.isArray(slot)) {
      const at = slot.indexOf(handle);
      if (at !== -1) slot.splice(at, 1);
      if (slot.length === 1) ids.set(requestId, slot[0] as LocalRequestHandle);
      else if (slot.length === 0) ids.delete(requestId);
    }
    if (ids.size === 0 && scope !== this.resting) {
      // The scope's empty table stays for its next request, in place of the one that stayed
      // before (at most one empty table is kept: a client whose calls follow one another does
      // not build and drop a table per call).
      const resting = this.resting;
      if (resting !== null && this.handles.get(resting)?.size === 0) this.handles.delete(resting);
      this.resting = scope;
    }
  }
}
