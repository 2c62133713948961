import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { z } from "zod";

import { InvalidOptionError } from "../../src/errors.js";
import { isolatedHandler } from "../../src/isolation/index.js";
import { defineTool } from "../../src/protocol/index.js";
import { sync } from "../helpers/sync-check.js";

describe("defineTool", () => {
  test("a zod object is published as JSON Schema 2020-12 once, and validates arguments", () => {
    const tool = defineTool({
      name: "add",
      description: "Adds",
      input: z.object({ a: z.number(), b: z.number().default(1) }),
      handler: ({ a, b }) => String(a + b),
    });
    const schema = tool.descriptor.inputSchema as Record<string, unknown>;
    assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
    assert.equal(schema.type, "object");
    assert.deepEqual(schema.required, ["a"]);
    assert.equal(tool.descriptor.inputSchema, tool.descriptor.inputSchema, "computed once");
    assert.deepEqual(sync(tool.checkArguments({ a: 2 })), { ok: true, args: { a: 2, b: 1 } });
    const bad = sync(tool.checkArguments({ a: "x" }));
    assert.equal(bad.ok, false);
    if (!bad.ok)
      assert.deepEqual(
        bad.issues.map((i) => i.path),
        ["a"],
      );
    assert.equal(
      sync(tool.checkArguments(undefined)).ok,
      false,
      "absent arguments are {} and a is required",
    );
  });

  test("issues are bounded to 20 and reflected", () => {
    const shape: Record<string, z.ZodString> = {};
    for (let i = 0; i < 50; i++) shape[`f${i}`] = z.string();
    const tool = defineTool({ name: "wide", input: z.object(shape), handler: () => "" });
    const check = sync(tool.checkArguments({}));
    assert.equal(check.ok, false);
    if (!check.ok) assert.equal(check.issues.length, 20);
  });

  test("a JSON Schema object is published verbatim and not validated beyond being an object", () => {
    const inputSchema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { n: { $anchor: "num", type: "number" } },
      // biome-ignore lint/suspicious/noThenProperty: a JSON Schema conditional keyword
      allOf: [{ if: { required: ["a"] }, then: { required: ["b"] }, else: {} }],
      additionalProperties: false,
    };
    const tool = defineTool({ name: "raw", input: inputSchema, handler: () => "" });
    assert.deepEqual(tool.descriptor.inputSchema, inputSchema);
    assert.deepEqual(sync(tool.checkArguments({ anything: 1 })), {
      ok: true,
      args: { anything: 1 },
    });
    assert.equal(sync(tool.checkArguments([1])).ok, false);
  });

  test("without input: an empty object schema; description always present", () => {
    const tool = defineTool({ name: "bare", handler: () => "" });
    assert.deepEqual(tool.descriptor, {
      name: "bare",
      description: "",
      inputSchema: { type: "object" },
    });
    assert.deepEqual(sync(tool.checkArguments(undefined)), { ok: true, args: {} });
    assert.equal(sync(tool.checkArguments("x")).ok, false);
    assert.equal(tool.isolated, false);
  });

  test("bad definitions throw InvalidOptionError", () => {
    const handler = () => "";
    for (const bad of [
      { name: "", handler },
      { name: "has space", handler },
      { name: "x".repeat(129), handler },
      { name: "ok" },
      { name: "ok", handler, input: z.string() },
      { name: "ok", handler, input: 5 },
      { name: "ok", handler, description: 5 },
      { name: "ok", handler, isolated: "yes" },
      // A closure cannot cross to a worker thread: isolation needs an isolatedHandler descriptor.
      { name: "ok", handler, isolated: true },
      { name: "ok", requiredClientCapabilities: ["sampling"], handler },
      { name: "ok", requiredClientCapabilities: { sampling: true }, handler },
    ]) {
      assert.throws(
        () => defineTool(bad as never),
        InvalidOptionError,
        JSON.stringify(Object.keys(bad)),
      );
    }
  });

  test("isolated: an isolatedHandler descriptor replaces the handler", () => {
    const descriptor = isolatedHandler(
      new URL("../fixtures/isolated-tools.ts", import.meta.url),
      "spin",
    );
    const tool = defineTool({ name: "spin", isolated: descriptor });
    assert.equal(tool.isolated, true);
    assert.equal(tool.isolatedHandler, descriptor);
    assert.throws(() => tool.handler({} as never, {} as never), /worker thread/);
    assert.equal(defineTool({ name: "plain", handler: () => "" }).isolatedHandler, null);
  });

  test("requiredClientCapabilities are kept (an empty object means none)", () => {
    const handler = () => "";
    const tool = defineTool({ name: "s", requiredClientCapabilities: { sampling: {} }, handler });
    assert.deepEqual(tool.requiredClientCapabilities, { sampling: {} });
    const none = defineTool({ name: "n", requiredClientCapabilities: {}, handler });
    assert.equal(none.requiredClientCapabilities, null);
  });
});
