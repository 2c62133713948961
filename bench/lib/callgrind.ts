/**
 * Reads a callgrind output file (the format is described in valgrind's manual, "Callgrind Format
 * Specification": https://valgrind.org/docs/manual/cl-format.html): the `totals:` line, and the
 * self cost of every function for every event (the first is `Ir`, instructions executed, unless
 * `--collect-*` options add events in front; `--cache-sim=yes` adds the cache misses).
 *
 * What the reader relies on, from that specification:
 * - `positions:` names the position columns in front of the costs of a cost line (`line` by
 *   default, `instr line` with `--dump-instr=yes`);
 * - a name is compressed: `fn=(12) name` defines id 12 the first time, later `fn=(12)` refers to
 *   it; `fn=` and `cfn=` share one table of ids;
 * - the cost line right after a `calls=` line is the call's inclusive cost, charged to the
 *   caller's position: not the caller's self cost;
 * - a cost line starts with a position: a number (decimal or `0x` hex), or `+N`, `-N` or `*`
 *   relative to the previous one; fewer costs than events means the rest are 0.
 *
 * @example
 * ```ts
 * const profile = readCallgrind(readFileSync("cg.out.1234.1-01", "utf8"));
 * console.log(profile.totals / 3_000); // instructions per call
 * ```
 */

/** One dump of one thread. */
export interface CallgrindProfile {
  /** The events of the `events:` line, e.g. `["Ir"]`. */
  readonly events: readonly string[];
  /** The first event's figure on the `totals:` line. */
  readonly totals: number;
  /** Every event's figure on the `totals:` line, by event name (e.g. `I1mr` with `--cache-sim=yes`). */
  readonly totalsByEvent: ReadonlyMap<string, number>;
  /** The first event's self cost per function name, as callgrind names it. */
  readonly self: ReadonlyMap<string, number>;
  /** Every event's self cost per function name, in the order of {@link events}. */
  readonly selfByEvent: ReadonlyMap<string, readonly number[]>;
}

const COMPRESSED = /^\((\d+)\)(?: (.*))?$/;

/**
 * Parses a callgrind output file's text. Throws when it has no `totals:` line (a dump cut short).
 *
 * @example
 * ```ts
 * readCallgrind("events: Ir\nfn=(1) main\n3 10\ntotals: 10\n").self.get("main"); // 10
 * ```
 */
export function readCallgrind(text: string): CallgrindProfile {
  let events: string[] = ["Ir"];
  let positions = 1;
  let totals: number | null = null;
  let totalsLine: number[] = [];
  const names = new Map<string, string>();
  const selfByEvent = new Map<string, number[]>();
  let current: string | null = null;
  let afterCalls = false;

  const nameOf = (spec: string): string => {
    const match = COMPRESSED.exec(spec);
    if (match === null) return spec;
    const [, id, name] = match as unknown as [string, string, string | undefined];
    if (name !== undefined) names.set(id, name);
    return names.get(id) ?? `(${id})`;
  };

  for (const line of text.split("\n")) {
    const first = line.charCodeAt(0);
    // Cost lines: a digit, '+', '-' or '*' (the only kind of line that can start so).
    if ((first >= 48 && first <= 57) || first === 43 || first === 45 || first === 42) {
      if (afterCalls) {
        afterCalls = false;
        continue;
      }
      if (current === null) continue;
      const costs = line.split(" ").filter((part) => part !== "");
      let sums = selfByEvent.get(current);
      if (sums === undefined) {
        sums = [];
        selfByEvent.set(current, sums);
      }
      for (let i = positions; i < costs.length; i++) {
        sums[i - positions] = (sums[i - positions] ?? 0) + Number(costs[i]);
      }
      continue;
    }
    if (line.startsWith("fn=")) {
      current = nameOf(line.slice(3).trim());
    } else if (line.startsWith("cfn=")) {
      nameOf(line.slice(4).trim());
    } else if (line.startsWith("calls=")) {
      afterCalls = true;
    } else if (line.startsWith("events:")) {
      events = line.slice(7).trim().split(/\s+/);
    } else if (line.startsWith("positions:")) {
      positions = line.slice(10).trim().split(/\s+/).length;
    } else if (line.startsWith("totals:")) {
      totalsLine = line.slice(7).trim().split(/\s+/).map(Number);
      totals = totalsLine[0] ?? null;
    }
  }
  if (totals === null || !Number.isFinite(totals)) {
    throw new Error("not a complete callgrind dump: no totals: line");
  }
  // A total left out at the end of the line is 0, as on a cost line.
  const totalsByEvent = new Map(events.map((event, i) => [event, totalsLine[i] ?? 0] as const));
  for (const sums of selfByEvent.values()) {
    for (let i = 0; i < events.length; i++) sums[i] ??= 0;
  }
  const self = new Map([...selfByEvent].map(([name, sums]) => [name, sums[0] ?? 0] as const));
  return { events, totals, totalsByEvent, self, selfByEvent };
}

