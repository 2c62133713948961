/**
 * The chaos soak's counters: outcomes by kind (every call gets exactly one) and violations, each
 * with its first examples for the report.
 */
export class Tally {
  readonly outcomes = new Map<string, number>();
  readonly notes = new Map<string, number>();
  readonly violations = new Map<string, { count: number; examples: string[] }>();
  /** Longest time after Redis came back at which a cross-node cancel was still lost. */
  maxLostAfterRedisBackMs = 0;
  started = 0;
  settled = 0;
  /** Each session the load created: from its `initialize` to the end of its last `DELETE`. */
  readonly sessions = new Map<string, { from: number; to: number }>();
  /** Every tag answered so far: a tag answered twice (to any call) is a violation. */
  readonly answeredTags = new Set<string>();

  /** Records the single outcome of one call. */
  outcome(kind: string): void {
    this.settled++;
    this.outcomes.set(kind, (this.outcomes.get(kind) ?? 0) + 1);
  }

  /** Counts something worth reporting that is not an outcome. */
  note(kind: string, n = 1): void {
    this.notes.set(kind, (this.notes.get(kind) ?? 0) + n);
  }

  violation(kind: string, detail: string): void {
    let v = this.violations.get(kind);
    if (v === undefined) {
      v = { count: 0, examples: [] };
      this.violations.set(kind, v);
    }
    v.count++;
    if (v.examples.length < 4) v.examples.push(detail);
  }
}
