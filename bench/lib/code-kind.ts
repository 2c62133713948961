/**
 * What kind of code a function of a callgrind breakdown is, from the name callgrind or node's
 * `--perf-basic-prof` map gives it (JIT code: `JS:*name file:line:col` optimized, `JS:^` baseline,
 * `JS:~` interpreted; `Builtins_…` or `Builtin:…` V8's builtins and IC stubs; `RegExp:…` compiled
 * regular expressions), after the breakdown's `shorten` (the target's own files as `dist/…` or
 * `bench/…`, packages as `node_modules/…`).
 *
 * @example
 * ```ts
 * codeKind("JS:*post dist/http/core/post.js:21:27"); // "own JavaScript (dist/, bench/)"
 * codeKind("Builtins_LoadIC_Megamorphic"); // "V8 builtins and IC stubs"
 * ```
 */
import { addCosts, UNNAMED_CODE, zeroCosts } from "./callgrind.js";

export const CODE_KINDS = [
  "own JavaScript (dist/, bench/)",
  "packages' JavaScript (node_modules/)",
  "node's JavaScript (node:)",
  "V8 builtins and IC stubs",
  "regular expressions",
  "other JIT code",
  "native code (V8, node, libuv, libc)",
] as const;

export type CodeKind = (typeof CODE_KINDS)[number];

/** The kind of the function callgrind or the perf map names `name` (after `shorten`). */
export function codeKind(name: string): CodeKind {
  if (name.startsWith("JS:")) {
    if (/ (dist|bench)\//.test(name)) return CODE_KINDS[0];
    if (name.includes("node_modules/")) return CODE_KINDS[1];
    if (name.includes(" node:")) return CODE_KINDS[2];
    return CODE_KINDS[5];
  }
  if (name.startsWith("Builtins_") || name.startsWith("Builtin:")) return CODE_KINDS[3];
  if (name.startsWith("RegExp:")) return CODE_KINDS[4];
  if (name === UNNAMED_CODE) return CODE_KINDS[5];
  return CODE_KINDS[6];
}

/** One kind's sum: how many functions, and their self costs by event name. */
export interface KindRow {
  readonly kind: CodeKind;
  readonly functions: number;
  readonly costs: Readonly<Record<string, number>>;
}

/**
 * Sums named self costs (bench/lib/callgrind.ts `namedSelfCosts`) by kind of code, every kind in
 * {@link CODE_KINDS} order (a kind with no function: zeros).
 *
 * @example
 * ```ts
 * sumByKind(new Map([["Builtins_LoadIC", { Ir: 300 }]]), ["Ir"])[3]; // { kind: "V8 builtins and IC stubs", functions: 1, costs: { Ir: 300 } }
 * ```
 */
export function sumByKind(
  costsByName: ReadonlyMap<string, Readonly<Record<string, number>>>,
  events: readonly string[],
): KindRow[] {
  const rows = CODE_KINDS.map((kind) => ({ kind, functions: 0, costs: zeroCosts(events) }));
  for (const [name, costs] of costsByName) {
    const row = rows[CODE_KINDS.indexOf(codeKind(name))] as (typeof rows)[number];
    row.functions++;
    addCosts(row.costs, costs);
  }
  return rows;
}
