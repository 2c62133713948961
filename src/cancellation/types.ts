/**
 * Contracts of the cancellation layer. The registry sits over a {@link CancellationStore}: the
 * memory store by default, or the Redis store (`conduit-mcp/redis`) shared across nodes.
 */

import type { CancellationSource, RequestCancelledError } from "../errors.js";
import type { Reachability } from "../reachability.js";

/** A JSON-RPC request id as the client sent it: a string or an integer (MCP `RequestId`). */
export type RequestId = string | number;

/**
 * The outcome of {@link CancellationRegistryApi.cancel}: ok, or one of the two error
 * values. A value, not an exception: both are ordinary answers to hostile input.
 */
export type CancelResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly error: "invalid_request_id" | "cancellation_limit_reached" };

/** Counts returned by one cleanup pass (also published on `conduit-mcp:cancellation:cleanup`). */
export interface CleanupResult {
  /** Cancellation rows older than the TTL that were removed. */
  readonly removed: number;
  /** In-flight entries of handles no longer alive that were removed. */
  readonly inFlightRemoved: number;
}

/** One recorded cancellation, as a store hands it back or announces it. */
export interface CancellationRow {
  /** The prefixed scope. */
  readonly scope: string;
  /** The normalised request id (integers as decimal text). */
  readonly requestId: string;
  /** The sanitised reason, or null when none was given. */
  readonly reason: string | null;
  /** When it was recorded (or last refreshed), in ms since the epoch. */
  readonly cancelledAt: number;
}

/**
 * A cancellation recorded elsewhere (another process or node), delivered by the store so the
 * registry can abort its own matching handles at once, without polling.
 */
export interface RemoteCancellation {
  readonly scope: string;
  /** The request id, or null for every handle of the scope (e.g. a session ended). */
  readonly requestId: string | null;
  readonly reason: string | null;
  readonly source: CancellationSource;
}

/** The outcome of {@link CancellationStore.record}. */
export type RecordOutcome = "recorded" | "limit_reached";

/**
 * Storage of cancellation rows and in-flight entries. Implementations enforce the per-scope
 * quota and the global cap (with the documented eviction order) atomically, so the same rules hold
 * whether one process or many share the store. Ids reaching a store are already validated and
 * normalised to strings; reasons are already sanitised.
 *
 * A shared contract test suite (test/cancellation/store-contract.ts) runs against every
 * implementation.
 */
export interface CancellationStore {
  /**
   * Whether the service behind the store is reachable (`GET /ready` answers 503 while it is not).
   * Absent for a store that needs no other process.
   */
  readonly reachability?: Reachability;
  /**
   * Records (or refreshes) a row. Checks the scope's quota first (the only check that rejects:
   * a scope at quota cannot even refresh an existing row), then evicts a batch at the global
   * cap, then writes.
   */
  record(row: CancellationRow, source: CancellationSource): Promise<RecordOutcome>;
  /** Whether a row exists for the key. */
  has(scope: string, requestId: string): Promise<boolean>;
  /** The row's reason; `undefined` when there is no row. */
  reason(scope: string, requestId: string): Promise<string | null | undefined>;
  /** Removes the row if present; reads before it writes. Resolves whether a row was removed. */
  clear(scope: string, requestId: string): Promise<boolean>;
  /** Adds one in-flight entry for a handle; several handles may share a key. */
  addInFlight(scope: string, requestId: string, handleId: string): Promise<void>;
  /** Removes only that handle's entry. */
  removeInFlight(scope: string, requestId: string, handleId: string): Promise<void>;
  /** Whether any handle holds an in-flight entry for the key. */
  isInFlight(scope: string, requestId: string): Promise<boolean>;
  /**
   * Removes rows strictly older than `ttlMs` at `now`, and in-flight entries that the store
   * itself knows to be dead (with Redis: entries of nodes whose lease expired).
   */
  cleanup(ttlMs: number, now: number): Promise<CleanupResult>;
  /** Number of cancellation rows. */
  size(): Promise<number>;
  /**
   * Delivers cancellations recorded by *other* processes (a single-process store never calls
   * the listener). Returns an unsubscribe function.
   */
  onRemoteCancellation(listener: (event: RemoteCancellation) => void): () => void;
  /**
   * Tells every other process that every handle of `scope` must abort (no row is written). A
   * single-process store has no one to tell and may leave it out.
   */
  announceScopeCancel?(
    scope: string,
    reason: string | null,
    source: CancellationSource,
  ): Promise<void>;
  /**
   * Tells every other process to abort its handles of the key (those `source` may reach) without
   * writing a row: for a cancel of a key in flight nowhere the store can see, which a store that
   * shares calls only after a delay may still run elsewhere. A single-process store may leave it
   * out.
   */
  announceCancel?(
    scope: string,
    requestId: string,
    reason: string | null,
    source: CancellationSource,
  ): Promise<void>;
  /** Releases timers and connections. Idempotent. */
  close(): Promise<void>;
}

/**
 * Tells whether the thing a handle belongs to (e.g. its HTTP exchange) has ended: the dead-handle
 * sweep's `Process.alive?`. An `AbortSignal` is one; so is any object with an `aborted` flag,
 * which spares the per-request path an AbortController of its own.
 */
export interface HandleLifetime {
  readonly aborted: boolean;
}

/** Told once when a request handle aborts. */
export interface AbortListener {
  handleEvent(): void;
}

/**
 * One tracked request: owns the `AbortController` whose signal the tool sees. Several handles
 * may share a `(scope, id)` key; each is untracked on its own.
 */
export interface RequestHandle {
  /** Unique per handle in this process (and, with Redis, across nodes). */
  readonly handleId: string;
  /** The prefixed scope the request runs in. */
  readonly scope: string;
  /** The normalised request id, or null when the request cannot be tracked (null/invalid id). */
  readonly requestId: string | null;
  /** Aborts once, with a {@link RequestCancelledError} as its reason; stays aborted. */
  readonly signal: AbortSignal;
  /** Whether the handle has aborted (without creating its signal). */
  readonly aborted: boolean;
  /** False once untracked or released; the dead-handle sweep removes entries of dead handles. */
  readonly alive: boolean;
  /**
   * @internal One listener slot, called once, synchronously, when the handle aborts, before the signal's
   * own listeners; `null` clears it. Lets a transport follow the handle without creating its
   * signal (a closure-free `{ handleEvent() }` object, like an EventListener).
   */
  setAbortListener(listener: AbortListener | null): void;
  /** Aborts this handle only (disconnect, shutdown). No row is written. */
  abort(reason: RequestCancelledError): void;
}
