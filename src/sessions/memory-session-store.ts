/**
 * The default, single-process {@link SessionStore}: a `Map` bounded per creating scope first, then
 * globally. A creator at its own quota is refused (`"scope-full"`); a full store makes room by
 * evicting the least recently used session of the creator holding the most sessions (among
 * equals, of the creator that reached that count last), so one
 * address or principal minting sessions can never lock other tenants out (a global cap alone
 * would be a cross-tenant denial of service).
 */
import { ByteLedger } from "../byte-ledger.js";
import { OPTION, readOption } from "../option-schema.js";
import {
  type SessionCreateOutcome,
  type SessionRecord,
  type SessionStore,
  sessionRecordBytes,
} from "./session-store.js";

/** Default maximum number of sessions. */
export const DEFAULT_MAX_SESSIONS = 100_000;

/** Default maximum number of sessions one creating scope may hold. */
export const DEFAULT_MAX_SESSIONS_PER_SCOPE = 64;

/** Default bytes of session records one creating scope may hold: 256 KiB (64 records of ~4 KiB). */
export const DEFAULT_MAX_SESSION_BYTES_PER_SCOPE = 256 * 1_024;

/** Default bytes of session records held in all: 64 MiB (~100 000 records of ordinary size). */
export const DEFAULT_MAX_SESSION_BYTES = 64 * 1_048_576;

/** Options of {@link MemorySessionStore}. */
export interface MemorySessionStoreOptions {
  /**
   * Maximum sessions held (a non-negative integer or Infinity; 0 refuses all). At the bound a
   * new session evicts the least recently used session of the largest creating scope.
   */
  readonly maxSessions?: number;
  /** Maximum sessions one creating scope holds; beyond, `create` is refused. Default 64. */
  readonly maxSessionsPerScope?: number;
  /**
   * Most bytes of records one creating scope holds (sessionRecordBytes: its texts plus a fixed
   * 512); beyond, `create` is refused. Default 256 KiB.
   */
  readonly maxSessionBytesPerScope?: number;
  /**
   * Most bytes of records held in all; at the bound the oldest sessions of the creating scope
   * holding the most bytes are evicted. Default 64 MiB.
   */
  readonly maxSessionBytes?: number;
  /** Clock for tests. */
  readonly clock?: () => number;
}

interface MutableSession {
  id: string;
  principalId: string | null;
  creatorScope: string;
  protocolVersion: string;
  createdAt: number;
  lastSeenAt: number;
  logLevel: string | null;
  clientCapabilities?: string | null;
}

/**
 * In-memory sessions.
 *
 * @example
 * ```ts
 * const store = new MemorySessionStore({ maxSessions: 10, maxSessionsPerScope: 2 });
 * await store.create({ id, principalId: null, creatorScope: "ip:203.0.113.7", protocolVersion: "2025-11-25", createdAt: Date.now(), lastSeenAt: Date.now(), logLevel: null });
 * ```
 */
export class MemorySessionStore implements SessionStore {
  private readonly sessions = new Map<string, MutableSession>();
  /** creator scope → its sessions. */
  private readonly byScope = new Map<string, Set<MutableSession>>();
  /**
   * count → the scopes holding exactly that many sessions, so that the largest scope is found in
   * O(1): counts move by one, so the largest count only ever moves by one too.
   */
  private readonly byCount = new Map<number, Bucket>();
  private largest = 0;
  private readonly maxSessions: number;
  private readonly maxPerScope: number;
  /** Bytes of records per creating scope, then in all. */
  private readonly ledger: ByteLedger<MutableSession>;
  private readonly clock: () => number;
  private readonly endedListeners = new Set<(id: string) => void>();

  constructor(options: MemorySessionStoreOptions = {}) {
    this.maxSessions = bound("sessions.maxSessions", options.maxSessions, DEFAULT_MAX_SESSIONS);
    this.maxPerScope = bound(
      "sessions.maxSessionsPerScope",
      options.maxSessionsPerScope,
      DEFAULT_MAX_SESSIONS_PER_SCOPE,
    );
    this.ledger = new ByteLedger({
      maxBytesPerBucket: bound(
        "sessions.maxSessionBytesPerScope",
        options.maxSessionBytesPerScope,
        DEFAULT_MAX_SESSION_BYTES_PER_SCOPE,
      ),
      maxBytes: bound(
        "sessions.maxSessionBytes",
        options.maxSessionBytes,
        DEFAULT_MAX_SESSION_BYTES,
      ),
    });
    this.clock = options.clock ?? Date.now;
  }

  /** Bytes of the records held (sessionRecordBytes of each). */
  get bytes(): number {
    return this.ledger.bytes;
  }

