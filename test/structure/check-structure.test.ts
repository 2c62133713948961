// The structure check (scripts/check-structure.ts) on small throwaway source trees: it passes
// files of 700 lines and folders of 15 files, the repository's own src/ included, and fails,
// through the same command CI runs, on a file of 701 lines or a folder of 16 files, naming each
// offender and its size.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { checkStructure, lineCount } from "../../scripts/check-structure.js";
import { scriptCheck } from "../helpers/script-check.js";

const { tree, runCli } = scriptCheck("check-structure.ts");

/** A module of `n` lines. */
const lines = (n: number): string => "export const x = 1;\n".repeat(n);

/** `n` one-line modules named `m0.ts`… under `folder`. */
function modules(folder: string, n: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i += 1) files[`${folder}/m${i}.ts`] = lines(1);
  return files;
}

describe("check-structure", () => {
  it("counts lines as wc -l does, and a last line without its newline", () => {
    assert.equal(lineCount(""), 0);
    assert.equal(lineCount("a\n"), 1);
    assert.equal(lineCount("a\nb"), 2);
    assert.equal(lineCount("\n\n\n"), 3);
  });

  it("passes 700 lines and 15 files a folder, and the repository's own src/", () => {
    const root = tree({ "a/long.ts": lines(700), ...modules("a/b", 15), ...modules(".", 14) });
    assert.deepEqual(checkStructure(root), []);
    const run = runCli("src");
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /no file under src\/ over 700 lines, no folder over 15 files/);
  });

  it("fails on a file of 701 lines, naming it and its length", () => {
    const root = tree({ "ok.ts": lines(700), "deep/room/too-long.ts": lines(701) });
    const problems = checkStructure(root);
    assert.deepEqual(
      problems.map(({ kind, path, count }) => ({ kind, path, count })),
      [{ kind: "long-file", path: "deep/room/too-long.ts", count: 701 }],
    );
    const run = runCli(root);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /deep\/room\/too-long\.ts has 701 lines \(at most 700\): split it/);
    assert.match(run.stderr, /1 problem\(s\)/);
  });

  it("fails on a folder of 16 files, its sub-folders not counted, naming the folder", () => {
    const root = tree({ ...modules("full", 16), ...modules("full/sub", 3), ...modules("ok", 15) });
    const problems = checkStructure(root);
    assert.deepEqual(
      problems.map(({ kind, path, count }) => ({ kind, path, count })),
      [{ kind: "full-folder", path: "full", count: 16 }],
    );
    const run = runCli(root);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /full\/ holds 16 files \(at most 15\): regroup them/);
  });

  it("counts every file, not only modules, and names every offender at once", () => {
    const files: Record<string, string> = { ...modules("mixed", 15), "mixed/data.json": "{}\n" };
    files["script.lua"] = lines(701);
    files["x/a.ts"] = lines(800);
    const problems = checkStructure(tree(files));
    assert.deepEqual(problems.map((p) => p.path).sort(), ["mixed", "script.lua", "x/a.ts"]);
  });
});
