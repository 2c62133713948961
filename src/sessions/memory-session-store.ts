/**
 * The default, single-process {@link SessionStore}: a bounded `Map` (100 000 sessions by default,
 * conduit-behavior.md §7 `:sessions_max_rows`). A full store refuses new sessions (503) rather
 * than evicting live ones, as the original does.
 */
import { InvalidOptionError } from "../errors.js";
import type { SessionCreateOutcome, SessionRecord, SessionStore } from "./session-store.js";

/** Default maximum number of sessions. */
export const DEFAULT_MAX_SESSIONS = 100_000;

/** Options of {@link MemorySessionStore}. */
export interface MemorySessionStoreOptions {
  /** Maximum sessions held (a positive integer, 0 to refuse all, or Infinity). */
  readonly maxSessions?: number;
  /** Clock for tests. */
  readonly clock?: () => number;
}

interface MutableSession {
  id: string;
  principalId: string | null;
  protocolVersion: string;
  createdAt: number;
  lastSeenAt: number;
  logLevel: string | null;
}

/**
 * In-memory sessions.
 *
 * @example
 * ```ts
 * const store = new MemorySessionStore({ maxSessions: 10 });
 * await store.create({ id, principalId: null, protocolVersion: "2025-11-25", createdAt: Date.now(), lastSeenAt: Date.now(), logLevel: null });
 * ```
 */
export class MemorySessionStore implements SessionStore {
  private readonly sessions = new Map<string, MutableSession>();
  private readonly maxSessions: number;
  private readonly clock: () => number;

  constructor(options: MemorySessionStoreOptions = {}) {
    const max = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    if (!(max === Number.POSITIVE_INFINITY || (Number.isSafeInteger(max) && max >= 0))) {
      throw new InvalidOptionError(
        "sessions.maxSessions",
        "a non-negative integer or Infinity",
        max,
      );
    }
    this.maxSessions = max;
    this.clock = options.clock ?? Date.now;
  }

  create(record: SessionRecord): Promise<SessionCreateOutcome> {
    if (this.sessions.size >= this.maxSessions && !this.sessions.has(record.id)) {
      return Promise.resolve("full");
    }
    this.sessions.set(record.id, { ...record });
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
    return Promise.resolve(this.sessions.delete(id));
  }

  cleanup(ttlMs: number, now: number): Promise<number> {
    let removed = 0;
    for (const [id, session] of this.sessions) {
      if (now - session.lastSeenAt > ttlMs) {
        this.sessions.delete(id);
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
    return Promise.resolve();
  }
}
