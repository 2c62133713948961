import assert from "node:assert/strict";
import { test } from "node:test";

import { InvalidOptionError } from "../../src/errors.js";
import { isIsolatedHandler, isolatedHandler } from "../../src/isolation/index.js";

test("isolatedHandler takes a URL, a URL string or an absolute path, and a named export", () => {
  const url = new URL("file:///srv/tools/crunch.js");
  const handler = isolatedHandler(url, "crunch");
  assert.deepEqual(handler, {
    kind: "conduit-mcp:isolated-handler",
    moduleUrl: "file:///srv/tools/crunch.js",
    exportName: "crunch",
  });
  assert.ok(Object.isFrozen(handler));
  assert.equal(isolatedHandler("file:///srv/tools/crunch.js", "crunch").moduleUrl, url.href);
  assert.equal(isolatedHandler("/srv/tools/crunch.js", "crunch").moduleUrl, url.href);
  assert.equal(
    isolatedHandler("data:text/javascript,export const f = () => 1", "f").moduleUrl,
    "data:text/javascript,export const f = () => 1",
  );
  // Plain data: survives structured cloning into a worker.
  assert.deepEqual(structuredClone(handler), handler);
});

test("isolatedHandler refuses relative paths and missing export names", () => {
  assert.throws(() => isolatedHandler("./crunch.js", "crunch"), InvalidOptionError);
  assert.throws(() => isolatedHandler("crunch.js", "crunch"), InvalidOptionError);
  assert.throws(() => isolatedHandler(new URL("file:///x.js"), ""), InvalidOptionError);
  assert.throws(
    () => isolatedHandler(new URL("file:///x.js"), undefined as unknown as string),
    InvalidOptionError,
  );
  assert.throws(() => isolatedHandler(42 as unknown as string, "f"), InvalidOptionError);
});

test("isIsolatedHandler recognises descriptors only", () => {
  assert.equal(isIsolatedHandler(isolatedHandler("file:///x.js", "f")), true);
  assert.equal(isIsolatedHandler(true), false);
  assert.equal(isIsolatedHandler(null), false);
  assert.equal(isIsolatedHandler({ moduleUrl: "file:///x.js", exportName: "f" }), false);
});
