/**
 * The schema adapter's edges (src/protocol/wire/schema-adapter.ts): a schema without a JSON
 * Schema is refused at definition saying how to give one; a tool's schemas must describe
 * objects; `withJsonSchema` pairs any Standard Schema with a JSON Schema; a library that
 * validates asynchronously is awaited; one that throws while validating is -32603 with nothing
 * of its exception on the wire (over HTTP with the official 2025-11-25 client).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import { type } from "arktype";
import * as v from "valibot";
import { z } from "zod";
import { z as z3 } from "zod3";

import {
  createMcpServer,
  definePrompt,
  defineTool,
  InvalidOptionError,
  type McpServer,
  withJsonSchema,
} from "../../src/index.js";

/** A hand-written Standard Schema (no library): an object whose `n` must be a number. */
function handWritten(validate: StandardSchemaV1["~standard"]["validate"]): StandardSchemaV1 {
  return { "~standard": { version: 1, vendor: "hand", validate } };
}

const N_SCHEMA = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };

describe("definitions", () => {
  test("a schema with no JSON Schema is refused, naming the way to give one", () => {
    const cases: [unknown, RegExp][] = [
      [v.object({ a: v.string() }), /toStandardJsonSchema/],
      [z3.object({ a: z3.string() }), /zodToJsonSchema/],
      [handWritten(() => ({ value: {} })), /withJsonSchema/],
    ];
    for (const [input, remedy] of cases) {
      assert.throws(
        () => defineTool({ name: "t", input: input as never, handler: () => "" }),
        (error: unknown) =>
          error instanceof InvalidOptionError &&
          /tool t: input/.test(error.message) &&
          remedy.test(error.message),
      );
      assert.throws(
        () => definePrompt({ name: "p", arguments: input as never, get: () => "" }),
        (error: unknown) => error instanceof InvalidOptionError && remedy.test(error.message),
      );
    }
  });

  test("a tool's input and output must describe objects; a converter's refusal is reported", () => {
    assert.throws(
      () => defineTool({ name: "t", input: type("string") as never, handler: () => "" }),
      /a schema of an object/,
    );
    assert.throws(
      () => defineTool({ name: "t", output: z.string() as never, handler: () => "" }),
      /a schema of an object/,
    );
    // zod cannot say in JSON Schema what a transform produces: refused on the output side only.
    const transformed = z.object({ n: z.string().transform((s) => s.length) });
    assert.doesNotThrow(() => defineTool({ name: "t", input: transformed, handler: () => "" }));
    assert.throws(
      () => defineTool({ name: "t", output: transformed as never, handler: () => "" }),
      (error: unknown) =>
        error instanceof InvalidOptionError && /converts to JSON Schema/.test(error.message),
    );
  });

  test("withJsonSchema: any Standard Schema, published as given, validated by the schema", async () => {
    const tool = defineTool({
      name: "hand",
      input: withJsonSchema(
        handWritten((value) =>
          typeof (value as { n?: unknown }).n === "number"
            ? { value }
            : { issues: [{ message: "n must be a number", path: [{ key: "n" }] }] },
        ),
        N_SCHEMA,
      ),
      handler: () => "",
    });
    assert.deepEqual(tool.descriptor.inputSchema, N_SCHEMA);
    assert.deepEqual(await tool.checkArguments({ n: 1 }), { ok: true, args: { n: 1 } });
    assert.deepEqual(await tool.checkArguments({ n: "x" }), {
      ok: false,
      issues: [{ path: "n", message: "n must be a number" }],
    });
    assert.throws(() => withJsonSchema({} as never, N_SCHEMA), InvalidOptionError);
    assert.throws(() => withJsonSchema(z.object({}), [] as never), InvalidOptionError);
  });
});

describe("validation over HTTP (2025-11-25 client)", () => {
  let server: McpServer;
  let client: Client;
  const errors: unknown[] = [];

  const asyncTool = defineTool({
    name: "async",
    input: z.object({
      code: z.string().refine(async (code) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return code === "open sesame";
      }, "wrong code"),
    }),
    handler: ({ code }) => `in with ${code}`,
  });
  const throwing = defineTool({
    name: "throwing",
    input: withJsonSchema(
      handWritten(() => {
        throw new Error("secret internals at /srv/app/validator.js:12");
      }),
      N_SCHEMA,
    ),
    handler: () => "never",
  });
  const rejecting = defineTool({
    name: "rejecting",
    input: withJsonSchema(
      handWritten(() => Promise.reject(new Error("secret async internals"))),
      N_SCHEMA,
    ),
    handler: () => "never",
  });

  before(async () => {
    server = createMcpServer({
      tools: [asyncTool, throwing, rejecting],
      onError: (error) => {
        errors.push(error);
      },
    });
    const { url } = await server.listen({ host: "127.0.0.1", port: 0 });
    client = new Client({ name: "adapter-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  });
  after(async () => {
    await client.close();
    await server.close();
  });

  test("an asynchronous library is awaited: good input runs, bad input is a tool error", async () => {
    const good = (await client.callTool({ name: "async", arguments: { code: "open sesame" } })) as {
      content: { text: string }[];
      isError?: boolean;
    };
    assert.equal(good.content[0]?.text, "in with open sesame");
    const bad = (await client.callTool({ name: "async", arguments: { code: "guess" } })) as {
      content: { text: string }[];
      isError?: boolean;
    };
    assert.equal(bad.isError, true);
    assert.equal(bad.content[0]?.text, "Invalid arguments: code: wrong code");
  });

  test("a library that throws or rejects while validating: -32603, nothing of it on the wire", async () => {
    for (const name of ["throwing", "rejecting"]) {
      await assert.rejects(client.callTool({ name, arguments: { n: 1 } }), (error: unknown) => {
        const { code, message } = error as { code?: number; message: string };
        assert.equal(code, -32603, message);
        assert.doesNotMatch(message, /secret|internals|\/srv/);
        return true;
      });
    }
  });
});
