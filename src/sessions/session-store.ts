/**
 * The session store contract (2025-era `Mcp-Session-Id`, mcp-protocol.md A.3). Asynchronous so
 * that a shared store (Redis, issue 5) can implement it; the memory store is the default.
 */

/** One session as stored. */
export interface SessionRecord {
  /** The session id (URL-safe, >= 128 bits from a CSPRNG). */
  readonly id: string;
  /** The principal that created it (null without auth): another principal cannot use it. */
  readonly principalId: string | null;
  /** The protocol revision negotiated by its `initialize`. */
  readonly protocolVersion: string;
  /** When it was created, ms since the epoch. */
  readonly createdAt: number;
  /** When it was last used, ms since the epoch (idle TTL is measured from here). */
  readonly lastSeenAt: number;
  /** The `logging/setLevel` threshold, or null. */
  readonly logLevel: string | null;
}

/** The outcome of {@link SessionStore.create}. */
export type SessionCreateOutcome = "created" | "full";

/**
 * Where sessions live.
 *
 * @example
 * ```ts
 * const store: SessionStore = new MemorySessionStore({ maxSessions: 1000 });
 * if ((await store.create(record)) === "full") reply(503);
 * ```
 */
export interface SessionStore {
  /** Stores a new session unless the store holds its maximum already. */
  create(record: SessionRecord): Promise<SessionCreateOutcome>;
  /** The session, refreshed (`lastSeenAt = now`), or undefined when unknown or expired. */
  get(id: string): Promise<SessionRecord | undefined>;
  /** Sets the log level; resolves false when the session is unknown. */
  setLogLevel(id: string, level: string): Promise<boolean>;
  /** Ends the session; resolves whether it existed. */
  delete(id: string): Promise<boolean>;
  /** Removes sessions idle for strictly more than `ttlMs` at `now`; resolves how many. */
  cleanup(ttlMs: number, now: number): Promise<number>;
  /** Number of sessions. */
  size(): Promise<number>;
  /** Releases resources. Idempotent. */
  close(): Promise<void>;
}
