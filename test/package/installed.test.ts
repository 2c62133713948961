/**
 * The package as a user gets it (installed-project.ts: built, `npm pack`ed, installed from the
 * tarball into an empty project with tsx, ioredis and zod beside it), then used there by plain
 * `node`, never through this repository's tsx: no warning from `npm install`; `import` and
 * `require()` of both entries (`require()` says "ESM only" where Node cannot); no source map that
 * points at a file the package does not ship; the types of both entries under `tsc --strict`, from
 * an ES module and a CommonJS one; the README's examples; and the installed CLI serving a `.ts`
 * and a `.js` module over HTTP and over stdio (started by `npx`, as a desktop client does), or
 * saying what to install when a `.ts` module meets a project without tsx.
 *
 * Run by `npm run test:package` (CI: .ci/steps.d/10-packaging.sh), not by `npm test`.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { copyFile, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import ts from "typescript";

import { MCP_HEADERS, rpc, runCli, startCli } from "../cli/cli-process.js";
import {
  type InstalledProject,
  installPackedProject,
  ROOT,
  run,
  TSC,
} from "./installed-project.js";

/** The first code block of `language` after the README heading `heading`. */
async function readmeBlock(heading: string, language: string): Promise<string> {
  const readme = await readFile(join(ROOT, "README.md"), "utf8");
  const section = readme.indexOf(`\n${heading}\n`);
  assert.ok(section >= 0, `README has a '${heading}' section`);
  const match = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(readme.slice(section));
  assert.ok(match?.[1] !== undefined, `'${heading}' has a ${language} code block`);
  return match[1];
}

/** Every file under `dir`, relative to it. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1));
}

/** A TypeScript module for `conduit-mcp serve` (an interface and annotations: not plain JS). */
const TS_MODULE = `
import { defineTool } from "conduit-mcp";
import { z } from "zod";

interface Greeting {
  readonly name: string;
}

const greet = ({ name }: Greeting): string => \`hello \${name} from TypeScript\`;

export const hello = defineTool({
  name: "hello",
  input: z.object({ name: z.string() }),
  handler: (args: Greeting) => greet(args),
});
`;

/** The served modules: the one above, and the repository's JavaScript example. */
const MODULES = [
  { file: "./tools.ts", tool: "hello", args: { name: "ada" }, text: "hello ada from TypeScript" },
  { file: "./user-tools.js", tool: "word_count", args: { text: "one two three" }, text: "3" },
] as const;

/** Both entries, typed, from an ES module (`.mts`) and a CommonJS one (`.cts`). */
const TYPED_CONSUMER = `
import { createMcpServer, defineTool, type McpServer } from "conduit-mcp";
import { RedisCancellationStore, type RedisCancellationStoreOptions } from "conduit-mcp/redis";

export const server: McpServer = createMcpServer({
  tools: [defineTool({ name: "typed", handler: () => "ok" })],
});
const options: RedisCancellationStoreOptions = { redis: "redis://127.0.0.1:1" };
export const make = (): string => new RedisCancellationStore(options).nodeId;
// Proof that the declarations were read (an \`any\` would make this directive unused, an error).
// @ts-expect-error a tool's name is a string
defineTool({ name: 42, handler: () => "no" });
`;

