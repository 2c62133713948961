/**
 * `@opentelemetry/api` is an optional peer: no shipped declaration may name it, or a user
 * without the package and with `skipLibCheck: false` could not compile (TS2307). The
 * declarations are emitted with the build's own tsconfig into a temporary directory; every one
 * is checked, and the walk from index.d.ts through relative imports shows the entry reaches the
 * options that describe tracing.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
const RELATIVE = /(?:from\s+|import\()\s*["'](\.{1,2}\/[^"']+)["']/g;

test("no shipped declaration names @opentelemetry/api", async () => {
  const out = mkdtempSync(join(tmpdir(), "conduit-decl-"));
  try {
    await run(
      process.execPath,
      [TSC, "-p", join(ROOT, "tsconfig.build.json"), "--emitDeclarationOnly", "--outDir", out],
      { cwd: ROOT, timeout: 180_000 },
    );
    const seen = new Set<string>();
    const pending = [join(out, "index.d.ts")];
    const offenders: string[] = [];
    while (pending.length > 0) {
      const file = pending.pop() as string;
      if (seen.has(file)) continue;
      seen.add(file);
      const text = readFileSync(file, "utf8");
      // Comments may name the package; an import or type reference may not.
      const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
      if (/["']@opentelemetry\//.test(code)) offenders.push(file.slice(out.length + 1));
      for (const match of code.matchAll(RELATIVE)) {
        pending.push(resolve(dirname(file), (match[1] as string).replace(/\.js$/, ".d.ts")));
      }
    }
    for (const file of readdirSync(out, { recursive: true, encoding: "utf8" })) {
      if (!file.endsWith(".d.ts") || seen.has(join(out, file))) continue;
      const code = readFileSync(join(out, file), "utf8")
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/\/\/.*$/gm, "");
      if (/["']@opentelemetry\//.test(code)) offenders.push(file);
    }
    assert.ok(seen.size > 20, `walked ${seen.size} declaration files`);
    assert.ok(seen.has(join(out, "server/options.d.ts")), "the options are reached");
    assert.deepEqual(offenders, []);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
