import assert from "node:assert/strict";
import { test } from "node:test";

import { withoutTsxPreload, workerScript } from "../../src/isolation/worker-script.js";

test("from the compiled build the worker starts from worker-entry.js beside the module", () => {
  const script = workerScript(
    "file:///app/node_modules/conduit-mcp/dist/isolation/worker-script.js",
  );
  assert.equal(script.eval, false);
  assert.equal(
    String(script.specifier),
    "file:///app/node_modules/conduit-mcp/dist/isolation/worker-entry.js",
  );
  assert.equal(script.execArgv, undefined, "the build inherits the process's flags");
});

test("from the sources the worker registers tsx before importing worker-entry.ts", () => {
  const script = workerScript(
    new URL("../../src/isolation/worker-script.ts", import.meta.url).href,
  );
  assert.equal(script.eval, true);
  const entry = new URL("../../src/isolation/worker-entry.ts", import.meta.url).href;
  assert.ok(String(script.specifier).includes(JSON.stringify(entry)));
  assert.match(String(script.specifier), /tsx.*register\(\)/s);
  assert.ok(script.execArgv !== undefined);
  assert.ok(!script.execArgv.includes("tsx"));
});

test("withoutTsxPreload drops only the tsx preload flags", () => {
  assert.deepEqual(
    withoutTsxPreload([
      "--import",
      "tsx",
      "--enable-source-maps",
      "--import=tsx/esm",
      "--require",
      "/x/node_modules/tsx/dist/preflight.cjs",
      "--import",
      "file:///x/node_modules/tsx/dist/loader.mjs",
      "--import",
      "./other.mjs",
      "--conditions=dev",
    ]),
    ["--enable-source-maps", "--import", "./other.mjs", "--conditions=dev"],
  );
});
