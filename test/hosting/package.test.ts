/**
 * The package as a user gets it: built into a temporary copy, `npm pack`ed, installed from the
 * tarball into an empty project (`--prefer-offline`: only the npm registry, and only for what the
 * cache lacks), then used there: no warning from `npm install`, `import` and `require()` work (or
 * `require()` says "ESM only"), no source map points at a file the package does not ship, the
 * types resolve under `tsc --strict`, and the README's "Serving your own tools" example runs.
 * The worktree is never written to: the build goes to the temporary copy.
 */
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import ts from "typescript";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
/** Everything `files` in package.json ships, except `dist` (built below). */
const SHIPPED_SOURCES = ["package.json", "README.md", "LICENSE", "cjs"];

/** The README's first code block after `## Serving your own tools`. */
async function readmeExample(): Promise<string> {
  const readme = await readFile(join(ROOT, "README.md"), "utf8");
  const section = readme.indexOf("## Serving your own tools");
  assert.ok(section >= 0, "README has a 'Serving your own tools' section");
  const match = /```ts\n([\s\S]*?)```/.exec(readme.slice(section));
  assert.ok(match?.[1] !== undefined, "the section has a ts code block");
  return match[1];
}

/** Every file under `dir`, relative to it. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1));
}

describe("the packed package, installed in an empty project", { timeout: 120_000 }, () => {
  let work: string;
  let app: string;
  let installed: string;
  let installOutput: string;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), "conduit-mcp-pack-"));
    const staging = join(work, "package");
    await mkdir(staging);
    for (const entry of SHIPPED_SOURCES) {
      await cp(join(ROOT, entry), join(staging, entry), { recursive: true });
    }
    // The real build configuration, with only the output directory moved.
    await run(
      process.execPath,
      [TSC, "-p", join(ROOT, "tsconfig.build.json"), "--outDir", join(staging, "dist")],
      { cwd: ROOT, timeout: 90_000 },
    );
    const packed = await run(
      "npm",
      ["pack", "--ignore-scripts", "--json", "--pack-destination", work],
      {
        cwd: staging,
        timeout: 60_000,
      },
    );
    const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
    app = join(work, "app");
    await mkdir(app);
    await writeFile(
      join(app, "package.json"),
      JSON.stringify({ name: "app", version: "1.0.0", private: true, type: "module" }),
    );
    const install = await run(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund", join(work, filename)],
      { cwd: app, timeout: 90_000 },
    );
    installOutput = `${install.stdout}\n${install.stderr}`;
    installed = join(app, "node_modules/conduit-mcp");
  });

  after(async () => {
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });

  test("npm install prints no warning", () => {
    assert.doesNotMatch(installOutput, /warn/i, installOutput);
  });

  test("ships its licence and no source map that points at a missing file", async () => {
    const files = await listFiles(installed);
    assert.ok(files.includes("LICENSE"));
    assert.match(await readFile(join(installed, "LICENSE"), "utf8"), /conduit-mcp contributors/);
    for (const file of files.filter((name) => name.endsWith(".js"))) {
      const text = await readFile(join(installed, file), "utf8");
      for (const [, target] of text.matchAll(/\/\/# sourceMappingURL=(\S+)/g)) {
        assert.ok(files.includes(join(dirname(file), target as string)), `${file} → ${target}`);
      }
    }
    for (const file of files.filter((name) => name.endsWith(".map"))) {
      const map = JSON.parse(await readFile(join(installed, file), "utf8")) as {
        sources: string[];
      };
      for (const source of map.sources) {
        const shipped = resolve(installed, dirname(file), source);
        assert.ok(files.includes(shipped.slice(installed.length + 1)), `${file} → ${source}`);
      }
    }
  });

  test("the declarations a user's type-check reads import only dependencies, or an optional peer from its own entry", async () => {
    const manifest = JSON.parse(await readFile(join(installed, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
    };
    // What each entry's types pull in, following relative imports; internal modules that no
    // entry's declarations reach (the lazily loaded tracing code) are never read by a user's tsc.
    for (const [entry, allowedPeers] of [
      ["index.d.ts", []],
      ["redis/index.d.ts", ["ioredis"]],
    ] as const) {
      const seen = new Set<string>();
      const pending: string[] = [entry];
      while (pending.length > 0) {
        const file = pending.pop() as string;
        if (seen.has(file)) continue;
        seen.add(file);
        // Comments hold usage examples with import lines; only real imports count.
        const text = (await readFile(join(installed, "dist", file), "utf8")).replace(
          /\/\*[\s\S]*?\*\//g,
          "",
        );
        for (const [, specifier] of text.matchAll(/(?:from|import\()\s*"([^"]+)"/g)) {
          const name = specifier as string;
          if (name.startsWith("node:")) continue;
          if (name.startsWith(".")) {
            pending.push(join(dirname(file), name).replace(/\.js$/, ".d.ts"));
            continue;
          }
          const pkg = name.startsWith("@")
            ? name.split("/").slice(0, 2).join("/")
            : (name.split("/")[0] as string);
          if (pkg in manifest.dependencies) continue;
          assert.ok(pkg in manifest.peerDependencies, `${file} imports ${name}`);
          // A user without this optional peer must still be able to type-check this entry.
          assert.ok(
            (allowedPeers as readonly string[]).includes(pkg),
            `${file} (reached from ${entry}) names the optional peer ${name}`,
          );
        }
      }
      assert.ok(seen.size > 5, `${entry} reaches its declarations`);
    }
  });

  test("import works, and require() works where Node can, else says ESM only", async () => {
    const imported = await run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'import("conduit-mcp").then((m) => console.log(typeof m.createMcpServer))',
      ],
      { cwd: app },
    );
    assert.equal(imported.stdout.trim(), "function");
    const required = await run(
      process.execPath,
      ["-e", 'console.log(typeof require("conduit-mcp").createMcpServer)'],
      { cwd: app },
    );
    assert.equal(required.stdout.trim(), "function");
    // A runtime that cannot require() ES modules (Node before 20.19) is simulated with the flag.
    await assert.rejects(
      run(process.execPath, ["--no-experimental-require-module", "-e", 'require("conduit-mcp")'], {
        cwd: app,
      }),
      (error: { stderr: string }) => {
        assert.match(error.stderr, /conduit-mcp is ESM only/);
        assert.match(error.stderr, /import \{ createMcpServer \} from "conduit-mcp"/);
        return true;
      },
    );
  });

  test("the README example type-checks against the shipped types and runs", async () => {
    const example = await readmeExample();
    await writeFile(join(app, "example.ts"), example);
    await writeFile(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          // The shipped declarations' own imports are checked by the test above (a full lib check
          // of zod and @types/node costs most of a minute).
          skipLibCheck: true,
          types: ["node"],
          // @types/node is not a dependency of the package; the app borrows this repo's.
          typeRoots: [join(ROOT, "node_modules/@types")],
        },
        files: ["example.ts"],
      }),
    );
    const checked = await run(process.execPath, [TSC, "-p", "tsconfig.json"], {
      cwd: app,
      timeout: 60_000,
    }).catch((error: { stdout: string }) => error);
    assert.equal((checked as { stdout: string }).stdout.trim(), "", "tsc reports nothing");

    const js = ts.transpileModule(example, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    await writeFile(join(app, "example.mjs"), js);
    const child = spawn(process.execPath, ["example.mjs"], {
      cwd: app,
      env: { ...process.env, PORT: "0", TOKEN: "s3cret-0123456789" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
    try {
      const url = await new Promise<string>((found, fail) => {
        let out = "";
        const timer = setTimeout(() => fail(new Error(`no listening line: ${out}`)), 20_000);
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
          const match = /listening on (\S+)/.exec(out);
          if (match?.[1] !== undefined) {
            clearTimeout(timer);
            found(match[1]);
          }
        });
      });
      const call = (token: string) =>
        fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            authorization: `Bearer ${token}`,
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: { name: "report", arguments: { pages: 2 } },
          }),
        });
      assert.equal((await call("wrong")).status, 401);
      const answer = (await (await call("s3cret-0123456789")).json()) as {
        result: { content: { text: string }[] };
      };
      assert.equal(answer.result.content[0]?.text, "2 pages");
      child.kill("SIGTERM");
      assert.equal(await exited, 0, "SIGTERM closes the server and the process exits by itself");
    } finally {
      child.kill("SIGKILL");
    }
  });
});
