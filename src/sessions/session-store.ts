/**
 * The session store contract (2025-era `Mcp-Session-Id`,
 * https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management).
 * Asynchronous so that a shared store (`RedisSessionStore`) can implement it; the memory store
 * is the default. `test/sessions/session-store-contract.ts` is the suite every store passes.
 */
import { utf8Bytes } from "../byte-ledger.js";
import type { Reachability } from "../reachability.js";

/** One session as stored. */
export interface SessionRecord {
  /** The session id (URL-safe, >= 128 bits from a CSPRNG). */
  readonly id: string;
  /** The principal that created it (null without auth): another principal cannot use it. */
  readonly principalId: string | null;
  /**
   * The scope of the `initialize` that created it (`principal:…` or `ip:…`): sessions are
   * bounded per creator, and a session's requests count against its creator's bounds too.
   */
  readonly creatorScope: string;
  /** The protocol revision negotiated by its `initialize`. */
  readonly protocolVersion: string;
  /** When it was created, ms since the epoch. */
  readonly createdAt: number;
  /** When it was last used, ms since the epoch (idle TTL is measured from here). */
  readonly lastSeenAt: number;
  /** The `logging/setLevel` threshold, or null. */
  readonly logLevel: string | null;
  /**
   * What the client's `initialize` declared it can be asked, as the flag list the protocol layer
   * makes of it (`"elicitation.form sampling roots"`, `""` for nothing); absent or null when not
   * recorded (a server then treats the capabilities as unknown).
   */
  readonly clientCapabilities?: string | null;
}

/**
 * What a session record costs its creator's byte budget: the UTF-8 bytes of its texts (id,
 * principal, creating scope, version, capability flags) plus {@link SESSION_RECORD_OVERHEAD} for
 * what any record holds besides (the table's entries, numbers, the log level). Measured on the
 * memory store: 100 000 records of 64-byte principals hold ~60 MB of heap, ~600 bytes each
 * (test/abuse/memory-ceiling.test.ts keeps the whole process under docs/tenancy.md's ceiling).
 *
 * @example
 * ```ts
 * sessionRecordBytes({ id, principalId: "alice", creatorScope: "principal:alice", protocolVersion: "2025-11-25", createdAt: 0, lastSeenAt: 0, logLevel: null }); // ~ 560
 * ```
 */
export function sessionRecordBytes(record: SessionRecord): number {
  return (
    SESSION_RECORD_OVERHEAD +
    utf8Bytes(record.id) +
    utf8Bytes(record.principalId) +
    utf8Bytes(record.creatorScope) +
    utf8Bytes(record.protocolVersion) +
    utf8Bytes(record.clientCapabilities)
  );
}

/** Bytes every session record is charged besides its texts (see {@link sessionRecordBytes}). */
export const SESSION_RECORD_OVERHEAD = 512;

/**
 * The outcome of {@link SessionStore.create}: `"scope-full"` when the creator's scope holds its
 * quota already (the only refusal of a live store: the global bound evicts instead), `"full"`
 * when the store refuses every session (a bound of 0).
 */
export type SessionCreateOutcome = "created" | "full" | "scope-full";

/**
 * Where sessions live.
 *
 * @example
 * ```ts
 * const store: SessionStore = new MemorySessionStore({ maxSessions: 1000 });
 * if ((await store.create(record)) === "scope-full") reply(429);
 * ```
 */
export interface SessionStore {
  /**
   * Whether the service behind the store is reachable (`GET /ready` answers 503 while it is not).
   * Absent for a store that needs no other process.
   */
  readonly reachability?: Reachability;
  /**
   * Stores a new session: refused (`"scope-full"`) when `record.creatorScope` holds the per-scope
   * bound (its count, or its bytes: {@link sessionRecordBytes}); at the global bounds the least recently used session of the creating scope holding the
   * most sessions is evicted to make room. Re-creating an existing id replaces it.
   */
  create(record: SessionRecord): Promise<SessionCreateOutcome>;
  /** The session, refreshed (`lastSeenAt = now`), or undefined when unknown or expired. */
  get(id: string): Promise<SessionRecord | undefined>;
  /** Sets the log level; resolves false when the session is unknown. */
  setLogLevel(id: string, level: string): Promise<boolean>;
  /** Ends the session; resolves whether it existed. */
  delete(id: string): Promise<boolean>;
  /** Removes sessions idle for strictly more than `ttlMs` at `now`; resolves how many. */
  cleanup(ttlMs: number, now: number): Promise<number>;
  /**
   * Optional: told once, when the server's janitor starts, the idle TTL it will pass to
   * `cleanup`. A shared store may use it to refresh a session less often than on every `get`
   * (`RedisSessionStore`: at most once per a 32nd of the TTL), never removing it sooner.
   */
  idleTtl?(ttlMs: number): void;
  /** Number of sessions. */
  size(): Promise<number>;
  /** Releases resources. Idempotent. */
  close(): Promise<void>;
  /**
   * Optional: calls `listener` with the id of every session this store ends (`delete`, idle
   * `cleanup`, eviction), so that what lives beside a session (its GET stream, its resource
   * subscriptions) ends with it. A shared store tells every node of a session ended on any of
   * them; a listener may hear an id more than once. Returns the function that stops listening.
   */
  onEnded?(listener: (id: string) => void): () => void;
}
