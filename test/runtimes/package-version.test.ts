/**
 * `PACKAGE_VERSION` is a constant (the entry reads no package.json: that would need node:module,
 * which workerd lacks; docs/runtimes.md). It must follow package.json's version.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";

import { PACKAGE_VERSION } from "../../src/server/index.js";

test("PACKAGE_VERSION equals package.json's version", async () => {
  const pkg = JSON.parse(await readFile("package.json", "utf8")) as { version: string };
  assert.equal(PACKAGE_VERSION, pkg.version);
});
