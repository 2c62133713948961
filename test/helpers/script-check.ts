// Throwaway source trees for the repository's own checkers (scripts/check-layers.ts,
// check-params.ts, check-structure.ts): a tree written under the temp dir, removed after the
// file's tests, and the checker run on it as CI runs it.
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after } from "node:test";

/**
 * The tree writer and runner of one checker: `tree(files)` writes `files` (path → text) under a
 * fresh temporary directory and returns it (every tree is removed after the calling file's
 * tests); `runCli(dir)` runs `node --import tsx scripts/<script> <dir>`.
 *
 * @example
 * ```ts
 * const { tree, runCli } = scriptCheck("check-params.ts");
 * const run = runCli(tree({ "http/a.ts": "export function f(a, b) {}\n" }));
 * ```
 */
export function scriptCheck(script: string): {
  tree(files: Record<string, string>): string;
  runCli(srcDir: string): SpawnSyncReturns<string>;
} {
  const roots: string[] = [];
  after(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });
  const prefix = `${script.replace(/\.ts$/, "")}-`;
  return {
    tree(files) {
      const root = mkdtempSync(join(tmpdir(), prefix));
      roots.push(root);
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      }
      return root;
    },
    runCli(srcDir) {
      return spawnSync(process.execPath, ["--import", "tsx", `scripts/${script}`, srcDir], {
        encoding: "utf8",
        timeout: 60_000,
      });
    },
  };
}
