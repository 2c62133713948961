/**
 * A node's bounded local copy of sessions, what `RedisSessionStore` answers from while Redis is
 * away: the sessions created or seen on this node (least recently used dropped first beyond the
 * bound), which of them wait to be written back (created or changed during an outage, or marked
 * after Redis came back empty), how many of those each creating scope holds (the outage path's
 * per-creator bound), and the deletes to replay.
 */
import type { SessionRecord } from "../../sessions/session-store.js";

/** One session in the local copy. */
export interface LocalSession {
  record: SessionRecord;
  /** Created or changed while Redis was away: written to Redis when it is back. */
  pending: boolean;
  /** Local monotonic time of the last use (the local copy's own idle sweep). */
  usedAt: number;
}

/**
 * The local copy of one store.
 *
 * @example
 * ```ts
 * const copy = new LocalCopy(10_000);
 * copy.remember(record, true); // created during an outage
 * copy.touch(record.id); // served from here, refreshed
 * ```
 */
export class LocalCopy {
  /** Least recently used first (a Map keeps insertion order). */
  private readonly sessions = new Map<string, LocalSession>();
  /**
   * Pending sessions per creating scope. Copies of sessions merely seen here are not counted: one
   * ended through another node stays in this copy until it is asked for again or idles out, and
   * counting it would refuse a creator that holds no session at all.
   */
  private readonly pendingPerScope = new Map<string, number>();
  /** Deletes applied while Redis was away, replayed when it is back (bounded like the copy). */
  private readonly deletes = new Set<string>();

  /** `max` sessions at most (0 keeps none). */
  constructor(private readonly max: number) {}

  get(id: string): LocalSession | undefined {
    return this.sessions.get(id);
  }

  /** A snapshot of the copy, least recently used first. */
  entries(): Array<[string, LocalSession]> {
    return [...this.sessions];
  }

  /** Ids of the sessions not waiting for a write-back (those Redis should hold). */
  settledIds(): string[] {
    return this.entries()
      .filter(([, kept]) => !kept.pending)
      .map(([id]) => id);
  }

  /** Pending sessions a creating scope holds here. */
  pendingHeldBy(scope: string): number {
    return this.pendingPerScope.get(scope) ?? 0;
  }

  /** Puts a record in as most recently used, dropping the least recent beyond the bound. */
  remember(record: SessionRecord, pending: boolean): void {
    if (this.max === 0) return;
    const previous = this.sessions.get(record.id);
    if (previous !== undefined) this.forget(record.id);
    const stillPending = pending || previous?.pending === true;
    this.sessions.set(record.id, { record, pending: stillPending, usedAt: performance.now() });
    if (stillPending) this.countPending(record.creatorScope, 1);
    this.deletes.delete(record.id);
    if (this.sessions.size > this.max) this.forget(this.sessions.keys().next().value as string);
  }

  /** Drops a session; resolves whether it was there. */
  forget(id: string): boolean {
    const kept = this.sessions.get(id);
    if (kept === undefined) return false;
    this.sessions.delete(id);
    if (kept.pending) this.countPending(kept.record.creatorScope, -1);
    return true;
  }

  /** A session, refreshed and made most recently used, or undefined. */
  touch(id: string): SessionRecord | undefined {
    const kept = this.sessions.get(id);
    if (kept === undefined) return undefined;
    this.sessions.delete(id);
    kept.usedAt = performance.now();
    kept.record = { ...kept.record, lastSeenAt: Date.now() };
    this.sessions.set(id, kept);
    return kept.record;
  }

  /** Marks a session for the write-back (counted once). */
  markPending(kept: LocalSession): void {
    if (kept.pending) return;
    kept.pending = true;
    this.countPending(kept.record.creatorScope, 1);
  }

  /** Marks every session for the write-back (Redis lost them); resolves how many were marked. */
  markAllPending(): number {
    let marked = 0;
    for (const kept of this.sessions.values()) {
      if (kept.pending) continue;
      this.markPending(kept);
      marked++;
    }
    return marked;
  }

  /** `kept` was written back (or refused): no longer pending, unless replaced meanwhile. */
  writtenBack(id: string, kept: LocalSession): void {
    if (this.sessions.get(id) === kept && kept.pending) {
      this.countPending(kept.record.creatorScope, -1);
    }
    kept.pending = false;
  }

  /** Forgets the sessions last used before `cutoff` (this node's monotonic clock). */
  dropIdle(cutoff: number): void {
    for (const [id, kept] of this.sessions) if (kept.usedAt < cutoff) this.forget(id);
  }

  /** Remembers a delete to replay (bounded like the copy). */
  queueDelete(id: string): void {
    if (this.deletes.size < Math.max(1, this.max)) this.deletes.add(id);
  }

  /** The deletes waiting to be replayed. */
  queuedDeletes(): string[] {
    return [...this.deletes];
  }

  /** A delete was replayed. */
  deleteReplayed(id: string): void {
    this.deletes.delete(id);
  }

  clear(): void {
    this.sessions.clear();
    this.pendingPerScope.clear();
    this.deletes.clear();
  }

  /** Adds `delta` to a creator's count of pending sessions (entries at 0 are removed). */
  private countPending(scope: string, delta: number): void {
    const held = (this.pendingPerScope.get(scope) ?? 0) + delta;
    if (held <= 0) this.pendingPerScope.delete(scope);
    else this.pendingPerScope.set(scope, held);
  }
}
