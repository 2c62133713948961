/**
 * Rewrites one `## Heading` section of a markdown document and leaves every other section as it
 * is, so several benchmarks (owned by different people) can share docs/benchmarks.md.
 *
 * @example
 * ```ts
 * replaceSection("# T\n\n## A\nold\n\n## B\nkeep\n", "A", "new\n");
 * // "# T\n\n## A\n\nnew\n\n## B\nkeep\n"
 * ```
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** The document every benchmark writes its own section of. */
export const BENCHMARKS_DOC = "docs/benchmarks.md";

/**
 * Rewrites the section titled `heading` of the document at `path` (created with a title when
 * missing), read just before writing: other benchmarks own other sections of the same file.
 *
 * @example
 * ```ts
 * writeSection(BENCHMARKS_DOC, "Tasks", table); // prints: wrote the "## Tasks" section of docs/benchmarks.md
 * ```
 */
export function writeSection(path: string, heading: string, body: string): void {
  let doc = "# Benchmarks\n";
  try {
    doc = readFileSync(path, "utf8");
  } catch {
    mkdirSync(dirname(path), { recursive: true });
  }
  writeFileSync(path, replaceSection(doc, heading, body));
  console.error(`wrote the "## ${heading}" section of ${path}`);
}

/**
 * Replaces the body of the level-2 section titled `heading` (from its heading line up to the next
 * `## ` heading or the end) with `body`, or appends the section when it is missing. Headings inside
 * fenced code blocks are not mistaken for sections.
 *
 * @example
 * ```ts
 * replaceSection(doc, "HTTP", "| target | req/s |\n");
 * ```
 */
export function replaceSection(document: string, heading: string, body: string): string {
  const lines = document.split("\n");
  const [start, end] = locateSection(lines, heading);
  const section = `## ${heading}\n\n${body.trim()}\n`;
  if (start === -1) {
    const base = document.trimEnd();
    return `${base.length > 0 ? `${base}\n\n` : ""}${section}`;
  }
  const before = lines.slice(0, start).join("\n");
  const after = lines.slice(end).join("\n");
  return `${before}${before.length > 0 ? "\n" : ""}${section}${after.length > 0 ? `\n${after}` : ""}`;
}

/**
 * The body of the level-2 section titled `heading` (trimmed, without its heading line), or null
 * when there is none: the counterpart of {@link replaceSection}, so the report can reassemble
 * docs/benchmarks.md from the sections the individual benchmarks wrote.
 *
 * @example
 * ```ts
 * sectionText("# T\n\n## A\n\nbody\n\n## B\nx\n", "A"); // "body"
 * ```
 */
export function sectionText(document: string, heading: string): string | null {
  const lines = document.split("\n");
  const [start, end] = locateSection(lines, heading);
  return start === -1
    ? null
    : lines
        .slice(start + 1, end)
        .join("\n")
        .trim();
}

/**
 * The heading line of the section titled `heading` and the line where the next `## ` section
 * starts (or the end); `[-1, length]` when missing. Headings inside fenced code blocks are not
 * sections.
 */
function locateSection(lines: readonly string[], heading: string): [number, number] {
  let start = -1;
  let inFence = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith("```")) inFence = !inFence;
    if (inFence || !line.startsWith("## ")) continue;
    if (start === -1) {
      if (line.slice(3).trim() === heading) start = i;
    } else {
      return [start, i];
    }
  }
  return [start, lines.length];
}

/**
 * The titles of every level-2 section, in order (headings in fenced code blocks are not
 * sections): lets the report keep sections other benchmarks or people added.
 *
 * @example
 * ```ts
 * sectionHeadings("# T\n\n## A\nx\n## B\ny\n"); // ["A", "B"]
 * ```
 */
export function sectionHeadings(document: string): string[] {
  const out: string[] = [];
  let inFence = false;
  for (const line of document.split("\n")) {
    if (line.startsWith("```")) inFence = !inFence;
    if (!inFence && line.startsWith("## ")) out.push(line.slice(3).trim());
  }
  return out;
}
