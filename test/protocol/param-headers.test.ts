/**
 * `x-mcp-header` annotations and their `Mcp-Param-*` headers, unit level
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#custom-headers-from-tool-parameters).
 * The same rules over real HTTP: test/modern/param-headers.test.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { z } from "zod";

import { InvalidOptionError } from "../../src/errors.js";
import { defineTool } from "../../src/protocol/tools/define-tool.js";
import { presentedParamHeaders } from "../../src/protocol/wire/modern-envelope.js";
import { checkParamHeaders, paramHeadersOf } from "../../src/protocol/wire/param-headers.js";

function object(properties: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { type: "object", properties, ...extra };
}

const SPECS = paramHeadersOf(
  object({
    region: { type: "string", "x-mcp-header": "Region" },
    priority: { type: "integer", "x-mcp-header": "Priority" },
    verbose: { type: ["boolean", "null"], "x-mcp-header": "Verbose" },
    nested: object({ zone: { type: "string", "x-mcp-header": "Zone" } }),
    query: { type: "string" },
  }),
  "tool t",
);

function check(args: unknown, headers: Record<string, string | null>): string | null {
  return checkParamHeaders(SPECS, args, new Map(Object.entries(headers)));
}

describe("paramHeadersOf (definition time)", () => {
  test("reads annotations on properties reachable through `properties`, nested ones too", () => {
    assert.deepEqual(
      SPECS.map((s) => [s.name, s.key, s.path.join("."), s.type]),
      [
        ["Region", "mcp-param-region", "region", "string"],
        ["Priority", "mcp-param-priority", "priority", "integer"],
        ["Verbose", "mcp-param-verbose", "verbose", "boolean"],
        ["Zone", "mcp-param-zone", "nested.zone", "string"],
      ],
    );
    assert.deepEqual(paramHeadersOf(object({ a: { type: "string" } }), "t"), []);
  });

  test("zod .meta() carries the annotation into a tool's published schema", () => {
    const tool = defineTool({
      name: "sql",
      input: z.object({ region: z.string().meta({ "x-mcp-header": "Region" }), query: z.string() }),
      handler: () => "",
    });
    assert.deepEqual(
      tool.paramHeaders.map((s) => s.key),
      ["mcp-param-region"],
    );
    const schema = tool.descriptor.inputSchema as {
      properties: { region: Record<string, unknown> };
    };
    assert.equal(schema.properties.region["x-mcp-header"], "Region", "published for clients");
  });

  test("data keywords and property names called x-mcp-header are not annotations", () => {
    const specs = paramHeadersOf(
      object({
        "x-mcp-header": { type: "string" },
        mode: { type: "string", enum: [{ "x-mcp-header": "X" }], default: { "x-mcp-header": "Y" } },
      }),
      "t",
    );
    assert.deepEqual(specs, []);
  });

  test("every constraint of the spec is enforced with a clear error naming the tool", () => {
    const invalid: [string, unknown][] = [
      ["empty", object({ a: { type: "string", "x-mcp-header": "" } })],
      ["space", object({ a: { type: "string", "x-mcp-header": "My Header" } })],
      ["colon", object({ a: { type: "string", "x-mcp-header": "A:B" } })],
      ["non-ASCII", object({ a: { type: "string", "x-mcp-header": "Régión" } })],
      ["control", object({ a: { type: "string", "x-mcp-header": "A\r\nB" } })],
      ["not a string", object({ a: { type: "string", "x-mcp-header": 7 } })],
      [
        "duplicate ignoring case",
        object({
          a: { type: "string", "x-mcp-header": "Region" },
          b: { type: "string", "x-mcp-header": "REGION" },
        }),
      ],
      ["number type", object({ a: { type: "number", "x-mcp-header": "A" } })],
      ["object type", object({ a: { type: "object", "x-mcp-header": "A" } })],
      ["array type", object({ a: { type: "array", "x-mcp-header": "A" } })],
      ["no type", object({ a: { "x-mcp-header": "A" } })],
      ["the root", { type: "object", "x-mcp-header": "Root" }],
      [
        "under items",
        object({ a: { type: "array", items: { type: "string", "x-mcp-header": "A" } } }),
      ],
      ["under anyOf", object({ a: { anyOf: [{ type: "string", "x-mcp-header": "A" }] } })],
      ["under $defs", object({}, { $defs: { d: { type: "string", "x-mcp-header": "A" } } })],
      [
        "under then",
        // biome-ignore lint/suspicious/noThenProperty: the JSON Schema conditional keyword
        object({}, { if: {}, then: object({ a: { type: "string", "x-mcp-header": "A" } }) }),
      ],
    ];
    for (const [why, schema] of invalid) {
      assert.throws(
        () => paramHeadersOf(schema, "tool bad"),
        (error: unknown) =>
          error instanceof InvalidOptionError && /tool bad: x-mcp-header/.test(error.message),
        why,
      );
    }
    assert.throws(
      () =>
        defineTool({
          name: "bad",
          input: { type: "object", properties: { n: { type: "number", "x-mcp-header": "N" } } },
          handler: () => "",
        }),
      InvalidOptionError,
      "defineTool refuses the tool at definition",
    );
  });
});

describe("checkParamHeaders (per tools/call)", () => {
  test("matching headers pass; absent and null arguments need none", () => {
    assert.equal(
      check(
        { region: "us-west1", priority: 42, verbose: true, nested: { zone: "b" }, query: "q" },
        {
          "mcp-param-region": "us-west1",
          "mcp-param-priority": "42",
          "mcp-param-verbose": "true",
          "mcp-param-zone": "b",
        },
      ),
      null,
    );
    assert.equal(check({ query: "q", verbose: null }, {}), null);
    assert.equal(check(undefined, {}), null, "no arguments at all");
    assert.equal(check({ region: "" }, { "mcp-param-region": "" }), null, "the empty string");
    assert.equal(check({ verbose: false }, { "mcp-param-verbose": "false" }), null);
  });

  test("base64 sentinel values are decoded before comparing; other values are literal", () => {
    const hello = Buffer.from("Hello, 世界").toString("base64");
    assert.equal(
      check({ region: "Hello, 世界" }, { "mcp-param-region": `=?base64?${hello}?=` }),
      null,
    );
    assert.equal(
      check({ region: " padded " }, { "mcp-param-region": "=?base64?IHBhZGRlZCA=?=" }),
      null,
    );
    assert.equal(
      check({ region: "SGVsbG8=" }, { "mcp-param-region": "SGVsbG8=" }),
      null,
      "no wrapper",
    );
    assert.equal(
      check({ region: "=?base64?SGVsbG8=" }, { "mcp-param-region": "=?base64?SGVsbG8=" }),
      null,
    );
    assert.match(
      check({ region: "Hello" }, { "mcp-param-region": "=?base64?SGVsbG8?=" }) ?? "",
      /malformed base64/,
      "bad padding",
    );
    assert.match(
      check({ region: "Hello" }, { "mcp-param-region": "=?base64?SGVs!!!bG8=?=" }) ?? "",
      /malformed base64/,
      "outside the alphabet",
    );
    assert.match(
      check({ region: "\uFFFD" }, { "mcp-param-region": "=?base64?/w==?=" }) ?? "",
      /malformed base64/,
      "bytes that are not UTF-8",
    );
  });

  test("integers compare numerically, booleans as true/false", () => {
    assert.equal(check({ priority: 42 }, { "mcp-param-priority": "42.0" }), null);
    assert.equal(check({ priority: -7 }, { "mcp-param-priority": "-7" }), null);
    assert.match(check({ priority: 42 }, { "mcp-param-priority": "43" }) ?? "", /does not match/);
    assert.match(
      check({ priority: 42 }, { "mcp-param-priority": "4.2e1" }) ?? "",
      /does not match/,
    );
    assert.match(
      check({ priority: 2 ** 53 }, { "mcp-param-priority": String(2 ** 53) }) ?? "",
      /does not match/,
    );
    assert.match(check({ verbose: true }, { "mcp-param-verbose": "True" }) ?? "", /does not match/);
    assert.match(check({ verbose: true }, { "mcp-param-verbose": "1" }) ?? "", /does not match/);
    assert.match(
      check({ region: { a: 1 } }, { "mcp-param-region": "[object Object]" }) ?? "",
      /does not match/,
    );
  });

  test("missing, repeated, extra, different or ill-formed headers are refused", () => {
    assert.equal(
      check({ region: "us" }, {}),
      "Mcp-Param-Region header required (the argument is in the body)",
    );
    assert.equal(
      check({ region: "us" }, { "mcp-param-region": null }),
      "Mcp-Param-Region header repeated",
    );
    assert.equal(
      check({}, { "mcp-param-region": "us" }),
      "Mcp-Param-Region header sent but the argument is absent from the body",
    );
    assert.equal(
      check({ region: "us" }, { "mcp-param-region": "eu" }),
      "Mcp-Param-Region header does not match the body",
    );
    assert.equal(
      check({ region: "é" }, { "mcp-param-region": "é" }),
      "Mcp-Param-Region header contains invalid characters",
      "raw non-ASCII must be base64-encoded",
    );
    assert.equal(
      check({ region: "us" }, { "mcp-param-unknown": "x", "mcp-param-region": "us" }),
      null,
      "unrecognised headers are ignored",
    );
  });
});

describe("presentedParamHeaders", () => {
  test("keeps Mcp-Param-* headers only, marks repeated ones", () => {
    const presented = presentedParamHeaders({
      "mcp-param-region": ["us"],
      "mcp-param-zone": ["a", "b"],
      "mcp-name": ["x"],
      host: ["h"],
    });
    assert.deepEqual(
      [...presented],
      [
        ["mcp-param-region", "us"],
        ["mcp-param-zone", null],
      ],
    );
    assert.equal(presentedParamHeaders(undefined).size, 0);
    assert.equal(presentedParamHeaders({ accept: ["*/*"] }).size, 0);
  });
});
