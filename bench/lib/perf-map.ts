/**
 * Names code by address from a perf map: `node --perf-basic-prof` appends a line
 * `<start hex> <size hex> <name>` to `/tmp/perf-<pid>.map` for each piece of code V8 makes
 * (https://nodejs.org/api/cli.html#--perf-basic-prof), the format Linux `perf` reads for JIT code
 * (https://github.com/torvalds/linux/blob/master/tools/perf/Documentation/jit-interface.txt).
 * A tool such as callgrind sees that code only by address.
 *
 * V8 frees and reuses code space, so two lines may cover one address: the later line wins (it
 * describes the code that was there last).
 *
 * @example
 * ```ts
 * const map = readPerfMap(readFileSync(`/tmp/perf-${pid}.map`, "utf8"));
 * map.nameAt(0x3d1c0a3c0050); // "JS:*handle file:///…/dist/http/endpoint.js:40:3"
 * ```
 */

/** A perf map, ready for look-ups. */
export interface PerfMap {
  /** The lines read. */
  readonly size: number;
  /** The name of the code that covers `address` (the latest such line), or null. */
  nameAt(address: number): string | null;
}

interface Entry {
  readonly start: number;
  readonly end: number;
  /** The line's place in the file: the later one wins. */
  readonly order: number;
  readonly name: string;
}

const LINE = /^(?:0x)?([0-9a-fA-F]+) (?:0x)?([0-9a-fA-F]+) (.*)$/;

/**
 * Parses a perf map's text; lines of another shape are skipped.
 *
 * @example
 * ```ts
 * readPerfMap("10 8 JS:~f\n").nameAt(0x17); // "JS:~f"
 * ```
 */
export function readPerfMap(text: string): PerfMap {
  const entries: Entry[] = [];
  for (const line of text.split("\n")) {
    const match = LINE.exec(line);
    if (match === null) continue;
    const [, start, size, name] = match as unknown as [string, string, string, string];
    const from = Number.parseInt(start, 16);
    entries.push({
      start: from,
      end: from + Number.parseInt(size, 16),
      order: entries.length,
      name,
    });
  }
  entries.sort((a, b) => a.start - b.start || a.order - b.order);
  // No entry is longer than this, so the ones that may cover an address start at most this far
  // before it.
  const longest = entries.reduce((max, e) => Math.max(max, e.end - e.start), 0);

  return {
    size: entries.length,
    nameAt(address: number): string | null {
      // The last entry starting at or before the address.
      let lo = 0;
      let hi = entries.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((entries[mid] as Entry).start <= address) lo = mid + 1;
        else hi = mid;
      }
      let best: Entry | null = null;
      for (let i = lo - 1; i >= 0; i--) {
        const entry = entries[i] as Entry;
        if (entry.start + longest <= address) break;
        if (address < entry.end && (best === null || entry.order > best.order)) best = entry;
      }
      return best?.name ?? null;
    },
  };
}
