/**
 * Fails (exit 1) when a module under src/ imports upward or sideways across layers, when the
 * import graph has a cycle, or when a source directory is missing from the layer table. The
 * layers and the reasons for them are described in docs/architecture.md ("Layers").
 *
 * Usage: `node --import tsx scripts/check-layers.ts [srcDir]` (default `src`). Every import
 * counts, `import type` included: a type-only cycle still ties two layers together.
 */
import { readFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

import { sourceFiles } from "./lib/source-files.js";

export interface Layer {
  readonly path: string;
  readonly rank: number;
  /** Entered only through `<path>/index.ts` by modules outside the layer. */
  readonly face?: boolean;
}

/**
 * The layer table: a path under src/ (a directory, or a single top-level file) and its rank. A
 * module may import modules of its own layer and of layers with a lower rank, never higher, and
 * never a different layer of the same rank (siblings stay independent). The longest matching
 * path decides a module's layer, so a subdirectory may sit in a layer of its own. A layer with
 * `face: true` is entered only through its `index.ts`: modules outside it import nothing else of
 * it, so what it offers the rest of the package is written down in one place.
 */
export const LAYERS: readonly Layer[] = [
  // Leaves: the error classes and codes, then what only needs them.
  { path: "errors.ts", rank: 0 },
  { path: "diagnostics.ts", rank: 1 },
  { path: "reflect.ts", rank: 1 },
  { path: "logging-levels.ts", rank: 1 },
  { path: "option-schema.ts", rank: 1 },
  { path: "steady-table.ts", rank: 1 },
  { path: "byte-ledger.ts", rank: 1 },
  { path: "reachability.ts", rank: 1 },
  { path: "runtime.ts", rank: 1 },
  // Building blocks: tenant identity, cancellation bookkeeping, sessions, task records, the contract that carries
  // clients' answers between nodes.
  { path: "identity", rank: 2 },
  { path: "cancellation", rank: 2 },
  { path: "sessions", rank: 2 },
  { path: "tasks", rank: 2 },
  { path: "replies", rank: 2 },
  { path: "changes", rank: 2 },
  { path: "rate-limits", rank: 2 },
  // OAuth access tokens (they become a Principal); tool isolation in worker threads; the Redis
  // stores. Each builds on the blocks above and none needs another. The Redis layer's folders
  // belong to it: connection/ (one connection, bounded calls, outages, node ids), cancellation/,
  // tasks/, sessions/ and rate-limits/ (each store with its scripts and the parts it is made of).
  { path: "identity/oauth", rank: 3 },
  { path: "isolation", rank: 3 },
  { path: "redis", rank: 3 },
  // MCP itself, one room per capability, ranked inside the layer (4.x) so that its rooms point
  // down too. At the bottom the wire: JSON-RPC messages, eras and versions, the 2026-07-28
  // envelope and parameter headers, list cursors, and the sink contract with transports.
  { path: "protocol/wire", rank: 4.1, face: true },
  // Asking the client (elicitation, sampling, roots): the vocabulary every asker speaks,
  // 2025-11-25 server requests and their pending table, 2026-07-28 input-required rounds.
  { path: "protocol/asking", rank: 4.2, face: true },
  // One handler call: its context, its answer, its cancellation; the primitive every capability
  // defines (a named handler with a schema) and the collection that lists them.
  { path: "protocol/calls", rank: 4.3, face: true },
  // Who listens for changes: 2026-07-28 `subscriptions/listen` streams, 2025-11-25
  // `resources/subscribe`. Capabilities announce into them.
  { path: "protocol/subscriptions", rank: 4.4, face: true },
  // The capabilities, independent of one another.
  { path: "protocol/tools", rank: 4.5, face: true },
  { path: "protocol/resources", rank: 4.5, face: true },
  { path: "protocol/prompts", rank: 4.5, face: true },
  // Completion (it completes the arguments of prompts and the variables of resource templates),
  // and tasks (a tool call that outlives its request): each builds on the capabilities below.
  { path: "protocol/completion", rank: 4.6, face: true },
  { path: "protocol/tasks", rank: 4.6, face: true },
  // MCP Apps: a `ui://` resource serving an HTML view and the tool metadata naming it.
  { path: "protocol/apps", rank: 4.6, face: true },
  // Skills: `skill://` resources and `skills/list`/`skills/get` on the extension seam.
  { path: "protocol/skills", rank: 4.6, face: true },
  // The transport-neutral dispatcher and the layer's face (protocol/index.ts), on top.
  { path: "protocol", rank: 4.9 },
  // Transports: they speak to clients and hand messages to the dispatcher. HTTP's folders belong
  // to it: core/ (one request's steps; its context/ and its admission/ before routing), doors/
  // (node:http and fetch onto the core, connection bounds), operability/ (readiness and metrics).
  { path: "http", rank: 5 },
  { path: "stdio", rank: 5 },
  // What the operator sees: failed handlers reported, request and handler spans. An observer of
  // the dispatcher, beside the transports and independent of them.
  { path: "telemetry", rank: 5 },
  // The server: owns the registry, the worker pool and the dispatcher, and opens the doors.
  { path: "server", rank: 6 },
  // The command line, and the framework adapters (they take a server and hand its requests to
  // its request core); then the package entry.
  { path: "cli", rank: 7 },
  { path: "adapters", rank: 7 },
  { path: "index.ts", rank: 8 },
];

export interface LayerProblem {
  readonly kind: "upward" | "sideways" | "cycle" | "unlisted" | "face";
  readonly message: string;
}

function layerOf(file: string, layers: readonly Layer[]): Layer | undefined {
  let best: Layer | undefined;
  for (const layer of layers) {
    const matches = file === layer.path || file.startsWith(`${layer.path}/`);
    if (matches && (best === undefined || layer.path.length > best.path.length)) best = layer;
  }
  return best;
}

/** Relative specifiers of one module (static, type-only, re-exports and literal `import()`). */
function importsOf(text: string): string[] {
  const info = ts.preProcessFile(text, true, true);
  return info.importedFiles.map((f) => f.fileName).filter((name) => name.startsWith("."));
}

/** `./x.js` from `a/b.ts` → `a/x.ts` (the NodeNext convention: import .js, write .ts). */
function resolveImport(from: string, specifier: string, files: ReadonlySet<string>) {
  const joined = join(dirname(from), specifier).split(sep).join("/");
  const candidates = [joined.replace(/\.js$/, ".ts"), joined, `${joined}.ts`, `${joined}/index.ts`];
  return candidates.find((c) => files.has(c));
}

/**
 * Checks the modules under `srcDir` against `layers`.
 *
 * @example
 * ```ts
 * const problems = checkLayers("src");
 * if (problems.length > 0) process.exitCode = 1;
 * ```
 */
export function checkLayers(srcDir: string, layers: readonly Layer[] = LAYERS): LayerProblem[] {
  const problems: LayerProblem[] = [];
  const files = sourceFiles(srcDir);
  const known = new Set(files);
  const graph = new Map<string, string[]>();

  for (const file of files) {
    const from = layerOf(file, layers);
    if (from === undefined) {
      problems.push({
        kind: "unlisted",
        message: `${file}: not in the layer table of scripts/check-layers.ts (add its directory)`,
      });
    }
    const edges: string[] = [];
    for (const specifier of importsOf(readFileSync(join(srcDir, file), "utf8"))) {
      const target = resolveImport(file, specifier, known);
      if (target === undefined) continue; // not a source module (e.g. package.json)
      edges.push(target);
      const to = layerOf(target, layers);
      if (from === undefined || to === undefined || from === to) continue;
      if (to.face === true && target !== `${to.path}/index.ts`) {
        problems.push({
          kind: "face",
          message: `${file} imports ${target}: enter ${to.path} through its face, ${to.path}/index.ts`,
        });
      }
      if (to.rank > from.rank) {
        problems.push({
          kind: "upward",
          message: `${file} (${from.path}, rank ${from.rank}) imports ${target} (${to.path}, rank ${to.rank}): upward`,
        });
      } else if (to.rank === from.rank) {
        problems.push({
          kind: "sideways",
          message: `${file} (${from.path}) imports ${target} (${to.path}): sibling layers stay independent`,
        });
      }
    }
    graph.set(file, edges);
  }

  for (const cycle of findCycles(graph)) {
    problems.push({ kind: "cycle", message: `import cycle: ${cycle.join(" -> ")}` });
  }
  return problems;
}

/** One cycle per strongly connected component (Tarjan), each shown as a closed path. */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;

  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    const selfLoop = (graph.get(node) ?? []).includes(node);
    if (component.length > 1 || selfLoop) cycles.push(pathWithin(graph, new Set(component)));
  };

  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

/** A concrete closed path through a strongly connected component, for the error message. */
function pathWithin(graph: ReadonlyMap<string, readonly string[]>, members: ReadonlySet<string>) {
  const [start] = [...members].sort();
  const path: string[] = [];
  const seen = new Set<string>();
  let node = start as string;
  while (!seen.has(node)) {
    seen.add(node);
    path.push(node);
    node = (graph.get(node) ?? []).find((to) => members.has(to)) as string;
  }
  return [...path.slice(path.indexOf(node)), node];
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const srcDir = resolve(process.argv[2] ?? "src");
  const problems = checkLayers(srcDir);
  for (const problem of problems) console.error(`check-layers: ${problem.message}`);
  if (problems.length > 0) {
    console.error(`check-layers: ${problems.length} problem(s); see docs/architecture.md`);
    process.exitCode = 1;
  } else {
    console.log(
      `check-layers: ${sourceFiles(srcDir).length} modules, layers point down, no cycles`,
    );
  }
}
