/**
 * Fails (exit 1) when a function under src/ takes more than {@link MAX_PARAMS} parameters: past
 * that, a call site is a row of positional values a reader has to count, and the values belong
 * together in an options object or a context object (CONTRIBUTING.md, "Style"). Every function
 * counts: declarations, methods, constructors, accessors, arrow functions and function
 * expressions; a `this` parameter does not, a rest parameter counts as one.
 *
 * The functions that were already longer when the rule came are listed in {@link ALLOWED} by name
 * (a file may move, a name rarely does); a new one fails, so the list can only shrink. An entry no
 * longer needed is printed as a note, and no entry counts under {@link STRICT_DIRS} (src/http/),
 * where the rule holds without exception.
 *
 * Usage: `node --import tsx scripts/check-params.ts [srcDir]` (default `src`).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

import { sourceFiles } from "./lib/source-files.js";

/** The most parameters a function may take. */
export const MAX_PARAMS = 4;

/** Directories (relative to srcDir) where no function may take more, whatever the allow-list. */
export const STRICT_DIRS: readonly string[] = ["http"];

/**
 * Functions outside {@link STRICT_DIRS} that took more than {@link MAX_PARAMS} parameters before
 * the rule, by name (`Class.method` for a method or constructor). Each is a candidate for an
 * options object.
 */
export const ALLOWED: ReadonlySet<string> = new Set<string>([
  "Dispatcher.answerError",
  "Dispatcher.run",
  "Dispatcher.runTracked",
  "InputRound.constructor",
  "refuse", // protocol/modern-envelope.ts
  "walk", // protocol/param-headers.ts
  "ServerRequestAsker.constructor",
  "TaskAsker.constructor",
  "renderList", // reflect.ts
  "TracedSink.constructor",
]);

export interface ParamReport {
  /** Functions over the limit and not allowed: each fails the check. */
  readonly problems: readonly ParamProblem[];
  /** Allowed names no function needs any more (to remove from {@link ALLOWED}). */
  readonly unused: readonly string[];
}

export interface ParamProblem {
  readonly file: string;
  readonly line: number;
  readonly name: string;
  readonly count: number;
  readonly message: string;
}

export interface CheckParamsOptions {
  readonly max?: number;
  readonly allowed?: ReadonlySet<string>;
  readonly strictDirs?: readonly string[];
}

/** A readable name for a function: its own, its variable's or property's, else `<anonymous>`. */
function nameOf(node: ts.SignatureDeclaration, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) {
    const owner = node.parent;
    return `${owner.name?.getText(source) ?? "<class>"}.constructor`;
  }
  if (node.name !== undefined) {
    const own = node.name.getText(source);
    const owner = node.parent;
    if ((ts.isClassLike(owner) || ts.isInterfaceDeclaration(owner)) && owner.name !== undefined) {
      return `${owner.name.getText(source)}.${own}`;
    }
    return own;
  }
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) {
    return parent.name.getText(source);
  }
  if (ts.isPropertyDeclaration(parent)) return parent.name.getText(source);
  return "<anonymous>";
}

/** Whether the node is a function with a body of its own (a signature alone is not checked). */
function isFunction(node: ts.Node): node is ts.SignatureDeclaration {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** The parameters that count: all but a leading `this`. */
function parameterCount(node: ts.SignatureDeclaration, source: ts.SourceFile): number {
  let count = node.parameters.length;
  const first = node.parameters[0];
  if (first !== undefined && first.name.getText(source) === "this") count -= 1;
  return count;
}

/** The functions of one module over the limit, as `[name, line, count]`. */
export function longSignatures(
  text: string,
  max: number = MAX_PARAMS,
): { readonly name: string; readonly line: number; readonly count: number }[] {
  const source = ts.createSourceFile("module.ts", text, ts.ScriptTarget.Latest, true);
  const found: { name: string; line: number; count: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunction(node)) {
      const count = parameterCount(node, source);
      if (count > max) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        found.push({ name: nameOf(node, source), line, count });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * Checks every module under `srcDir`.
 *
 * @example
 * ```ts
 * const { problems } = checkParams("src");
 * if (problems.length > 0) process.exitCode = 1;
 * ```
 */
export function checkParams(srcDir: string, options: CheckParamsOptions = {}): ParamReport {
  const max = options.max ?? MAX_PARAMS;
  const allowed = options.allowed ?? ALLOWED;
  const strictDirs = options.strictDirs ?? STRICT_DIRS;
  const problems: ParamProblem[] = [];
  const used = new Set<string>();
  for (const file of sourceFiles(srcDir)) {
    const strict = strictDirs.some((dir) => file.startsWith(`${dir}/`));
    const text = readFileSync(join(srcDir, file), "utf8");
    for (const { name, line, count } of longSignatures(text, max)) {
      if (!strict && allowed.has(name)) {
        used.add(name);
        continue;
      }
      problems.push({
        file,
        line,
        name,
        count,
        message: `${file}:${line} ${name} takes ${count} parameters (at most ${max}): pass an options or context object`,
      });
    }
  }
  return { problems, unused: [...allowed].filter((name) => !used.has(name)) };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const srcDir = process.argv[2] ?? "src";
  const { problems, unused } = checkParams(srcDir);
  for (const name of unused) {
    console.log(
      `check-params: note: ${name} is allowed but takes ${MAX_PARAMS} or fewer now: remove it from ALLOWED`,
    );
  }
  for (const problem of problems) console.error(`check-params: ${problem.message}`);
  if (problems.length > 0) {
    console.error(`check-params: ${problems.length} problem(s)`);
    process.exitCode = 1;
  } else {
    console.log(
      `check-params: no function under ${srcDir}/ takes more than ${MAX_PARAMS} parameters` +
        ` outside the ${ALLOWED.size - unused.length} allowed in scripts/check-params.ts (none under ${STRICT_DIRS.map((d) => `${srcDir}/${d}/`).join(", ")})`,
    );
  }
}
