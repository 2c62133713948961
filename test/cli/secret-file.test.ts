/**
 * `conduit-mcp serve --redis --secret-file PATH` (docs/redis.md): two
 * CLI nodes on one private redis-server behind a round-robin proxy (no stickiness), serving a
 * module whose tool list pages (5 a page), so every page after the first is asked of the other
 * node. Given the same secret file, both official clients list every tool (SDK 2.x `listTools()`
 * follows the cursors itself); two nodes with their own random keys refuse each other's cursors
 * (the control). A `--redis` node on a non-loopback host without a secret file is refused at
 * start; the flag's parsing and its environment variable.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { parseCli, type ServeCommand } from "../../src/cli/args.js";
import { serveOptions } from "../../src/cli/serve.js";
import { type RedisServer, redisSkipReason, startRedisServer } from "../helpers/redis-server.js";
import { type RoundRobinProxy, startRoundRobinProxy } from "../helpers/round-robin-proxy.js";
import { type CliProcess, runCli, startCli } from "./cli-process.js";

const skip = redisSkipReason();
const TOOLS = 23;

const dir = mkdtempSync(join(tmpdir(), "conduit-secret-file-"));
const SECRET_FILE = join(dir, "secrets");
const SECRET = "a shared secret of at least 32 bytes, newest";
writeFileSync(SECRET_FILE, `# newest first\n${SECRET}\n`);
const MODULE = join(dir, "many-tools.mjs");
writeFileSync(
  MODULE,
  `import { defineTool } from ${JSON.stringify(pathToFileURL(join(process.cwd(), "src/index.ts")).href)};
export default {
  pageSize: 5,
  tools: Array.from({ length: ${TOOLS} }, (_, i) =>
    defineTool({ name: "tool-" + String(i).padStart(2, "0"), handler: () => "ok" })),
};`,
);

function serve(argv: string[], env: Record<string, string> = {}): ServeCommand {
  const parsed = parseCli(argv, env);
  assert.ok(parsed.ok, parsed.ok ? "" : parsed.message);
  assert.equal(parsed.command.kind, "serve");
  return parsed.command as ServeCommand;
}

/** Every tool name through SDK 1.x, one page per request, following `nextCursor`. */
async function legacyNames(url: string): Promise<string[]> {
  const client = new LegacyClient({ name: "secret-file-2025", version: "1.0.0" });
  await client.connect(new LegacyTransport(new URL(url)));
  try {
    const names: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const result = await client.listTools(cursor === undefined ? {} : { cursor });
      names.push(...result.tools.map((tool) => tool.name));
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    return names;
  } finally {
    await client.close();
  }
}

