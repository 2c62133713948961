/**
 * `conduit-mcp serve MODULE`: the CLI serves the user's own module (named tool exports, a default
 * options object, or a ready server), with its flags applied on top; the demo stays the default;
 * a module that cannot be loaded or serves nothing is a clear message and exit code 2.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";

import { MCP_HEADERS, rpc, runCli, startCli } from "../cli/cli-process.js";

const SRC = pathToFileURL(join(process.cwd(), "src/index.ts")).href;
const PROBE_TOOLS = "test/hosting/fixtures/probe-tools.ts";

const MODULES: Record<string, string> = {
  "options.mjs": `
    import { defineTool } from ${JSON.stringify(SRC)};
    export default {
      name: "from-options",
      tools: [defineTool({ name: "hello", handler: () => "hello from options" })],
    };`,
  "server.mjs": `
    import { createMcpServer, defineTool } from ${JSON.stringify(SRC)};
    export const server = createMcpServer({
      name: "from-server",
      tools: [defineTool({ name: "ready", handler: () => "ready-made" })],
    });`,
  "empty.mjs": "export const answer = 42;",
  "throws.mjs": 'throw new Error("cannot reach the database");',
  "syntax.mjs": "export const = ;",
  "duplicate.mjs": `
    import { defineTool } from ${JSON.stringify(SRC)};
    export const a = defineTool({ name: "same", handler: () => "a" });
    export const b = defineTool({ name: "same", handler: () => "b" });`,
};

const AS_ALICE = { ...MCP_HEADERS, authorization: "Bearer s3cret-0123456789" };
const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };

function call(name: string, args: Record<string, unknown> = {}) {
  return { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name, arguments: args } };
}

function toolNames(answer: Awaited<ReturnType<typeof rpc>>): string[] {
  const result = (answer.message?.result ?? {}) as { tools?: { name: string }[] };
  const tools = result.tools ?? [];
  return tools.map((tool) => tool.name).sort();
}

describe("conduit-mcp serve MODULE", { timeout: 120_000 }, () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "conduit-mcp-modules-"));
    for (const [name, text] of Object.entries(MODULES)) await writeFile(join(dir, name), text);
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test("named tool exports (a .ts module) are served, with the flags on top", async () => {
    const cli = await startCli([
      "serve",
      PROBE_TOOLS,
      "--port",
      "0",
      "--token",
      "alice=s3cret-0123456789",
    ]);
    try {
      assert.equal((await rpc(cli.url, LIST)).status, 401, "--token applies to the module");
      const listed = await rpc(cli.url, LIST, AS_ALICE);
      assert.deepEqual(toolNames(listed), ["echo", "probe", "steps", "wait"]);
      const echoed = await rpc(cli.url, call("echo", { text: "mine" }), AS_ALICE);
      assert.equal(echoed.message?.result?.content?.[0]?.text, "mine");
    } finally {
      await cli.kill();
    }
  });

  test("a default options object is served; without a module, the demo", async () => {
    const cli = await startCli(["serve", join(dir, "options.mjs"), "--port", "0"]);
    try {
      assert.deepEqual(toolNames(await rpc(cli.url, LIST)), ["hello"]);
      const hello = await rpc(cli.url, call("hello"));
      assert.equal(hello.message?.result?.content?.[0]?.text, "hello from options");
    } finally {
      await cli.kill();
    }
    const demo = await startCli(["serve", "--port", "0"]);
    try {
      assert.ok(toolNames(await rpc(demo.url, LIST)).includes("sleep"));
    } finally {
      await demo.kill();
    }
  });

  test("a module's ready server is served as it is; flags that would configure it are refused", async () => {
    const cli = await startCli(["serve", join(dir, "server.mjs"), "--port", "0"]);
    try {
      assert.deepEqual(toolNames(await rpc(cli.url, LIST)), ["ready"]);
    } finally {
      await cli.kill();
    }
    const refused = await runCli(["serve", join(dir, "server.mjs"), "--metrics"]);
    assert.equal(refused.exit.code, 2);
    assert.match(refused.stderr, /exports a server.*--metrics cannot apply to it/);
  });

  test("a broken module: one clear line on stderr, nothing on stdout, exit code 2", async () => {
    const cases: Array<[string, RegExp]> = [
      ["missing.mjs", /cannot load .*missing\.mjs: no such file/],
      ["throws.mjs", /cannot load .*throws\.mjs: Error: cannot reach the database/],
      ["syntax.mjs", /cannot load .*syntax\.mjs: SyntaxError/],
      ["empty.mjs", /empty\.mjs: nothing to serve; export a server/],
      ["duplicate.mjs", /duplicate\.mjs: .*unique names/],
    ];
    for (const [file, message] of cases) {
      const { stdout, stderr, exit } = await runCli(["serve", join(dir, file), "--port", "0"]);
      assert.equal(exit.code, 2, `${file}: exit code (stderr: ${stderr})`);
      assert.match(stderr, message, file);
      assert.equal(stderr.trim().split("\n").length, 1, `${file}: one line`);
      assert.doesNotMatch(stderr, /\n\s+at /, `${file}: no stack`);
      assert.equal(stdout, "", `${file}: nothing on stdout`);
    }
  });

  test("one module at most", async () => {
    const { stderr, exit } = await runCli(["serve", "a.js", "b.js"]);
    assert.equal(exit.code, 2);
    assert.match(stderr, /unexpected argument "b\.js"/);
  });
});