/** What {@link topSelf} needs. */
export interface TopSelfOptions {
  /** How many functions (the rest are summed into one row). */
  readonly top: number;
  /**
   * A name for code callgrind knows only by address (`0x…`: JIT code, which has no symbol), e.g.
   * from node's `--perf-basic-prof` map (bench/lib/perf-map.ts); null when it does not know.
   */
  readonly nameAt?: (address: number) => string | null;
  /** Turns a name into the one shown (e.g. strips a build directory's `file://` prefix). */
  readonly shorten?: (name: string) => string;
  /**
   * What the rows are ranked by, from a function's self costs by event name; the first event's
   * cost (instructions) when not given.
   */
  readonly rank?: (costs: Readonly<Record<string, number>>) => number;
  /**
   * The profile's costs as {@link namedSelfCosts} names them, when the caller has them already
   * (a breakdown that also sums them by kind): the functions are not named a second time.
   */
  readonly named?: ReadonlyMap<string, Readonly<Record<string, number>>>;
}

/** One row of {@link topSelf}. */
export interface SelfRow {
  readonly name: string;
  /** The first event's self cost. */
  readonly self: number;
  /** Every event's self cost, by event name. */
  readonly costs: Readonly<Record<string, number>>;
}

/** Code callgrind names by its address; the JIT's, unknown to the perf map, is summed here. */
export const UNNAMED_CODE = "(code without a name: not in the perf map)";

/** A cost of 0 for each of `events`, to add costs into ({@link addCosts}). */
export function zeroCosts(events: readonly string[]): Record<string, number> {
  return Object.fromEntries(events.map((event) => [event, 0]));
}

/** Adds `costs` into `into`, event by event (an event `costs` lacks adds 0). */
export function addCosts(
  into: Record<string, number>,
  costs: Readonly<Record<string, number>>,
): void {
  for (const event of Object.keys(into)) into[event] = (into[event] ?? 0) + (costs[event] ?? 0);
}

/**
 * Every function's self costs by event name, with callgrind's recursion suffix (`'2`) dropped and
 * JIT code named through `nameAt` (then `shorten`), so one function's pieces add up to one entry.
 *
 * @example
 * ```ts
 * namedSelfCosts(profile, { nameAt: (address) => perfMap.nameAt(address) }).get("main"); // { Ir: 157 }
 * ```
 */
export function namedSelfCosts(
  profile: CallgrindProfile,
  options: Pick<TopSelfOptions, "nameAt" | "shorten">,
): Map<string, Record<string, number>> {
  const byName = new Map<string, Record<string, number>>();
  for (const [raw, sums] of profile.selfByEvent) {
    const name = raw.replace(/'\d+$/, "");
    let shown = name;
    if (/^0x[0-9a-fA-F]+$/.test(name)) {
      shown = options.nameAt?.(Number.parseInt(name.slice(2), 16)) ?? UNNAMED_CODE;
    }
    if (options.shorten !== undefined) shown = options.shorten(shown);
    let costs = byName.get(shown);
    if (costs === undefined) {
      costs = zeroCosts(profile.events);
      byName.set(shown, costs);
    }
    for (const [i, event] of profile.events.entries()) {
      costs[event] = (costs[event] ?? 0) + (sums[i] ?? 0);
    }
  }
  return byName;
}

/**
 * The functions with the most self cost (instructions, or `rank`), most first, named as {@link
 * namedSelfCosts} names them; a last row sums the others.
 *
 * @example
 * ```ts
 * topSelf(profile, { top: 20, nameAt: (address) => perfMap.nameAt(address) });
 * ```
 */
export function topSelf(profile: CallgrindProfile, options: TopSelfOptions): SelfRow[] {
  const first = profile.events[0] ?? "Ir";
  const rank = options.rank ?? ((costs) => costs[first] ?? 0);
  const rows = [...(options.named ?? namedSelfCosts(profile, options))]
    .map(([name, costs]) => ({ name, self: costs[first] ?? 0, costs, rankedBy: rank(costs) }))
    .sort((a, b) => b.rankedBy - a.rankedBy || (a.name < b.name ? -1 : 1));
  const top: SelfRow[] = rows
    .slice(0, options.top)
    .map(({ name, self, costs }) => ({ name, self, costs }));
  const rest = rows.slice(options.top);
  if (rest.length > 0) {
    const costs = zeroCosts(profile.events);
    for (const row of rest) addCosts(costs, row.costs);
    top.push({ name: `(${rest.length} other functions)`, self: costs[first] ?? 0, costs });
  }
  return top;
}
