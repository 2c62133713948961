/**
 * What N held requests add to a heap, by kind: two V8 heap snapshots (`.heapsnapshot`, as
 * `v8.writeHeapSnapshot` writes them) are summed by node type and name (an object's constructor,
 * a closure's function name; strings, code and arrays by type only), and the second minus the
 * first is divided by N. Used by `npm run bench:heap -- --snapshot` (bench/heap-cli.ts) to see
 * what one in-flight call keeps alive, next to what bare node:http keeps for an open request.
 *
 * The snapshot format (`snapshot.meta.node_fields`, `node_types`, a flat `nodes` array and a
 * `strings` table) is V8's: https://developer.chrome.com/docs/devtools/memory-problems/heap-snapshots
 *
 * @example
 * ```ts
 * const rows = diffSnapshots("before.heapsnapshot", "during.heapsnapshot", 1_000);
 * console.log(formatDiff(rows, 30));
 * ```
 */
import { readFileSync } from "node:fs";

/** Objects of one kind that the held requests added, per request. */
export interface DiffRow {
  /** `type:name`, e.g. `object:AbortSignal`, `closure:onClose`, `string`. */
  readonly kind: string;
  /** Objects added per request. */
  readonly count: number;
  /** Shallow bytes added per request. */
  readonly bytes: number;
}

interface Snapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: readonly string[];
      readonly node_types: readonly [readonly string[], ...unknown[]];
    };
  };
  readonly nodes: readonly number[];
  readonly strings: readonly string[];
}

/** Node types summed by type alone: their names are contents (a string's text, a code name). */
const BY_TYPE_ONLY: ReadonlySet<string> = new Set([
  "string",
  "concatenated string",
  "sliced string",
  "number",
  "code",
  "hidden",
  "array",
  "object shape",
  "bigint",
]);

/** Count and shallow size per kind of one snapshot file. */
function summarise(path: string): Map<string, { count: number; bytes: number }> {
  const parsed = JSON.parse(readFileSync(path, "utf8")) as Snapshot;
  const fields = parsed.snapshot.meta.node_fields;
  const types = parsed.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const totals = new Map<string, { count: number; bytes: number }>();
  const { nodes, strings } = parsed;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt] as number] ?? "?";
    const kind = BY_TYPE_ONLY.has(type)
      ? type
      : `${type}:${strings[nodes[i + nameAt] as number] ?? "?"}`;
    const size = nodes[i + sizeAt] as number;
    const total = totals.get(kind);
    if (total === undefined) totals.set(kind, { count: 1, bytes: size });
    else {
      total.count++;
      total.bytes += size;
    }
  }
  return totals;
}

/**
 * What `during` holds beyond `before`, per request of `requests`, largest first (kinds that
 * shrank are kept, with negative figures, so the rows add up to the whole difference).
 *
 * @example
 * ```ts
 * diffSnapshots("a.heapsnapshot", "b.heapsnapshot", 500)[0]; // { kind: "object:Socket", … }
 * ```
 */
export function diffSnapshots(before: string, during: string, requests: number): DiffRow[] {
  const a = summarise(before);
  const b = summarise(during);
  const rows: DiffRow[] = [];
  for (const kind of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(kind) ?? { count: 0, bytes: 0 };
    const y = b.get(kind) ?? { count: 0, bytes: 0 };
    if (x.count === y.count && x.bytes === y.bytes) continue;
    rows.push({
      kind,
      count: (y.count - x.count) / requests,
      bytes: (y.bytes - x.bytes) / requests,
    });
  }
  return rows.sort((p, q) => q.bytes - p.bytes);
}

/**
 * The `top` largest rows as a Markdown table, with the total of all rows (not only those shown).
 *
 * @example
 * ```ts
 * console.log(formatDiff(rows, 25));
 * ```
 */
export function formatDiff(rows: readonly DiffRow[], top: number): string {
  const total = rows.reduce((sum, row) => sum + row.bytes, 0);
  const lines = ["| kind | objects per request | bytes per request |", "| --- | ---: | ---: |"];
  for (const row of rows.slice(0, top)) {
    lines.push(`| \`${row.kind}\` | ${row.count.toFixed(2)} | ${row.bytes.toFixed(0)} |`);
  }
  lines.push(`| all kinds (${rows.length}) | | ${total.toFixed(0)} |`);
  return lines.join("\n");
}
