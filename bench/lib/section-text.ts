/**
 * Reads one `## Heading` section back out of a markdown document (the counterpart of
 * replaceSection), so the report can reassemble docs/benchmarks.md from the sections the
 * individual benchmarks wrote.
 *
 * @example
 * ```ts
 * sectionText("# T\n\n## A\n\nbody\n\n## B\nx\n", "A"); // "body"
 * ```
 */

/**
 * The body of the level-2 section titled `heading` (trimmed, without its heading line), or null
 * when there is none. Headings inside fenced code blocks are not sections.
 *
 * @example
 * ```ts
 * sectionText(readFileSync("docs/benchmarks.md", "utf8"), "HTTP");
 * ```
 */
export function sectionText(document: string, heading: string): string | null {
  const lines = document.split("\n");
  let start = -1;
  let end = lines.length;
  let inFence = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith("```")) inFence = !inFence;
    if (inFence || !line.startsWith("## ")) continue;
    if (start === -1) {
      if (line.slice(3).trim() === heading) start = i;
    } else {
      end = i;
      break;
    }
  }
  return start === -1
    ? null
    : lines
        .slice(start + 1, end)
        .join("\n")
        .trim();
}
