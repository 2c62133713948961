/**
 * Types carried from each schema library to the handler, checked by `npm run typecheck` (this
 * file is compiled with the rest of test/): a tool's arguments, a prompt's arguments and
 * `ctx.elicit`'s accepted `content` are the schema's output type; `// @ts-expect-error` lines fail
 * the typecheck if a wrong use compiled. The runtime test only checks that the definitions stand.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import { toStandardJsonSchema } from "@valibot/to-json-schema";
import { type } from "arktype";
import * as v from "valibot";
import { z } from "zod";

import { definePrompt, defineTool, type ElicitValue, type ToolContext } from "../../src/index.js";

/** True only when A and B are the same type. */
type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<T extends true>(): T | undefined {
  return undefined;
}

const Booking = toStandardJsonSchema(
  v.object({ seats: v.number(), window: v.optional(v.boolean(), false) }),
);

async function elicitTypes(ctx: ToolContext): Promise<void> {
  const answer = await ctx.elicit("Seats?", Booking);
  if (answer.action === "accept") {
    expectType<Equal<typeof answer.content, { seats: number; window: boolean }>>();
    // @ts-expect-error: not a field of the form
    void answer.content.aisle;
  } else {
    expectType<Equal<typeof answer.content, undefined>>();
  }
  const zodAnswer = await ctx.elicit("Name?", z.object({ name: z.string().default("x") }));
  if (zodAnswer.action === "accept")
    expectType<Equal<typeof zodAnswer.content, { name: string }>>();
  const arkAnswer = await ctx.elicit("Age?", type({ age: "number.integer" }));
  if (arkAnswer.action === "accept") expectType<Equal<typeof arkAnswer.content, { age: number }>>();
  const json = await ctx.elicit("Ok?", { type: "object", properties: { ok: { type: "boolean" } } });
  if (json.action === "accept") {
    expectType<Equal<typeof json.content, Record<string, ElicitValue>>>();
  }
  // @ts-expect-error: a form schema must be an object schema or a Standard Schema
  await ctx.elicit("Bad?", { type: "string" });
}

const tool = defineTool({
  name: "typed",
  input: type({ city: "string", "days?": "number" }),
  output: z.object({ forecast: z.string() }),
  handler: (args) => {
    expectType<Equal<typeof args, { city: string; days?: number }>>();
    return { forecast: args.city };
  },
});

const wrongOutput = defineTool({
  name: "wrong",
  output: z.object({ forecast: z.string() }),
  // @ts-expect-error: the output schema wants a string forecast
  handler: () => ({ forecast: 1 }),
});

const prompt = definePrompt({
  name: "typed",
  arguments: toStandardJsonSchema(v.object({ code: v.string(), lang: v.optional(v.string()) })),
  get: (args) => {
    expectType<Equal<typeof args, { code: string; lang?: string | undefined }>>();
    return args.code;
  },
});

test("the typed definitions stand (their types are checked by npm run typecheck)", () => {
  assert.equal(tool.name, "typed");
  assert.equal(wrongOutput.name, "wrong");
  assert.equal(prompt.name, "typed");
  assert.equal(typeof elicitTypes, "function");
});
