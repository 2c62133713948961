/**
 * The package entry must load on Cloudflare's workerd: its static import graph may name only
 * the Node.js built-ins that workerd has had with `nodejs_compat` since that flag's v2
 * (compatibility date 2024-09-23; https://developers.cloudflare.com/workers/runtime-apis/nodejs/).
 * Modules workerd lacks, or has only as stubs that fail when used (node:http, node:net, node:os,
 * node:fs, node:worker_threads, node:module, node:child_process), are loaded by the feature that
 * needs them (src/runtime.ts). The graph is read with esbuild's metafile, as a bundler for a
 * Worker sees it; test/runtimes/workerd.test.ts then runs the bundle in workerd itself.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { build } from "esbuild";

import {
  createMcpServer,
  defineTool,
  serveStdio,
  UnsupportedRuntimeError,
} from "../../src/index.js";
import { isolatedHandler } from "../../src/isolation/index.js";
import { RedisCancellationStore } from "../../src/redis/index.js";

/** The built-ins the entry may import statically (docs/runtimes.md, "Cloudflare Workers"). */
export const WORKERD_BUILTINS = new Set([
  "node:assert",
  "node:async_hooks",
  "node:buffer",
  "node:crypto",
  "node:diagnostics_channel",
  "node:events",
  "node:path",
  "node:stream",
  "node:string_decoder",
  "node:timers",
  "node:timers/promises",
  "node:url",
  "node:util",
]);

/** The `node:` modules `entry` imports statically, however deep (dynamic imports aside). */
async function staticBuiltins(entry: string): Promise<Set<string>> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    metafile: true,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    conditions: ["workerd", "worker", "import"],
    // Optional peers, loaded by a dynamic import when wanted.
    external: ["node:*", "@opentelemetry/api"],
    logLevel: "silent",
  });
  const found = new Set<string>();
  for (const input of Object.values(result.metafile.inputs)) {
    for (const imported of input.imports) {
      if (imported.path.startsWith("node:") && imported.kind !== "dynamic-import") {
        found.add(imported.path);
      }
    }
  }
  return found;
}

test("the package entry imports only built-ins workerd has", async (t) => {
  const found = await staticBuiltins("src/index.ts");
  t.diagnostic(`node: imports of src/index.ts: ${[...found].sort().join(", ")}`);
  assert.ok(found.has("node:crypto"), "the graph was read (the entry does use node:crypto)");
  const missing = [...found].filter((id) => !WORKERD_BUILTINS.has(id));
  assert.deepEqual(missing, [], "built-ins workerd lacks, imported at load");
});

test("the check sees a Node-only built-in deep in a graph (the worker thread's entry)", async () => {
  const found = await staticBuiltins("src/isolation/worker-entry.ts");
  assert.ok(found.has("node:worker_threads"));
});

test("on workerd, listen(), isolated tools, serveStdio and the Redis stores fail at once, naming the runtime and what to use", async (t) => {
  // What workerd reports (https://developers.cloudflare.com/workers/runtime-apis/web-standards/#navigatoruseragent).
  const saved = Object.getOwnPropertyDescriptor(globalThis, "navigator");
  Object.defineProperty(globalThis, "navigator", {
    value: { userAgent: "Cloudflare-Workers", hardwareConcurrency: 1 },
    configurable: true,
  });
  t.after(() => {
    if (saved === undefined) Reflect.deleteProperty(globalThis, "navigator");
    else Object.defineProperty(globalThis, "navigator", saved);
  });
  const crunch = defineTool({
    name: "crunch",
    isolated: isolatedHandler(new URL("../fixtures/isolated-tools.ts", import.meta.url), "echo"),
  } as never);
  const reported: unknown[] = [];
  const server = createMcpServer({ tools: [crunch], onError: (error) => reported.push(error) });
  try {
    await assert.rejects(server.listen(), (error: unknown) => {
      assert.ok(error instanceof UnsupportedRuntimeError);
      assert.equal(error.code, "CONDUIT_ERR_UNSUPPORTED_RUNTIME");
      assert.equal(error.runtime, "workerd");
      assert.match(error.message, /listen\(\).*Cloudflare Workers \(workerd\).*server\.fetch/);
      return true;
    });
    assert.throws(() => serveStdio(server), /serveStdio.*Cloudflare Workers \(workerd\)/);
    assert.throws(
      () => new RedisCancellationStore({ redis: "redis://127.0.0.1:1" }),
      /conduit-mcp\/redis.*Cloudflare Workers \(workerd\)/,
    );
    const response = await server.fetch(
      new Request("http://worker.test/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "crunch", arguments: {} },
        }),
      }),
    );
    const body = (await response.json()) as { result?: { isError?: boolean }; error?: unknown };
    assert.ok(body.error !== undefined || body.result?.isError === true, "the call failed");
    const [error] = reported;
    assert.ok(error instanceof UnsupportedRuntimeError, "the operator hears why");
    assert.match(
      error.message,
      /isolated tools.*Cloudflare Workers \(workerd\).*without `isolated`/,
    );
  } finally {
    await server.close();
  }
});
