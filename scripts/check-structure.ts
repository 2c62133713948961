/**
 * Fails (exit 1) when a file under src/ is longer than {@link MAX_LINES} lines or a folder under
 * src/ holds more than {@link MAX_FILES} files of its own (sub-folders not counted), naming every
 * offender. Past those sizes a file holds more than one concept and a folder more than one room:
 * a reader no longer finds a thing by its name (docs/architecture.md, "Layers"; CONTRIBUTING.md,
 * "Style"). A long file is split by concept; a full folder is regrouped into sub-folders.
 *
 * Usage: `node --import tsx scripts/check-structure.ts [srcDir]` (default `src`).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The most lines a file under src/ may have (aim for 400 or fewer). */
export const MAX_LINES = 700;

/** The most files a folder under src/ may hold directly. */
export const MAX_FILES = 15;

export interface StructureProblem {
  readonly kind: "long-file" | "full-folder";
  /** The file or folder, relative to the checked directory (`.` for the directory itself). */
  readonly path: string;
  /** Its lines, or its files. */
  readonly count: number;
  readonly message: string;
}

export interface CheckStructureOptions {
  readonly maxLines?: number;
  readonly maxFiles?: number;
}

/** Lines as `wc -l` counts them, plus a last line without its newline. */
export function lineCount(text: string): number {
  let lines = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines += 1;
  return text.length > 0 && !text.endsWith("\n") ? lines + 1 : lines;
}

/**
 * Checks every file and folder under `srcDir`: every file's lines (whatever its kind: a script or
 * a data file read by the code is as much to read) and every folder's own files.
 *
 * @example
 * ```ts
 * const problems = checkStructure("src");
 * if (problems.length > 0) process.exitCode = 1;
 * ```
 */
export function checkStructure(
  srcDir: string,
  options: CheckStructureOptions = {},
): StructureProblem[] {
  const maxLines = options.maxLines ?? MAX_LINES;
  const maxFiles = options.maxFiles ?? MAX_FILES;
  const problems: StructureProblem[] = [];
  const visit = (dir: string): void => {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    const files = entries.filter((entry) => entry.isFile());
    const folder = relative(srcDir, dir).split(sep).join("/") || ".";
    if (files.length > maxFiles) {
      problems.push({
        kind: "full-folder",
        path: folder,
        count: files.length,
        message: `${join(srcDir, folder).split(sep).join("/")}/ holds ${files.length} files (at most ${maxFiles}): regroup them by concept into sub-folders`,
      });
    }
    for (const entry of files) {
      const full = join(dir, entry.name);
      const lines = lineCount(readFileSync(full, "utf8"));
      if (lines <= maxLines) continue;
      const path = relative(srcDir, full).split(sep).join("/");
      problems.push({
        kind: "long-file",
        path,
        count: lines,
        message: `${join(srcDir, path).split(sep).join("/")} has ${lines} lines (at most ${maxLines}): split it by concept`,
      });
    }
    for (const entry of entries) if (entry.isDirectory()) visit(join(dir, entry.name));
  };
  visit(srcDir);
  return problems;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const srcDir = process.argv[2] ?? "src";
  const problems = checkStructure(srcDir);
  for (const problem of problems) console.error(`check-structure: ${problem.message}`);
  if (problems.length > 0) {
    console.error(`check-structure: ${problems.length} problem(s); see docs/architecture.md`);
    process.exitCode = 1;
  } else {
    console.log(
      `check-structure: no file under ${srcDir}/ over ${MAX_LINES} lines, no folder over ${MAX_FILES} files`,
    );
  }
}
