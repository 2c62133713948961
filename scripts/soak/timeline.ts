/**
 * When the chaos struck: every node kill (until that node listened again) and every Redis outage
 * (until it answered again, plus a grace for the nodes to reconnect, resubscribe and re-assert
 * their entries). A call's outcome is judged against it: a call that met no disturbance must get
 * exactly what a healthy cluster gives; one that met a kill of its own node may lose its
 * connection; one that met a Redis outage may miss a cross-node cancel (the store fails open,
 * docs/redis.md).
 */

/** What was disturbed, and from when to when (performance.now() ms; `to` open while ongoing). */
export interface Disturbance {
  readonly kind: "node-kill" | "redis-restart" | "redis-freeze";
  /** The node index for a kill. */
  readonly node?: number;
  readonly from: number;
  to: number;
  /**
   * A Redis restart: when the stopped process had exited. A write Redis acknowledged before then
   * may still be lost with it (it comes back empty); none after.
   */
  down?: number;
}

/** Time after Redis answers again during which cross-node effects may still be missing. */
export const REDIS_GRACE_MS = 3_000;
/** Time after a node listens again during which a call routed to it may still fail. */
export const NODE_GRACE_MS = 500;

export class Timeline {
  readonly events: Disturbance[] = [];

  /** Opens a disturbance now; returns it so the caller can close it. */
  open(kind: Disturbance["kind"], node?: number): Disturbance {
    const event: Disturbance =
      node === undefined
        ? { kind, from: performance.now(), to: Number.POSITIVE_INFINITY }
        : { kind, node, from: performance.now(), to: Number.POSITIVE_INFINITY };
    this.events.push(event);
    return event;
  }

  close(event: Disturbance): void {
    event.to = performance.now();
  }

  /** A kill of `node` whose window (kill → listening again + grace) meets [from, to]. */
  nodeKilled(node: number, from: number, to: number): boolean {
    return this.events.some(
      (e) =>
        e.kind === "node-kill" && e.node === node && e.from <= to && e.to + NODE_GRACE_MS >= from,
    );
  }

  /** A Redis outage whose window (down → answering again + grace) meets [from, to]. */
  redisDisturbed(from: number, to: number): boolean {
    return this.events.some(
      (e) => e.kind !== "node-kill" && e.from <= to && e.to + REDIS_GRACE_MS >= from,
    );
  }

  /**
   * A Redis restart (it comes back empty: persistence is off) that began within [from, to]:
   * what can lose a record written before it (a finished task, a session).
   */
  redisRestarted(from: number, to: number): boolean {
    return this.events.some((e) => e.kind === "redis-restart" && e.from >= from && e.from <= to);
  }

  /** Any disturbance of Redis or of one of `nodes` meeting [from, to]. */
  disturbed(nodes: readonly number[], from: number, to: number): boolean {
    return this.redisDisturbed(from, to) || nodes.some((n) => this.nodeKilled(n, from, to));
  }

  /**
   * How long before `at` Redis last came back (0 while it is away at `at`); +Infinity when it was
   * never away before `at`. Tells how long after an outage cross-node effects were still missing.
   */
  sinceRedisBack(at: number): number {
    let since = Number.POSITIVE_INFINITY;
    for (const e of this.events) {
      if (e.kind === "node-kill" || e.from > at) continue;
      since = Math.min(since, Math.max(0, at - e.to));
    }
    return since;
  }

  /**
   * The last Redis restart that can have lost a record written from `from` on and found gone at
   * `to`, if any: one that began before `to` and whose stopped process exited after `from`. A
   * restart begins when the stop is sent, and Redis acknowledges writes until its process exits
   * ({@link Disturbance.down}), so a record written in between is lost with it too.
   */
  lastRestart(from: number, to: number): Disturbance | undefined {
    return this.events.findLast(
      (e) => e.kind === "redis-restart" && (e.down ?? e.to) > from && e.from < to,
    );
  }

  /** When the timeline began (the first plan's clock): the report's times are relative to it. */
  readonly origin = performance.now();

  /** `t` in seconds since the start, for the report. */
  at(t: number): string {
    return `${((t - this.origin) / 1_000).toFixed(2)} s`;
  }

  /** The disturbances whose window (with its grace) meets [from, to], for an example. */
  around(from: number, to: number): string {
    const met = this.events.filter((e) => {
      const grace = e.kind === "node-kill" ? NODE_GRACE_MS : REDIS_GRACE_MS;
      return e.from <= to && e.to + grace >= from;
    });
    return met
      .map(
        (e) =>
          `${e.kind}${e.node === undefined ? "" : ` node ${e.node}`} ${this.at(e.from)}–${Number.isFinite(e.to) ? this.at(e.to) : "…"}`,
      )
      .join(", ");
  }

  count(kind: Disturbance["kind"]): number {
    return this.events.filter((e) => e.kind === kind).length;
  }
}