/** Every tool name through SDK 2.x, whose `listTools()` follows the cursors itself. */
async function modernNames(url: string): Promise<string[]> {
  const client = new ModernClient(
    { name: "secret-file-2026", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new ModernTransport(new URL(url)));
  try {
    return (await client.listTools()).tools.map((tool) => tool.name);
  } finally {
    await client.close();
  }
}

after(() => rmSync(dir, { recursive: true, force: true }));

const EXPECTED = Array.from({ length: TOOLS }, (_, i) => `tool-${String(i).padStart(2, "0")}`);

describe("--secret-file: list cursors and requestState shared by --redis nodes", {
  skip: skip ?? false,
}, () => {
  let redis: RedisServer;
  const started: CliProcess[] = [];
  const proxies: RoundRobinProxy[] = [];

  before(async () => {
    redis = await startRedisServer();
  });
  after(async () => {
    await Promise.all(started.map((node) => node.kill()));
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await redis?.stop();
  });

  /** Two nodes on the test Redis behind a round-robin proxy. */
  async function twoNodes(extra: string[]): Promise<RoundRobinProxy> {
    const args = ["serve", MODULE, "--port", "0", "--redis", redis.url, ...extra];
    // One after the other, with room for a loaded machine: each start loads tsx and the module.
    const nodes: CliProcess[] = [];
    for (let i = 0; i < 2; i++) nodes.push(await startCli(args, { listeningWithinMs: 60_000 }));
    started.push(...nodes);
    const proxy = await startRoundRobinProxy(nodes.map((node) => node.url));
    proxies.push(proxy);
    return proxy;
  }

  it("with one secret file, a cursor from one node pages on the other for both official clients", async () => {
    const proxy = await twoNodes(["--secret-file", SECRET_FILE]);
    assert.deepEqual(await legacyNames(proxy.url), EXPECTED);
    assert.deepEqual(await modernNames(proxy.url), EXPECTED);
    assert.ok(
      (proxy.counts[0] ?? 0) >= 5 && (proxy.counts[1] ?? 0) >= 5,
      `both nodes answered pages: ${proxy.counts.join(", ")}`,
    );
  });

  it("without it (each node's random key), the other node refuses the cursor: the control", async () => {
    const proxy = await twoNodes([]);
    await assert.rejects(legacyNames(proxy.url), /cursor/i);
    await assert.rejects(modernNames(proxy.url), /cursor/i);
  });

  it("refuses --redis on a non-loopback host without a secret file (exit 2), and starts with one", async () => {
    // 192.0.2.1 (TEST-NET-1, RFC 5737) is no address of this machine: nothing is ever bound.
    const refused = await runCli(["serve", "--redis", redis.url, "--host", "192.0.2.1"]);
    assert.equal(refused.exit.code, 2, refused.stderr);
    assert.match(refused.stderr, /--redis on 192\.0\.2\.1 needs --secret-file PATH/);
    const keysOnly = await runCli([
      "serve",
      "--redis",
      redis.url,
      "--host",
      "192.0.2.1",
      "--state-key-file",
      SECRET_FILE,
    ]);
    assert.equal(keysOnly.exit.code, 2, "requestState keys alone leave the cursors per process");
    // With the file the start goes on, to the listen this machine cannot do (exit 1).
    const allowed = await runCli([
      "serve",
      "--redis",
      redis.url,
      "--host",
      "192.0.2.1",
      "--secret-file",
      SECRET_FILE,
    ]);
    assert.equal(allowed.exit.code, 1, allowed.stderr);
    assert.match(allowed.stderr, /cannot listen on 192\.0\.2\.1/);
  });
});

describe("--secret-file parsing", () => {
  it("gives the requestState keys and a cursor secret derived from the newest line", () => {
    const options = serveOptions(serve(["serve", "--secret-file", SECRET_FILE]));
    try {
      assert.deepEqual(options.inputRequired?.keys, [SECRET]);
      const cursorSecret = options.lists?.cursorSecret as Uint8Array;
      assert.equal(cursorSecret.byteLength, 32);
      assert.notDeepEqual(Buffer.from(cursorSecret), Buffer.from(SECRET).subarray(0, 32));
      const again = serveOptions(serve(["serve"], { CONDUIT_MCP_SECRET_FILE: SECRET_FILE }));
      assert.deepEqual(
        again.lists?.cursorSecret,
        cursorSecret,
        "CONDUIT_MCP_SECRET_FILE, same secret",
      );
      void again.registry?.close();
    } finally {
      void options.registry?.close();
    }
  });

  it("leaves the requestState keys to --state-key-file beside it; a bad file names the line, never the secret", () => {
    const keysFile = join(dir, "state-keys");
    writeFileSync(keysFile, "requestState keys of their own, 32+ bytes\n");
    const both = serveOptions(
      serve(["serve", "--secret-file", SECRET_FILE, "--state-key-file", keysFile]),
    );
    assert.deepEqual(both.inputRequired?.keys, ["requestState keys of their own, 32+ bytes"]);
    assert.equal((both.lists?.cursorSecret as Uint8Array | undefined)?.byteLength, 32);
    void both.registry?.close();
    const short = join(dir, "short");
    writeFileSync(short, "# comment\ntoo short\n");
    const bad = parseCli(["serve", "--secret-file", short]);
    assert.ok(!bad.ok);
    assert.match(bad.message, /--secret-file .* line 2: a key needs at least 32 bytes/);
    assert.doesNotMatch(bad.message, /too short/);
  });
});
