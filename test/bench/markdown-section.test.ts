/**
 * The benchmarks share docs/benchmarks.md by sections: each rewrites its own `## Heading` and the
 * report reads them back. A heading inside a fenced code block is not a section.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import {
  replaceSection,
  sectionHeadings,
  sectionText,
  writeSection,
} from "../../bench/lib/markdown-section.js";

const DOC = "# Benchmarks\n\n## HTTP\n\nold\n\n```\n## not a section\n```\n\n## Redis\n\nkeep\n";

test("replaceSection rewrites one section and leaves the others", () => {
  const out = replaceSection(DOC, "HTTP", "new figures\n");
  assert.equal(out, "# Benchmarks\n\n## HTTP\n\nnew figures\n\n## Redis\n\nkeep\n");
  assert.equal(sectionText(out, "Redis"), "keep");
});

test("a missing section is appended; sectionText finds it, or null", () => {
  const out = replaceSection("# Benchmarks\n", "Registry", "rows");
  assert.equal(out, "# Benchmarks\n\n## Registry\n\nrows\n");
  assert.equal(sectionText(out, "Registry"), "rows");
  assert.equal(sectionText(out, "HTTP"), null);
});

test("a heading inside a code fence does not end a section", () => {
  assert.equal(sectionText(DOC, "HTTP"), "old\n\n```\n## not a section\n```");
  assert.equal(sectionText(DOC, "not a section"), null);
});

test("sectionHeadings lists every section in order, not headings inside a code fence", () => {
  assert.deepEqual(sectionHeadings(DOC), ["HTTP", "Redis"]);
  assert.deepEqual(sectionHeadings("# Only a title\n"), []);
});

test("writeSection creates a missing document with its title, then rewrites only its section", () => {
  const dir = mkdtempSync(join(tmpdir(), "conduit-md-"));
  try {
    const path = join(dir, "docs", "benchmarks.md");
    writeSection(path, "Tasks", "first");
    assert.equal(readFileSync(path, "utf8"), "# Benchmarks\n\n## Tasks\n\nfirst\n");
    writeFileSync(path, DOC);
    writeSection(path, "Redis", "second");
    const out = readFileSync(path, "utf8");
    assert.equal(sectionText(out, "Redis"), "second");
    assert.equal(sectionText(out, "HTTP"), "old\n\n```\n## not a section\n```");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
