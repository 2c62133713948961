/**
 * The chaos soak's counters: outcomes by kind of work (every piece of work started gets exactly
 * one, judged `ok`, lost to the chaos, or failed) and violations, each with its first examples
 * for the report.
 */

/** What the load does, as the summary breaks it down. */
export type Family = "call" | "task" | "ask 2025-11-25" | "ask 2026-07-28" | "listen";

/**
 * How one piece of work ended: `ok` (what a healthy cluster gives), `chaos` (lost, and a chaos
 * event on the timeline explains it: the reason says which), `failed` (a violation).
 */
export type Verdict = "ok" | "chaos" | "failed";

export const FAMILIES: readonly Family[] = [
  "call",
  "task",
  "ask 2025-11-25",
  "ask 2026-07-28",
  "listen",
];

export class Tally {
  /** `family|verdict|what` → count. */
  readonly outcomes = new Map<string, number>();
  readonly notes = new Map<string, number>();
  readonly violations = new Map<string, { count: number; examples: string[] }>();
  /** Longest time after Redis came back at which a cross-node cancel was still lost. */
  maxLostAfterRedisBackMs = 0;
  started = 0;
  settled = 0;
  readonly startedBy = new Map<Family, number>();
  /** Each session the load created: from its `initialize` to the end of its last `DELETE`. */
  readonly sessions = new Map<string, { from: number; to: number }>();
  /** Every tag answered so far: a tag answered twice (to any call) is a violation. */
  readonly answeredTags = new Set<string>();

  /** One piece of work of `family` begins: it owes exactly one {@link outcome}. */
  start(family: Family): void {
    this.started++;
    this.startedBy.set(family, (this.startedBy.get(family) ?? 0) + 1);
  }

  /** `family|verdict|what` → the first examples given (the report shows how a loss happened). */
  readonly examples = new Map<string, string[]>();

  /** Records the single outcome of one piece of work; `example` tells what happened, when. */
  outcome(family: Family, verdict: Verdict, what: string, example?: string): void {
    this.settled++;
    const key = `${family}|${verdict}|${what}`;
    this.outcomes.set(key, (this.outcomes.get(key) ?? 0) + 1);
    if (example === undefined) return;
    const list = this.examples.get(key) ?? [];
    if (list.length < 2) list.push(example);
    this.examples.set(key, list);
  }

  /** Outcomes of `family` by verdict. */
  verdicts(family: Family): Record<Verdict, number> {
    const counts: Record<Verdict, number> = { ok: 0, chaos: 0, failed: 0 };
    for (const [key, n] of this.outcomes) {
      const [f, v] = key.split("|") as [Family, Verdict];
      if (f === family) counts[v] += n;
    }
    return counts;
  }

  /** `[what, count]` of `family`'s outcomes with `verdict`, most frequent first. */
  reasons(family: Family, verdict: Verdict): [string, number][] {
    const out: [string, number][] = [];
    for (const [key, n] of this.outcomes) {
      const [f, v, what] = key.split("|") as [Family, Verdict, string];
      if (f === family && v === verdict) out.push([what, n]);
    }
    return out.sort((a, b) => b[1] - a[1]);
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