  create(record: SessionRecord): Promise<SessionCreateOutcome> {
    const existing = this.sessions.get(record.id);
    if (existing !== undefined) this.remove(existing);
    if (this.maxSessions === 0) return Promise.resolve("full");
    if (this.count(record.creatorScope) >= this.maxPerScope) return Promise.resolve("scope-full");
    const bytes = sessionRecordBytes(record);
    if (this.ledger.maxBytes === 0) return Promise.resolve("full");
    if (!this.ledger.fits(record.creatorScope, bytes)) return Promise.resolve("scope-full");
    if (this.sessions.size >= this.maxSessions) this.evictOne();
    const session: MutableSession = { ...record };
    const evicted = this.ledger.add(session, session.creatorScope, bytes);
    if (typeof evicted !== "string") for (const gone of evicted) this.remove(gone);
    this.sessions.set(session.id, session);
    let own = this.byScope.get(session.creatorScope);
    if (own === undefined) {
      own = new Set();
      this.byScope.set(session.creatorScope, own);
    }
    own.add(session);
    this.moveCount(session.creatorScope, own.size - 1, own.size);
    return Promise.resolve("created");
  }

  get(id: string): Promise<SessionRecord | undefined> {
    const session = this.sessions.get(id);
    if (session !== undefined) session.lastSeenAt = this.clock();
    return Promise.resolve(session);
  }

  setLogLevel(id: string, level: string): Promise<boolean> {
    const session = this.sessions.get(id);
    if (session === undefined) return Promise.resolve(false);
    session.logLevel = level;
    return Promise.resolve(true);
  }

  delete(id: string): Promise<boolean> {
    const session = this.sessions.get(id);
    if (session === undefined) return Promise.resolve(false);
    this.remove(session);
    return Promise.resolve(true);
  }

  cleanup(ttlMs: number, now: number): Promise<number> {
    let removed = 0;
    for (const session of [...this.sessions.values()]) {
      if (now - session.lastSeenAt > ttlMs) {
        this.remove(session);
        removed++;
      }
    }
    return Promise.resolve(removed);
  }

  size(): Promise<number> {
    return Promise.resolve(this.sessions.size);
  }

  close(): Promise<void> {
    this.sessions.clear();
    this.ledger.clear();
    this.byScope.clear();
    this.byCount.clear();
    this.largest = 0;
    return Promise.resolve();
  }

  onEnded(listener: (id: string) => void): () => void {
    this.endedListeners.add(listener);
    return () => this.endedListeners.delete(listener);
  }

  private count(scope: string): number {
    return this.byScope.get(scope)?.size ?? 0;
  }

  /**
   * Evicts the least recently used session of the scope holding the most; among scopes holding
   * equally many, of the one that reached that count last. So an address rotating through many
   * scopes (one session each) evicts its own newest sessions, never an established client's.
   * Amortised O(1) to find the scope, then a scan of its sessions (at most the per-scope bound).
   */
  private evictOne(): void {
    const scope = this.byCount.get(this.largest)?.newest();
    const own = scope === undefined ? undefined : this.byScope.get(scope);
    if (own === undefined) return;
    let oldest: MutableSession | undefined;
    for (const session of own) {
      if (oldest === undefined || session.lastSeenAt < oldest.lastSeenAt) oldest = session;
    }
    if (oldest !== undefined) this.remove(oldest);
  }

  private remove(session: MutableSession): void {
    this.ledger.remove(session);
    this.sessions.delete(session.id);
    const own = this.byScope.get(session.creatorScope);
    if (own === undefined || !own.delete(session)) return;
    if (own.size === 0) this.byScope.delete(session.creatorScope);
    this.moveCount(session.creatorScope, own.size + 1, own.size);
    for (const listener of this.endedListeners) {
      try {
        listener(session.id);
      } catch {
        // A listener's bug must not break the store's bookkeeping.
      }
    }
  }

  /** Moves `scope` from the `from` bucket to the `to` bucket (counts differ by one). */
  private moveCount(scope: string, from: number, to: number): void {
    if (from > 0) {
      const bucket = this.byCount.get(from);
      bucket?.delete(scope);
      if (bucket !== undefined && bucket.members.size === 0) {
        this.byCount.delete(from);
        if (this.largest === from && to < from) this.largest = to;
      }
    }
    if (to > 0) {
      let bucket = this.byCount.get(to);
      if (bucket === undefined) {
        bucket = new Bucket();
        this.byCount.set(to, bucket);
      }
      bucket.add(scope);
      if (to > this.largest) this.largest = to;
    }
  }
}

/**
 * The scopes holding one count of sessions, in the order they reached it. A `Set` keeps that
 * order but has no cheap last element, so a stack of entries is kept beside it; entries of scopes
 * that left are skipped lazily when the newest is asked for, and the stack is rebuilt from the
 * set once stale entries outnumber live ones (each entry is pushed and dropped once: O(1)
 * amortised).
 */
class Bucket {
  readonly members = new Set<string>();
  private entries: string[] = [];

  add(scope: string): void {
    this.members.add(scope);
    this.entries.push(scope);
    if (this.entries.length > 2 * this.members.size + 16) this.entries = [...this.members];
  }

  delete(scope: string): void {
    this.members.delete(scope);
  }

  /** The member that entered last. */
  newest(): string | undefined {
    const entries = this.entries;
    while (entries.length > 0) {
      const top = entries[entries.length - 1] as string;
      if (this.members.has(top)) return top;
      entries.pop();
    }
    return undefined;
  }
}

function bound(option: string, value: number | undefined, fallback: number): number {
  return readOption(OPTION.nonNegativeLimit, option, value, fallback);
}