describe("the packed package, installed in an empty project", { timeout: 240_000 }, () => {
  let project: InstalledProject;

  before(async () => {
    project = await installPackedProject();
    await writeFile(join(project.app, "tools.ts"), TS_MODULE);
    await writeFile(join(project.bare, "tools.ts"), TS_MODULE);
    await copyFile(join(ROOT, "examples/user-tools.js"), join(project.app, "user-tools.js"));
  });

  after(async () => {
    if (project !== undefined) await project.remove();
  });

  test("npm install prints no warning", () => {
    assert.doesNotMatch(project.installOutput, /warn/i, project.installOutput);
  });

  test("ships its licence and no source map that points at a missing file", async () => {
    const { installed } = project;
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
    const manifest = JSON.parse(
      await readFile(join(project.installed, "package.json"), "utf8"),
    ) as {
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
        const text = (await readFile(join(project.installed, "dist", file), "utf8")).replace(
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

  for (const [entry, member] of [
    ["conduit-mcp", "createMcpServer"],
    ["conduit-mcp/redis", "RedisCancellationStore"],
  ] as const) {
    test(`import and require() of ${entry} work, and require() says ESM only where Node cannot`, async () => {
      const imported = await run(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `import(${JSON.stringify(entry)}).then((m) => console.log(typeof m.${member}))`,
        ],
        { cwd: project.app },
      );
      assert.equal(imported.stdout.trim(), "function");
      const required = await run(
        process.execPath,
        ["-e", `console.log(typeof require(${JSON.stringify(entry)}).${member})`],
        { cwd: project.app },
      );
      assert.equal(required.stdout.trim(), "function");
      // A runtime that cannot require() ES modules (Node before 20.19) is simulated with the flag.
      await assert.rejects(
        run(
          process.execPath,
          ["--no-experimental-require-module", "-e", `require(${JSON.stringify(entry)})`],
          { cwd: project.app },
        ),
        (error: { stderr: string }) => {
          assert.match(error.stderr, new RegExp(`${entry} is ESM only`));
          assert.match(error.stderr, new RegExp(`import \\{ createMcpServer \\} from "${entry}"`));
          return true;
        },
      );
    });
  }

  test("both entries' types and the README example type-check under tsc --strict, from ESM and CommonJS", async () => {
    const { app } = project;
    await writeFile(join(app, "example.ts"), await readmeBlock("## Serving your own tools", "ts"));
    await writeFile(join(app, "consumer.mts"), TYPED_CONSUMER);
    await writeFile(join(app, "consumer.cts"), TYPED_CONSUMER);
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
        files: ["example.ts", "consumer.mts", "consumer.cts"],
      }),
    );
    const checked = await run(process.execPath, [TSC, "-p", "tsconfig.json"], {
      cwd: app,
      timeout: 60_000,
    }).catch((error: { stdout: string }) => error);
    assert.equal((checked as { stdout: string }).stdout.trim(), "", "tsc reports nothing");
  });

  test("the README's 'Serving your own tools' example runs", async () => {
    const { app } = project;
    const example = await readmeBlock("## Serving your own tools", "ts");
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
          headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
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

  test("the README's first request ('Try it') is answered by the installed CLI's demo", async () => {
    const cli = await startCli(["serve", "--port", "0"], { bin: project.bin, cwd: project.app });
    try {
      const block = await readmeBlock("## Try it", "sh");
      assert.match(block, /http:\/\/127\.0\.0\.1:3000\/mcp/);
      // The README's port 3000, moved to the free port this server listens on.
      const script = block.replaceAll("http://127.0.0.1:3000/mcp", cli.url);
      const { stdout } = await run("bash", ["-c", script], { cwd: project.app, timeout: 20_000 });
      const answer = JSON.parse(stdout) as { result: { content: { text: string }[] } };
      assert.equal(answer.result.content[0]?.text, "hi");
    } finally {
      await cli.kill();
    }
  });

  for (const { file, tool, args, text } of MODULES) {
    test(`the installed CLI serves ${file} over HTTP`, async () => {
      const cli = await startCli(["serve", file, "--port", "0"], {
        bin: project.bin,
        cwd: project.app,
      });
      try {
        const answer = await rpc(cli.url, {
          id: 1,
          method: "tools/call",
          params: { name: tool, arguments: args },
        });
        assert.equal(answer.status, 200, cli.stderr());
        assert.equal(answer.message?.result?.content?.[0]?.text, text);
      } finally {
        await cli.kill();
      }
    });

    test(`npx conduit-mcp serve ${file} --stdio answers an official client`, async () => {
      const transport = new StdioClientTransport({
        command: "npx",
        args: ["--no", "conduit-mcp", "serve", file, "--stdio"],
        cwd: project.app,
        stderr: "pipe",
      });
      let stderr = "";
      transport.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const client = new Client({ name: "package-test", version: "1.0.0" });
      try {
        await client.connect(transport);
        const result = (await client.callTool({ name: tool, arguments: args })) as {
          content: { text: string }[];
        };
        assert.equal(result.content[0]?.text, text);
      } catch (error) {
        throw new Error(`${String(error)}; stderr: ${stderr}`);
      } finally {
        await client.close();
      }
    });
  }

  test("a .ts module in a project without tsx: exit 2 and a message saying to install it", async (t) => {
    if ((process.features as { typescript?: unknown }).typescript) {
      t.skip(`Node ${process.version} strips types itself: a .ts module needs no tsx here`);
      return;
    }
    const { stdout, stderr, exit } = await runCli(["serve", "./tools.ts", "--port", "0"], {
      bin: project.bin,
      cwd: project.bare,
    });
    assert.equal(exit.code, 2, stderr);
    assert.equal(stdout, "");
    assert.match(stderr, /needs tsx in the project \(npm install --save-dev tsx\)/);
  });
});
