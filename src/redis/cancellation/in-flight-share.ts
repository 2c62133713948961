/**
 * The in-flight entries of the calls this node runs, and when each is written to Redis. A call's
 * entry (so another node's `isInFlight` sees it) is written only once the call has run
 * `shareAfterMs`, the entries that came due together in one pipeline per shard: a call that ends
 * sooner, nearly every call, costs no Redis round trip at all. The entries stay known here so the
 * node can write them again after an outage or a lapsed lease (the store's resync).
 */
import type { KeyLayout, ShardKeys, Wire } from "../key-layout.js";
import { pairMember, wire } from "../key-layout.js";

/** Entries per share script: one script never holds Redis for long. */
const SHARE_BATCH = 500;
const RESOLVED_VOID: Promise<void> = Promise.resolve();

/** What an entry is in Redis. */
export interface SharedEntry {
  /** `<node> <handle id>`: the field of the node's entries hash. */
  readonly field: string;
  readonly member: Wire;
  readonly shard: ShardKeys;
}

/** A local in-flight entry. */
interface LocalEntry {
  readonly scope: string;
  readonly requestId: string;
  readonly handleId: string;
  /** `performance.now()` from which it is due to be written to Redis. */
  readonly due: number;
  /** Set once it is sent to Redis (or about to be): from then on it is shared. */
  shared: SharedEntry | null;
}

/** Options of {@link InFlightShare}. */
export interface InFlightShareOptions {
  readonly nodeId: string;
  readonly keys: KeyLayout;
  /** How long a call runs before its entry is written (ms); 0 writes at once. */
  readonly shareAfterMs: number;
  /** Writes one batch of one shard's entries (`field, member` pairs); never rejects. */
  readonly send: (shard: ShardKeys, pairs: Wire[]) => Promise<unknown>;
}

/**
 * This node's in-flight entries, by handle id.
 *
 * @example
 * ```ts
 * const share = new InFlightShare({ nodeId, keys, shareAfterMs: 50, send });
 * await share.add(scope, requestId, handleId); // written to Redis 50 ms later, if still running
 * share.remove(scope, requestId, handleId); // "unshared": nothing to remove from Redis
 * ```
 */
export class InFlightShare {
  private readonly options: InFlightShareOptions;
  private readonly local = new Map<string, LocalEntry>();
  /** Entries not yet written to Redis, in order of `due` (insertion order). */
  private readonly pending = new Map<string, LocalEntry>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(options: InFlightShareOptions) {
    this.options = options;
  }

  /**
   * Adds the entry here at once; it is written once the call has run `shareAfterMs`, or at once,
   * awaited, when `shareAfterMs` is 0.
   */
  add(scope: string, requestId: string, handleId: string): Promise<void> {
    const { shareAfterMs } = this.options;
    const entry: LocalEntry = {
      scope,
      requestId,
      handleId,
      due: performance.now() + shareAfterMs,
      shared: null,
    };
    this.local.set(handleId, entry);
    if (shareAfterMs === 0) return this.share([entry]);
    this.pending.set(handleId, entry);
    if (this.timer === null) this.arm(Math.ceil(shareAfterMs * 1.1));
    return RESOLVED_VOID;
  }

  /**
   * Removes the entry of `handleId` if it is this key's: `"unshared"` when it was never written
   * (nothing to remove from Redis), `"shared"` when it was, `"unknown"` when no such entry is here.
   */
  remove(scope: string, requestId: string, handleId: string): "unshared" | "shared" | "unknown" {
    const entry = this.local.get(handleId);
    if (entry === undefined || entry.scope !== scope || entry.requestId !== requestId) {
      return "unknown";
    }
    this.local.delete(handleId);
    if (entry.shared !== null) return "shared";
    this.pending.delete(handleId);
    return "unshared";
  }

  /** Whether a call of the key runs here and its entry is not written yet. */
  isPending(scope: string, requestId: string): boolean {
    for (const entry of this.pending.values()) {
      if (entry.requestId === requestId && entry.scope === scope) return true;
    }
    return false;
  }

  /** The entries written (or being written) to Redis: what a resync writes again. */
  shared(): SharedEntry[] {
    const shared: SharedEntry[] = [];
    for (const entry of this.local.values()) if (entry.shared !== null) shared.push(entry.shared);
    return shared;
  }

  /** Stops writing: the timer and the entries not yet written are dropped. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.pending.clear();
  }

  /** Forgets every entry (after {@link stop}, once the node's entries are removed from Redis). */
  clear(): void {
    this.local.clear();
  }

  /**
   * One timer for all pending entries. It fires a little after the oldest is due (a tenth of
   * `shareAfterMs` later), so the entries that came due meanwhile go to Redis together, and never
   * before an entry is due.
   */
  private arm(delayMs: number): void {
    this.timer = setTimeout(this.onTimer, delayMs);
    this.timer.unref();
  }

  private readonly onTimer = (): void => {
    this.timer = null;
    if (this.stopped) return;
    const now = performance.now();
    const due: LocalEntry[] = [];
    for (const entry of this.pending.values()) {
      if (entry.due > now) break;
      due.push(entry);
    }
    for (const entry of due) this.pending.delete(entry.handleId);
    if (due.length > 0) void this.share(due);
    const head = this.pending.values().next().value;
    if (head !== undefined) {
      this.arm(Math.ceil(head.due - now + this.options.shareAfterMs / 10));
    }
  };

  /**
   * Writes entries to Redis, one pipeline per shard and batch. An entry counts as shared from here
   * on, even if Redis is away: the resync after the outage writes it then.
   */
  private async share(entries: readonly LocalEntry[]): Promise<void> {
    const { keys, nodeId } = this.options;
    const byShard = new Map<ShardKeys, Wire[]>();
    for (const entry of entries) {
      const s = wire(entry.scope);
      const shard = keys.shardOf(s);
      const shared: SharedEntry = {
        field: `${nodeId} ${entry.handleId}`,
        member: pairMember(s, wire(entry.requestId)),
        shard,
      };
      entry.shared = shared;
      let args = byShard.get(shard);
      if (args === undefined) {
        args = [];
        byShard.set(shard, args);
      }
      args.push(shared.field, shared.member);
    }
    const sends: Promise<unknown>[] = [];
    for (const [shard, pairs] of byShard) {
      for (let at = 0; at < pairs.length; at += 2 * SHARE_BATCH) {
        sends.push(this.options.send(shard, pairs.slice(at, at + 2 * SHARE_BATCH)));
      }
    }
    await Promise.all(sends);
  }
}
