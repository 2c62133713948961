/**
 * The pool from compiled JavaScript, as `dist/` ships it: the isolation sources (and the leaves
 * they import) are transpiled into a temporary directory with the same layout, then a plain
 * `node` child process (no tsx) runs tools there. This checks that the worker entry resolves to
 * `worker-entry.js` beside the compiled pool, and that the process exits by itself: an idle
 * worker never keeps it alive, and close() ends a busy one.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import ts from "typescript";

const run = promisify(execFile);
const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/** Transpiles `entry` and every module it imports at run time, keeping paths relative to src/. */
async function transpileClosure(entry: string, outDir: string): Promise<void> {
  const pending = [resolve(SRC, entry)];
  const done = new Set<string>();
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (done.has(file)) continue;
    done.add(file);
    const { outputText } = ts.transpileModule(await readFile(file, "utf8"), {
      fileName: file,
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
        // JSDoc examples hold import lines too; only real imports may be followed.
        removeComments: true,
      },
    });
    const target = join(outDir, relative(SRC, file)).replace(/\.ts$/, ".js");
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, outputText);
    // Type-only imports are gone from the output, so this follows run-time imports only.
    for (const match of outputText.matchAll(/\bfrom\s+"(\.{1,2}\/[^"]+)\.js"/g)) {
      pending.push(resolve(dirname(file), `${match[1]}.ts`));
    }
  }
}

const CHECK = `
import { isolatedHandler, WorkerPool } from "./isolation/index.js";

const tools = "data:text/javascript," + encodeURIComponent(\`
  export function add(args, ctx) { return { sum: args.x + args.y, scope: ctx.scope }; }
  export async function spin(_args, ctx) { await ctx.progress(0); for (;;) {} }
\`);
const add = isolatedHandler(tools, "add");
const spin = isolatedHandler(tools, "spin");

const pool = new WorkerPool({ maxWorkers: 1 });
const first = await pool.run(add, { x: 2, y: 3 }, { scope: "ip:127.0.0.1" });
let started;
const running = new Promise((resolve) => { started = resolve; });
const task = pool.start(spin, {}, { onProgress: () => started() });
await running;
const killed = task.kill();
const error = await task.result.catch((e) => e.code);
const again = await pool.run(add, { x: 1, y: 1 });

// A second pool closed while its worker spins: close() must end the thread.
const other = new WorkerPool({ maxWorkers: 1 });
let spinning;
const busy = new Promise((resolve) => { spinning = resolve; });
const otherTask = other.start(spin, {}, { onProgress: () => spinning() });
const outcome = otherTask.result.catch((e) => e.code);
await busy;
await other.close();
const closed = await outcome;

console.log(JSON.stringify({ first, killed, error, again, size: pool.size, closed, otherSize: other.size }));
// The first pool is left open on purpose, its worker idle: the process must still exit.
`;

test("the compiled build runs isolated tools from plain node, and the process exits by itself", async () => {
  const outDir = await mkdtemp(join(tmpdir(), "conduit-isolation-"));
  try {
    await transpileClosure("isolation/index.ts", outDir);
    await transpileClosure("isolation/worker-entry.ts", outDir);
    await writeFile(join(outDir, "package.json"), '{ "type": "module" }\n');
    await writeFile(join(outDir, "check.mjs"), CHECK);
    // The package's dependencies (zod checks the pool's options), as an install would provide.
    await symlink(
      fileURLToPath(new URL("../../node_modules", import.meta.url)),
      join(outDir, "node_modules"),
      "dir",
    );

    const { stdout } = await run(process.execPath, [join(outDir, "check.mjs")], {
      cwd: outDir,
      timeout: 20_000,
    });
    assert.deepEqual(JSON.parse(stdout), {
      first: { sum: 5, scope: "ip:127.0.0.1" },
      killed: true,
      error: "CONDUIT_ERR_TOOL_KILLED",
      again: { sum: 2, scope: "global" },
      size: 1,
      closed: "CONDUIT_ERR_TOOL_KILLED",
      otherSize: 0,
    });
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
});
