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
      readonly edge_fields: readonly string[];
      readonly edge_types: readonly [readonly string[], ...unknown[]];
    };
  };
  readonly nodes: readonly number[];
  readonly edges: readonly number[];
  readonly strings: readonly string[];
}

/** How {@link diffSnapshots} names what it sums. */
export interface DiffOptions {
  /**
   * Also name each node summed by type alone (an array, a string, a number) by what holds it:
   * `array ← Map.table ← ConnectionBounds.tracked`. A hash table's backing store is an `array`
   * held by its Map or Set, which is held by a field of some object, so a table that grows with
   * the requests is named by that field. The holder is the node's first retainer that is not a
   * weak edge, followed up through containers (Map, Set, Array, arrays, plain objects, contexts)
   * at most {@link HOLDER_HOPS} times. Default false: by type alone.
   */
  readonly holders?: boolean;
}

/** How far {@link DiffOptions.holders} follows a node's holders up through containers. */
const HOLDER_HOPS = 3;

/** Kinds a holder chain goes on through: they are only where the named field's data lives. */
const CONTAINERS: ReadonlySet<string> = new Set([
  "array",
  "hidden",
  "object:Map",
  "object:Set",
  "object:Array",
  "object:Object",
  "object:system / Context",
]);

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

/**
 * For each node (by its index in `nodes`), the first node that holds it other than weakly, and
 * the name of the edge it holds it by: the shape {@link DiffOptions.holders} reads.
 */
function firstHolders(parsed: Snapshot): { from: Int32Array; edge: string[] } {
  const meta = parsed.snapshot.meta;
  const width = meta.node_fields.length;
  const edgeCountAt = meta.node_fields.indexOf("edge_count");
  const edgeWidth = meta.edge_fields.length;
  const edgeTypeAt = meta.edge_fields.indexOf("type");
  const edgeNameAt = meta.edge_fields.indexOf("name_or_index");
  const toAt = meta.edge_fields.indexOf("to_node");
  const edgeTypes = meta.edge_types[0];
  const { nodes, edges, strings } = parsed;
  const count = nodes.length / width;
  const from = new Int32Array(count).fill(-1);
  const edge: string[] = new Array<string>(count);
  let e = 0;
  for (let n = 0; n < count; n++) {
    const edgeCount = nodes[n * width + edgeCountAt] as number;
    for (let k = 0; k < edgeCount; k++, e += edgeWidth) {
      const type = edgeTypes[edges[e + edgeTypeAt] as number];
      if (type === "weak" || type === "shortcut") continue;
      const to = (edges[e + toAt] as number) / width;
      if (from[to] !== -1) continue;
      from[to] = n;
      const name = edges[e + edgeNameAt] as number;
      // Elements and hidden edges are numbered; the others name a string, which is a number too
      // for a root's handles (their numbers change from one snapshot to the next).
      const named = type === "element" || type === "hidden" ? "" : (strings[name] ?? "?");
      edge[to] = named === "" || /^\d+$/.test(named) ? "[]" : named;
    }
  }
  return { from, edge };
}

/**
 * Count and shallow size per kind of one snapshot file (an object's kind: `object:` and its
 * constructor's name).
 *
 * @example
 * ```ts
 * const kinds = summarise("held.heapsnapshot");
 * kinds.get("object:HandlerCall"); // { count: 100, bytes: 20_000 }
 * ```
 */
export function summarise(
  path: string,
  options: DiffOptions = {},
): Map<string, { count: number; bytes: number }> {
  const parsed = JSON.parse(readFileSync(path, "utf8")) as Snapshot;
  const fields = parsed.snapshot.meta.node_fields;
  const types = parsed.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const totals = new Map<string, { count: number; bytes: number }>();
  const { nodes, strings } = parsed;
  const kindOf = (n: number): string => {
    const type = types[nodes[n * width + typeAt] as number] ?? "?";
    return BY_TYPE_ONLY.has(type)
      ? type
      : `${type}:${strings[nodes[n * width + nameAt] as number] ?? "?"}`;
  };
  const holders = options.holders === true ? firstHolders(parsed) : null;
  const holderChain = (n: number, kind: string): string => {
    if (holders === null) return kind;
    let label = kind;
    let at = n;
    for (let hop = 0; hop < HOLDER_HOPS; hop++) {
      const up = holders.from[at] as number;
      if (up === -1) break;
      const upKind = kindOf(up);
      label += ` ← ${upKind.replace(/^object:/, "")}.${holders.edge[at]}`;
      if (!CONTAINERS.has(upKind)) break;
      at = up;
    }
    return label;
  };
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt] as number] ?? "?";
    const kind = BY_TYPE_ONLY.has(type)
      ? holderChain(i / width, type)
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
export function diffSnapshots(
  before: string,
  during: string,
  requests: number,
  options: DiffOptions = {},
): DiffRow[] {
  const a = summarise(before, options);
  const b = summarise(during, options);
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
