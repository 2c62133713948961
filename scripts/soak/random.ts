/**
 * A seeded pseudo-random source (mulberry32: 32-bit state, full period, fast), so a chaos run's
 * plan — which calls, which tenants, when nodes die and Redis restarts — can be replayed from the
 * seed it prints. Timing on a shared machine still varies between runs; the plan does not.
 */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [lo, hi]. */
  between(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One item, by weight (weights need not add up to 1). */
  pick<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((sum, [, w]) => sum + w, 0);
    let r = this.next() * total;
    for (const [item, weight] of items) {
      if (r < weight) return item;
      r -= weight;
    }
    return (items[items.length - 1] as readonly [T, number])[0];
  }

  /** A fresh seed derived from this source (for an independent stream). */
  fork(): Random {
    return new Random(Math.floor(this.next() * 4_294_967_296));
  }
}
