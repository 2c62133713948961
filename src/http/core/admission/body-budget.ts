/**
 * The bytes of request bodies being read, per scope the request comes from (its principal, else
 * its client's IP bucket: an IPv4 address, an IPv6 /64) and in all. Each request's body is bounded
 * by `limits.maxBodyBytes`, but a scope may have `limits.maxConcurrentRequestsPerScope` requests
 * reading at once: without this budget one address could make the server hold that many bodies.
 *
 * Only a body that has to be waited for is counted: one that arrived with its headers is parsed
 * at once and held for no longer than that. A body is counted at its declared `Content-Length`
 * (else at `maxBodyBytes`) from before its first byte is read until it is parsed, so a client
 * that trickles its body holds its budget all along.
 *
 * The scope's budget is checked first and is the only one that refuses a scope under it: HTTP
 * 429. The global budget makes room instead, as the request bound does: it closes the connection
 * of the oldest body being read by the scope holding the most bytes (503 only when none can be).
 */
import {
  ACQUIRED,
  type Evictable,
  GLOBAL_LIMIT,
  type LimitOutcome,
  SCOPE_LIMIT,
} from "../../../protocol/asking/index.js";

/** The bodies one scope is reading: their bytes, and each holder's share, oldest first. */
interface Held {
  bytes: number;
  readonly holders: Map<Evictable, number>;
}

/**
 * In-flight body bytes per scope and in all.
 *
 * @example
 * ```ts
 * const budget = new BodyBudget({ maxPerScope: 8 << 20, maxTotal: 64 << 20 });
 * if (budget.tryReserve("ip:203.0.113.7", 1_048_576, target) !== ACQUIRED) reply(429);
 * try { await readBody(); } finally { budget.release("ip:203.0.113.7", target); }
 * ```
 */
export class BodyBudget {
  readonly maxPerScope: number;
  readonly maxTotal: number;
  private readonly scopes = new Map<string, Held>();
  private held = 0;

  constructor(options: { readonly maxPerScope: number; readonly maxTotal: number }) {
    this.maxPerScope = options.maxPerScope;
    this.maxTotal = options.maxTotal;
  }

  /**
   * Counts `bytes` for `scope`, held by `holder` (destroyed should the global budget take them
   * back): {@link ACQUIRED}, or the budget that refused.
   */
  tryReserve(scope: string, bytes: number, holder: Evictable): LimitOutcome {
    const mine = this.scopes.get(scope);
    if ((mine?.bytes ?? 0) + bytes > this.maxPerScope) return SCOPE_LIMIT;
    if (bytes > this.maxTotal) return GLOBAL_LIMIT;
    // Bounded: each pass takes back one body.
    while (this.held + bytes > this.maxTotal) if (!this.makeRoom()) return GLOBAL_LIMIT;
    let held = this.scopes.get(scope);
    if (held === undefined) {
      held = { bytes: 0, holders: new Map() };
      this.scopes.set(scope, held);
    }
    held.bytes += bytes;
    held.holders.set(holder, (held.holders.get(holder) ?? 0) + bytes);
    this.held += bytes;
    return ACQUIRED;
  }

  /** Gives back what `holder` holds for `scope` (nothing when it was taken back already). */
  release(scope: string, holder: Evictable): void {
    const held = this.scopes.get(scope);
    const bytes = held?.holders.get(holder);
    if (held === undefined || bytes === undefined) return;
    held.holders.delete(holder);
    this.take(scope, held, bytes);
  }

  /** Bytes `scope` holds now. */
  bytesOf(scope: string): number {
    return this.scopes.get(scope)?.bytes ?? 0;
  }

  /** Bytes held by all scopes. */
  get total(): number {
    return this.held;
  }

  /** Takes back the oldest body of the scope holding the most bytes; false when there is none. */
  private makeRoom(): boolean {
    let largest: string | null = null;
    let most: Held | null = null;
    for (const [scope, held] of this.scopes) {
      if (held.bytes > (most?.bytes ?? 0)) {
        largest = scope;
        most = held;
      }
    }
    if (largest === null || most === null) return false;
    const [victim, bytes] = most.holders.entries().next().value as [Evictable, number];
    most.holders.delete(victim);
    this.take(largest, most, bytes);
    victim.destroy();
    return true;
  }

  private take(scope: string, held: Held, bytes: number): void {
    held.bytes -= bytes;
    this.held -= bytes;
    if (held.holders.size === 0) this.scopes.delete(scope);
  }
}
